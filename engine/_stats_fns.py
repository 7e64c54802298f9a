"""Statistics, reductions and small torch-level utilities: ``quantile``/``nanquantile``, ``cummax``/``cummin``,
``msort``, ``cov``/``corrcoef``, ``trapezoid``/``trapz``/``cumulative_trapezoid``, ``histogram``, ``inner``,
``ger``, ``vdot``, ``renorm``; the window functions; the random in-place fills (``random_``,
``exponential_``, ``geometric_``, ``cauchy_``, ``log_normal_``), ``randint_like`` and ``poisson``; and
``asarray``, ``scalar_tensor``, ``is_nonzero``, ``is_signed``, ``is_complex``, ``is_inference``,
``typename``, ``Tensor.get_device``, ``Tensor.is_cpu``.

cummax/cummin, vdot, renorm and poisson are one node each (rows in engine/ops/stats_ops.py); the rest
compose existing ops the way PyTorch's C++ composes them, so a graph shows PyTorch's nodes and keeps
PyTorch's saved tensors. glassgrad has no complex dtype: ``polar`` is not provided, ``vdot`` is ``dot``
with its own node, and ``is_complex`` is always False.
"""
from __future__ import annotations

import builtins
import math
import numbers
import warnings

import numpy as np

from . import return_types
from .backend import dtypes as _dtype
from . import functional as E
from .core.dispatch import apply
from .core.inplace import bump_version
from .core.tensor import Tensor, _wrap_dim
from .core import grad_mode
from .derivatives import OPS
from .ops import stats_ops as _rows  # noqa: F401  (registers the rows)

_O = OPS


def _short(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}[dt.name]


def _num(v) -> str:
    """A number as PyTorch's C++ messages print it (-1, 0.5, 1e+10)."""
    return f"{builtins.float(v):g}"


def _need_tensor(fn, x, arg="input", pos=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _along(nd, dim, index):
    return (slice(None),) * dim + (index,) + (slice(None),) * (nd - dim - 1)


# ---- quantile / nanquantile ------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


# NOTE [ quantile as PyTorch composes it ]
# 1. Sort: the flattened input (no dim), the input itself when dim is its last dim, else
#    input.unsqueeze(-1).transpose(dim, -1); then view the sorted values as the reduced shape
#    (keepdim or not) plus the sorted dim last.
# 2. Ranks (no graph): q * (n - 1), one column per q; quantile puts a row holding a NaN on its
#    last rank (the NaN), nanquantile counts only the non-NaN values (an all-NaN row: rank 0, NaN).
#    lower/higher/nearest round the rank (floor/ceil/round half to even).
# 3. values_below = sorted.gather(-1, floor(rank)); linear and midpoint then lerp_ in place toward
#    sorted.gather(-1, ceil(rank)) with weight rank - floor(rank) (0.5 for midpoint): GatherBackward0
#    twice, LerpBackward1 keeping the weights.
# 4. The q column moves to the front with in-place views: squeeze_(-1) for a number q
#    (SqueezeBackward4); unsqueeze_(0), transpose_(0, -1), squeeze_(-1) for a 1-D q. Each in-place
#    step bumps the result's version, as in PyTorch (2 for a linear quantile at a number q).
def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    _need_tensor(name, input)
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if isinstance(q, builtins.bool) or not isinstance(q, numbers.Real):
            raise TypeError(f"{name}(): argument 'q' (position 2) must be Tensor, not {type(q).__name__}")
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_num(q)}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not scalar_q and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if not scalar_q and q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if not scalar_q and q.device != input.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    nd = input.ndim
    d = None if dim is None else _wrap_dim(dim, builtins.max(nd, 1))
    if d is None or nd == 0:                      # NOTE [ quantile as PyTorch composes it ] 1
        reduced = [1] * nd if keepdim else []
        sorted_ = E.sort(E.flatten(input) if nd != 1 else input, -1).values
    else:
        reduced = list(input.shape)
        if keepdim:
            reduced[d] = 1
        else:
            del reduced[d]
        src = input if d == nd - 1 else E.transpose(E.unsqueeze(input, -1), d, -1)
        sorted_ = E.sort(src, -1).values
    n = sorted_.shape[-1]
    sorted_ = E.view(sorted_, tuple(reduced) + (n,))
    qv = E.full((1,), builtins.float(q), dtype=input.dtype, device=input.device) if scalar_q else q.reshape(-1)
    with grad_mode.no_grad():                     # NOTE [ quantile as PyTorch composes it ] 2
        qd = qv.detach()
        if not scalar_q and not builtins.bool(E.all(E.logical_and(E.ge(qd, 0), E.le(qd, 1)))):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        nan = E.isnan(sorted_.detach())
        if ignore_nan:
            count = E.sum(E.logical_not(nan), -1, keepdim=True)
            ranks = qd * (count - 1)
            ranks = E.masked_fill(ranks, E.lt(ranks, 0), 0)
        else:
            ranks = E.broadcast_tensors(qd * (n - 1), E.any(nan, -1, keepdim=True))
            ranks = E.masked_fill(ranks[0], ranks[1], n - 1)
        if interpolation == "lower":
            ranks = E.floor(ranks)
        elif interpolation == "higher":
            ranks = E.ceil(ranks)
        elif interpolation == "nearest":
            ranks = E.round(ranks)
        below = ranks.to(_dtype.int64)
    out = E.gather(sorted_, -1, below)            # NOTE [ quantile as PyTorch composes it ] 3
    if interpolation in ("linear", "midpoint"):
        with grad_mode.no_grad():
            weights = E.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
            above = E.ceil(ranks).to(_dtype.int64)
        out = apply(_O["lerp_tensor"], [out, E.gather(sorted_, -1, above), weights], inplace=out)
    if scalar_q:                                  # NOTE [ quantile as PyTorch composes it ] 4
        return _squeeze_last_(out)
    shape = (1,) + tuple(out.shape)
    out = _inplace_view(apply(_O["unsqueeze"], [out], {"shape": shape}, node_name="UnsqueezeBackward1"), "unsqueeze_")
    dims = list(builtins.range(out.ndim))
    dims[0], dims[-1] = dims[-1], dims[0]
    out = _inplace_view(apply(_O["transpose"], [out], {"dims": tuple(dims)}, node_name="TransposeBackward1"),
                        "transpose_")
    return _squeeze_last_(out)


