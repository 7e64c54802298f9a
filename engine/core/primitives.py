"""The primitive rows: arithmetic, unary math, reductions, views, indexing, matmul/addmm.

These are the rows a learner meets first (``a * b``, ``exp``, ``sum``, ``x.t()``, ``x @ w``);
the schema is in ``core/table.py`` and every other family is in ``engine/ops/``.
"""
from __future__ import annotations

import math

import numpy as np

from ..backend import gaps as _backend
from ..backend.gaps import erf, gather, index_fill
from .fns import _full_index, _is_basic
from .table import SLOT as _SLOT, op

_ndarray = np.ndarray

# ---- elementwise binary (broadcasting; gradients are summed back by the dispatcher) --------
op("add", "AddBackward0", ("self", "other"), lambda xp, a, b, alpha=1: a + b * alpha if alpha != 1 else a + b,
   lambda F, g, s: (g, g * s.alpha if s.alpha != 1 else g))
op("sub", "SubBackward0", ("self", "other"), lambda xp, a, b, alpha=1: a - b * alpha if alpha != 1 else a - b,
   lambda F, g, s: (g, -g * s.alpha if s.alpha != 1 else -g))
op("mul", "MulBackward0", ("self", "other"), lambda xp, a, b: a * b,
   lambda F, g, s: (g * s.other if s.needs[0] else None, g * s.self if s.needs[1] else None),
   save={"other": ("self",), "self": ("other",)})  # PyTorch's packing order: other first
op("div", "DivBackward0", ("self", "other"), lambda xp, a, b: a / b,
   lambda F, g, s: (g / s.other if s.needs[0] else None,
                    -g * s.self / (s.other * s.other) if s.needs[1] else None),
   save={"other": (), "self": ("other",)}, float_op=True)
op("pow_scalar", "PowBackward0", ("self",), lambda xp, a, exponent: a ** exponent,
   lambda F, g, s: (g * 0.0 if s.exponent == 0 else g * s.exponent * s.self ** (s.exponent - 1),),
   save={"self": ()})


def _pow_tensor_bwd(F, g, s):
    base, e = s.self, s.exponent     # PyTorch's pow_backward_self and pow_backward_exponent
    gb = F.where(F.eq(e, 0.0), 0.0, g * (e * base ** (e - 1))) if s.needs[0] else None
    ge = None
    if s.needs[1]:   # grad * result * log(self) (log 0 = -inf), but 0 where self == 0 and exponent >= 0
        if type(base) in (int, float):
            log = math.log(base) if base > 0 else -math.inf if base == 0 else math.nan
            ge = g * (F.where(F.ge(e, 0.0), 0.0, s.result * log) if base == 0 else s.result * log)
        else:
            ge = g * F.where(F.logical_and(F.eq(base, 0.0), F.ge(e, 0.0)), 0.0, s.result * F.log(base))
    return gb, ge


op("pow_tensor", "PowBackward1", ("self", "exponent"), lambda xp, a, b: a ** b, _pow_tensor_bwd,
   save={"exponent": (), "self": (), "result": ()}, float_op=False)


def _maxmin_bwd(F, g, s, loses):
    """PyTorch's formula: half each on a tie, nothing to the side that loses, else all of it.
    A comparison with NaN is False both ways, so at a NaN both sides get the whole gradient."""
    a, b = s.self, s.other
    passed = F.where(F.eq(a, b), g * 0.5, g)
    ga = F.where(loses(a, b), 0.0, passed) if s.needs[0] else None
    gb = F.where(loses(b, a), 0.0, passed) if s.needs[1] else None
    return ga, gb


op("maximum", "MaximumBackward0", ("self", "other"), lambda xp, a, b: xp.maximum(a, b),
   lambda F, g, s: _maxmin_bwd(F, g, s, F.lt), save={"other": (), "self": ()})
op("minimum", "MinimumBackward0", ("self", "other"), lambda xp, a, b: xp.minimum(a, b),
   lambda F, g, s: _maxmin_bwd(F, g, s, F.gt), save={"other": (), "self": ()})
