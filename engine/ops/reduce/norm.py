"""Norm rows: the 2-norm over dims (LinalgVectorNormBackward0), renorm, and the distances cdist,
euclidean_dist (cdist's matrix-product path) and dist.

Each row keeps what PyTorch's node keeps; the torch.* functions are in engine/functions/reduce.py and
engine/functions/linalg.py.
"""
from __future__ import annotations

import math

from ...core.primitives import _keep
from ...core.table import op
from .scan import _along


def _norm_bwd(F, g, s):
    """PyTorch's ``self * (grad / norm).masked_fill_(norm == 0, 0)``: 0 where the norm is 0 (not 0/0), and
    a recorded backward's node is MulBackward0, as PyTorch's."""
    res, g = _keep(F, s.result, s, s.shapes[0]), _keep(F, g, s, s.shapes[0])
    zero = F.eq(res, 0.0)
    return (s.self * F.where(zero, 0.0, g / F.where(zero, 1.0, res)),)


op("norm", "LinalgVectorNormBackward0", ("self",), lambda xp, a, dim=None, keepdim=False:
   xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim)), _norm_bwd, save={"self": (), "result": ()}, promote=False)


# ---- renorm: each slice along dim scaled down to norm maxnorm when its p-norm exceeds it ---------------
def _renorm_dims(nd, dim):
    return tuple(k for k in range(nd) if k != dim)


def _pnorm(xp, a, p, dims):
    x = xp.abs(a)
    if p == math.inf:
        return xp.max(x, axis=dims, keepdims=True)
    return xp.sum(x ** p, axis=dims, keepdims=True) ** (1.0 / p)


def _renorm_fwd(xp, a, p, dim, maxnorm):
    norm = _pnorm(xp, a, p, _renorm_dims(a.ndim, dim))
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), xp.ones_like(norm))
    return a * factor


def _renorm_bwd(F, g, s):
    """PyTorch's renorm_backward: for slices that were scaled, factor * g minus the scale's change
    through the norm, factor / (norm + 1e-7) * d(norm)/dx * sum(x * g); other slices pass g."""
    x, p = s.self, s.p
    dims = _renorm_dims(len(s.shapes[0]), s.dim)
    ax = F.abs(x)
    if p == math.inf:
        norm = _max_keep(F, ax, dims)
    else:
        norm = F.sum(ax ** p, axis=dims, keepdims=True) ** (1.0 / p)
    dot = F.sum(x * g, axis=dims, keepdims=True)
    safe = F.where(F.eq(norm, 0.0), 1.0, norm)
    if p == math.inf:
        hit = F.eq(ax, norm)
        count = F.sum(F.where(hit, 1.0, 0.0 * x), axis=dims, keepdims=True)
        dnorm = F.where(hit, F.sign(x) / count, 0.0 * x)
    elif p == 1:
        dnorm = F.sign(x)
    elif p == 2:
        dnorm = x / safe
    else:
        dnorm = F.sign(x) * ax ** (p - 1.0) / safe ** (p - 1.0)
    inv = 1.0 / (norm + 1e-7)
    factor = inv * s.maxnorm
    scaled = factor * g - (factor * inv) * (dnorm * dot)
    return (F.where(F.gt(norm, s.maxnorm), scaled, g),)


def _max_keep(F, ax, dims):
    """The largest ``|x|`` over ``dims``, kept as size-1 dims (F has no max: a running where)."""
    m = ax
    for d in dims:
        n = F.shape(m)[d]
        parts = [F.index(m, _along(len(F.shape(m)), d, k, k + 1)) for k in range(n)]
        best = parts[0]
        for q in parts[1:]:
            best = F.where(F.gt(q, best), q, best)
        m = best
    return m


op("renorm", "RenormBackward0", ("self",), _renorm_fwd, _renorm_bwd, save={"self": ()}, promote=False)


# ---- distances ------------------------------------------------------------------------------------
def _pnorm_fwd(xp, d, p, axis, keepdims=False):
    """The p-norm of ``d`` over ``axis``: p = 0 counts non-zeros, p = inf takes the largest |d|."""
    a = xp.abs(d)
    if p == 0:
        return xp.sum(xp.astype(a != 0, d.dtype), axis=axis, keepdims=keepdims)
    if p == math.inf:
        return xp.max(a, axis=axis, keepdims=keepdims) if d.shape[axis] else xp.sum(a, axis=axis, keepdims=keepdims)
    if p == 1:
        return xp.sum(a, axis=axis, keepdims=keepdims)
    if p == 2:
        return xp.sqrt(xp.sum(a * a, axis=axis, keepdims=keepdims))
    return xp.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _pnorm_grad(F, d, r, p):
    """d norm / d ``d`` with ``r`` the norm broadcast against ``d`` (PyTorch's norm_backward):
    0 where the norm is 0; at p = inf the gradient goes to every entry as large as the norm."""
    if p == 0:
        return d * 0.0
    if p == 1:
        return F.sign(d)
    zero = F.eq(r, 0.0)
    if p == math.inf:
        hit = F.astype(F.eq(F.abs(d), r), F.dtype(d))
        return F.where(zero, 0.0, F.sign(d) * hit)
    safe = F.where(zero, 1.0, r)
    if p == 2:
        return F.where(zero, 0.0, d / safe)
    ad = F.abs(d)
    return F.where(zero, 0.0, F.sign(d) * ad ** (p - 1) / safe ** (p - 1))


def _cdist_fwd(xp, x1, x2, p):
    d = xp.expand_dims(x1, axis=-2) - xp.expand_dims(x2, axis=-3)
    return _pnorm_fwd(xp, d, p, -1)


def _cdist_bwd(F, g, s):
    x1, x2 = s.x1, s.x2
    d = F.expand_dims(x1, axis=-2) - F.expand_dims(x2, axis=-3)       # (..., P, R, M)
    w = F.expand_dims(g, axis=-1) * _pnorm_grad(F, d, F.expand_dims(s.result, axis=-1), s.p)
    return (F.sum(w, axis=-2) if s.needs[0] else None, -F.sum(w, axis=-3) if s.needs[1] else None)


op("cdist", "CdistBackward0", ("x1", "x2"), _cdist_fwd, _cdist_bwd, save={"x1": (), "x2": (), "result": ()},
   promote=False)
op("euclidean_dist", "EuclideanDistBackward0", ("x1", "x2"), lambda xp, a, b: _cdist_fwd(xp, a, b, 2),
   lambda F, g, s: _cdist_bwd(F, g, _WithP(s, 2)), save={"x1": (), "x2": (), "result": ()}, promote=False)


class _WithP:
    def __init__(self, s, p):
        self._s, self.p = s, p

    def __getattr__(self, name):
        return getattr(self._s, name)


def _dist_fwd(xp, a, b, p):
    d = xp.reshape(a - b, (-1,))
    return _pnorm_fwd(xp, d, p, 0)


def _dist_bwd(F, g, s):
    w = g * _pnorm_grad(F, s.self - s.other, s.result, s.p)
    return (w if s.needs[0] else None, -w if s.needs[1] else None)


op("dist", "DistBackward0", ("self", "other"), _dist_fwd, _dist_bwd,
   save={"other": (), "self": (), "result": ()}, promote=False)
