"""Distances: ``F.cosine_similarity``, ``F.pairwise_distance``, ``F.normalize`` (composed as PyTorch composes
them) and ``F.pdist``, the p-norm distance between every pair of rows (NOTE [ pdist ] in
engine/ops/nn/pdist.py)."""
from __future__ import annotations

import numpy as np

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core import grad_mode
from ...core.dispatch import apply
from ...functions.dims import wrap_dim as _wrap_dim
from ...core.table import OPS


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum((x1 / |x1|) * (x2 / |x2|), dim)``, each norm clamped below at ``eps`` (the clamp outside
    the graph, as PyTorch: LinalgVectorNormBackward0 -> CloneBackward0 -> DivBackward0)."""
    E._broadcast_check(x1, x2)
    if tuple(x1.shape) != tuple(x2.shape):
        shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
        x1, x2 = E.expand(x1, shape), E.expand(x2, shape)
    d = _wrap_dim(dim, x1.ndim)
    n1 = E.clone(E.norm(x1, 2, d, keepdim=True))
    n2 = E.clone(E.norm(x2, 2, d, keepdim=True))
    with grad_mode.no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return E.sum(E.mul(E.div(x1, n1), E.div(x2, n2)), d)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim (AddBackward1 then NormBackward1, as PyTorch's)."""
    E._broadcast_check(x1, x2)
    nd = max(x1.ndim, x2.ndim)
    diff = E.sub(x1, x2)
    if not diff.dtype.is_floating_point:
        diff = diff.to(_dtype.get_default_dtype())
    diff = apply(OPS["add_number"], [diff], {"other": float(eps)})
    return apply(OPS["linalg_vector_norm"], [diff], {"ord": float(p), "dim": (nd - 1,) if nd else None,
                                                     "keepdim": bool(keepdim)}, node_name="NormBackward1")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``: LinalgVectorNormBackward0, ClampMinBackward0,
    ExpandBackward0 and DivBackward0, as PyTorch."""
    d = _wrap_dim(dim, input.ndim)
    norm = E.norm(input, p, d, keepdim=True)
    denom = apply(OPS["clamp"], [norm], {"min": eps, "max": None}, node_name="ClampMinBackward0")
    res = E.div(input, E.expand(denom, tuple(input.shape)))
    if out is not None:
        out.copy_(res)
        return out
    return res


def pdist(input, p=2):
    """``||input[i] - input[j]||_p`` for each pair of rows ``i < j`` of an (N, M) tensor, row-major."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(OPS["pdist"], [input], {"p": float(p)})
