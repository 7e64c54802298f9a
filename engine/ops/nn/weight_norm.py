"""``_weight_norm_interface`` for the op table: PyTorch's fused weight norm (WeightNormInterfaceBackward0).

NOTE [ Weight norm ]
1. ``w = v * (g / n)``, with ``n`` the 2-norm of ``v`` over every dim but ``dim`` (shaped like ``g``:
   1 everywhere but ``dim``). PyTorch runs this fused kernel when ``dim`` is the first or last dim of
   ``v`` and composes ``v * (g / norm_except_dim(v, 2, dim))`` otherwise (MulBackward0).
2. The node keeps ``v``, ``g`` and the norms (``result1``), as PyTorch's.
3. Backward, with ``s = sum_except_dim(grad_w * v)``: ``grad_g = s / n`` and
   ``grad_v = (g / n) * (grad_w - v * s / n^2)``. Under ``create_graph`` the norms are rebuilt
   from ``v`` so second derivatives see them move (NOTE [ One formula, two currencies ] 4).
"""
from __future__ import annotations

from ...core.table import op


def _axes(ndim, dim):
    return tuple(i for i in range(ndim) if i != dim)


def _wn_fwd(xp, v, g, dim=0):
    n = xp.sqrt(xp.sum(v * v, axis=_axes(v.ndim, dim), keepdims=True))
    return v * (xp.reshape(g, n.shape) / n), {"result1": xp.reshape(n, g.shape)}


def _wn_bwd(F, gw, s):
    v, g, dim = s.v, s.g, s.dim
    axes = _axes(len(s.shapes[0]), dim)
    kshape = tuple(1 if i in axes else d for i, d in enumerate(s.shapes[0]))
    n = F.sqrt(F.sum(v * v, axis=axes, keepdims=True)) if F.differentiable else F.reshape(s.result1, kshape)
    g = F.reshape(g, kshape)
    red = F.sum(gw * v, axis=axes, keepdims=True)
    gv = (g / n) * (gw - v * (red / (n * n))) if s.needs[0] else None
    gg = F.reshape(red / n, tuple(s.shapes[1])) if s.needs[1] else None
    return gv, gg


op("weight_norm_interface", "WeightNormInterfaceBackward0", ("v", "g"), _wn_fwd, _wn_bwd,
   save={"v": (), "g": (), "result1": ()}, aux=("result1",), promote=False)
