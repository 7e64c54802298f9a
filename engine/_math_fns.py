"""More of ``torch.*``'s math (rows in engine/ops/math_ops.py): inverse trigonometric and hyperbolic
functions, atan2, hypot, logaddexp, xlogy, lerp, addcmul/addcdiv; cumprod, logcumsumexp, nansum,
nanmean, median, kthvalue, mode, aminmax, count_nonzero, diff; diag, diagonal, trace, kron, cross,
rot90, repeat_interleave, tile, meshgrid, tensor_split, argwhere, isin, bucketize, searchsorted,
bincount, histc; tensordot, baddbmm, addbmm, addmv, addr, cdist and dist.

Where PyTorch builds a function from other ops (diff, kron, nanmean, tile, meshgrid, tensordot,
repeat_interleave with a number) glassgrad composes the same ops, so the graph shows the same nodes.
"""
from __future__ import annotations

import builtins
import collections
import math
import warnings

import numpy as np

from .backend import dtypes as _dtype
from . import functional as E
from .core.dispatch import apply
from .core.tensor import Tensor, _wrap_dim
from .derivatives import OPS

_O = OPS


def _short(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}[dt.name]


def _need_tensor(fn, x, arg="input", pos=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _float_only(kernel, *xs):
    for x in xs:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(x.dtype)}'")


def _host(t):
    return t.detach().numpy(force=True)


def _new(host, like, dtype=None):
    from ._factories import tensor
    return tensor(host, dtype=dtype, device=like.device)


def _inplace(name, target, inputs, attrs=None):
    return apply(_O[name], inputs, attrs, inplace=target)


# ---- elementwise unary -----------------------------------------------------------------------------
def _unary(name, doc):
    def f(input):
        _need_tensor(name, input)
        return apply(_O[name], [input])
    f.__name__ = name
    f.__doc__ = doc
    return f


asin = arcsin = _unary("asin", "Inverse sine; integers give the default float dtype. AsinBackward0 keeps the input.")
acos = arccos = _unary("acos", "Inverse cosine. AcosBackward0 keeps the input.")
atan = arctan = _unary("atan", "Inverse tangent. AtanBackward0 keeps the input.")
sinh = _unary("sinh", "Hyperbolic sine. SinhBackward0 keeps the input.")
cosh = _unary("cosh", "Hyperbolic cosine. CoshBackward0 keeps the input.")
asinh = arcsinh = _unary("asinh", "Inverse hyperbolic sine. AsinhBackward0 keeps the input.")
acosh = arccosh = _unary("acosh", "Inverse hyperbolic cosine. AcoshBackward0 keeps the input.")
atanh = arctanh = _unary("atanh", "Inverse hyperbolic tangent. AtanhBackward0 keeps the input.")
log2 = _unary("log2", "Base-2 logarithm. Log2Backward0 keeps the input.")
log10 = _unary("log10", "Base-10 logarithm. Log10Backward0 keeps the input.")
sinc = _unary("sinc", "Normalized sinc, sin(pi x) / (pi x), 1 at 0. SincBackward0 keeps the input.")
deg2rad = _unary("deg2rad", "Degrees to radians (Deg2RadBackward0, nothing saved).")
rad2deg = _unary("rad2deg", "Radians to degrees (Rad2DegBackward0, nothing saved).")


def trunc(input):
    """Round toward zero; integers come back unchanged. TruncBackward0: a zero gradient."""
    _need_tensor("trunc", input)
    if input.dtype is _dtype.bool_:
        raise NotImplementedError("\"trunc_vml_cpu\" not implemented for 'Bool'")
    return apply(_O["trunc"], [input])


fix = trunc


def frac(input):
    """``input - trunc(input)``, for floating inputs. FracBackward0 passes the gradient through."""
    _need_tensor("frac", input)
    _float_only("frac_cpu", input)
    return apply(_O["frac"], [input])


