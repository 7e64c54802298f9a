"""Op-table rows for more of ``torch.*``'s math: inverse trigonometric and hyperbolic functions, atan2,
hypot, logaddexp, xlogy, lerp, addcmul/addcdiv, cumprod, logcumsumexp, nansum, median, kthvalue, mode,
diagonal, trace, cross, rot90, the ``add*`` matrix products, cdist and dist.

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the user-facing functions are in
engine/_math_fns.py.
"""
from __future__ import annotations

import math

from ..derivatives import _any_zero, _clone_fwd, op

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _isnan(F, x):
    return F.logical_not(F.eq(x, x))


# ---- elementwise unary: each keeps its input ``self`` ---------------------------------------------
def _cosh(F, x):
    return (F.exp(x) + F.exp(-x)) * 0.5


def _sinh(F, x):
    return (F.exp(x) - F.exp(-x)) * 0.5


_UNARY = {   # name: (node, forward, d/dx as a formula of x)
    "asin": ("AsinBackward0", lambda xp, a: xp.asin(a), lambda F, x: 1.0 / F.sqrt(1.0 - x * x)),
    "acos": ("AcosBackward0", lambda xp, a: xp.acos(a), lambda F, x: -1.0 / F.sqrt(1.0 - x * x)),
    "atan": ("AtanBackward0", lambda xp, a: xp.atan(a), lambda F, x: 1.0 / (1.0 + x * x)),
    "sinh": ("SinhBackward0", lambda xp, a: xp.sinh(a), _cosh),
    "cosh": ("CoshBackward0", lambda xp, a: xp.cosh(a), _sinh),
    "asinh": ("AsinhBackward0", lambda xp, a: xp.asinh(a), lambda F, x: 1.0 / F.sqrt(x * x + 1.0)),
    "acosh": ("AcoshBackward0", lambda xp, a: xp.acosh(a), lambda F, x: 1.0 / F.sqrt((x - 1.0) * (x + 1.0))),
    "atanh": ("AtanhBackward0", lambda xp, a: xp.atanh(a), lambda F, x: 1.0 / (1.0 - x * x)),
    "log2": ("Log2Backward0", lambda xp, a: xp.log2(a), lambda F, x: 1.0 / (x * _LN2)),
    "log10": ("Log10Backward0", lambda xp, a: xp.log10(a), lambda F, x: 1.0 / (x * _LN10)),
}


def _unary_bwd(dfdx):
    return lambda F, g, s: (g * dfdx(F, s.self),)


for _name, (_node, _fwd, _d) in _UNARY.items():
    op(_name, _node, ("self",), _fwd, _unary_bwd(_d), save={"self": ()}, float_op=True)


def _sinc_fwd(xp, a):
    px = a * math.pi
    safe = xp.where(a == 0, xp.ones_like(px), px)
    return xp.where(a == 0, xp.ones_like(px), xp.sin(safe) / safe)


def _sinc_bwd(F, g, s):
    """d sinc = (cos(pi x) pi x - sin(pi x)) / (pi x^2); 0 at x = 0 (PyTorch's masked_fill)."""
    x = s.self
    zero = F.eq(x, 0.0)
    xs = F.where(zero, 1.0, x)
    px = xs * math.pi
    return (F.where(zero, 0.0, g * ((px * F.cos(px) - F.sin(px)) / (px * xs))),)


op("sinc", "SincBackward0", ("self",), _sinc_fwd, _sinc_bwd, save={"self": ()}, float_op=True)


def _logit_fwd(xp, a, eps=None):
    if eps is not None:
        a = xp.clip(a, eps, 1.0 - eps)
    return xp.log(a / (1.0 - a))


def _logit_bwd(F, g, s):
    """``g / (x (1 - x))``; outside [0, 1] NaN without ``eps``, and 0 outside [eps, 1 - eps] with it."""
    x = s.self
    d = g / (x * (1.0 - x))
    lo, hi = (0.0, 1.0) if s.eps is None else (s.eps, 1.0 - s.eps)
    out = F.logical_not(F.logical_and(F.ge(x, lo), F.le(x, hi)))
    return (F.where(out, math.nan if s.eps is None else 0.0, d),)


op("logit", "LogitBackward0", ("self",), _logit_fwd, _logit_bwd, save={"self": ()}, float_op=True)


