"""Rendering a 1,000-node autograd graph (goal: under 3 s) and a memory timeline."""
from __future__ import annotations

import os
import shutil
import tempfile
import time

from .registry import Row, section


def _deep_mlp_trace(layers: int):
    """A chain of Linear + Tanh layers: 5 graph nodes a layer (T, Addmm, Tanh, two AccumulateGrads)."""
    import engine
    from engine import nn
    engine.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(16, 16), nn.Tanh()]
    model = nn.Sequential(*mods)
    list(model.named_parameters())  # name the parameters ("2.weight") before calling children
    x = engine.randn(4, 16)
    with engine.record() as tr:
        model(x).sum().backward()
    return tr


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@section("render", "Pictures: 1,000-node graph, memory timeline", order=60)
def run(cfg):
    from viz.graph_dot import graph_picture
    from viz import memory_plot
    layers = 200 if not cfg.quick else 40
    tr = _deep_mlp_trace(layers)
    rows = []
    pic = graph_picture(tr, expand_modules=True)
    nodes = pic.state.counts()["nodes"]
    t_build = min(_timed(lambda: graph_picture(tr, expand_modules=True)) for _ in range(max(1, cfg.reps // 3)))
    rows.append(Row(f"graph state + DOT text ({nodes} nodes, {len(tr)} events)", t_build * 1e3, "ms"))
    with tempfile.TemporaryDirectory() as d:
        if shutil.which("dot") is None:
            rows.append(Row("render svg", "skipped", note="Graphviz `dot` not installed"))
        else:
            out = os.path.join(d, "g.svg")
            t = min(_timed(lambda: graph_picture(tr, expand_modules=True).render(out)) for _ in range(2))
            goal = t <= 3.0 if nodes >= 1000 else None
            rows.append(Row(f"trace -> svg, every node ({nodes} nodes)", t, "s", "<= 3.00" if goal is not None else "",
                            goal))
            t = _timed(lambda: graph_picture(tr).render(out))
            rows.append(Row("trace -> svg, repeated layers collapsed", t, "s"))
        png = os.path.join(d, "m.png")
        t = _timed(lambda: memory_plot.save_figure(memory_plot.memory_figure(tr), png))
        rows.append(Row(f"memory timeline png ({len(tr)} events)", t, "s"))
    return rows
