"""``make_dot(tensor)``: draw the graph behind a live tensor, as torchviz does.

The walk turns the live graph into the same events a recording would hold
(``leaf`` and ``op``) and draws those, so a live graph and a trace look alike.
"""
from __future__ import annotations

from engine.trace import snapshot
from replay.graph import graph_at
from replay.model import TraceModel

from .graph_dot import GraphPicture, graph_source




def make_dot(tensor, params: dict | None = None, *, legend: bool = True, expand_modules: bool = True) -> GraphPicture:
    """The autograd graph that produced ``tensor`` (``params``: name -> tensor, to label leaves)."""
    if tensor.grad_fn is None:
        raise ValueError("make_dot: the tensor has no grad_fn (it is a leaf or was made without grad), "
                         "so there is no graph to draw")
    events = snapshot(tensor, params)
    state = graph_at(TraceModel(events))
    for n in state.nodes.values():
        for sl, ev in zip(n.saved, _saved_of(events, n.id)):
            if ev.get("released"):
                sl.state = "released"
    state.roots = [tensor._id]
    src = graph_source(state, collapse=not expand_modules, legend=legend,
                       title=f"autograd graph of a tensor {tuple(tensor.shape)} · {len(state.nodes)} nodes")
    return GraphPicture(src, state)


def _saved_of(events, node_id):
    for e in events:
        if e["kind"] == "op" and e["node"]["id"] == node_id:
            return e["node"]["saved"]
    return []