def _squeeze_last_(t):
    shape = tuple(t.shape[:-1]) if t.shape[-1] == 1 else tuple(t.shape)
    return _inplace_view(apply(_O["squeeze"], [t], {"shape": shape}, node_name="SqueezeBackward4"), "squeeze_")


def _inplace_view(view, opname):
    """A view op PyTorch runs in place (squeeze_, ...) bumps the version its base shares."""
    bump_version(view, opname)
    return view


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of ``input`` (flattened, or along ``dim``); q a number or a 1-D tensor whose
    values go first in the result. A NaN in a row makes its quantiles NaN.
    NOTE [ quantile as PyTorch composes it ]."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` over the non-NaN values of each row (NaN for a row that is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ---- cummax / cummin / msort ----------------------------------------------------------------------
def _cumext(which, input, dim):
    _need_tensor(which, input)
    d = _wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else _wrap_dim(dim, 1)
    out, aux = apply(_O[which], [input], {"dim": d}, return_aux=True)
    return getattr(return_types, which)(out, aux["indices"])


def cummax(input, dim):
    """Running maximum along ``dim`` and where it came from (a tie or a NaN moves the index on).
    CummaxBackward0 keeps the input and the returned indices (NOTE [ Cumulative max/min scan ])."""
    return _cumext("cummax", input, dim)


def cummin(input, dim):
    """Running minimum along ``dim`` and its indices; CumminBackward0 keeps the input and indices."""
    return _cumext("cummin", input, dim)


def msort(input):
    """``sort(input, dim=0).values``: SortBackward0 keeping the indices."""
    _need_tensor("msort", input)
    if input.ndim == 0:   # glassgrad's sort needs a dim: sort the one-element view
        return E.view(E.sort(E.view(input, (1,)), 0).values, ())
    return E.sort(input, 0).values


