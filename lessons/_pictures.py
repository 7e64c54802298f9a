"""Pictures for a lesson run, drawn by viz when it is installed (the lesson works without them)."""
from __future__ import annotations

import os


def write_pictures(lr, outdir: str) -> list:
    """Write one graph picture per step and a memory timeline; return lines saying what happened."""
    try:
        import viz
    except ImportError:
        return ["pictures: skipped (the viz package is not available)"]
    lines = []
    graph = getattr(viz, "graph_dot", None)
    if graph is None:
        lines.append("graph pictures: skipped (viz has no graph_dot yet)")
    else:
        for r in lr.steps:
            idx = r.focus_index() if r.events else 0
            base = os.path.join(outdir, f"step{r.index + 1}_graph")
            lines.append(_write_graph(graph, lr.trace, idx, base))
    mem = getattr(viz, "memory_timeline", None)
    if mem is None:
        lines.append("memory timeline: skipped (viz has no memory_timeline yet)")
    else:
        path = os.path.join(outdir, "memory.png")
        try:
            mem(lr.trace, path)
            lines.append(f"memory timeline: {path}")
        except Exception as exc:  # a picture must never break the lesson
            lines.append(f"memory timeline: not written ({type(exc).__name__}: {exc})")
    return lines


def _write_graph(graph_dot, trace, idx, base) -> str:
    try:
        dot = graph_dot(trace, step=idx)
    except Exception as exc:
        return f"graph: not drawn ({type(exc).__name__}: {exc})"
    source = getattr(dot, "source", dot)
    with open(base + ".dot", "w", encoding="utf-8") as f:
        f.write(str(source))
    render = getattr(dot, "render", None)
    if render is None:
        return f"graph: {base}.dot"
    try:
        out = render(base, format="svg", cleanup=True)
        return f"graph: {out}"
    except Exception as exc:  # usually Graphviz's dot is missing
        return f"graph: {base}.dot (SVG not drawn: {type(exc).__name__}; install Graphviz's dot)"
