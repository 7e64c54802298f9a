"""Small training programs (tiny-tensor loops, an LSTM tagger, a character-level GPT): glassgrad vs PyTorch.

NOTE [ Program benchmark ]
1. Each program of bench/_programs.py is built twice from the same code, on ``engine`` and
   on ``torch``, and the two steps are timed interleaved in this process when PyTorch is
   importable here. Row per program: glassgrad / PyTorch. Goals: the median ratio <= 1.2,
   none above 3.
2. Without PyTorch here, ``--torch-python PATH`` times PyTorch's side in that interpreter
   (``python -m bench._programs``; not interleaved, so noisier). Without either, the rows
   give glassgrad's own times and its own baseline (rules 3 and 4); the ratios read n/a.
3. Per-op overhead: ``a * b`` on two gradient-tracked 16-element float32 tensors, beside
   PyTorch's and beside NumPy's ``x * y`` on the same arrays (the array work alone).
   Goal: glassgrad <= 4 us.
4. Bookkeeping: the share of a step, not recording, spent on memory accounting (each
   storage's ``on_alloc``/``on_free``/``on_move``: the deferred counters and the allocator
   model's log; bench/_bookkeeping.py). Counted: the calls per step times each call's
   cost measured alone on stand-in storages (fastest of several runs, the replays they
   trigger included), over the step's fastest time; this stays steady on a busy machine.
   The note cross-checks it directly: the step timed with the accounting switched off
   (``no_accounting``) and on, interleaved, fastest runs (noisier: a few % of a step).
   Goal: under 5% for every program.
5. PyTorch runs on one intra-op thread (or on ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS``
   when set, to match NumPy's BLAS): in one process its OpenMP pool spin-waits between
   ops on the cores NumPy's BLAS uses, and a tiny step then takes a hundred times longer.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess

from . import _bookkeeping, _programs, _torch_side
from ._timing import interleaved, last_minima
from .registry import Row, goal_row, section

OP_GOAL_US, MEDIAN_GOAL, MAX_GOAL, BOOKKEEPING_GOAL = 4.0, 1.2, 3.0, 5.0


def _repeat(step, n):
    def run():
        for _ in range(n):
            step()
    return run


def _repeat_unaccounted(step, n):
    def run():
        with _bookkeeping.no_accounting():
            for _ in range(n):
                step()
    return run


def _torch_elsewhere(cfg):
    """PyTorch's side from ``--torch-python`` (rule 2), or None."""
    if not cfg.torch_python:
        return None
    env = dict(os.environ, PYTHONPATH=_programs.ROOT)
    res = subprocess.run([cfg.torch_python, "-m", "bench._programs", str(cfg.reps)], capture_output=True, text=True, check=False,
                         cwd=_programs.ROOT, env=env, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"PyTorch side failed: {res.stderr.strip().splitlines()[-1:]}")
    return json.loads(res.stdout)


def _per_op(cfg, torch_mod) -> list:
    import numpy as np

    import engine
    a, b = _programs.tiny_mul(engine)
    x, y = a.detach().numpy().copy(), b.detach().numpy().copy()
    fns = {"glassgrad": lambda: a * b, "numpy": lambda: np.multiply(x, y)}
    if torch_mod is not None:
        ta, tb = _programs.tiny_mul(torch_mod)
        fns["torch"] = lambda: ta * tb
    n = 2_000 if cfg.quick else 10_000
    t = interleaved(fns, reps=max(cfg.reps, 3), inner=n)
    rows = [Row("a * b, grad-tracked, 16 elements", t["glassgrad"] * 1e6, "us/op", f"<= {OP_GOAL_US:.2f}",
                t["glassgrad"] * 1e6 <= OP_GOAL_US),
            Row("NumPy x * y, same arrays", t["numpy"] * 1e6, "us/op", note="the array work alone")]
    if "torch" in t:
        rows.append(Row("PyTorch a * b, grad-tracked", t["torch"] * 1e6, "us/op",
                        note=f"glassgrad / PyTorch {t['glassgrad'] / t['torch']:.1f}x"))
    return rows


@section("programs", "Small training programs: tiny-tensor loops, LSTM tagger, char GPT (glassgrad vs PyTorch)",
         order=22)