def _nan_to_num_fwd(xp, a, nan=0.0, posinf=None, neginf=None):
    if not xp.isdtype(a.dtype, "real floating"):
        return xp.asarray(a, copy=True)
    fi = xp.finfo(a.dtype)
    big = fi.max if posinf is None else posinf
    small = fi.min if neginf is None else neginf
    a = xp.where(xp.isnan(a), xp.asarray(nan, dtype=a.dtype), a)
    a = xp.where(a == math.inf, xp.asarray(big, dtype=a.dtype), a)
    return xp.where(a == -math.inf, xp.asarray(small, dtype=a.dtype), a)


def _finite(F, x):
    return F.logical_and(F.eq(x, x), F.lt(F.abs(x), math.inf))


op("nan_to_num", "NanToNumBackward0", ("self",), _nan_to_num_fwd,
   lambda F, g, s: (F.where(_finite(F, s.self), g, 0.0),), save={"self": ()}, promote=False)

# rounding and unit changes: nothing saved
op("trunc", "TruncBackward0", ("self",), lambda xp, a: xp.trunc(a) if xp.isdtype(a.dtype, "real floating") else
   xp.asarray(a, copy=True), lambda F, g, s: (g * 0.0,), promote=False)
op("frac", "FracBackward0", ("self",), lambda xp, a: a - xp.trunc(a), lambda F, g, s: (g,), promote=False)
op("deg2rad", "Deg2RadBackward0", ("self",), lambda xp, a: a * (math.pi / 180.0),
   lambda F, g, s: (g * (math.pi / 180.0),), float_op=True)
op("rad2deg", "Rad2DegBackward0", ("self",), lambda xp, a: a * (180.0 / math.pi),
   lambda F, g, s: (g * (180.0 / math.pi),), float_op=True)


# ---- elementwise binary ---------------------------------------------------------------------------
def _atan2_bwd(F, g, s):
    a, b = s.self, s.other
    r = g / (a * a + b * b)
    return (r * b if s.needs[0] else None, -r * a if s.needs[1] else None)


op("atan2", "Atan2Backward0", ("self", "other"), lambda xp, a, b: xp.atan2(a, b), _atan2_bwd,
   save={"other": (), "self": ()}, float_op=True)
op("hypot", "HypotBackward0", ("self", "other"), lambda xp, a, b: xp.hypot(a, b),
   lambda F, g, s: (g * s.self / s.result if s.needs[0] else None, g * s.other / s.result if s.needs[1] else None),
   save={"other": ("other",), "self": ("self",), "result": ()})
op("logaddexp", "LogaddexpBackward0", ("self", "other"), lambda xp, a, b: xp.logaddexp(a, b),
   lambda F, g, s: (g / (1.0 + F.exp(s.other - s.self)) if s.needs[0] else None,
                    g / (1.0 + F.exp(s.self - s.other)) if s.needs[1] else None),
   save={"other": (), "self": ()})


def _xlogy_fwd(xp, a, b):
    """``a * log(b)``, 0 where ``a`` is 0 (unless ``b`` is NaN). ``a`` or ``b`` may be a number."""
    like = b if hasattr(b, "shape") else a
    if not hasattr(a, "shape"):
        a = xp.asarray(a, dtype=like.dtype)
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=like.dtype)
    prod = a * xp.log(b)
    return xp.where(xp.logical_and(a == 0, xp.logical_not(xp.isnan(b))), xp.zeros_like(prod), prod)


def _xlogy_bwd(F, g, s):
    """PyTorch's formulas: ``g * log(other)``, 0 where self is 0 and other <= 0; ``g * self / other``."""
    a, b = s.self, s.other
    ga = gb = None
    if s.needs[0]:
        if type(b) in (int, float):
            ga = g * (math.log(b) if b > 0 else (-math.inf if b == 0 else math.nan))
            if b <= 0:
                ga = F.where(F.eq(a, 0.0), 0.0, ga)
        else:
            ga = F.where(F.logical_and(F.eq(a, 0.0), F.le(b, 0.0)), 0.0, g * F.log(b))
    if s.needs[1]:
        gb = g * a / b
    return ga, gb


class _Both:
    """A one-tensor xlogy node's saved values seen as the two-operand node's (the number as an attribute)."""

    def __init__(self, s, tensor_is_self):
        self._s, self._self_side = s, tensor_is_self
        self.needs = (s.needs[0], False) if tensor_is_self else (False, s.needs[0])

    def __getattr__(self, name):
        return getattr(self._s, name)


