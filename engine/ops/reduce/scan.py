"""Scan rows: the running reductions cumsum, cumprod (NOTE [ Gradient of a running product ]),
logcumsumexp, cummax and cummin (NOTE [ Cumulative max/min scan ]).

Each row keeps what PyTorch's node keeps; the torch.* functions are in engine/functions/reduce.py. A 0-d
input reaches a row here as shape (1,) (NOTE [ A 0-d tensor's one dim ] in engine/functions/dims.py).
"""
from __future__ import annotations

import math

from ...core.table import op
from .stats import _any_zero


def _cumsum_fwd(xp, a, dim):
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)
    return xp.cumulative_sum(a, axis=dim)


# the gradient of a running sum is the running sum from the other end: total - cumsum + g
op("cumsum", "CumsumBackward0", ("self",), _cumsum_fwd,
   lambda F, g, s: (F.sum(g, axis=s.dim, keepdims=True) - F.cumsum(g, s.dim) + g,), promote=False)


# ---- scans --------------------------------------------------------------------------------------
def _moveaxis_last(F, x, d):
    nd = len(F.shape(x))
    perm = tuple(k for k in range(nd) if k != d) + (d,)
    return F.permute(x, perm), perm


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _rev_cumsum(F, v, d):
    """sum_{j >= i} v_j along ``d``."""
    return F.sum(v, axis=d, keepdims=True) - F.cumsum(v, d) + v


def _cumprod_bwd(F, g, s):
    """NOTE [ Gradient of a running product ]
    1. out_j = x_0 ... x_j, so d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, and the
       gradient at i is the sum of ``g_j`` times that over j >= i.
    2. Without zeros the product is ``out_j / x_i``: the gradient is a reversed running sum of
       ``g * out``, divided by ``x`` (PyTorch's path too).
    3. With a zero the division is 0/0, so the products are formed directly: for each i, the
       running product of ``x`` with ``x_i`` set to 1, masked to j >= i (an n x n block per slice).
    """
    x, d = s.self, s.dim
    if F.shape(x)[d] == 0:
        return (g,)
    if not _any_zero(F, x):
        return (_rev_cumsum(F, g * s.result, d) / x,)                          # rule 2
    n = F.shape(x)[d]
    xl, perm = _moveaxis_last(F, x, d)
    gl, _ = _moveaxis_last(F, g, d)
    nd = len(F.shape(xl)) + 1
    i_ax, k_ax = F.iota(n, nd - 2, nd, x), F.iota(n, nd - 1, nd, x)
    xi = F.where(F.eq(i_ax, k_ax), 1.0, F.expand_dims(xl, axis=nd - 2))        # rule 3: x with x_i = 1
    run = F.cumprod(xi, nd - 1)
    terms = F.where(F.ge(k_ax, i_ax), run * F.expand_dims(gl, axis=nd - 2), 0.0)
    return (F.permute(F.sum(terms, axis=nd - 1), _inverse(perm)),)


def _cumprod_fwd(xp, a, dim):
    from ...backend.gaps import cumprod
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)
    return cumprod(xp, a, dim)


op("cumprod", "CumprodBackward0", ("self",), _cumprod_fwd, _cumprod_bwd, save={"self": (), "result": ()},
   promote=False)


def _logcumsumexp_fwd(xp, a, dim):
    m = xp.max(a, axis=dim, keepdims=True) if a.shape[dim] else xp.zeros_like(a)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    return xp.log(xp.cumulative_sum(xp.exp(a - m), axis=dim)) + m


def _logcumsumexp_bwd(F, g, s):
    """grad_i = sum_{j >= i} g_j exp(x_i - out_j); every exponent is <= 0 (out_j >= x_i), so the
    n x n block per slice is formed without overflow."""
    x, d = s.self, s.dim
    if F.shape(x)[d] == 0:
        return (g,)
    n = F.shape(x)[d]
    xl, perm = _moveaxis_last(F, x, d)
    rl, _ = _moveaxis_last(F, s.result, d)
    gl, _ = _moveaxis_last(F, g, d)
    nd = len(F.shape(xl)) + 1
    i_ax, j_ax = F.iota(n, nd - 2, nd, x), F.iota(n, nd - 1, nd, x)
    xi, rj = F.expand_dims(xl, axis=nd - 1), F.expand_dims(rl, axis=nd - 2)
    live = F.logical_and(F.ge(j_ax, i_ax), F.lt(-math.inf, xi))              # a -inf input gets nothing
    w = F.exp(F.where(live, xi - rj, 0.0))
    terms = F.where(live, w * F.expand_dims(gl, axis=nd - 2), 0.0)
    return (F.permute(F.sum(terms, axis=nd - 1), _inverse(perm)),)


op("logcumsumexp", "LogcumsumexpBackward0", ("self",), _logcumsumexp_fwd, _logcumsumexp_bwd,
   save={"self": (), "result": ()}, promote=False)


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
        nd, n = a.ndim, a.shape[dim]
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
    return (F.scatter_reduce(F.zeros(s.shapes[0], g), s.dim, s.indices, g, "sum", True),)


op("cummax", "CummaxBackward0", ("self",), _cumext_fwd("max"), _cumext_bwd, save={"self": (), "indices": ()},
   aux=("indices",), promote=False)
op("cummin", "CumminBackward0", ("self",), _cumext_fwd("min"), _cumext_bwd, save={"self": (), "indices": ()},
   aux=("indices",), promote=False)
