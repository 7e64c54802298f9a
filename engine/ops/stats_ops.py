"""Rows for cummax/cummin, vdot and renorm: the statistics ops PyTorch runs as one node each.

Everything else in engine/_stats_fns.py (quantile, cov, trapezoid, inner, ...) is composed from
existing rows, as PyTorch composes it, so the graph shows PyTorch's nodes.
"""
from __future__ import annotations

import math

from ..derivatives import op


# NOTE [ Cumulative max/min scan ]
# 1. PyTorch walks the dim in order and takes element j over the running extreme when x_j >= out
#    (cummax; <= for cummin) or x_j is NaN, unless the running extreme is already NaN: ties move
#    the index forward, and a NaN sticks, its index moving on to each later NaN.
# 2. That choice is the max of the key (isnan, +-x, index), which is associative, so the scan runs
#    in log2(n) whole-array steps (Hillis-Steele): at shift s each position combines with the one
#    s before it, using only array-API slicing, where and concat.
def _along(nd, dim, start, stop):
    return tuple([slice(None)] * dim + [slice(start, stop)] + [slice(None)] * (nd - dim - 1))


def _cumext_fwd(which):
    def fwd(xp, a, dim):
        nd, n = a.ndim, (a.shape[dim] if a.ndim else 1)
        if nd == 0:
            return xp.asarray(a, copy=True), {"indices": xp.zeros((), dtype=xp.int64)}
        shape = [1] * nd
        shape[dim] = n
        idx = xp.broadcast_to(xp.reshape(xp.arange(n, dtype=xp.int64), tuple(shape)), a.shape)
        v = xp.asarray(a, copy=True)
        floating = xp.isdtype(a.dtype, "real floating")
        s = 1
        while s < n:
            head, early, late = _along(nd, dim, 0, s), _along(nd, dim, 0, n - s), _along(nd, dim, s, n)
            pv, cv = v[early], v[late]
            wins = (cv >= pv) if which == "max" else (cv <= pv)   # NOTE [ Cumulative max/min scan ] 1
            if floating:
                wins = xp.logical_or(xp.isnan(cv), xp.logical_and(wins, xp.logical_not(xp.isnan(pv))))
            v = xp.concat([v[head], xp.where(wins, cv, pv)], axis=dim)
            idx = xp.concat([idx[head], xp.where(wins, idx[late], idx[early])], axis=dim)
            s *= 2
        return v, {"indices": xp.asarray(idx, copy=True)}
    return fwd


def _cumext_bwd(F, g, s):
    """PyTorch's cummaxmin_backward: each output's gradient added at the index it came from."""
    if not s.shapes[0]:
        return (g,)
    return (F.scatter_reduce(F.zeros(s.shapes[0], g), s.dim, s.indices, g, "sum", True),)


op("cummax", "CummaxBackward0", ("self",), _cumext_fwd("max"), _cumext_bwd, save={"self": (), "indices": ()},
   aux=("indices",), promote=False)
op("cummin", "CumminBackward0", ("self",), _cumext_fwd("min"), _cumext_bwd, save={"self": (), "indices": ()},
   aux=("indices",), promote=False)


# ---- vdot: sum(conj(a) * b); glassgrad is real, so dot with its own node ----------------------------
op("vdot", "VdotBackward0", ("self", "other"), lambda xp, a, b: xp.sum(a * b),
   lambda F, g, s: (g * s.other if s.needs[0] else None, g * s.self if s.needs[1] else None),
   save={"other": ("self",), "self": ("other",)}, promote=False)


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


# ---- poisson: the draws come in as a second, gradient-free input (the kernel stays a pure copy) -------
op("poisson", "PoissonBackward0", ("self", "sample"), lambda xp, rate, sample: xp.asarray(sample, copy=True),
   lambda F, g, s: (g * 0.0, None), promote=False, nondiff=("sample",))


# ---- histogram: no derivative in PyTorch; a tensor that requires grad gives a NotImplemented node ------
def _histogram_bwd(F, g, s):
    raise RuntimeError("derivative for aten::histogram is not implemented")


op("histogram", "NotImplemented", ("self", "counts"), lambda xp, a, counts: xp.asarray(counts, copy=True),
   _histogram_bwd, promote=False, nondiff=("counts",))
