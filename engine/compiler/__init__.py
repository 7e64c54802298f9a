"""``engine.compile``: torch.compile's pipeline, small enough to read.

capture (capture.py) -> graph IR (graph.py) -> joint forward+backward graph (joint.py)
-> min-cut partition into forward and backward graphs (partition.py) -> fusion of
elementwise chains into generated kernels (fusion.py) -> a cached, guarded callable
that runs them (runtime.py). ``GLASSGRAD_LOGS=graph,joint,partition,fusion,recompiles``
(or ``all``) prints each stage to stderr, as ``TORCH_LOGS`` does. See docs/compile.md.
"""
from __future__ import annotations

from .capture import GraphBreak
from .graph import Graph, Node
from .runtime import STAGES, Artifact, CompiledCallable, CompiledModule, Unsupported

__all__ = ["compile", "Graph", "Node", "Artifact", "CompiledCallable", "CompiledModule", "Unsupported",
           "GraphBreak", "STAGES"]

_BACKENDS = ("inductor", "aot_eager")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """Compile a function of tensors (or an ``nn.Module``), as ``torch.compile``.

    ``backend="inductor"`` fuses elementwise chains; ``"aot_eager"`` runs the partitioned
    graphs op by op. ``fullgraph=True`` raises ``Unsupported`` at a graph break instead of
    running the function eagerly. Shapes are static (``dynamic=True`` is not supported);
    ``mode`` and ``options`` are accepted and ignored.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"engine.compile: backend must be one of {_BACKENDS}, got {backend!r}")
    if dynamic:
        raise NotImplementedError("engine.compile: dynamic shapes are not supported; a new shape retraces")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if not callable(model):
        raise RuntimeError("compile(): model must be a callable, got " + type(model).__name__)
    if disable:
        return model
    from ..nn import Module
    if isinstance(model, Module):
        return CompiledModule(model, fullgraph=fullgraph, backend=backend)
    return CompiledCallable(model, fullgraph=fullgraph, backend=backend)
