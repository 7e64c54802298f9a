"""torch.*'s reductions (rows in engine/ops/reduce/): cumprod, logcumsumexp, nansum, nanmean, median,
nanmedian, kthvalue, mode, aminmax, count_nonzero, diff, quantile/nanquantile (NOTE [ quantile as PyTorch
composes it ]), cummax/cummin, msort, std_mean/var_mean and renorm.

sum, mean, var, std, prod, max/min, amax/amin, logsumexp, cumsum and norm are in engine.functional.
Where PyTorch builds a function from other ops (diff, nanmean, quantile) glassgrad composes the same ops,
so the graph shows the same nodes.
"""
from __future__ import annotations

import builtins
import collections
import numbers

from .. import return_types
from ..backend import dtypes as _dtype
from ..core.operators import sub
from .arithmetic import ceil, div, floor, ge, isnan, le, logical_and, logical_not, logical_xor, lt
from . import arithmetic
from .factories import empty_like, full, full_like
from .indexing import gather, masked_fill, narrow
from .reductions import _dims, _spread_attrs
from . import reductions
from .search import sort
from .views import broadcast_tensors, cat, expand, flatten, transpose, unsqueeze
from . import views
from ..core import grad_mode
from ..core.dispatch import apply, apply_multi
from ..core.inplace import bump_version
from ..core.table import OPS as _O
from ..ops.reduce.moments import OUTPUTS
from ..core.tensor import Tensor
from .dims import row_for, wrap_dim as _wrap_dim
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}[dt.name]


def _num(v) -> str:
    """A number as PyTorch's C++ messages print it (-1, 0.5, 1e+10)."""
    return f"{builtins.float(v):g}"


def _along(nd, dim, index):
    return (slice(None),) * dim + (index,) + (slice(None),) * (nd - dim - 1)


def _no_bool(kernel, input):
    if input.dtype is _dtype.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _float_only(kernel, *xs):
    for x in xs:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(x.dtype)}'")


def _inplace(name, target, inputs, attrs=None):
    return apply(_O[name], inputs, attrs, inplace=target)


# ---- scans and reductions --------------------------------------------------------------------------
def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim`` (bool and int64 give int64). CumprodBackward0 keeps the input and
    the result; its gradient is right with zeros in the input (NOTE [ Gradient of a running product ])."""
    if dtype is not None:
        input = input.to(dtype)
    return apply(row_for("cumprod", input), [input], {"dim": _wrap_dim(dim, input.ndim)})


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, without overflow. LogcumsumexpBackward0 keeps the input
    and the result."""
    d = _wrap_dim(dim, input.ndim)
    _float_only("logcumsumexp_out_cpu", input)
    return apply(row_for("logcumsumexp", input), [input], {"dim": d})


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs counted as zero. NansumBackward0 keeps the input (NaN places get no gradient)."""
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(dim, input.ndim) if dim not in (None, (), []) else None
    return apply(_O["nansum"], [input], {"dim": dims, "keepdim": keepdim})


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values: ``nansum(input) / count(not NaN)``, as PyTorch composes it
    (NansumBackward0 under a DivBackward0 that keeps the int64 count)."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_short(input.dtype)}")
    count = reductions.sum(logical_not(isnan(input.detach())), dim, keepdim=keepdim) if dim not in (None, (), []) \
        else reductions.sum(logical_not(isnan(input.detach())))
    return div(nansum(input, dim, keepdim), count)


def _result_type(name, fields):
    """PyTorch's ``torch.return_types.<name>`` (engine/return_types.py where present), else a namedtuple."""
    try:
        return getattr(return_types, name)
    except (ImportError, AttributeError):
        return collections.namedtuple(name, fields)


MedianResult = _result_type("median", ["values", "indices"])
NanmedianResult = _result_type("nanmedian", ["values", "indices"])
KthvalueResult = _result_type("kthvalue", ["values", "indices"])
ModeResult = _result_type("mode", ["values", "indices"])
AminmaxResult = _result_type("aminmax", ["min", "max"])


def _median(name, result, input, dim, keepdim):
    _no_bool("median_cpu" if dim is None else "median_out", input)
    if dim is None:
        return apply(_O[name], [input])         # an empty input: nan, with its node (as PyTorch)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    vals, aux = apply(row_for(name + "_dim", input), [input], {"dim": d, "keepdim": keepdim}, return_aux=True)
    return result(vals, aux["indices"])