# ---- cov / corrcoef -------------------------------------------------------------------------------
def _weights_check(kind, w, n, want_float):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with {w.ndim} "
                           "dimensions")
    if w.dtype.is_floating_point != want_float or w.dtype is _dtype.bool_:
        what = "floating point" if want_float else "integral"
        raise RuntimeError(f"cov(): expected {kind} to have {what} dtype but got {kind} with {_short(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if n and builtins.bool(E.lt(E.min(w.detach()), 0)):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the variables in the rows of ``input`` (observations in columns), with
    frequency weights (integers) and observation weights (floats), as PyTorch composes it:
    mean, subtract, ``mm`` with the (weighted) transpose, divide by the degrees of freedom."""
    _need_tensor("cov", input)
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype is _dtype.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = E.view(input, (1, -1)) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _weights_check("fweights", fweights, n, False)
        w = fweights
    if aweights is not None:
        _weights_check("aweights", aweights, n, True)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = E.full((), n, dtype=_dtype.int64, device=input.device)
    else:
        w_sum = E.sum(w)
        if not builtins.bool(E.ne(w_sum.detach(), 0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = E.div(E.sum(x * w if w is not None else x, 1), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * E.sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    if builtins.bool(E.le(norm.detach(), 0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = E.zeros_like(norm)
    x = x - E.unsqueeze(avg, 1)
    c = E.mm(x, E.t(x * w if w is not None else x))
    with np.errstate(divide="ignore", invalid="ignore"):   # 0 degrees of freedom: inf/nan, silently
        return E.squeeze(E.div(c, norm))


def corrcoef(input):
    """Pearson correlation coefficients of the rows: ``cov`` scaled by the standard deviations, then
    clipped to [-1, 1] (ClampBackward1)."""
    _need_tensor("corrcoef", input)
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = E.sqrt(E.diagonal(c))
    c = c / E.view(std, (-1, 1))
    c = c / E.view(std, (1, -1))
    return E.clamp(c, -1, 1)


# ---- trapezoid / trapz / cumulative_trapezoid ----------------------------------------------------------
def _mul_number(t, v):
    return apply(_O["mul_number"], [t], {"other": builtins.float(v)}) if t.dtype.is_floating_point else t * v


def _half(t):
    return apply(_O["div_number"], [t], {"other": 2.0}) if t.dtype.is_floating_point else t / 2.0


def _trapezoid_args(name, y, x, dx, dim):
    _need_tensor(name, y)
    d = _wrap_dim(dim, y.ndim)
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'x' (position 2) must be Tensor, not {type(x).__name__}")
    if dx is not None and (isinstance(dx, builtins.bool) or not isinstance(dx, numbers.Real)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return d


def _x_steps(name, y, x, d):
    """x's differences along ``d``, shaped to broadcast against y's (as PyTorch views x first)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = x.shape[0]
        x = E.view(x, tuple(shape))
    elif x.ndim < y.ndim:
        x = E.view(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    m = x.shape[d]
    return E.narrow(x, d, 1, m - 1) - E.narrow(x, d, 0, m - 1)


def _pair_sums(y, d):
    m = y.shape[d]
    return E.narrow(y, d, 0, m - 1) + E.narrow(y, d, 1, m - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along ``dim``: with sample points ``x`` (a tensor) or a constant spacing ``dx``
    (default 1). As PyTorch: with dx, ``(sum(y) - (y[0] + y[-1]) * 0.5) * dx``; with x,
    ``sum((y[:-1] + y[1:]) * diff(x)) / 2``."""
    d = _trapezoid_args("trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:
        return E.zeros(tuple(s for k, s in enumerate(y.shape) if k != d), dtype=y.dtype, device=y.device)
    if y.dtype is _dtype.bool_ or (x is not None and x.dtype is _dtype.bool_):
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if x is not None:
        return _half(E.sum(_pair_sums(y, d) * _x_steps("trapezoid", y, x, d), d))
    ends = E._getitem(y, _along(y.ndim, d, 0)) + E._getitem(y, _along(y.ndim, d, -1))
    return _mul_number(E.sum(y, d) - _mul_number(ends, 0.5), 1.0 if dx is None else dx)


def trapz(y, x=None, *, dx=None, dim=-1):
    """The older name of ``trapezoid``."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along ``dim`` (one fewer element there): ``cumsum`` of the pieces."""
    d = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if y.dtype is _dtype.bool_ or (x is not None and x.dtype is _dtype.bool_):
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    if y.shape[d] == 0:
        return E.zeros(tuple(y.shape), dtype=y.dtype, device=y.device)
    if x is not None:
        return _half(E.cumsum(_pair_sums(y, d) * _x_steps("cumulative_trapezoid", y, x, d), d))
    return E.cumsum(_mul_number(_pair_sums(y, d), (1.0 if dx is None else dx) / 2.0), d)


# ---- histogram ------------------------------------------------------------------------------------
def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """Counts (or summed ``weight``) of ``input``'s values in ``bins`` equal bins over ``range`` (the
    data's range by default; a single value v gives [v - 0.5, v + 0.5]) or between the edges of a 1-D
    ``bins`` tensor; the last bin includes its right edge. ``density`` divides by the total times the
    bin width. Returns (hist, bin_edges), both in input's dtype; no gradient."""
    _need_tensor("histogram", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_short(input.dtype)}'")
    h = input.detach().numpy(force=True).reshape(-1)
    npdt = h.dtype
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{E._shape_str(tuple(input.reshape(-1, 1).shape))} and weight with shape "
                           f"{E._shape_str(tuple(weight.shape))}")
    if isinstance(bins, Tensor):
        if bins.dtype is not input.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_cname(input.dtype)} and bins for dimension 0 with dtype "
                               f"{_cname(bins.dtype)}")
        edges = bins.detach().numpy(force=True).reshape(-1).astype(npdt)
        if edges.size - 1 <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {edges.size - 1} for dimension 0")
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = builtins.float(range[0]), builtins.float(range[1])
        else:
            lo, hi = (builtins.float(h.min()), builtins.float(h.max())) if h.size else (0.0, 0.0)
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_num(lo)} max {_num(hi)} "
                               "for dimension 0")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = E.linspace(lo, hi, bins + 1, dtype=input.dtype, device="cpu").numpy()
    wts = None if weight is None else weight.detach().numpy(force=True).reshape(-1).astype(np.float64)
    hist = np.zeros(edges.size - 1)
    if edges.size >= 2 and edges[0] <= edges[-1]:
        keep = (h >= edges[0]) & (h <= edges[-1])
        pos = np.searchsorted(edges, h[keep], side="right") - 1
        pos = np.minimum(pos, edges.size - 2)
        np.add.at(hist, pos, 1.0 if wts is None else wts[keep])
    if density:
        widths = np.diff(edges.astype(np.float64))
        total = hist.sum()
        hist = hist / (total * widths) if total else hist * np.nan
    from ._factories import tensor
    hist = tensor(hist.astype(npdt), dtype=input.dtype, device=input.device)
    if input.requires_grad and grad_mode.is_grad_enabled():   # PyTorch's NotImplemented node (on hist only here)
        hist = apply(_O["histogram"], [input, hist])
    return return_types.histogram(hist, tensor(edges, dtype=input.dtype, device=input.device))


