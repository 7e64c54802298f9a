"""``torch.autograd.graph``: saved-tensor hooks, gradient edges, multi-tensor hooks.

The mechanism lives in ``engine/core/graph.py``; this is its public face.
"""
from __future__ import annotations

from ..core.graph import Node, disable_saved_tensors_hooks, saved_tensors_hooks
from ._multi_hooks import GradientEdge, get_gradient_edge, increment_version, register_multi_grad_hook  # noqa: F401


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU and copy them back to their device in backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            dev, t = packed
            return t.to(dev)

        super().__init__(pack, unpack)