def logit(input, eps=None):
    """``log(p / (1 - p))``; with ``eps`` the input is first clamped to [eps, 1 - eps]."""
    _need_tensor("logit", input)
    return apply(_O["logit"], [input], {"eps": None if eps is None else builtins.float(eps)})


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's
    largest and smallest finite values); integer tensors come back as a copy."""
    _need_tensor("nan_to_num", input)
    return apply(_O["nan_to_num"], [input], {"nan": nan, "posinf": posinf, "neginf": neginf})


# ---- elementwise binary ----------------------------------------------------------------------------
def atan2(input, other):
    """The angle of the point (other, input), in (-pi, pi]. Atan2Backward0 keeps both inputs."""
    _need_tensor("atan2", input)
    _need_tensor("atan2", other, "other", 2)
    E._broadcast_check(input, other)
    return apply(_O["atan2"], [input, other])


arctan2 = atan2


def hypot(input, other):
    """``sqrt(input**2 + other**2)``, floating inputs only. HypotBackward0 keeps both and the result."""
    _need_tensor("hypot", input)
    _need_tensor("hypot", other, "other", 2)
    _float_only("hypot_cpu", input, other)
    E._broadcast_check(input, other)
    return apply(_O["hypot"], [input, other])


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow. LogaddexpBackward0 keeps both inputs."""
    _need_tensor("logaddexp", input)
    _need_tensor("logaddexp", other, "other", 2)
    _float_only("logaddexp_cpu", input, other)
    E._broadcast_check(input, other)
    return apply(_O["logaddexp"], [input, other])


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN). Either may be a number:
    XlogyBackward1 (``input`` a number) or XlogyBackward2 (``other`` a number) keep the tensor one."""
    a, b = isinstance(input, Tensor), isinstance(other, Tensor)
    if not a and not b:
        raise TypeError(f"xlogy() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n * (Tensor input, Tensor other, *, Tensor "
                        "out = None)\n * (Number self, Tensor other, *, Tensor out = None)\n * (Tensor input, Number "
                        "other, *, Tensor out = None)\n")
    E._broadcast_check(input, other)
    if not b:
        return apply(_O["xlogy_number_other"], [input], {"other": E._scalar_ok(other, "xlogy")})
    if not a:
        return apply(_O["xlogy_number_self"], [other], {"self": E._scalar_ok(input, "xlogy")})
    return apply(_O["xlogy"], [input, other])


def floor_divide(input, other):
    """``floor(input / other)``; integers stay integers. As PyTorch, a node that raises on backward
    (NotImplemented) when ``input`` requires grad."""
    if not isinstance(input, Tensor):
        input = E.full((), input, dtype=_dtype.result_type([input]), device=other.device)
    other = E._scalar_ok(other, "floor_divide")
    E._broadcast_check(input, other)
    if not _dtype.result_type([input, other]).is_floating_point:
        divisor = _host(other) if isinstance(other, Tensor) else np.asarray(other)
        if (divisor == 0).any():
            raise RuntimeError("ZeroDivisionError")
    if not isinstance(other, Tensor):
        if isinstance(other, builtins.float) and not input.dtype.is_floating_point:
            input = input.to(_dtype.get_default_dtype())
        return apply(_O["floor_divide_number"], [input], {"b": other})
    return apply(_O["floor_divide"], [input, other])


def heaviside(input, values):
    """The step function: 0 below zero, 1 above, ``values`` at zero. No gradient (NotImplemented)."""
    _need_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    E._broadcast_check(input, values)
    return apply(_O["heaviside"], [input, values])


def _lerp_check(input, end, weight):
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_cname(input.dtype)} for `end` but got dtype {_cname(end.dtype)}")
    if isinstance(weight, Tensor) and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_cname(input.dtype)} for `weight` but got dtype {_cname(weight.dtype)}")
    _float_only("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", input)


def lerp(input, end, weight):
    """``input + weight * (end - input)``. A number weight: LerpBackward0 (nothing saved); a tensor:
    LerpBackward1, keeping all three."""
    _lerp_check(input, end, weight)
    if isinstance(weight, Tensor):
        E._broadcast_check(input, end)
        E._broadcast_check(input, weight)
        return apply(_O["lerp_tensor"], [input, end, weight])
    E._broadcast_check(input, end)
    return apply(_O["lerp"], [input, end], {"weight": weight})


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``. AddcmulBackward0 keeps tensor1 and tensor2."""
    for a, b in ((input, tensor1), (input, tensor2), (tensor1, tensor2)):
        E._broadcast_check(a, b)
    return apply(_O["addcmul"], [input, tensor1, tensor2], {"value": value} if value != 1 else None)