op("where", "WhereBackward0", ("condition", "self", "other"), lambda xp, c, a, b: xp.where(c, a, b),
   lambda F, g, s: (None, F.where(s.condition, g, 0.0) if s.needs[1] else None,
                    F.where(s.condition, 0.0, g) if s.needs[2] else None),
   save={"condition": ()}, promote=False, nondiff=("condition",))

for _n, _f in (("eq", lambda xp, a, b: a == b), ("ne", lambda xp, a, b: a != b),
               ("lt", lambda xp, a, b: a < b), ("le", lambda xp, a, b: a <= b),
               ("gt", lambda xp, a, b: a > b), ("ge", lambda xp, a, b: a >= b),
               ("logical_and", lambda xp, a, b: xp.logical_and(xp.astype(a, xp.bool), xp.astype(b, xp.bool))),
               ("logical_or", lambda xp, a, b: xp.logical_or(xp.astype(a, xp.bool), xp.astype(b, xp.bool))),
               ("logical_xor", lambda xp, a, b: xp.logical_xor(xp.astype(a, xp.bool), xp.astype(b, xp.bool)))):
    op(_n, None, ("self", "other"), _f, differentiable=False)
op("logical_not", None, ("self",), lambda xp, a: xp.logical_not(xp.astype(a, xp.bool)), differentiable=False)

# ---- elementwise unary ---------------------------------------------------------------------
op("neg", "NegBackward0", ("self",), lambda xp, a: -a, lambda F, g, s: (-g,))
op("exp", "ExpBackward0", ("self",), lambda xp, a: xp.exp(a), lambda F, g, s: (g * s.result,),
   save={"result": ()}, float_op=True)
op("log", "LogBackward0", ("self",), lambda xp, a: xp.log(a), lambda F, g, s: (g / s.self,),
   save={"self": ()}, float_op=True)
op("sqrt", "SqrtBackward0", ("self",), lambda xp, a: xp.sqrt(a), lambda F, g, s: (g / (2.0 * s.result),),
   save={"result": ()}, float_op=True)
op("rsqrt", "RsqrtBackward0", ("self",), lambda xp, a: 1.0 / xp.sqrt(a),
   lambda F, g, s: (-0.5 * g * s.result * s.result * s.result,), save={"result": ()}, float_op=True)
op("reciprocal", "ReciprocalBackward0", ("self",), lambda xp, a: 1.0 / a,
   lambda F, g, s: (-g * s.result * s.result,), save={"result": ()}, float_op=True)
op("abs", "AbsBackward0", ("self",), lambda xp, a: xp.abs(a),   # grad * sgn(x); PyTorch's sgn(NaN) is 0
   lambda F, g, s: (F.where(F.eq(s.self, s.self), g * F.sign(s.self), 0.0),), save={"self": ()})
op("sign", "SignBackward0", ("self",), lambda xp, a: xp.sign(a), lambda F, g, s: (g * 0.0,))
op("sin", "SinBackward0", ("self",), lambda xp, a: xp.sin(a), lambda F, g, s: (g * F.cos(s.self),),
   save={"self": ()}, float_op=True)
op("cos", "CosBackward0", ("self",), lambda xp, a: xp.cos(a), lambda F, g, s: (-g * F.sin(s.self),),
   save={"self": ()}, float_op=True)
op("tanh", "TanhBackward0", ("self",), lambda xp, a: xp.tanh(a),
   lambda F, g, s: (g * (1.0 - s.result * s.result),), save={"result": ()}, float_op=True)
op("sigmoid", "SigmoidBackward0", ("self",), lambda xp, a: 1.0 / (1.0 + xp.exp(-a)),
   lambda F, g, s: (g * s.result * (1.0 - s.result),), save={"result": ()}, float_op=True)
def _relu_fwd(xp, a):
    """``clamp_low(0, a)``: a tie keeps ``a``, so -0.0 stays -0.0 (a NumPy zero without the wrapper)."""
    return _backend.clamp_low(xp, a.dtype.type(0) if type(a) is _ndarray else xp.zeros((), dtype=a.dtype), a)


op("relu", "ReluBackward0", ("self",), _relu_fwd,  # keeps -0.0
   lambda F, g, s: (F.threshold_backward(g, s.result, 0),), save={"result": ()})