def median(input, dim=None, keepdim=False):
    """The lower median (of everything, or along ``dim`` with the index of the value). A slice holding
    NaN gives NaN. MedianBackward0 shares the gradient among equal values; MedianBackward1 keeps the
    indices and sends it to the picked element."""
    return _median("median", MedianResult, input, dim, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    """As median, with NaNs left out (NaN only when a slice is all NaN)."""
    return _median("nanmedian", NanmedianResult, input, dim, keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index. KthvalueBackward0 keeps the indices."""
    _no_bool("kthvalue_cpu", input)
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    vals, aux = apply(row_for("kthvalue", input), [input], {"dim": d, "keepdim": keepdim, "k": int(k) - 1}, return_aux=True)
    return KthvalueResult(vals, aux["indices"])


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index of
    its last occurrence. ModeBackward0 keeps the indices."""
    d = _wrap_dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    vals, aux = apply(row_for("mode", input), [input], {"dim": d, "keepdim": keepdim}, return_aux=True)
    return ModeResult(vals, aux["indices"])


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (everything by default), from one AminmaxBackward0 node keeping the
    input and both results; each result's gradient is shared evenly among tied elements."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = tuple(builtins.range(input.ndim)) if keepdim else None
    else:
        dims = _dims(dim, input.ndim)
        if input.ndim and input.shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    return AminmaxResult(*apply_multi(_O["aminmax"], [input], {"dim": dims, "keepdim": keepdim}, ("min", "max")))


def count_nonzero(input, dim=None, **kwargs):
    """How many elements are not zero (over ``dim``, an int or a tuple, or all); int64, no gradient."""
    if kwargs:
        got = ", ".join(["Tensor"] + ([type(dim).__name__] if dim is not None else [])
                        + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"count_nonzero() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:\n * (Tensor input, int dim = None)\n * (Tensor input, tuple of ints dim)\n")
    xp = input._storage.xp
    dims = _dims(dim, input.ndim)
    nz = xp.astype(input._data != 0, xp.int64)
    return Tensor._wrap(xp.sum(nz, axis=dims, dtype=xp.int64))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``: ``x[1:] - x[:-1]``, repeated; ``prepend`` and
    ``append`` are concatenated first. Composed as PyTorch does (slices, sub, cat)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    if n == 0:      # PyTorch copies the input into a new tensor (CopyBackwards), prepend and append unread
        return empty_like(input).copy_(input)
    if prepend is not None or append is not None:
        parts = [x if x.ndim else expand(x, tuple(input.shape[:d]) + (1,) + tuple(input.shape[d + 1:]))
                 for x in (prepend, input, append) if x is not None]
        input = cat(parts, d)
    out = input
    for _ in range(n):
        m = out.shape[d]
        if m == 0:
            break
        hi, lo = narrow(out, d, 1, m - 1), narrow(out, d, 0, m - 1)
        out = logical_xor(hi, lo) if out.dtype is _dtype.bool_ else sub(hi, lo)
    return out


def _cumprod_(self, dim, *, dtype=None):
    return apply(row_for("cumprod", self), [self], {"dim": _wrap_dim(dim, self.ndim)}, inplace=self)


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
        sorted_ = sort(flatten(input) if nd != 1 else input, -1).values
    else:
        reduced = list(input.shape)
        if keepdim:
            reduced[d] = 1
        else:
            del reduced[d]
        src = input if d == nd - 1 else transpose(unsqueeze(input, -1), d, -1)
        sorted_ = sort(src, -1).values
    n = sorted_.shape[-1]
    sorted_ = views.view(sorted_, tuple(reduced) + (n,))
    qv = full((1,), builtins.float(q), dtype=input.dtype, device=input.device) if scalar_q else q.reshape(-1)
    with grad_mode.no_grad():                     # NOTE [ quantile as PyTorch composes it ] 2
        qd = qv.detach()
        if not scalar_q and not builtins.bool(reductions.all(logical_and(ge(qd, 0), le(qd, 1)))):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        nan = isnan(sorted_.detach())
        if ignore_nan:
            count = reductions.sum(logical_not(nan), -1, keepdim=True)
            ranks = qd * (count - 1)
            ranks = masked_fill(ranks, lt(ranks, 0), 0)
        else:
            ranks = broadcast_tensors(qd * (n - 1), reductions.any(nan, -1, keepdim=True))
            ranks = masked_fill(ranks[0], ranks[1], n - 1)
        if interpolation == "lower":
            ranks = floor(ranks)
        elif interpolation == "higher":
            ranks = ceil(ranks)
        elif interpolation == "nearest":
            ranks = arithmetic.round(ranks)
        below = ranks.to(_dtype.int64)
    out = gather(sorted_, -1, below)            # NOTE [ quantile as PyTorch composes it ] 3
    if interpolation in ("linear", "midpoint"):
        with grad_mode.no_grad():
            weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
            above = ceil(ranks).to(_dtype.int64)
        out = apply(_O["lerp_tensor"], [out, gather(sorted_, -1, above), weights], inplace=out)
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
    """A view op PyTorch runs in place (squeeze_, ...) bumps the version its base shares; the view's node
    stands for the new version (NOTE [ A view's grad_fn after an in-place op ] 1 in engine/ops/shape/view_history.py)."""
    bump_version(view, opname)
    view.grad_fn = view._grad_fn
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
    d = _wrap_dim(dim, input.ndim)
    out, aux = apply(row_for(which, input), [input], {"dim": d}, return_aux=True)
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
    return sort(input, 0).values


def _moments(name, input, dim, unbiased, keepdim, correction):
    return apply_multi(_O[name], [input], _spread_attrs(name, input, dim, unbiased, keepdim, correction,
                                                         stacklevel=4), OUTPUTS)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``: one StdMeanBackward0 node for both, as PyTorch."""
    return _moments("std_mean", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``: one VarMeanBackward0 node for both, as PyTorch."""
    return _moments("var_mean", input, dim, unbiased, keepdim, correction)


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


__all__ = ["cumprod", "logcumsumexp", "nansum", "nanmean", "median", "nanmedian", "kthvalue", "mode", "aminmax",
           "count_nonzero", "diff", "quantile", "nanquantile", "cummax", "cummin", "msort", "std_mean", "var_mean",
           "renorm"]
