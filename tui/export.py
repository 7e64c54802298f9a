"""Write the Graphviz picture of the graph at a step (viz draws it when available; else plain DOT)."""
from __future__ import annotations

import os
import shutil
import subprocess

from .format import human_bytes
from .model import TraceModel


def plain_dot(model: TraceModel, i: int) -> str:
    """DOT text of the graph shown at step i (nodes created by then), state as colors."""
    fill = {"alive": "#dddddd", "current": "#ffdd55", "executed": "#9bd49b"}
    lines = ["digraph autograd {", '  rankdir=TB; node [shape=box, style="rounded,filled", fontname="monospace"];']
    ids = [n for n in model.graph_at(i) if model.nodes[n].created <= i]
    for nid in sorted(ids):
        r = model.nodes[nid]
        st = r.state(i)
        extra = f"\\nsaved {human_bytes(r.saved_bytes())} ({r.saved_state(i)})" if r.saved else ""
        if r.is_leaf and r.tensor:
            extra = f"\\n{r.tensor.get('name') or ''} {r.tensor.get('shape')}"
        lines.append(f'  n{nid} [label="{r.name}{extra}", fillcolor="{fill.get(st, "#ffffff")}"];')
    shown = set(ids)
    for nid in sorted(ids):
        for c, _, _ in model.nodes[nid].next:
            if c in shown:
                lines.append(f"  n{nid} -> n{c};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_step_graph(model: TraceModel, i: int, outdir: str) -> tuple:
    """Write ``graph_event<i>.dot`` (and .svg when Graphviz's dot is installed); return (path, note)."""
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, f"graph_event{i}")
    source = None
    try:
        from viz.graph_dot import graph_picture

        source = graph_picture(model.events, step=i, title=f"event #{i}").source
    except Exception:  # viz missing or unable: fall back to the plain picture
        source = None
    if source is None:
        source = plain_dot(model, i)
    with open(base + ".dot", "w", encoding="utf-8") as f:
        f.write(source)
    dot = shutil.which("dot")
    if dot is None:
        return base + ".dot", "install Graphviz's dot for an SVG"
    try:
        subprocess.run([dot, "-Tsvg", base + ".dot", "-o", base + ".svg"], check=True, capture_output=True,
                       timeout=30)
    except (subprocess.SubprocessError, OSError):
        return base + ".dot", "dot could not draw it"
    return base + ".svg", ""