op("erf", "ErfBackward0", ("self",), lambda xp, a: _erf(xp, a),
   lambda F, g, s: (g * (2.0 / math.sqrt(math.pi)) * F.exp(-(s.self * s.self)),), save={"self": ()},
   float_op=True)


def _erf(xp, a):
    return erf(xp, a)


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def _gelu_fwd(xp, a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1.0 + xp.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a)))
    return 0.5 * a * (1.0 + _erf(xp, a * _SQRT1_2))


def _gelu_bwd(F, g, s):
    x = s.self
    if s.approximate == "tanh":
        inner = _SQRT_2_PI * (x + 0.044715 * x * x * x)
        t = F.tanh(inner)
        d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_PI * (1.0 + 3 * 0.044715 * x * x)
        return (g * d,)
    cdf = 0.5 * (1.0 + F.erf(x * _SQRT1_2))
    pdf = F.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
    return (g * (cdf + x * pdf),)


op("gelu", "GeluBackward0", ("self",), _gelu_fwd, _gelu_bwd, save={"self": ()}, float_op=True)


def _clamp_fwd(xp, a, min=None, max=None):
    # maximum/minimum propagate a NaN input or bound, as PyTorch's clamp; the input's -0.0 wins a tie
    if min is not None:
        a = _backend.clamp_low(xp, xp.asarray(min, dtype=a.dtype), a)
    if max is not None:
        a = _backend.clamp_high(xp, xp.asarray(max, dtype=a.dtype), a)
    return a


def _clamp_bwd(F, g, s):
    x = s.self
    if s.min is not None:
        g = F.where(F.ge(x, s.min), g, 0.0)
    if s.max is not None:
        g = F.where(F.le(x, s.max), g, 0.0)
    return (g,)


op("clamp", "ClampBackward1", ("self",), _clamp_fwd, _clamp_bwd, save={"self": ()})
op("to_dtype", "ToCopyBackward0", ("self",), lambda xp, a, dtype: xp.astype(a, dtype),
   lambda F, g, s: (g,), promote=False)
def _clone_fwd(xp, a):
    """A C-contiguous copy, as ``contiguous()`` and ``reshape`` make (ops/layout.py's CLONE_CONTIGUOUS);
    ``clone()`` keeps a dense input's strides instead (NOTE [ Output layout ] in backend/layout.py)."""
    flat = xp.reshape(a, (-1,))          # already a copy when ``a`` is not contiguous
    return xp.reshape(xp.asarray(flat, copy=True), tuple(a.shape))


op("clone", "CloneBackward0", ("self",), _clone_fwd, lambda F, g, s: (g,), promote=False)


# ---- reductions ----------------------------------------------------------------------------
def _keep(F, g, s, shape):
    """Re-insert reduced dims of ``g`` so it broadcasts against ``shape``."""
    if s.dim is None or s.keepdim:
        return g
    for d in sorted(s.dim):
        g = F.expand_dims(g, axis=d)
    return g


def _sum_fwd(xp, a, dim=None, keepdim=False):
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)  # the array API sums numbers only
    kw = {"dtype": xp.int64} if a.dtype == xp.int64 else {}
    return xp.sum(a, axis=dim, keepdims=keepdim, **kw)


def _count(shape, dim):
    n = 1
    for d in (range(len(shape)) if dim is None else dim):
        n *= shape[d]
    return n


op("sum", "SumBackward1", ("self",), _sum_fwd,
   lambda F, g, s: (F.broadcast_to(_keep(F, g, s, s.shapes[0]), s.shapes[0]),), promote=False)
def _mean_fwd(xp, a, dim=None, keepdim=False):
    n = _count(a.shape, dim)
    if n == 0:   # the mean of nothing is NaN, as PyTorch (without NumPy's "Mean of empty slice" warning)
        return xp.sum(a, axis=dim, keepdims=keepdim) * math.nan
    return xp.mean(a, axis=dim, keepdims=keepdim)


def _inverse_count(shape, dim):
    n = _count(shape, dim)
    return 1.0 / n if n else 0.0     # an empty input has an empty gradient


op("mean", "MeanBackward1", ("self",), _mean_fwd,
   lambda F, g, s: (F.broadcast_to(_keep(F, g, s, s.shapes[0]), s.shapes[0]) * _inverse_count(s.shapes[0], s.dim),),
   promote=False)