_ADDCDIV_INT = ("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
                "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
                "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
                "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
                "(input + value * tensor1 / tensor2), for all dtypes.")


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``. AddcdivBackward0 keeps tensor1 and tensor2."""
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError(_ADDCDIV_INT)
    for a, b in ((input, tensor1), (input, tensor2), (tensor1, tensor2)):
        E._broadcast_check(a, b)
    return apply(_O["addcdiv"], [input, tensor1, tensor2], {"value": value} if value != 1 else None)


# ---- scans and reductions --------------------------------------------------------------------------
def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim`` (bool and int64 give int64). CumprodBackward0 keeps the input and
    the result; its gradient is right with zeros in the input (NOTE [ Gradient of a running product ])."""
    if dtype is not None:
        input = input.to(dtype)
    return apply(_O["cumprod"], [input], {"dim": _wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else 0})


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, without overflow. LogcumsumexpBackward0 keeps the input
    and the result."""
    _float_only("logcumsumexp_out_cpu", input)
    return apply(_O["logcumsumexp"], [input], {"dim": _wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else 0})


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs counted as zero. NansumBackward0 keeps the input (NaN places get no gradient)."""
    if dtype is not None:
        input = input.to(dtype)
    dims = E._dims(dim, input.ndim) if dim not in (None, (), []) else None
    return apply(_O["nansum"], [input], {"dim": dims, "keepdim": keepdim})


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values: ``nansum(input) / count(not NaN)``, as PyTorch composes it
    (NansumBackward0 under a DivBackward0 that keeps the int64 count)."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_short(input.dtype)}")
    count = E.sum(E.logical_not(E.isnan(input.detach())), dim, keepdim=keepdim) if dim not in (None, (), []) \
        else E.sum(E.logical_not(E.isnan(input.detach())))
    return E.div(nansum(input, dim, keepdim), count)


def _result_type(name, fields):
    """PyTorch's ``torch.return_types.<name>`` (engine/return_types.py where present), else a namedtuple."""
    try:
        from . import return_types
        return getattr(return_types, name)
    except (ImportError, AttributeError):
        return collections.namedtuple(name, fields)


MedianResult = _result_type("median", ["values", "indices"])
NanmedianResult = _result_type("nanmedian", ["values", "indices"])
KthvalueResult = _result_type("kthvalue", ["values", "indices"])
ModeResult = _result_type("mode", ["values", "indices"])
AminmaxResult = _result_type("aminmax", ["min", "max"])


def _median(name, result, input, dim, keepdim):
    if dim is None:
        if input.numel() == 0:
            return E.full((), math.nan, dtype=input.dtype, device=input.device)
        return apply(_O[name], [input])
    d = _wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else 0
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    vals, aux = apply(_O[name + "_dim"], [input], {"dim": d, "keepdim": keepdim}, return_aux=True)
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
    d = _wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    vals, aux = apply(_O["kthvalue"], [input], {"dim": d, "keepdim": keepdim, "k": int(k) - 1}, return_aux=True)
    return KthvalueResult(vals, aux["indices"])


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index of
    its last occurrence. ModeBackward0 keeps the indices."""
    d = _wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else 0
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    vals, aux = apply(_O["mode"], [input], {"dim": d, "keepdim": keepdim}, return_aux=True)
    return ModeResult(vals, aux["indices"])


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (everything by default), from one AminmaxBackward0 node keeping the
    input and both results; each result's gradient is shared evenly among tied elements."""
    if input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    from .core.dispatch import apply_multi
    dims = None if dim is None else (_wrap_dim(dim, builtins.max(input.ndim, 1)) if input.ndim else 0,)
    if dims is not None and not input.ndim:
        dims = None
    if dims is None and keepdim:
        dims = tuple(range(input.ndim))
    return AminmaxResult(*apply_multi(_O["aminmax"], [input], {"dim": dims, "keepdim": keepdim}, ("min", "max")))


def count_nonzero(input, dim=None):
    """How many elements are not zero (over ``dim``, or all); int64, no gradient."""
    xp = input._storage.xp
    dims = E._dims(dim, input.ndim) if dim is not None else None
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
    if prepend is not None or append is not None:
        parts = [x if x.ndim else E.expand(x, tuple(input.shape[:d]) + (1,) + tuple(input.shape[d + 1:]))
                 for x in (prepend, input, append) if x is not None]
        input = E.cat(parts, d)
    out = input
    for _ in range(n):
        m = out.shape[d]
        if m == 0:
            break
        hi, lo = E.narrow(out, d, 1, m - 1), E.narrow(out, d, 0, m - 1)
        out = E.logical_xor(hi, lo) if out.dtype is _dtype.bool_ else E.sub(hi, lo)
    return out


