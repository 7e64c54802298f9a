"""``F.cosine_similarity``, ``F.normalize``, ``F.pairwise_distance`` and ``CosineSimilarity``,
``PairwiseDistance``, composed as PyTorch composes them."""
from __future__ import annotations

from ..backend import dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..core.tensor import _wrap_dim
from ..core import grad_mode
from ..derivatives import OPS
from .module import Module


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum((x1 / |x1|) * (x2 / |x2|), dim)``, each norm clamped below at ``eps`` (the clamp outside
    the graph, as PyTorch: LinalgVectorNormBackward0 -> CloneBackward0 -> DivBackward0)."""
    E._broadcast_check(x1, x2)
    if tuple(x1.shape) != tuple(x2.shape):
        import numpy as np
        shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
        x1, x2 = E.expand(x1, shape), E.expand(x2, shape)
    d = _wrap_dim(dim, x1.ndim)
    n1 = E.clone(E.norm(x1, 2, d, keepdim=True))
    n2 = E.clone(E.norm(x2, 2, d, keepdim=True))
    with grad_mode.no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return E.sum(E.mul(E.div(x1, n1), E.div(x2, n2)), d)


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


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


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


class PairwiseDistance(Module):
    """``pairwise_distance(x1, x2)``: the p-norm distance between matching rows."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["cosine_similarity", "normalize", "pairwise_distance", "CosineSimilarity", "PairwiseDistance"]