op("xlogy", "XlogyBackward0", ("self", "other"), _xlogy_fwd, _xlogy_bwd, save={"other": (), "self": ()},
   float_op=True)
# one operand a number: one edge, the number kept as an attribute (XlogyBackward2 / XlogyBackward1)
op("xlogy_number_other", "XlogyBackward2", ("self",), lambda xp, a, other: _xlogy_fwd(xp, a, other),
   lambda F, g, s: (_xlogy_bwd(F, g, _Both(s, True))[0],), save={"self": ()}, float_op=True)
op("xlogy_number_self", "XlogyBackward1", ("other",), lambda xp, b, self: _xlogy_fwd(xp, self, b),
   lambda F, g, s: (_xlogy_bwd(F, g, _Both(s, False))[1],), save={"other": ()}, float_op=True)


def _lerp_fwd(xp, a, b, weight):
    """``a + w (b - a)`` for ``w < 0.5``, ``b - (b - a)(1 - w)`` above: exact at both ends (PyTorch's form)."""
    d = b - a
    if not hasattr(weight, "shape"):
        return a + d * weight if abs(weight) < 0.5 else b - d * (1.0 - weight)
    return xp.where(xp.abs(weight) < 0.5, a + weight * d, b - d * (1.0 - weight))


op("lerp", "LerpBackward0", ("self", "end"), _lerp_fwd,
   lambda F, g, s: (g * (1.0 - s.weight) if s.needs[0] else None, g * s.weight if s.needs[1] else None),
   promote=False)
op("lerp_tensor", "LerpBackward1", ("self", "end", "weight"), _lerp_fwd,
   lambda F, g, s: (g * (1.0 - s.weight) if s.needs[0] else None, g * s.weight if s.needs[1] else None,
                    g * (s.end - s.self) if s.needs[2] else None),
   save={"end": ("weight",), "self": ("weight",), "weight": ("self", "end")}, promote=False)


def _addcmul_fwd(xp, a, t1, t2, value=1):
    return a + t1 * t2 * value if value != 1 else a + t1 * t2


op("addcmul", "AddcmulBackward0", ("self", "tensor1", "tensor2"), _addcmul_fwd,
   lambda F, g, s: (g, g * s.tensor2 * s.value if s.needs[1] else None,
                    g * s.tensor1 * s.value if s.needs[2] else None),
   save={"tensor1": ("tensor2",), "tensor2": ("tensor1",)})


def _addcdiv_fwd(xp, a, t1, t2, value=1):
    return a + t1 / t2 * value if value != 1 else a + t1 / t2


op("addcdiv", "AddcdivBackward0", ("self", "tensor1", "tensor2"), _addcdiv_fwd,
   lambda F, g, s: (g, g * s.value / s.tensor2 if s.needs[1] else None,
                    -g * s.value * s.tensor1 / (s.tensor2 * s.tensor2) if s.needs[2] else None),
   save={"tensor1": ("tensor2",), "tensor2": ()})


def _not_implemented(name):
    def bwd(F, g, s):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return bwd


def _floor_divide_fwd(xp, a, b):
    if xp.isdtype(a.dtype, "real floating"):
        from .elementwise_more import floor_divide_floating   # PyTorch's rounding (1.0 // 0.1 is 9)
        return floor_divide_floating(xp, a, b)
    return xp.floor_divide(a, b)


# no gradient formula in PyTorch: the node is NotImplemented and backward through it raises
op("floor_divide", "NotImplemented", ("self", "other"), _floor_divide_fwd, _not_implemented("floor_divide"))
op("floor_divide_number", "NotImplemented", ("self",), _floor_divide_fwd, _not_implemented("floor_divide"))


def _heaviside_fwd(xp, a, values):
    """``values`` where ``a`` is 0, else 1 for ``a > 0`` and 0 below (and for NaN)."""
    step = xp.where(a > 0, xp.ones_like(a), xp.zeros_like(a))
    return xp.where(a == 0, values, step)


op("heaviside", "NotImplemented", ("self", "values"), _heaviside_fwd, _not_implemented("heaviside"), promote=False)


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
    if not F.shape(x) or F.shape(x)[d] == 0:
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
    from ..backend.gaps import cumprod
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)
    if not a.shape:                  # a 0-d tensor is its own running product
        return xp.asarray(a, copy=True)
    return cumprod(xp, a, dim)