def run(cfg):
    import engine
    torch_mod = _torch_side.real_torch()
    reps = max(cfg.reps if not cfg.quick else 3, 3)
    target = 0.02 if not cfg.quick else 0.005
    threads = _torch_threads(torch_mod)
    try:
        return _run(cfg, engine, torch_mod, reps, target, threads)
    finally:
        if torch_mod is not None:
            torch_mod.set_num_threads(threads[0])


def _torch_threads(torch_mod):
    """(PyTorch's thread count before, the count used): NOTE [ Program benchmark ] rule 5."""
    if torch_mod is None:
        return (None, None)
    before = torch_mod.get_num_threads()
    n = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "1"
    torch_mod.set_num_threads(int(n) if n.isdigit() else 1)
    return (before, torch_mod.get_num_threads())


def _run(cfg, engine, torch_mod, reps, target, threads):
    rows = _per_op(cfg, torch_mod)
    if torch_mod is not None:
        rows.append(Row("PyTorch threads", str(threads[1]), note="rule 5 of NOTE [ Program benchmark ]"))
    elsewhere = None
    if torch_mod is None:
        try:
            elsewhere = _torch_elsewhere(cfg)
        except Exception as e:  # noqa: BLE001 - reported in the table
            rows.append(Row("PyTorch side", "failed", note=str(e)[:60]))
        if elsewhere is not None:
            rows.append(Row("PyTorch a * b, grad-tracked", elsewhere["mul"] * 1e6, "us/op",
                            note=f"torch {elsewhere['version']}, other process"))
    switch_ok = _bookkeeping.switch_works()
    pair, move = _bookkeeping.cost_per_storage()
    ratios, shares = {}, {}
    for name, build in _programs.PROGRAMS.items():
        step = build(engine)
        step()
        inner = _programs.inner_for(step, target)
        fns = {"glassgrad": _repeat(step, inner), "unaccounted": _repeat_unaccounted(step, inner)}
        if torch_mod is not None:
            tstep = build(torch_mod)
            tstep()
            tinner = _programs.inner_for(tstep, target)
            fns["torch"] = _repeat(tstep, tinner)
        t = interleaved(fns, reps=reps, warmup=1)
        fastest = dict(last_minima)
        per_step = t["glassgrad"] / inner
        storages, moves = _bookkeeping.calls_per_step(step)
        shares[name] = (100 * (storages * pair + moves * move) / (fastest["glassgrad"] / inner),
                        100 * (fastest["glassgrad"] - fastest["unaccounted"]) / fastest["glassgrad"], storages)
        if torch_mod is not None:
            torch_step = t["torch"] / tinner
        elif elsewhere is not None:
            torch_step = elsewhere["programs"][name]
        else:
            torch_step = None
        note = f"glassgrad {per_step * 1e3:.3f} ms"
        if torch_step is None:
            rows.append(Row(f"{name} step", per_step * 1e3, "ms", note="PyTorch n/a (--torch-python PATH)"))
            continue
        ratios[name] = per_step / torch_step
        if torch_mod is not None:
            note += f", fastest runs {fastest['glassgrad'] / inner / (fastest['torch'] / tinner):.2f}x"
        rows.append(goal_row(f"{name}: glassgrad / PyTorch", ratios[name], MAX_GOAL,
                             f"{note}, PyTorch {torch_step * 1e3:.3f} ms"))
    if ratios:
        rows.append(goal_row("median program ratio", statistics.median(ratios.values()), MEDIAN_GOAL))
    if not switch_ok:
        rows.append(Row("bookkeeping share", "failed", note="the accounting switch no longer reaches the core"))
        return rows
    rows.append(Row("accounting per storage (alloc + free)", pair * 1e6, "us", note=f"per category move {move * 1e6:.2f} us"))
    for name, (share, direct, storages) in shares.items():
        rows.append(Row(f"bookkeeping share, {name}", share, "%", f"< {BOOKKEEPING_GOAL:.0f}", share < BOOKKEEPING_GOAL,
                        f"{storages:.0f} storages/step; switched off: {direct:.1f}%"))
    return rows