# ---- inner / ger / vdot / renorm ------------------------------------------------------------------
def inner(input, other):
    """Sum over the last dims: ``tensordot(input, other, [[-1], [-1]])`` as PyTorch builds it (permute,
    view to matrices, ``mm``, view back); a 0-d operand multiplies."""
    _need_tensor("inner", input)
    _need_tensor("inner", other, "other", 2)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got shapes "
                           f"{E._shape_str(input.shape)} and {E._shape_str(other.shape)}")
    k = input.shape[-1]
    a = E.permute(input, tuple(builtins.range(input.ndim)))
    b = E.permute(other, (other.ndim - 1,) + tuple(builtins.range(other.ndim - 1)))
    ra, rb = tuple(input.shape[:-1]), tuple(other.shape[:-1])
    if input.ndim == 1 and other.ndim == 1:
        return E.view(E.dot(a, b), ())
    m, n = math.prod(ra), math.prod(rb)
    ma = E.view(a, (m, k)) if input.is_contiguous() else E.reshape(a, (m, k))
    if not other.is_contiguous():
        mb = E.reshape(b, (k, n))
    elif k == 1 or n == 1:
        mb = E.view(b, (k, n))
    else:   # a strided alias of other's memory: PyTorch's _reshape_alias
        mb = apply(_O["view"], [b], {"shape": (k, n)}, node_name="ReshapeAliasBackward0")
    return E.view(E.mm(ma, mb), ra + rb)


