"""``make_dot(tensor)``: draw the graph behind a live tensor, as torchviz does.

The walk turns the live graph into the same events a recording would hold
(``leaf`` and ``op``) and draws those, so a live graph and a trace look alike.
"""
from __future__ import annotations

from replay.graph import graph_at
from replay.model import TraceModel

from .graph_dot import GraphPicture, graph_source


def graph_events(tensor, params: dict | None = None) -> list[dict]:
    """Events describing every node reachable from ``tensor.grad_fn`` (creation order)."""
    from engine.core.graph import node_info
    from engine.core.tensor import tensor_info
    names = {id(p): k for k, p in (params or {}).items()}

    def info(t):
        d = tensor_info(t)
        if id(t) in names:
            d["name"] = names[id(t)]
        return d

    seen, stack, nodes = set(), [tensor.grad_fn] if tensor.grad_fn is not None else [], []
    while stack:
        n = stack.pop()
        if n is None or n.id in seen:
            continue
        seen.add(n.id)
        nodes.append(n)
        stack.extend(nx for nx, _ in n.next_functions)
    events = []
    for n in sorted(nodes, key=lambda n: n.id):
        if n.name() == "AccumulateGrad" and getattr(n, "variable", None) is not None:
            events.append({"kind": "leaf", "phase": "forward", "node": n.id, "name": "AccumulateGrad",
                           "tensor": info(n.variable)})
            continue
        ni = node_info(n)
        for sv, (_, st) in zip(ni["saved"], n._saved.items()):
            sv["released"] = bool(getattr(st, "released", False))
        out = info(tensor) if n is tensor.grad_fn else None
        events.append({"kind": "op", "phase": "forward", "op": None, "inputs": [], "output": out, "node": ni,
                       "file": None, "line": None, "region": None})
    for i, e in enumerate(events):
        e["seq"] = i
    return events


def make_dot(tensor, params: dict | None = None, *, legend: bool = True, expand_modules: bool = True) -> GraphPicture:
    """The autograd graph that produced ``tensor`` (``params``: name -> tensor, to label leaves)."""
    if tensor.grad_fn is None:
        raise ValueError("make_dot: the tensor has no grad_fn (it is a leaf or was made without grad), "
                         "so there is no graph to draw")
    events = graph_events(tensor, params)
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
