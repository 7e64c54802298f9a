"""Gradient edges, version bumps and hooks on several tensors (``torch.autograd.graph``'s
``GradientEdge``, ``get_gradient_edge``, ``increment_version``, ``register_multi_grad_hook``)."""
from __future__ import annotations

import threading

from ..core.graph import current_graph_task_id, edge_of, will_execute
from ..core.tensor import version_counter


class GradientEdge(tuple):
    """``(node, output_nr, ownership_token)``: where a tensor's gradient enters the graph
    (``torch.autograd.graph.GradientEdge``; the token is always None here)."""

    __slots__ = ()

    def __new__(cls, node, output_nr: int, ownership_token=None):
        return tuple.__new__(cls, (node, output_nr, ownership_token))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])
    ownership_token = property(lambda self: self[2])

    def __repr__(self):
        return f"GradientEdge(node={self[0]!r}, output_nr={self[1]}, ownership_token={self[2]!r})"


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge a gradient for ``tensor`` flows through: its grad_fn and output number, or its
    AccumulateGrad for a leaf that requires grad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    return GradientEdge(*edge_of(tensor))


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor in a list), as an in-place op would:
    saved copies of it then refuse to unpack."""
    for t in (tensor if isinstance(tensor, (list, tuple)) else (tensor,)):
        version_counter(t).version += 1


class _MultiHandle:
    """Removes every per-tensor hook of one ``register_multi_grad_hook``."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """Call ``fn`` once per backward pass for several tensors (NOTE [ Multi-grad hooks ]).

    NOTE [ Multi-grad hooks ]
    1. ``mode="all"``: ``fn(grads)`` runs when the gradient of every tensor this pass will
       compute has been computed; ``grads[i]`` is tensor i's gradient, or None for a tensor
       outside the graph or not needed by the pass's ``inputs=`` (the engine's plan says
       which, ``engine.will_execute``).
    2. ``mode="any"``: ``fn(grad)`` runs once per pass, with the first gradient computed.
    3. Passes are told apart by their task id, so nested and threaded passes keep their own
       counts; ``fn``'s return value is ignored and the gradients go on unchanged.
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    state: dict = {}        # task id -> [grads, calls left] (rule 1) or True once fired (rule 2)

    def all_hook(idx):
        def hook(grad):
            tid = current_graph_task_id()
            with lock:
                if tid not in state:
                    calls = sum(1 for t in tensors if t.requires_grad and will_execute(edge_of(t)[0]))
                    state[tid] = [[None] * len(tensors), calls]
                entry = state[tid]
                entry[0][idx] = grad
                entry[1] -= 1
                done = entry[1] <= 0
                if done:
                    del state[tid]
            if done:
                fn(tuple(entry[0]))
        return hook

    def any_hook(grad):
        tid = current_graph_task_id()
        with lock:
            if state.get("last") == tid:
                return
            state["last"] = tid
        fn(grad)

    handles = [t.register_hook(all_hook(i) if mode == "all" else any_hook)
               for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)