def ger(input, vec2):
    """The outer product of two 1-D tensors (the older name of ``outer``): ``input.reshape(n, 1) * vec2``."""
    _need_tensor("ger", input)
    _need_tensor("ger", vec2, "vec2", 2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return E.reshape(input, (input.shape[0], 1)) * vec2


def vdot(input, other):
    """``sum(conj(input) * other)`` of two 1-D tensors; glassgrad is real, so this is ``dot`` with its own
    node (VdotBackward0, keeping both)."""
    _need_tensor("vdot", input)
    _need_tensor("vdot", other, "other", 2)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_short(input.dtype)} and {_short(other.dtype)}")
    if input.numel() != other.numel():
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.numel()}] and src [{other.numel()}] to "
                           "have the same number of elements, but got "
                           f"{input.numel()} and {other.numel()} elements respectively")
    return apply(_O["vdot"], [input, other])


def _renorm_check(input, p, dim, maxnorm):
    _need_tensor("renorm", input)
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_num(maxnorm)}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _wrap_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_short(input.dtype)}")
    return {"p": builtins.float(p), "dim": d, "maxnorm": builtins.float(maxnorm)}


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` is scaled to norm ``maxnorm``
    (by ``maxnorm / (norm + 1e-7)``). RenormBackward0 keeps the input."""
    return apply(_O["renorm"], [input], _renorm_check(input, p, dim, maxnorm))


def _renorm_(self, p, dim, maxnorm):
    return apply(_O["renorm"], [self], _renorm_check(self, p, dim, maxnorm), inplace=self)


# ---- window functions -----------------------------------------------------------------------------
def _window(name, n, periodic, dtype, device, requires_grad, make):
    """A window of length ``n`` built by ``make(m)`` over m = n (+1 if periodic) points, as PyTorch."""
    from .backend.device import as_device
    dt = dtype if dtype is not None else _dtype.get_default_dtype()
    dev = as_device(device) if device is not None else None
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if not dt.is_floating_point:
        from .backend.device import get_default_device
        where = str(dev if dev is not None else get_default_device())
        rg = "true" if requires_grad else "false (default)"
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_cname(dt)}, "
                           f"device={where}, layout=Strided (default), requires_grad={rg}, "
                           "pinned_memory=false, memory_format=(nullopt))")
    with grad_mode.no_grad():
        if n <= 1:
            w = E.ones(n, dtype=dt, device=dev)
        else:
            m = n + 1 if periodic else n
            w = make(E.arange(m, dtype=dt, device=dev), m)
            if periodic:
                w = E.narrow(w, 0, 0, n).clone()
    w = w.detach()
    if requires_grad:
        w.requires_grad_(True)
    return w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None,
                   requires_grad=False, layout=None, pin_memory=False):
    """``alpha - beta cos(2 pi k / (N - 1))``; periodic windows are the first N of N + 1 points."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: E.cos(k * (2.0 * math.pi / (m - 1))) * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                layout=None, pin_memory=False):
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` (hamming_window with alpha = beta = 0.5)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: E.cos(k * (2.0 * math.pi / (m - 1))) * -0.5 + 0.5)


def blackman_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                    layout=None, pin_memory=False):
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    def make(k, m):
        t = k * (math.pi / (m - 1))
        return E.cos(t * 4) * 0.08 - E.cos(t * 2) * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, make)


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                    layout=None, pin_memory=False):
    """The triangle ``1 - |2k / (N - 1) - 1|``: 2k/(N-1) up to the middle, 2 minus it after."""
    def make(k, m):
        t = k * (2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1
        return E.cat([E.narrow(t, 0, 0, half), E.narrow(t, 0, half, m - half) * -1 + 2])
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, make)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
    """``I0(beta sqrt(1 - ((k - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)``."""
    from .special import i0

    def make(k, m):
        c = (m - 1) / 2.0
        r = (k - c) / c
        return i0(E.sqrt(E.clamp(1 - r * r, min=0)) * beta) / i0(E.full((), beta, dtype=k.dtype, device=k.device))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, make)


# ---- random fills ---------------------------------------------------------------------------------
_MANTISSA = {"float32": 24, "float64": 53}


def _fill(self, host, opname):
    """Write host draws (float64 or int64) into ``self`` in place, as the other random fills do."""
    from .backend.gaps import from_numpy
    if grad_mode.is_grad_enabled() and self.is_leaf and self.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    npdt = "bool" if self.dtype is _dtype.bool_ else self.dtype.name
    self._data[...] = from_numpy(self._storage.xp, np.ascontiguousarray(host.astype(npdt)))
    bump_version(self, opname)
    return self