op("cumprod", "CumprodBackward0", ("self",), _cumprod_fwd, _cumprod_bwd, save={"self": (), "result": ()},
   promote=False)


def _logcumsumexp_fwd(xp, a, dim):
    if not a.shape:
        return xp.asarray(a, copy=True)
    m = xp.max(a, axis=dim, keepdims=True) if a.shape[dim] else xp.zeros_like(a)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    return xp.log(xp.cumulative_sum(xp.exp(a - m), axis=dim)) + m


def _logcumsumexp_bwd(F, g, s):
    """grad_i = sum_{j >= i} g_j exp(x_i - out_j); every exponent is <= 0 (out_j >= x_i), so the
    n x n block per slice is formed without overflow."""
    x, d = s.self, s.dim
    if not F.shape(x) or F.shape(x)[d] == 0:
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


# ---- reductions ---------------------------------------------------------------------------------
def _keep(F, g, dim, keepdim):
    if dim is None or keepdim:
        return g
    for d in sorted(dim):
        g = F.expand_dims(g, axis=d)
    return g


def _nansum_fwd(xp, a, dim=None, keepdim=False):
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)
    if xp.isdtype(a.dtype, "real floating"):
        a = xp.where(xp.isnan(a), xp.zeros_like(a), a)
    kw = {"dtype": xp.int64} if a.dtype == xp.int64 else {}
    return xp.sum(a, axis=dim, keepdims=keepdim, **kw)


op("nansum", "NansumBackward0", ("self",), _nansum_fwd,
   lambda F, g, s: (F.where(_isnan(F, s.self), 0.0,
                            F.broadcast_to(_keep(F, g, s.dim, s.keepdim), s.shapes[0])),),
   save={"self": ()}, promote=False)


def _median_all_fwd(xp, a, ignore_nan=False):
    flat = xp.reshape(a, (-1,))
    return _select_sorted(xp, flat, 0, ignore_nan, keepdim=False)[0]


