"""Write the Graphviz picture of the graph at a step (the ``w`` key): DOT text always, SVG when ``dot`` is installed.

The picture is viz's (``viz.graph_dot``), drawn from the same ``replay.model.TraceModel``
as the graph panel, so the file shows the nodes the panel shows, in the same states.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from replay.model import TraceModel
from viz.graph_dot import graph_picture


def write_step_graph(model: TraceModel, i: int, outdir: str) -> tuple:
    """Write ``graph_event<i>.dot`` (and .svg when Graphviz's dot is installed); return (path, note)."""
    source = graph_picture(model, step=i, title=f"event #{i}").source     # first: a step it cannot draw writes nothing
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, f"graph_event{i}")
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
