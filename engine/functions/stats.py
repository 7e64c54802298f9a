"""torch.*'s statistics composed as PyTorch composes them: cov/corrcoef, trapezoid/trapz/cumulative_trapezoid,
histogram (a NotImplemented node when the input requires grad, as PyTorch's), histc and bincount.
"""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from .. import return_types
from ..backend import dtypes as _dtype
from ..core.operators import _shape_str
from .arithmetic import clamp, div, le, lt, ne, sqrt
from .build import diagonal
from .factories import full, linspace, tensor, zeros, zeros_like
from .indexing import _getitem, narrow
from .matmul import mm
from .reductions import cumsum
from . import reductions
from .views import squeeze, unsqueeze, view
from . import views
from ..core import grad_mode
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .dims import wrap_dim as _wrap_dim
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor, host as _host


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}[dt.name]


def _num(v) -> str:
    """A number as PyTorch's C++ messages print it (-1, 0.5, 1e+10)."""
    return f"{builtins.float(v):g}"


def _along(nd, dim, index):
    return (slice(None),) * dim + (index,) + (slice(None),) * (nd - dim - 1)


def _float_only(kernel, *xs):
    for x in xs:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(x.dtype)}'")


def _new(host, like, dtype=None):
    return tensor(host, dtype=dtype, device=like.device)


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
    if n and builtins.bool(lt(reductions.min(w.detach()), 0)):
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
    x = view(input, (1, -1)) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _weights_check("fweights", fweights, n, False)
        w = fweights
    if aweights is not None:
        _weights_check("aweights", aweights, n, True)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = full((), n, dtype=_dtype.int64, device=input.device)
    else:
        w_sum = reductions.sum(w)
        if not builtins.bool(ne(w_sum.detach(), 0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = div(reductions.sum(x * w if w is not None else x, 1), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * reductions.sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    if builtins.bool(le(norm.detach(), 0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = zeros_like(norm)
    x = x - unsqueeze(avg, 1)
    c = mm(x, views.t(x * w if w is not None else x))
    with np.errstate(divide="ignore", invalid="ignore"):   # 0 degrees of freedom: inf/nan, silently
        return squeeze(div(c, norm))


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
    std = sqrt(diagonal(c))
    c = c / view(std, (-1, 1))
    c = c / view(std, (1, -1))
    return clamp(c, -1, 1)


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
        x = view(x, tuple(shape))
    elif x.ndim < y.ndim:
        x = view(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    m = x.shape[d]
    return narrow(x, d, 1, m - 1) - narrow(x, d, 0, m - 1)


def _pair_sums(y, d):
    m = y.shape[d]
    return narrow(y, d, 0, m - 1) + narrow(y, d, 1, m - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along ``dim``: with sample points ``x`` (a tensor) or a constant spacing ``dx``
    (default 1). As PyTorch: with dx, ``(sum(y) - (y[0] + y[-1]) * 0.5) * dx``; with x,
    ``sum((y[:-1] + y[1:]) * diff(x)) / 2``."""
    d = _trapezoid_args("trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:
        return zeros(tuple(s for k, s in enumerate(y.shape) if k != d), dtype=y.dtype, device=y.device)
    if y.dtype is _dtype.bool_ or (x is not None and x.dtype is _dtype.bool_):
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if x is not None:
        return _half(reductions.sum(_pair_sums(y, d) * _x_steps("trapezoid", y, x, d), d))
    ends = _getitem(y, _along(y.ndim, d, 0)) + _getitem(y, _along(y.ndim, d, -1))
    return _mul_number(reductions.sum(y, d) - _mul_number(ends, 0.5), 1.0 if dx is None else dx)


def trapz(y, x=None, *, dx=None, dim=-1):
    """The older name of ``trapezoid``."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along ``dim`` (one fewer element there): ``cumsum`` of the pieces."""
    d = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if y.dtype is _dtype.bool_ or (x is not None and x.dtype is _dtype.bool_):
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    if y.shape[d] == 0:
        return zeros(tuple(y.shape), dtype=y.dtype, device=y.device)
    if x is not None:
        return _half(cumsum(_pair_sums(y, d) * _x_steps("cumulative_trapezoid", y, x, d), d))
    return cumsum(_mul_number(_pair_sums(y, d), (1.0 if dx is None else dx) / 2.0), d)


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
                           f"{_shape_str(tuple(input.reshape(-1, 1).shape))} and weight with shape "
                           f"{_shape_str(tuple(weight.shape))}")
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
        edges = linspace(lo, hi, bins + 1, dtype=input.dtype, device="cpu").numpy()
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
    hist = tensor(hist.astype(npdt), dtype=input.dtype, device=input.device)
    if input.requires_grad and grad_mode.is_grad_enabled():   # PyTorch's NotImplemented node (on hist only here)
        hist = apply(_O["histogram"], [input, hist])
    return return_types.histogram(hist, tensor(edges, dtype=input.dtype, device=input.device))


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in a 1-D non-negative int64 tensor (summed ``weights``
    instead of counts when given: float64, or the weights' float dtype as PyTorch)."""
    if input.dtype.is_floating_point or input.dtype is _dtype.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_short(input.dtype)}'")
    h = _host(input)
    if input.ndim != 1 or (h < 0).any():
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _new(np.bincount(h, minlength=minlength).astype(np.int64), input, _dtype.int64)
    w = _host(weights)
    dt = weights.dtype if weights.dtype is _dtype.float32 else _dtype.float64
    return _new(np.bincount(h, weights=w.astype(np.float64), minlength=minlength), input, dt)


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """A histogram of ``bins`` equal-width bins over [min, max] (the data's range when both are 0);
    values outside are left out. Floating inputs only; no gradient."""
    _float_only("histogram_cpu", input)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    h = _host(input).astype(np.float64).reshape(-1)
    lo, hi = builtins.float(min), builtins.float(max)
    if lo == hi and h.size:
        lo, hi = builtins.float(h.min()), builtins.float(h.max())
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(h[(h >= lo) & (h <= hi)], bins=bins, range=(lo, hi))
    return _new(counts.astype(np.float64), input, input.dtype)


__all__ = ["cov", "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "histogram", "histc", "bincount"]