# ---- diagonals and shapes --------------------------------------------------------------------------
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the matrices in dims ``dim1``, ``dim2``, as a new last dim. A view:
    it shares the input's storage and version counter (DiagonalBackward0)."""
    a, b = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_O["diagonal"], [input], {"offset": int(offset), "dim1": a, "dim2": b})


def diag(input, diagonal=0):
    """A 1-D input becomes the diagonal ``diagonal`` of a square matrix (DiagEmbedBackward0); a 2-D
    input gives that diagonal as a new tensor (a copy: DiagonalBackward0_copy)."""
    if input.ndim == 1:
        return apply(_O["diag_embed"], [input], {"offset": int(diagonal)})
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return apply(_O["diagonal_copy"], [input], {"offset": int(diagonal), "dim1": 0, "dim2": 1})


def trace(input):
    """The sum of the main diagonal of a matrix (int64 for integers). TraceBackward0 keeps nothing."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(_O["trace"], [input])


def _unsafe_view(x, shape):
    x = x if x.is_contiguous() else E.clone(x)
    return apply(_O["view"], [x], {"shape": tuple(shape)}, node_name="UnsafeViewBackward0")


def kron(input, other):
    """The Kronecker product. As PyTorch: both viewed with interleaved size-1 dims, multiplied
    (MulBackward0 keeps the two views) and the product viewed back (UnsafeViewBackward0)."""
    _need_tensor("kron", other, "other", 2)
    nd = builtins.max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = _unsafe_view(input, tuple(v for s in sa for v in (s, 1)))
    b = _unsafe_view(other, tuple(v for s in sb for v in (1, s)))
    return _unsafe_view(E.mul(a, b), tuple(p * q for p, q in zip(sa, sb)))


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (without ``dim``: the first dim of size 3, with
    PyTorch's deprecation warning). LinalgCrossBackward0 keeps both inputs."""
    E._broadcast_check(input, other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        sizes = [k for k, s in enumerate(shape) if s == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        d = sizes[0]
    else:
        if input.ndim != other.ndim:
            raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
        d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return apply(_O["cross"], [input, other], {"dim": d})


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times, from ``dims[0]`` toward ``dims[1]``. Rot90Backward0 keeps nothing."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply(_O["rot90"], [input], {"k": int(k), "dims": (d0, d1)})


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times. A number: as PyTorch, unsqueeze,
    expand, clone and view; a tensor of counts: one IndexSelectBackward0 keeping the index. With only a
    tensor of counts, the indices 0, 1, ... each repeated that many times. ``output_size`` (a hint for
    PyTorch's CUDA kernel) is accepted and not needed."""
    if repeats is None:
        counts = _host(input)
        if input.ndim != 1 or input.dtype is not _dtype.int64 or (counts < 0).any():
            raise RuntimeError("repeats has to be Long tensor")
        return _new(np.repeat(np.arange(len(counts), dtype=np.int64), counts), input)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if dim is None:
        input = E.reshape(input, (-1,))
        dim = 0
    d = _wrap_dim(dim, input.ndim)
    if not isinstance(repeats, Tensor):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        shape = tuple(input.shape)
        x = E.unsqueeze(input, d + 1)
        x = E.expand(x, shape[:d + 1] + (int(repeats),) + shape[d + 1:])
        return E.view(E.clone(x), shape[:d] + (shape[d] * int(repeats),) + shape[d + 1:])
    counts = _host(repeats)
    if repeats.ndim != 1 or len(counts) != input.shape[d]:
        raise RuntimeError("repeats must have the same size as input along dim")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = _new(np.repeat(np.arange(len(counts), dtype=np.int64), counts), input)
    return apply(_O["index_select_dim"], [input, index], {"dim": d})


def tile(input, dims):
    """Repeat the whole tensor ``dims`` times per dim; fewer dims than the input are padded with 1s in
    front (RepeatBackward0)."""
    if isinstance(dims, int):
        raise TypeError("tile(): argument 'dims' (position 2) must be tuple of ints, not int")
    dims = tuple(int(x) for x in dims)
    dims = (1,) * builtins.max(input.ndim - len(dims), 0) + dims
    return E.repeat(input, dims)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-D or 1-D tensors: each viewed along its own dim and expanded
    (ViewBackward0, ExpandBackward0). ``indexing="xy"`` swaps the first two dims of the grid."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for k, t in enumerate(tensors):
        pos = (1 - k if k < 2 else k) if swap else k
        shape = [1] * len(tensors)
        shape[pos] = -1
        out.append(E.expand(E.view(t, tuple(shape)), tuple(sizes)))
    return tuple(out)


def tensor_split(input, indices_or_sections, dim=0):
    """Split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer), or at the
    given indices. Each part is a slice (a view)."""
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = (indices_or_sections.tolist() if indices_or_sections.ndim
                               else int(indices_or_sections.item()))
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for k in range(n):
            start += q + (1 if k < r else 0)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = [int(i) for i in indices_or_sections]
    out, start = [], 0
    for b in bounds + [size]:
        lo = builtins.min(builtins.max(start if start >= 0 else start + size, 0), size)
        hi = builtins.min(builtins.max(b if b >= 0 else b + size, lo), size)
        out.append(E._getitem(input, (slice(None),) * d + (slice(lo, hi),)))
        start = b
    return tuple(out)


def argwhere(input):
    """The indices of the non-zero elements, one row each (int64, as ``nonzero``)."""
    return E.nonzero(input)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is among ``test_elements`` (either may be a number)."""
    like = elements if isinstance(elements, Tensor) else test_elements
    e = _host(elements) if isinstance(elements, Tensor) else np.asarray(elements)
    t = _host(test_elements) if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _new(np.isin(e, t, invert=invert), like, _dtype.bool_)


def _search(boundaries, values, right):
    b = _host(boundaries)
    v = _host(values) if isinstance(values, Tensor) else np.asarray(values)
    side = "right" if right else "left"
    if b.ndim <= 1:
        res = np.searchsorted(b.reshape(-1), v, side=side)
    else:
        if tuple(b.shape[:-1]) != tuple(v.shape[:-1]) if v.ndim == b.ndim else True:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               f"dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(b.shape)} and input value tensor {list(v.shape)}")
        rows, vals = b.reshape(-1, b.shape[-1]), v.reshape(-1, v.shape[-1])
        res = np.stack([np.searchsorted(r, x, side=side) for r, x in zip(rows, vals)]).reshape(v.shape)
    return _new(np.asarray(res, dtype=np.int64), boundaries, _dtype.int64)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value the index where it would go in the sorted last dim of ``sorted_sequence``
    (the first such place, or the last with ``right=True`` / ``side="right"``). Always int64:
    glassgrad has no int32, so ``out_int32`` changes nothing."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if sorter is not None:
        sorted_sequence = E.gather(sorted_sequence, -1, sorter)
    return _search(sorted_sequence, input, right)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among the 1-D sorted ``boundaries`` (searchsorted with the roles swapped)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search(boundaries, input, right)


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


# ---- products --------------------------------------------------------------------------------------
def tensordot(a, b, dims=2):
    """Contract ``dims`` (a count of trailing/leading dims, or two lists of dims). As PyTorch: permute
    the contracted dims together, reshape both to matrices, mm, and view the result."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da, db = [_wrap_dim(d, a.ndim) for d in da], [_wrap_dim(d, b.ndim) for d in db]
    for p, q in zip(da, db):
        if a.shape[p] != b.shape[q]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[p]} in dim {p} and "
                               f"second has size {b.shape[q]} in dim {q}")
    ra = [k for k in range(a.ndim) if k not in da]
    rb = [k for k in range(b.ndim) if k not in db]
    m = math.prod(a.shape[k] for k in ra)
    n = math.prod(b.shape[k] for k in rb)
    kk = math.prod(a.shape[k] for k in da)
    ma = E.reshape(E.permute(a, tuple(ra + da)), (m, kk))
    mb = E.reshape(E.permute(b, tuple(db + rb)), (kk, n))
    return E.reshape(E.mm(ma, mb), tuple(a.shape[k] for k in ra) + tuple(b.shape[k] for k in rb))


# NOTE [ beta and alpha ]
# 1. The add* products compute ``beta * input + alpha * (product)``; input broadcasts to the
#    product's shape (PyTorch's expand error when it cannot).
# 2. With ``beta == 0`` input is ignored: NaN and inf in it do not reach the result.
# 3. The node keeps the operands the other operand's gradient reads (as mm), never ``input``.
def _expand_error(target, shape):
    from .core.dispatch import broadcast_mismatch
    lead = len(target) - len(shape)
    if lead < 0 or broadcast_mismatch(target, shape) or any(
            s != 1 and s != target[k + lead] for k, s in enumerate(shape)):
        for k in range(len(shape) - 1, -1, -1):
            if lead >= 0 and shape[k] != 1 and shape[k] != target[k + lead]:
                raise RuntimeError(f"The expanded size of the tensor ({target[k + lead]}) must match the existing "
                                   f"size ({shape[k]}) at non-singleton dimension {k + lead}.  Target sizes: "
                                   f"{list(target)}.  Tensor sizes: {list(shape)}")
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(target)}): the number of sizes "
                           f"provided ({len(target)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")


