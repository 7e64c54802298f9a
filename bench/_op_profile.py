"""Where the time of one tiny gradient-tracked ``a * b`` goes, by function and by part.

``python -m bench._op_profile [N]`` times N ops (best of 5, no profiler), then profiles N more
with cProfile and prints each part's share of the profiled self time (the profiler slows
every Python call alike, so shares carry over; the absolute figure is the unprofiled one)
and the functions that cost most.
"""
from __future__ import annotations

import cProfile
import gc
import pstats
import sys
import time

# (part, predicate on (file, first line, function name)): the first match wins
PARTS = [
    ("memory accounting (counters, allocator model)", lambda f, ln, n: "/engine/memory/" in f),
    ("saved tensors", lambda f, ln, n: n in ("_save", "add_saved") or (f, ln, n) in _SAVED),
    ("graph nodes and edges", lambda f, ln, n: "/core/graph.py" in f or n == "new_id"
     or ("/core/dispatch.py" in f and n == "__init__")),
    ("output tensor and storage", lambda f, ln, n: ("/core/tensor.py" in f and n == "_wrap") or "/core/storage.py" in f),
    ("the kernel (NumPy multiply)", lambda f, ln, n: "/core/primitives.py" in f),
    ("dispatch (type checks, promotion, lists)", lambda f, ln, n: True),
]

_SAVED: set = set()    # SavedTensor's own methods, by (file, first line, name)


def _mark_saved_tensor_methods():
    from engine.core import graph
    for name in ("__init__", "__del__"):
        code = getattr(graph.SavedTensor, name).__code__
        _SAVED.add((code.co_filename, code.co_firstlineno, name))


def main(n: int = 20_000) -> None:
    import engine
    from bench._programs import tiny_mul
    _mark_saved_tensor_methods()
    a, b = tiny_mul(engine)
    for _ in range(2000):
        a * b
    best = float("inf")
    for _ in range(5):
        gc.disable()
        t0 = time.perf_counter()
        for _ in range(n):
            a * b
        best = min(best, (time.perf_counter() - t0) / n)
        gc.enable()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        a * b
    prof.disable()
    stats = pstats.Stats(prof).stats
    total = sum(v[2] for v in stats.values())
    parts: dict = {}
    for (f, _line, name), (_cc, _nc, tt, _ct, _callers) in stats.items():
        part = next(p for p, pred in PARTS if pred(f, _line, name))
        parts[part] = parts.get(part, 0.0) + tt
    print(f"a * b, two gradient-tracked 16-element float32 tensors: {best * 1e6:.2f} us/op unprofiled "
          f"(best of 5 x {n}); profiled {total / n * 1e6:.1f} us/op")
    for part, tt in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {100 * tt / total:5.1f}%  ~{best * 1e6 * tt / total:5.2f} us  {part}")
    print("functions by self time (share of the profiled op):")
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:15]
    for (f, line, name), (_cc, nc, tt, ct, _callers) in rows:
        where = f.split("/work/main/")[-1] if f.startswith("/") else f
        print(f"  {100 * tt / total:5.1f}% self {100 * ct / total:5.1f}% cum  {nc / n:4.1f}/op  {where}:{line}({name})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