def _select_sorted(xp, a, dim, ignore_nan, keepdim, k=None):
    """The lower median (or the ``k``-th smallest, 0-based) along ``dim`` and its index. NaN sorts last:
    a slice holding one gives NaN and its first NaN's index unless ``ignore_nan``."""
    idx = xp.argsort(a, axis=dim, stable=True)
    n = a.shape[dim]
    if k is None:
        if xp.isdtype(a.dtype, "real floating"):
            nans = xp.sum(xp.astype(xp.isnan(a), xp.int64), axis=dim, keepdims=True)
            valid = n - nans
            pos = xp.where(valid > 0, (valid - 1) // 2, xp.zeros_like(valid)) if ignore_nan else \
                xp.where(nans > 0, valid, xp.full_like(nans, (n - 1) // 2))
        else:
            shape = list(a.shape)
            shape[dim] = 1
            pos = xp.full(tuple(shape), (n - 1) // 2, dtype=xp.int64)
    else:
        shape = list(a.shape)
        shape[dim] = 1
        pos = xp.full(tuple(shape), k, dtype=xp.int64)
    where = xp.take_along_axis(idx, pos, axis=dim)
    vals = xp.take_along_axis(a, where, axis=dim)
    if not keepdim:
        vals, where = xp.squeeze(vals, axis=dim), xp.squeeze(where, axis=dim)
    return vals, xp.astype(where, xp.int64)


def _evenly_bwd(F, g, s):
    """PyTorch's evenly_distribute_backward: the gradient split among the elements equal to the
    result (among the NaNs when the result is NaN)."""
    x, r = s.self, s.result
    mask = F.where(_isnan(F, r), _isnan(F, x), F.eq(x, r))
    count = F.sum(F.astype(mask, F.dtype(g)))
    return (F.where(mask, g / count, 0.0),)


op("median", "MedianBackward0", ("self",), _median_all_fwd, _evenly_bwd, save={"self": (), "result": ()},
   promote=False)
op("nanmedian", "NanmedianBackward0", ("self",), lambda xp, a: _median_all_fwd(xp, a, True), _evenly_bwd,
   save={"self": (), "result": ()}, promote=False)


def _pick_bwd(F, g, s):
    """The gradient to the picked element of each slice (value_selecting_reduction_backward)."""
    shape, d, idx = s.shapes[0], s.dim, s.indices
    if not shape:
        return (g,)
    if not s.keepdim:
        g, idx = F.expand_dims(g, axis=d), F.expand_dims(idx, axis=d)
    return (F.where(F.eq(F.iota(shape[d], d, len(shape), g), idx), g, 0.0),)


def _dim_select_fwd(kind):
    def fwd(xp, a, dim, keepdim=False, k=None):
        if not a.shape:
            return xp.asarray(a, copy=True), {"indices": xp.zeros((), dtype=xp.int64)}
        if kind == "mode":
            vals, where = _mode_fwd(xp, a, dim, keepdim)
        else:
            vals, where = _select_sorted(xp, a, dim, kind == "nanmedian", keepdim, k)
        return vals, {"indices": where}
    return fwd


def _mode_fwd(xp, a, dim, keepdim):
    """The most frequent value of each slice (the smallest among equally frequent ones) and the index
    of its last occurrence, as PyTorch's CPU kernel; counted on the host."""
    import numpy as np

    from ..backend.gaps import from_numpy, to_numpy
    h = np.moveaxis(to_numpy(xp, a), dim, -1)
    rows = h.reshape(-1, h.shape[-1])
    vals = np.empty(rows.shape[0], dtype=h.dtype)
    where = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        u, counts = np.unique(row, return_counts=True)
        v = u[int(np.argmax(counts))]
        vals[r] = v
        where[r] = int(np.nonzero(row == v)[0][-1]) if v == v else int(np.nonzero(row != row)[0][-1])
    out_shape = h.shape[:-1]
    vals, where = vals.reshape(out_shape), where.reshape(out_shape)
    if keepdim:
        vals, where = np.expand_dims(vals, dim), np.expand_dims(where, dim)
    return from_numpy(xp, np.ascontiguousarray(vals)), from_numpy(xp, np.ascontiguousarray(where))


for _name, _node in (("median_dim", "MedianBackward1"), ("nanmedian_dim", "NanmedianBackward1"),
                     ("kthvalue", "KthvalueBackward0"), ("mode", "ModeBackward0")):
    op(_name, _node, ("self",), _dim_select_fwd(_name.replace("_dim", "")), _pick_bwd, save={"indices": ()},
       aux=("indices",), promote=False)


# ---- diagonals ----------------------------------------------------------------------------------
def _diag_positions(n1, n2, offset):
    """(first row, first column, length) of the diagonal ``offset`` of an n1 x n2 matrix."""
    r0, c0 = max(-offset, 0), max(offset, 0)
    return r0, c0, max(min(n1 - r0, n2 - c0), 0)


def _diagonal_fwd(xp, a, offset=0, dim1=0, dim2=1):
    """A view on NumPy and CuPy (as_strided over the same buffer); elsewhere (array_api_strict, which has
    no strided views) a gather, so a write through it does not reach the base there."""
    from ..backend import gaps as _backend
    shape = tuple(a.shape)
    r0, c0, n = _diag_positions(shape[dim1], shape[dim2], offset)
    rest = [k for k in range(len(shape)) if k not in (dim1, dim2)]
    if _backend._is_numpy(xp) or _backend._is_cupy(xp):
        if _backend._is_numpy(xp):
            from numpy.lib.stride_tricks import as_strided
        else:
            from cupy.lib.stride_tricks import as_strided
        st = a.strides
        start = a[tuple(slice(r0, None) if k == dim1 else slice(c0, None) if k == dim2 else slice(None)
                        for k in range(len(shape)))] if n else a
        return as_strided(start, tuple(shape[k] for k in rest) + (n,),
                          tuple(st[k] for k in rest) + (st[dim1] + st[dim2],))
    moved = xp.permute_dims(a, tuple(rest) + (dim1, dim2))
    ii = xp.arange(n, dtype=xp.int64)
    from ..backend.gaps import gather
    return gather(xp, moved, (Ellipsis, ii + r0, ii + c0))


def _diag_scatter(F, g, shape, offset, dim1, dim2):
    """``g`` (the diagonal, last) laid into zeros of ``shape`` along dims ``dim1``, ``dim2``."""
    r0, c0, n = _diag_positions(shape[dim1], shape[dim2], offset)
    rest = [k for k in range(len(shape)) if k not in (dim1, dim2)]
    moved = tuple(shape[k] for k in rest) + (shape[dim1], shape[dim2])
    ii = F.iota(n, 0, 1, g)
    z = F.scatter_add(moved, (Ellipsis, ii + r0, ii + c0), g, g)
    return F.permute(z, _inverse(tuple(rest) + (dim1, dim2)))


op("diagonal", "DiagonalBackward0", ("self",), _diagonal_fwd,
   lambda F, g, s: (_diag_scatter(F, g, s.shapes[0], s.offset, s.dim1, s.dim2),), promote=False, view=True)
op("diagonal_copy", "DiagonalBackward0_copy", ("self",), lambda xp, a, offset=0, dim1=0, dim2=1:
   _clone_fwd(xp, _diagonal_fwd(xp, a, offset, dim1, dim2)),
   lambda F, g, s: (_diag_scatter(F, g, s.shapes[0], s.offset, s.dim1, s.dim2),), promote=False)


def _diag_embed_fwd(xp, a, offset=0):
    from ..backend.gaps import index_fill
    n = a.shape[0]
    m = n + abs(offset)
    ii = xp.arange(n, dtype=xp.int64)
    return index_fill(xp, xp.zeros((m, m), dtype=a.dtype), (ii + max(-offset, 0), ii + max(offset, 0)), a)


def _diag_embed_bwd(F, g, s):
    n = s.shapes[0][0]
    ii = F.iota(n, 0, 1, g)
    return (F.index(g, (ii + max(-s.offset, 0), ii + max(s.offset, 0))),)


op("diag_embed", "DiagEmbedBackward0", ("self",), _diag_embed_fwd, _diag_embed_bwd, promote=False)


def _trace_fwd(xp, a):
    d = _diagonal_fwd(xp, a)
    if a.dtype == xp.bool:
        d = xp.astype(d, xp.int64)
    kw = {"dtype": xp.int64} if d.dtype == xp.int64 else {}
    return xp.sum(d, **kw)


def _trace_bwd(F, g, s):
    n, m = s.shapes[0]
    return (F.where(F.eq(F.iota(n, 0, 2, g), F.iota(m, 1, 2, g)), F.broadcast_to(g, (n, m)), 0.0),)


op("trace", "TraceBackward0", ("self",), _trace_fwd, _trace_bwd, promote=False)


# ---- cross, rot90, index_select ------------------------------------------------------------------
def _cross(F, a, b, d):
    """The cross product along ``d`` from slices: works on arrays and on Tensors alike."""
    shape = tuple(max(p, q) for p, q in zip(F.shape(a), F.shape(b)))
    pre = (slice(None),) * d

    def c(x, k):
        return F.index(x, pre + (slice(k, k + 1),))

    parts = (c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
             c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0))
    out = None
    for k, p in enumerate(parts):
        p = F.broadcast_to(p, shape[:d] + (1,) + shape[d + 1:])
        t = F.scatter_add(shape, pre + (slice(k, k + 1),), p, p)
        out = t if out is None else out + t
    return out


def _cross_fwd(xp, a, b, dim):
    from ..core.fns import array_fns
    return _cross(array_fns(xp), a, b, dim)


op("cross", "LinalgCrossBackward0", ("self", "other"), _cross_fwd,
   lambda F, g, s: (_cross(F, s.other, g, s.dim) if s.needs[0] else None,
                    _cross(F, g, s.self, s.dim) if s.needs[1] else None),
   save={"other": ("self",), "self": ("other",)})


def _rot90_fwd(xp, a, k, dims):
    d0, d1 = dims
    k %= 4
    if k == 0:
        return _clone_fwd(xp, a)
    perm = list(range(len(a.shape)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if k == 2:
        return _clone_fwd(xp, xp.flip(a, axis=(d0, d1)))
    flipped = _clone_fwd(xp, xp.flip(a, axis=d1 if k == 1 else d0))
    return xp.permute_dims(flipped, tuple(perm))   # transposed, as PyTorch's (a strided result)


def _rot90_bwd(F, g, s):
    if F.differentiable:
        from .._math_fns import rot90
        return (rot90(g, -s.k, s.dims),)
    return (_rot90_fwd(F.xp, g, -s.k, s.dims),)


op("rot90", "Rot90Backward0", ("self",), _rot90_fwd, _rot90_bwd, promote=False)


def _index_select_fwd(xp, a, index, dim):
    return xp.take(a, index, axis=dim)


def _index_select_bwd(F, g, s):
    d = s.dim
    return (F.scatter_add(s.shapes[0], (slice(None),) * d + (s.index,), g, g), None)


op("index_select_dim", "IndexSelectBackward0", ("self", "index"), _index_select_fwd, _index_select_bwd,
   save={"index": ()}, promote=False, nondiff=("index",))


# ---- matrix products with an added input (NOTE [ beta and alpha ] in engine/_math_fns.py) -----------
def _scaled(x, k):
    return x if k == 1 else x * k


def _add_scaled(xp, c, prod, beta, alpha):
    prod = _scaled(prod, alpha)
    if beta == 0:        # the input is ignored, NaN and inf included
        return prod + xp.zeros_like(c) if tuple(c.shape) != tuple(prod.shape) else prod
    return _scaled(c, beta) + prod


op("baddbmm", "BaddbmmBackward0", ("self", "batch1", "batch2"),
   lambda xp, c, a, b, beta=1, alpha=1: _add_scaled(xp, c, xp.matmul(a, b), beta, alpha),
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.matmul(g, F.mT(s.batch2)), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(s.batch1), g), s.alpha) if s.needs[2] else None),
   save={"batch1": ("batch2",), "batch2": ("batch1",)}, promote=False)


def _addbmm_bwd(F, g, s):
    nb = s.shapes[1][0]
    ge = F.broadcast_to(F.expand_dims(g, axis=0), (nb,) + tuple(F.shape(g)))
    return (_scaled(g, s.beta) if s.needs[0] else None,
            _scaled(F.matmul(ge, F.mT(s.batch2)), s.alpha) if s.needs[1] else None,
            _scaled(F.matmul(F.mT(s.batch1), ge), s.alpha) if s.needs[2] else None)


op("addbmm", "AddbmmBackward0", ("self", "batch1", "batch2"),
   lambda xp, c, a, b, beta=1, alpha=1: _add_scaled(xp, c, xp.sum(xp.matmul(a, b), axis=0), beta, alpha),
   _addbmm_bwd, save={"batch1": ("batch2",), "batch2": ("batch1",)}, promote=False)
op("addmv", "AddmvBackward0", ("self", "mat", "vec"),
   lambda xp, c, m, v, beta=1, alpha=1: _add_scaled(xp, c, xp.matmul(m, v), beta, alpha),
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.expand_dims(g, axis=1) * F.expand_dims(s.vec, axis=0), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(s.mat), g), s.alpha) if s.needs[2] else None),
   save={"mat": ("vec",), "vec": ("mat",)}, promote=False)