def _same_dtype(*xs):
    for x in xs[1:]:
        if x.dtype is not xs[0].dtype:
            raise RuntimeError(f"expected scalar type {_short(xs[0].dtype)} but found {_short(x.dtype)}")


def _product(name, input, a, b, beta, alpha, target):
    _same_dtype(input, a, b)
    _expand_error(target, tuple(input.shape))
    attrs = {k: v for k, v in (("beta", beta), ("alpha", alpha)) if v != 1}
    return apply(_O[name], [input, a, b], attrs or None)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for (b, n, m) @ (b, m, p) (NOTE [ beta and alpha ])."""
    for x in (batch1, batch2):
        if x.ndim != 3:
            raise RuntimeError(f"batch{1 if x is batch1 else 2} must be a 3D tensor")
    bs, n, m = batch1.shape
    if tuple(batch2.shape[:2]) != (bs, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {m}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    return _product("baddbmm", input, batch1, batch2, beta, alpha, (bs, n, batch2.shape[2]))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])`` (NOTE [ beta and alpha ])."""
    for x in (batch1, batch2):
        if x.ndim != 3:
            raise RuntimeError(f"batch{1 if x is batch1 else 2} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    return _product("addbmm", input, batch1, batch2, beta, alpha, (batch1.shape[1], batch2.shape[2]))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (NOTE [ beta and alpha ])."""
    if mat.ndim != 2 or vec.ndim != 1 or mat.shape[1] != vec.shape[0] or input.ndim > 1 or (
            input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        if mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1:
            raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                               f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    return _product("addmv", input, mat, vec, beta, alpha, (mat.shape[0],))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (NOTE [ beta and alpha ])."""
    for k, v in ((1, vec1), (2, vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument vec{k}, but got {v.ndim}-D")
    return _product("addr", input, vec1, vec2, beta, alpha, (vec1.shape[0], vec2.shape[0]))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of ``x1`` (..., P, M) and of ``x2`` (..., R, M).
    CdistBackward0 keeps both and the result; for p = 2 with more than 25 rows on either side,
    PyTorch's default takes its matrix-product route, and the node is EuclideanDistBackward0."""
    for k, x in ((1, x1), (2, x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, X{k} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{k} got: {_short(x.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    if batch:
        x1 = E.expand(x1, batch + tuple(x1.shape[-2:])) if tuple(x1.shape[:-2]) != batch else x1
        x2 = E.expand(x2, batch + tuple(x2.shape[-2:])) if tuple(x2.shape[:-2]) != batch else x2
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                     (compute_mode == "use_mm_for_euclid_dist_if_necessary" and (r1 > 25 or r2 > 25)))
    if mm:
        out = apply(_O["euclidean_dist"], [x1, x2])
        return E.view(out, tuple(out.shape))
    return apply(_O["cdist"], [x1, x2], {"p": builtins.float(p)})


def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast). DistBackward0 keeps both and the result."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_short(input.dtype)} instead.")
    E._broadcast_check(input, other)
    return apply(_O["dist"], [input, other], {"p": p})


__all__ = [
    "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh",
    "atanh", "arctanh", "atan2", "arctan2", "hypot", "logaddexp", "log2", "log10", "trunc", "fix", "frac",
    "floor_divide", "deg2rad", "rad2deg", "logit", "xlogy", "lerp", "addcmul", "addcdiv", "sinc", "heaviside",
    "nan_to_num", "cumprod", "logcumsumexp", "nansum", "nanmean", "median", "nanmedian", "kthvalue", "mode",
    "aminmax", "count_nonzero", "diff", "diag", "diagonal", "kron", "cross", "rot90", "repeat_interleave",
    "tile", "meshgrid", "tensor_split", "argwhere", "isin", "bucketize", "searchsorted", "bincount", "histc",
    "tensordot", "baddbmm", "addbmm", "addmv", "addr", "cdist", "dist",
]


# ---- Tensor methods and in-place variants ----------------------------------------------------------
_NOT_METHODS = {"meshgrid", "bucketize", "cdist", "searchsorted", "tensordot", "isin", "bincount"}


def _method_table():
    g = globals()
    table = {n: g[n] for n in __all__ if n not in _NOT_METHODS}
    table["bincount"] = bincount
    table["trace"] = trace   # engine.trace itself is the module (NOTE [ engine.trace is also torch.trace ])
    return table


def _unary_inplace(name):
    def f(self):
        return _inplace(name, self, [self])
    f.__name__ = name + "_"
    return f


def _binary_inplace(name, check=None):
    def f(self, other):
        if check is not None:
            check(self, other)
        E._broadcast_check(self, other)
        return _inplace(name, self, [self, E._scalar_ok(other, name + "_")])
    f.__name__ = name + "_"
    return f


def _logit_(self, eps=None):
    return _inplace("logit", self, [self], {"eps": None if eps is None else builtins.float(eps)})


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return _inplace("nan_to_num", self, [self], {"nan": nan, "posinf": posinf, "neginf": neginf})


def _lerp_(self, end, weight):
    _lerp_check(self, end, weight)
    if isinstance(weight, Tensor):
        return _inplace("lerp_tensor", self, [self, end, weight])
    return _inplace("lerp", self, [self, end], {"weight": weight})


def _addc(name):
    def f(self, tensor1, tensor2, *, value=1):
        if name == "addcdiv" and not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
            raise RuntimeError(_ADDCDIV_INT)
        return _inplace(name, self, [self, tensor1, tensor2], {"value": value} if value != 1 else None)
    f.__name__ = name + "_"
    return f


def _product_(name):
    def f(self, a, b, *, beta=1, alpha=1):
        _same_dtype(self, a, b)
        attrs = {k: v for k, v in (("beta", beta), ("alpha", alpha)) if v != 1}
        return _inplace(name, self, [self, a, b], attrs or None)
    f.__name__ = name + "_"
    return f


def _cumprod_(self, dim, *, dtype=None):
    return _inplace("cumprod", self, [self], {"dim": _wrap_dim(dim, builtins.max(self.ndim, 1)) if self.ndim else 0})


def bind_methods(cls):
    """Bind the functions above as Tensor methods, with PyTorch's in-place ``_`` variants."""
    for name, fn in _method_table().items():
        setattr(cls, name, fn)
    cls.diagonal = lambda self, offset=0, dim1=0, dim2=1: diagonal(self, offset, dim1, dim2)
    cls.aminmax = lambda self, *, dim=None, keepdim=False: aminmax(self, dim=dim, keepdim=keepdim)
    for name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10", "trunc",
                 "frac", "deg2rad", "rad2deg", "sinc"):
        setattr(cls, name + "_", _unary_inplace(name))
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                        ("arccosh", "acosh"), ("arctanh", "atanh"), ("fix", "trunc")):
        setattr(cls, alias + "_", getattr(cls, name + "_"))
    for name in ("atan2", "hypot", "xlogy", "floor_divide"):
        setattr(cls, name + "_", _binary_inplace(name))
    cls.arctan2_ = cls.atan2_
    cls.heaviside_ = lambda self, values: _inplace("heaviside", self, [self, values])
    cls.logit_ = _logit_
    cls.nan_to_num_ = _nan_to_num_
    cls.lerp_ = _lerp_
    cls.addcmul_ = _addc("addcmul")
    cls.addcdiv_ = _addc("addcdiv")
    cls.cumprod_ = _cumprod_
    for name in ("baddbmm", "addbmm", "addmv", "addr"):
        setattr(cls, name + "_", _product_(name))
