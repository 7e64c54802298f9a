"""Pictures for a lesson run, drawn by viz from one replay of its trace (a lesson still runs, and says so,
when a picture cannot be drawn)."""
from __future__ import annotations

import os

from replay.model import TraceModel


def write_pictures(lr, outdir: str) -> list:
    """Write the graph at each step's focus and the memory timeline; return lines saying what happened."""
    try:
        from viz.graph_dot import graph_picture
    except ImportError:
        return ["pictures: skipped (the viz package is not available)"]
    model = TraceModel.from_trace(lr.trace)
    lines = []
    for r in lr.steps:
        idx = r.focus_index() if r.events else 0
        base = os.path.join(outdir, f"step{r.index + 1}_graph")
        lines.append(_write_graph(graph_picture, model, idx, base, r))
    try:
        from viz.memory_plot import memory_figure, save_figure

        path = os.path.join(outdir, "memory.png")
        save_figure(memory_figure(lr.trace, title=f"Lesson {lr.lesson.number}: {lr.lesson.title}"), path)
        lines.append(f"memory timeline: {path}")
    except Exception as exc:  # a picture must never break the lesson
        lines.append(f"memory timeline: not written ({type(exc).__name__}: {exc})")
    return lines


def _write_graph(graph_picture, model, idx, base, r) -> str:
    try:
        pic = graph_picture(model, step=idx, title=f"Step {r.index + 1}: {r.step.title} (event #{idx})")
    except Exception as exc:
        return f"graph, step {r.index + 1}: not drawn ({type(exc).__name__}: {exc})"
    try:
        return f"graph, step {r.index + 1}: {pic.render(base + '.svg')}"
    except Exception as exc:  # usually Graphviz's dot is missing: keep the DOT text
        with open(base + ".dot", "w", encoding="utf-8") as f:
            f.write(pic.source)
        return f"graph, step {r.index + 1}: {base}.dot (no SVG: {str(exc).splitlines()[0]})"