def _gen(self, generator):
    from .random import generator_for
    return generator or generator_for(self.device)


def _random_bounds(dt, low, high):
    """PyTorch's checks for random_(from, to) into dtype ``dt``; returns [low, high)."""
    if high is None:
        top = {"bool": 2, "int64": 2 ** 63}.get(dt.name) or 2 ** _MANTISSA[dt.name] + 1
        low, high = (0, top) if low is None else (low, top)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt is _dtype.bool_ and (low < 0 or high - 1 > 1):
        raise RuntimeError(f"{'from' if low < 0 else 'to - 1'} is out of bounds for bool")
    if dt.is_floating_point:
        k = _MANTISSA[dt.name]
        for what, v in (("from", low), ("to - 1", high - 1)):
            if not -(2 ** k) <= v <= 2 ** k:
                warnings.warn(f"{what} is out of bounds [-(2^{k}), 2^{k}]. Due to precision limitations {_cname(dt)} "
                              "can support discrete uniform distribution only within this range. This warning will "
                              "become an error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=3)
    return low, high


def _random_(self, *args, generator=None, **kw):
    """Integers drawn uniformly from [from, to) (``random_(to)``: [0, to); ``random_()``: [0, 2^mantissa]
    for floats, [0, 2^63 - 1] for int64, {0, 1} for bool)."""
    if len(args) == 1 and "to" not in kw:
        from_, to = 0, args[0]          # random_(to)
    else:
        from_, to = (list(args) + [None, None])[:2]
        from_, to = kw.get("from", from_), kw.get("to", to)
        if from_ is None and to is not None:
            from_ = 0
    low, high = _random_bounds(self.dtype, from_, to)
    return _fill(self, _gen(self, generator).integers(low, high, tuple(self.shape)), "random_")


def _continuous_only(self, dist, how):
    if not self.dtype.is_floating_point:
        name = _short(self.dtype) if how == "short" else _cname(self.dtype)
        raise RuntimeError(f"{dist} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {name}")


def _uniform_host(self, generator):
    return _gen(self, generator).uniform(tuple(self.shape), "float64")


def _exponential_(self, lambd=1.0, *, generator=None):
    """Exponential draws with rate ``lambd``: ``-log(1 - u) / lambd``."""
    _continuous_only(self, "Exponential", "short")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _fill(self, -np.log1p(-_uniform_host(self, generator)) / lambd, "exponential_")


def _geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...): ``ceil(log(1 - u) / log(1 - p))``."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    u = _uniform_host(self, generator)
    return _fill(self, np.maximum(np.ceil(np.log1p(-u) / np.log1p(-p)), 1.0), "geometric_")


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Cauchy draws: ``median + sigma tan(pi (u - 1/2))``."""
    _continuous_only(self, "Cauchy", "c")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    return _fill(self, median + sigma * np.tan(np.pi * (_uniform_host(self, generator) - 0.5)), "cauchy_")


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """``exp`` of Normal(mean, std) draws."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{_short(self.dtype)}'")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    z = _gen(self, generator).normal(tuple(self.shape), "float64")
    return _fill(self, np.exp(mean + std * z), "log_normal_")


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """A tensor shaped like ``input`` of integers in [low, high) (``randint_like(input, high)``: [0, high))."""
    _need_tensor("randint_like", input)
    if high is None:
        low, high = 0, low
    out = E.empty(tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device)
    _random_(out, low, high)
    if requires_grad:
        out.requires_grad_(True)
    return out


