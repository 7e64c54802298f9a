"""``python -m bench [section ...] [--reps N] [--quick] [--torch-python PATH] [--list]``."""
from __future__ import annotations

import argparse
import os
import sys
import time

from .registry import Config, Row, discover


def _fmt(v) -> str:
    if isinstance(v, str):
        return v
    if abs(v) >= 100:
        return f"{v:,.1f}"
    if abs(v) >= 1:
        return f"{v:.3f}"
    return f"{v:.4f}"


def print_table(title: str, rows: list[Row], out=sys.stdout) -> None:
    print(f"\n== {title}", file=out)
    w = max([len(r.label) for r in rows] + [10])
    for r in rows:
        status = "" if r.ok is None else ("  ok" if r.ok else "  MISSED")
        goal = f"  (goal {r.goal}){status}" if r.goal else ""
        note = f"  [{r.note}]" if r.note else ""
        print(f"  {r.label:<{w}}  {_fmt(r.value):>10} {r.unit:<6}{goal}{note}", file=out)


def main(argv=None) -> int:
    sections = discover()
    ap = argparse.ArgumentParser(prog="python -m bench", description="glassgrad benchmarks (ratios, medians)")
    ap.add_argument("names", nargs="*", help=f"sections to run (default: all): {', '.join(sections)}")
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions per measurement (median reported)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    ap.add_argument("--torch-python", default=os.environ.get("GLASSGRAD_BENCH_TORCH_PYTHON"),
                    help="an interpreter with PyTorch for the PyTorch columns when torch is not importable here")
    ap.add_argument("--list", action="store_true", help="list the sections and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in sections.values():
            print(f"{s.name:<12} {s.title}")
        return 0
    unknown = [n for n in args.names if n not in sections]
    if unknown:
        ap.error(f"unknown section(s): {', '.join(unknown)} (choose from {', '.join(sections)})")
    cfg = Config(reps=args.reps, quick=args.quick, torch_python=args.torch_python)
    import numpy
    blas = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "default"
    print(f"glassgrad benchmarks  (python {sys.version.split()[0]}, numpy {numpy.__version__}, "
          f"{os.cpu_count()} cpus, BLAS threads {blas}; medians of {cfg.reps} runs)")
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print(f"note: load average {os.getloadavg()[0]:.1f}: other processes compete for the cpus; "
              "OPENBLAS_NUM_THREADS=1 gives steadier ratios")
    missed = 0
    for name in (args.names or list(sections)):
        s = sections[name]
        t0 = time.perf_counter()
        try:
            rows = s.fn(cfg)
        except Exception as e:  # noqa: BLE001 - one broken section must not hide the others
            rows = [Row("error", type(e).__name__, note=str(e)[:100])]
        print_table(f"{s.title}  [{time.perf_counter() - t0:.1f} s]", rows)
        missed += sum(1 for r in rows if r.ok is False)
    print(f"\n{missed} goal(s) missed" if missed else "\nall goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
