"""Lesson 10's figures and pictures: recompute cost from the recorded ops, the trade-off curve as a
text chart (the app and the plain lesson show it) and as a PNG (``python -m lessons.lesson_10_...``)."""
from __future__ import annotations

import math
import os

from replay.words import nbytes

_MATMUL = {"mm", "addmm", "bmm", "matmul", "mv", "dot"}


def flops(e) -> float:
    """An op event's forward cost as the planner counts it (NOTE [ Checkpoint plan cost model ]):
    2*M*N*K for a matrix product, the output's size for anything else."""
    out = e["output"]
    numel = math.prod(out["shape"]) if out else 0
    if e["op"] in _MATMUL:
        ins = [i for i in e["inputs"] if "shape" in i]
        return 2.0 * numel * ins[-2]["shape"][-1]
    return float(numel)


def kernels_run(events) -> list:
    """The op events of ``events`` that computed something: their output storage was allocated
    right there (a view, or an output handed back from a cache, allocates nothing)."""
    made, out = set(), []
    for e in events:
        if e["kind"] == "alloc":
            made.add(e["storage"])
        elif e["kind"] == "op" and e["output"] and e["output"]["storage"] in made:
            out.append(e)
    return out


def chart(points, marks=None, width=20) -> str:
    """The trade-off curve as text: one row per point (peak bytes, recompute as a share of one
    forward), a bar for the share; ``marks`` {peak: label} names points found elsewhere."""
    marks = marks or {}
    rows = ["     peak  recompute, share of one forward"]
    for peak, share in points:
        bar = "█" * round(share * width)
        label = f"  ◀ {marks[peak]}" if peak in marks else ""
        rows.append(f"{nbytes(peak):>9}  {bar:<{width}} {share:4.0%}{label}")
    return "\n".join(rows)


def write_curve(points, sequential, path) -> str:
    """The curve as a PNG: the planner's optimal points and checkpoint_sequential's, peak against cost."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.step([100 * c for _, c in points], [p / 1024 for p, _ in points], where="post", color="#1f77b4",
            marker="o", label="planner: the least recompute for each peak")
    for seg, (peak, share) in sorted(sequential.items()):
        ax.plot([100 * share], [peak / 1024], "D", color="#d62728")
        ax.annotate(f"s={seg}", (100 * share, peak / 1024), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.plot([], [], "D", color="#d62728", label="checkpoint_sequential(model, s, x)")
    ax.set_xlabel("recompute, % of one forward")
    ax.set_ylabel("peak above the step's start (KiB)")
    ax.set_title("How much to checkpoint: peak memory against recompute")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return path


def main_with_curve(lesson, step_index: int, argv=None) -> int:
    """``python -m lessons.lesson_10_...``: the plain lesson (as ``_runner.main_for``), plus the
    trade-off curve as ``curve.png`` beside the other pictures."""
    import argparse
    import sys

    from lessons import _runner

    p = argparse.ArgumentParser(prog=f"python -m lessons.lesson_{lesson.name}",
                                description=f"Lesson {lesson.number}: {lesson.title} (as plain text).")
    p.add_argument("--out", default=os.path.join("glassgrad-out", f"lesson_{lesson.name}"),
                   help="folder for the trace and the pictures (default: %(default)s)")
    p.add_argument("--no-pictures", action="store_true", help="print the lesson only")
    a = p.parse_args(argv)
    lr = _runner.run(lesson)
    sys.stdout.write(_runner.render_text(lr))
    if not a.no_pictures:
        try:
            for line in _runner.write_outputs(lr, a.out):
                sys.stdout.write(line + "\n")
            v = lr.steps[step_index].values
            path = write_curve(v["curve_points"], v["sequential_points"], os.path.join(a.out, "curve.png"))
            sys.stdout.write(f"trade-off curve: {path}\n")
        except Exception as exc:  # noqa: BLE001 - a picture must never break the lesson
            sys.stdout.write(f"trade-off curve: not written ({type(exc).__name__}: {exc})\n")
    return 0 if lr.ok else 1