def _var_fwd(xp, a, dim=None, correction=1, keepdim=False):
    n = _count(a.shape, dim)
    m = _mean_fwd(xp, a, dim, keepdim=True)
    d = a - m
    return xp.sum(d * d, axis=dim, keepdims=keepdim) * (1.0 / (n - correction) if n > correction else math.inf)


def _dof_scale(F, d, n, correction, dim):
    """2 (x - mean) / (n - correction) in the backward formulas (inf at n == correction, negative past
    it); with no degrees of freedom left over all dims, PyTorch 2.13 gives NaN where x is the mean, else inf."""
    if n > correction or dim is not None:
        return d * (2.0 / (n - correction) if n != correction else math.inf)
    return F.where(F.eq(d, 0.0), math.nan, math.inf)


def _var_bwd(F, g, s):
    x = s.self
    n = _count(s.shapes[0], s.dim)
    mean = F.sum(x, axis=s.dim, keepdims=True) * _inverse_count(s.shapes[0], s.dim)
    return (_keep(F, g, s, s.shapes[0]) * _dof_scale(F, x - mean, n, s.correction, s.dim),)


op("var", "VarBackward0", ("self",), _var_fwd, _var_bwd, save={"self": ()}, promote=False)


def _std_bwd(F, g, s):
    """d std = d var / (2 std); where std is 0 the gradient is 0, as in PyTorch (not 0/0)."""
    res = _keep(F, s.result, s, s.shapes[0])
    gv = F.where(F.eq(res, 0.0), 0.0, _keep(F, g, s, s.shapes[0]) / (2.0 * F.where(F.eq(res, 0.0), 1.0, res)))
    x = s.self
    n = _count(s.shapes[0], s.dim)
    mean = F.sum(x, axis=s.dim, keepdims=True) * _inverse_count(s.shapes[0], s.dim)
    return (gv * _dof_scale(F, x - mean, n, s.correction, s.dim),)


op("std", "StdBackward0", ("self",), lambda xp, a, dim=None, correction=1, keepdim=False:
   xp.sqrt(_var_fwd(xp, a, dim, correction, keepdim)), _std_bwd, save={"self": (), "result": ()}, promote=False)


def _amax_bwd(F, g, s):
    """Ties share the gradient evenly (as PyTorch's amax/amin)."""
    shape = s.shapes[0]
    res, g = _keep(F, s.result, s, shape), _keep(F, g, s, shape)
    mask = F.eq(s.self, res)
    count = F.sum(F.astype(mask, F.dtype(g)), axis=s.dim, keepdims=True)
    return (F.where(mask, g / count, 0.0),)