op("addr", "AddrBackward0", ("self", "vec1", "vec2"),
   lambda xp, c, u, v, beta=1, alpha=1: _add_scaled(xp, c, xp.expand_dims(u, axis=1) * xp.expand_dims(v, axis=0),
                                                    beta, alpha),
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.matmul(g, s.vec2), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(g), s.vec1), s.alpha) if s.needs[2] else None),
   save={"vec1": ("vec2",), "vec2": ("vec1",)}, promote=False)


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


# ---- aminmax: one node for both results (NOTE [ Several outputs ] in engine/core/dispatch.py) -----------
def _aminmax_fwd(xp, a, dim=None, keepdim=False):
    return xp.min(a, axis=dim, keepdims=keepdim), xp.max(a, axis=dim, keepdims=keepdim)


def _aminmax_bwd(F, g, s):
    """Each result's gradient shared evenly among the elements equal to it (as amin's and amax's)."""
    shape, out = s.shapes[0], None
    for grad, res in ((g[0], s.min), (g[1], s.max)):
        if grad is None:
            continue
        grad, res = _keep(F, grad, s.dim, s.keepdim), _keep(F, res, s.dim, s.keepdim)
        mask = F.eq(s.self, res)
        count = F.sum(F.astype(mask, F.dtype(grad)), axis=s.dim, keepdims=True)
        term = F.where(mask, F.broadcast_to(grad / count, shape), 0.0)
        out = term if out is None else out + term
    return (out,)


op("aminmax", "AminmaxBackward0", ("self",), _aminmax_fwd, _aminmax_bwd, save={"self": (), "min": (), "max": ()},
   promote=False, aux=("multi",))
