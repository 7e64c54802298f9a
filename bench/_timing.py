"""Timing helpers: medians of repetitions, interleaved so that drift hits every variant alike."""
from __future__ import annotations

import gc
import statistics
import time


def median_time(fn, reps: int, warmup: int = 1, inner: int = 1) -> float:
    """Median seconds per call of ``fn`` over ``reps`` timed runs of ``inner`` calls each."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        times.append(_once(fn, inner))
    return statistics.median(times)


def interleaved(fns: dict, reps: int, warmup: int = 1, inner: int = 1) -> dict:
    """Median seconds per call of each of ``fns`` (name -> callable), run round-robin."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            times[k].append(_once(fn, inner))
    last_minima.clear()
    last_minima.update({k: min(v) for k, v in times.items()})
    return {k: statistics.median(v) for k, v in times.items()}


last_minima: dict = {}   # the fastest run of each function in the last ``interleaved`` call


def min_ratio(a: str, b: str) -> str:
    """A note with the ratio of the fastest runs (steadier than medians on a busy machine)."""
    return f"fastest runs: {last_minima[a] / last_minima[b]:.3f}x"


def _once(fn, inner: int) -> float:
    gc_was = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - t0) / inner
    finally:
        if gc_was:
            gc.enable()