def _logsumexp_fwd(xp, a, dim, keepdim=False):
    m = xp.max(a, axis=dim, keepdims=True) if 0 not in a.shape else xp.sum(a, axis=dim, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))    # all -inf (or inf) rows: no shift
    out = xp.log(xp.sum(xp.exp(a - m), axis=dim, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, axis=dim)


op("logsumexp", "LogsumexpBackward0", ("self",), _logsumexp_fwd,
   lambda F, g, s: (_keep(F, g, s, s.shapes[0]) * F.exp(s.self - _keep(F, s.result, s, s.shapes[0])),),
   save={"self": (), "result": ()}, promote=False)
op("amax", "AmaxBackward0", ("self",), lambda xp, a, dim=None, keepdim=False: xp.max(a, axis=dim, keepdims=keepdim),
   _amax_bwd, save={"self": (), "result": ()}, promote=False)
op("amin", "AminBackward0", ("self",), lambda xp, a, dim=None, keepdim=False: xp.min(a, axis=dim, keepdims=keepdim),
   _amax_bwd, save={"self": (), "result": ()}, promote=False)


def _amax_all_bwd(F, g, s):
    mask = F.eq(s.self, s.result)
    count = F.sum(F.astype(mask, F.dtype(g)))
    return (F.where(mask, g / count, 0.0),)


op("max_all", "MaxBackward1", ("self",), lambda xp, a: xp.max(a), _amax_all_bwd,
   save={"self": (), "result": ()}, promote=False)
op("min_all", "MinBackward1", ("self",), lambda xp, a: xp.min(a), _amax_all_bwd,
   save={"self": (), "result": ()}, promote=False)


def _maxdim_fwd(which):
    def fwd(xp, a, dim, keepdim=False):
        idx = (xp.argmax if which == "max" else xp.argmin)(a, axis=dim, keepdims=True)
        vals = (xp.max if which == "max" else xp.min)(a, axis=dim, keepdims=True)
        if not keepdim:
            vals = xp.squeeze(vals, axis=dim)
            idx = xp.squeeze(idx, axis=dim)
        return vals, {"indices": xp.astype(idx, xp.int64)}
    return fwd


def _maxdim_bwd(F, g, s):
    shape = s.shapes[0]
    d = s.dim
    idx = s.indices
    if not s.keepdim:
        g = F.expand_dims(g, axis=d)
        idx = F.expand_dims(idx, axis=d)
    hit = F.eq(F.iota(shape[d], d, len(shape), g), idx)
    return (F.where(hit, g, 0.0),)


op("max_dim", "MaxBackward0", ("self",), _maxdim_fwd("max"), _maxdim_bwd, save={"indices": ()},
   aux=("indices",), promote=False)
op("min_dim", "MinBackward0", ("self",), _maxdim_fwd("min"), _maxdim_bwd, save={"indices": ()},
   aux=("indices",), promote=False)


# ---- shape and view ops --------------------------------------------------------------------
op("view", "ViewBackward0", ("self",), lambda xp, a, shape: xp.reshape(a, shape),
   lambda F, g, s: (F.reshape(g, s.shapes[0]),), promote=False, view=True)
op("permute", "PermuteBackward0", ("self",), lambda xp, a, dims: xp.permute_dims(a, dims),
   lambda F, g, s: (F.permute(g, _inverse(s.dims)),), promote=False, view=True)
op("transpose", "TransposeBackward0", ("self",), lambda xp, a, dims: xp.permute_dims(a, dims),
   lambda F, g, s: (F.permute(g, s.dims),), promote=False, view=True)
op("t", "TBackward0", ("self",), lambda xp, a, dims: a.T if type(a) is _ndarray else xp.permute_dims(a, dims),
   lambda F, g, s: (F.permute(g, s.dims),), promote=False, view=True)
op("squeeze", "SqueezeBackward1", ("self",), lambda xp, a, shape: xp.reshape(a, shape),
   lambda F, g, s: (F.reshape(g, s.shapes[0]),), promote=False, view=True)
op("unsqueeze", "UnsqueezeBackward0", ("self",), lambda xp, a, shape: xp.reshape(a, shape),
   lambda F, g, s: (F.reshape(g, s.shapes[0]),), promote=False, view=True)
op("expand", "ExpandBackward0", ("self",), lambda xp, a, shape: xp.broadcast_to(a, shape),
   lambda F, g, s: (g,), promote=False, view=True)


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _rebuild_index(template, arrays):
    it = iter(arrays)
    return tuple(next(it) if t is _SLOT else t for t in template)




def _basic_get(xp, a, idx):
    return a[_full_index(idx)]


op("slice", "SliceBackward0", ("self",), _basic_get,
   lambda F, g, s: (F.scatter_add(s.shapes[0], s.idx, g, g),), promote=False, view=True)


def _index_fwd(xp, a, *index_arrays, template):
    return gather(xp, a, _rebuild_index(template, index_arrays))


def _index_bwd(F, g, s):
    idx = _rebuild_index(s.template, s.indices)
    return (F.scatter_add(s.shapes[0], idx, g, g),) + (None,) * len(s.indices)


op("index", "IndexBackward0", ("self", "*indices"), _index_fwd, _index_bwd, save={"indices": ("self",)},
   promote=False, nondiff=("indices",))


def _setitem_fwd(xp, a, value, *index_arrays, template):
    out = xp.asarray(a, copy=True)
    idx = _rebuild_index(template, index_arrays)
    if not hasattr(value, "shape"):
        value = xp.asarray(value, dtype=a.dtype)
    elif value.dtype != a.dtype:
        value = xp.astype(value, a.dtype)
    if _is_basic(idx):
        out[_full_index(idx)] = value
        return out
    return index_fill(xp, out, idx, value)


def _setitem_bwd(F, g, s):
    idx = _rebuild_index(s.template, s.indices)
    gself = F.fill_index(g, idx, 0.0) if s.needs[0] else None
    gval = F.index(g, idx) if s.needs[1] else None
    return (gself, gval) + (None,) * len(s.indices)


op("setitem", "CopySlices", ("self", "value", "*indices"), _setitem_fwd, _setitem_bwd,
   save={"indices": ()}, promote=False, nondiff=("indices",))


def _cat_bwd(F, g, s):
    out, start = [], 0
    for shape in s.shapes:
        n = shape[s.dim]
        idx = (slice(None),) * s.dim + (slice(start, start + n),)
        out.append(F.index(g, idx))
        start += n
    return tuple(out)


op("cat", "CatBackward0", ("*tensors",), lambda xp, *arrays, dim: xp.concat(arrays, axis=dim), _cat_bwd)
op("stack", "StackBackward0", ("*tensors",), lambda xp, *arrays, dim: xp.stack(arrays, axis=dim),
   lambda F, g, s: tuple(F.index(g, (slice(None),) * s.dim + (k,)) for k in range(len(s.shapes))))


# ---- linear algebra ------------------------------------------------------------------------
op("dot", "DotBackward0", ("self", "tensor"), lambda xp, a, b: xp.sum(a * b, dtype=a.dtype),  # int8 stays int8
   lambda F, g, s: (g * s.tensor if s.needs[0] else None, g * s.self if s.needs[1] else None),
   save={"self": ("tensor",), "tensor": ("self",)}, promote=False)
op("mm", "MmBackward0", ("self", "mat2"), lambda xp, a, b: a * b if a.shape[1] == 1 else xp.matmul(a, b),  # K = 1: BLAS's -0.0
   lambda F, g, s: (F.matmul(g, F.mT(s.mat2)) if s.needs[0] else None,
                    F.matmul(F.mT(s.self), g) if s.needs[1] else None),
   save={"mat2": ("self",), "self": ("mat2",)}, promote=False)
op("mv", "MvBackward0", ("self", "vec"), lambda xp, a, b: xp.matmul(a, b),
   lambda F, g, s: (F.reshape(g, (s.shapes[0][0], 1)) * F.reshape(s.vec, (1, s.shapes[1][0])) if s.needs[0] else None,
                    F.matmul(F.mT(s.self), g) if s.needs[1] else None),
   save={"self": ("vec",), "vec": ("self",)}, promote=False)
op("bmm", "BmmBackward0", ("self", "mat2"), lambda xp, a, b: xp.matmul(a, b),
   lambda F, g, s: (F.matmul(g, F.mT(s.mat2)) if s.needs[0] else None,
                    F.matmul(F.mT(s.self), g) if s.needs[1] else None),
   save={"mat2": ("self",), "self": ("mat2",)}, promote=False)
def _addmm_fwd(xp, c, a, b, mat2_layout="C"):
    out = np.matmul(a, b) if type(a) is _ndarray else xp.matmul(a, b)
    if c.dtype == out.dtype and (tuple(c.shape) == tuple(out.shape) or len(c.shape) <= 1):
        out += c            # in place: the matmul result is fresh (one pass, no temporary)
        return out
    return c + out


def _mm_mat2_grad(F, g, s):
    """``mat1.T @ g`` laid out as mat2 is (PyTorch's mm_mat2_backward): for nn.Linear's ``weight.t()``
    the product is formed as ``(g.T @ mat1).T``, so the weight's gradient comes out contiguous."""
    if s.mat2_layout == "F":
        return F.mT(F.matmul(F.mT(g), s.mat1))
    return F.matmul(F.mT(s.mat1), g)


op("addmm", "AddmmBackward0", ("self", "mat1", "mat2"), _addmm_fwd,
   lambda F, g, s: (g if s.needs[0] else None,
                    F.matmul(g, F.mT(s.mat2)) if s.needs[1] else None,
                    _mm_mat2_grad(F, g, s) if s.needs[2] else None),
   save={"mat1": ("mat2",), "mat2": ("mat1",)}, promote=False)