def poisson(input, generator=None):
    """Poisson draws with the rates in ``input`` (floats, non-negative). PoissonBackward0 gives a zero
    gradient, as PyTorch."""
    _need_tensor("poisson", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_short(input.dtype)}'")
    rates = input.detach().numpy(force=True).astype(np.float64)
    if np.isnan(rates).any() or (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    finite = np.isfinite(rates)
    draws = np.full(rates.shape, np.inf)
    gen = _gen(input, generator)
    draws[finite] = gen._np.poisson(rates[finite])
    from ._factories import tensor
    sample = tensor(draws, dtype=input.dtype, device=input.device)
    return apply(_O["poisson"], [input, sample])


# ---- small utilities ------------------------------------------------------------------------------
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """A tensor from ``obj``, sharing its memory when it can (a tensor of the asked dtype and device, or a
    NumPy array on the CPU) unless ``copy=True``; ``copy=False`` raises when it cannot share."""
    from . import _factories
    from .backend.device import as_device
    dev = as_device(device) if device is not None else None
    if isinstance(obj, Tensor):
        same = (dtype is None or dtype is obj.dtype) and (dev is None or dev == obj.device)
        if copy is False and not same:
            if dtype is not None and dtype is not obj.dtype:
                raise ValueError(f"can't alias tensor with dtype '{_short(obj.dtype)}' into dtype '{_short(dtype)}'.")
            raise ValueError(f"can't alias tensor on device '{obj.device}' into device '{dev}'.")
        if same and not copy:
            if requires_grad:
                obj.requires_grad_(True)
            return obj
        if requires_grad is None and obj.requires_grad:
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
        out = obj.to(device=dev, dtype=dtype) if not same else obj
        if out is obj:
            out = E.clone(obj)
        if requires_grad is False:
            out = out.detach()
        elif requires_grad and not out.requires_grad:
            out.requires_grad_(True)
        return out
    if isinstance(obj, np.ndarray) and copy is not True and (dev is None or dev.type == "cpu"):
        t = _factories.from_numpy(obj)
        if dtype is not None and dtype is not t.dtype:
            if copy is False:
                raise ValueError(f"can't alias NumPy array with dtype '{obj.dtype}' into dtype '{_short(dtype)}'.")
            t = t.to(dtype)
        if requires_grad:
            t.requires_grad_(True)
        return t
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    if isinstance(obj, str) or not (isinstance(obj, (list, tuple, numbers.Number, np.ndarray, np.generic))):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    return _factories.tensor(obj, dtype=dtype, device=dev, requires_grad=builtins.bool(requires_grad))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A 0-d tensor holding the number ``s`` (the default float dtype unless ``dtype`` says otherwise)."""
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    return E.full((), s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def is_nonzero(input) -> bool:
    """Whether the single value of ``input`` is not zero (PyTorch's errors for zero or many values)."""
    _need_tensor("is_nonzero", input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.detach().reshape(()).item() != 0)


def is_signed(input) -> bool:
    """True for every glassgrad dtype but bool."""
    _need_tensor("is_signed", input)
    return input.dtype is not _dtype.bool_


def is_complex(input) -> bool:
    """Always False: glassgrad has no complex dtype."""
    _need_tensor("is_complex", input)
    return False


def is_inference(input) -> bool:
    """Whether ``input`` was made inside ``inference_mode()``."""
    _need_tensor("is_inference", input)
    return input.is_inference()


def typename(obj) -> str:
    """A tensor's type name (``torch.FloatTensor``), or ``module.QualName`` for anything else."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qual = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qual = obj.__name__
    else:
        module, qual = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qual if module in ("", "builtins") else f"{module}.{qual}"


def _get_device(self) -> int:
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


def bind_methods(cls):
    """The Tensor methods: the functions above that PyTorch also has on Tensor, and the random fills."""
    for name, fn in (("quantile", quantile), ("nanquantile", nanquantile), ("cummax", cummax), ("cummin", cummin),
                     ("msort", msort), ("cov", cov), ("corrcoef", corrcoef), ("histogram", histogram),
                     ("inner", inner), ("ger", ger), ("vdot", vdot), ("renorm", renorm), ("renorm_", _renorm_),
                     ("random_", _random_), ("exponential_", _exponential_), ("geometric_", _geometric_),
                     ("cauchy_", _cauchy_), ("log_normal_", _log_normal_), ("is_nonzero", is_nonzero),
                     ("is_signed", is_signed), ("is_complex", is_complex), ("get_device", _get_device)):
        setattr(cls, name, fn)
    cls.is_cpu = property(lambda self: self.device.type == "cpu")


__all__ = ["quantile", "nanquantile", "cummax", "cummin", "msort", "cov", "corrcoef", "trapezoid", "trapz",
           "cumulative_trapezoid", "histogram", "inner", "ger", "vdot", "renorm", "hamming_window", "hann_window",
           "blackman_window", "bartlett_window", "kaiser_window", "randint_like", "poisson", "asarray",
           "scalar_tensor", "is_nonzero", "is_signed", "is_complex", "is_inference", "typename"]
