"""The ``torch.*`` function namespace: every op as a function, built on the op table."""
from __future__ import annotations

import builtins
import collections
import sys

import numpy as np

from . import return_types
from .backend import gaps as _backend, dtypes as _dtype
from .core.dispatch import apply, broadcast_mismatch
from .core.inplace import bump_version
from .functions.factories import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,  # noqa: F401
                         linspace, logspace, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                         randperm, tensor, zeros, zeros_like)
from .backend.size import Size
from .core.tensor import Tensor, _wrap_dim
from .core import fns as _fns
from .core.operators import _binary, _broadcast_check, _is_bool, _scalar_ok, _shape_str, _t, add, mul, sub  # noqa: F401
from .derivatives import _SLOT, OPS
from .ops.nn.conv import Geom

bool = _dtype.bool_  # noqa: A001
int64 = long = _dtype.int64
float32 = _dtype.float32
float64 = double = _dtype.float64
float = _dtype.float32  # noqa: A001

_O = OPS
_fns.set_tensor_namespace(sys.modules[__name__])   # TensorFns calls these functions (core/fns.py rule 5)


subtract = sub


multiply = mul


def div(input, other, *, rounding_mode=None):
    if rounding_mode is not None and not _dtype.result_type([_scalar_ok(input, "div"), _scalar_ok(other, "div")]) \
            .is_floating_point:
        return _int_div(input, other, rounding_mode)
    if rounding_mode is not None:   # DivBackward2, a zero gradient (engine/ops/elementwise/binary.py)
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                             f"'{rounding_mode}'")
        return _binary("div_rounding", input, other, rounding_mode=rounding_mode)
    return _binary("div", input, other)


divide = true_divide = div


# remainder and fmod (RemainderBackward0/1, FmodBackward0/1) are in engine/functions/elementwise/binary.py


def _int_div(input, other, rounding_mode):
    """Integer division rounded down or toward zero stays integer (PyTorch's ``//`` on int64)."""
    ref = input if isinstance(input, Tensor) else other
    xp = ref._storage.xp
    a, b = (x.to(_dtype.int64)._data if isinstance(x, Tensor) else int(x) for x in (input, other))
    if builtins.bool(xp.any(xp.asarray(b) == 0)):
        raise RuntimeError("ZeroDivisionError")
    q = xp.floor_divide(a, b)
    if rounding_mode == "trunc":
        q = xp.where(xp.logical_and(q < 0, q * b != a), q + 1, q)
    return Tensor._wrap(q if hasattr(q, "shape") else xp.asarray(q, dtype=xp.int64))


def _nondiff(t, fn):
    xp = t._storage.xp
    return Tensor._wrap(fn(xp, t._data))


def pow(input, exponent):
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):   # number ** tensor: one edge
        input = _scalar_ok(input, "pow")
        dt = _dtype.result_type([input, exponent])
        return apply(_O["pow_number_base"], [exponent if exponent.dtype is dt else exponent.to(dt)], {"self": input})
    if isinstance(exponent, Tensor) or not isinstance(input, Tensor):
        _broadcast_check(input, exponent)
        return apply(_O["pow_tensor"], [_scalar_ok(input, "pow"), exponent],
                     node_name=None if isinstance(input, Tensor) else "PowBackward2")  # number ** tensor
    exponent = _scalar_ok(exponent, "pow")
    if type(exponent) is builtins.float and not input.dtype.is_floating_point:
        input = input.to(_dtype.get_default_dtype())  # int ** float is a float tensor, as in PyTorch
    return apply(_O["pow_scalar"], [input], {"exponent": exponent})


def square(input):
    return pow(input, 2)


def maximum(input, other):
    _broadcast_check(input, other)
    return apply(_O["maximum"], [input, other])


def minimum(input, other):
    _broadcast_check(input, other)
    return apply(_O["minimum"], [input, other])


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor) or condition.dtype is not _dtype.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_short(condition.dtype) if isinstance(condition, Tensor) else type(condition).__name__}")
    dt = _dtype.result_type([x for x in (input, other)])
    ref = input if isinstance(input, Tensor) else other if isinstance(other, Tensor) else condition
    a = input.to(dt) if isinstance(input, Tensor) else full((), input, dtype=dt, device=ref.device)
    b = other.to(dt) if isinstance(other, Tensor) else full((), other, dtype=dt, device=ref.device)
    return apply(_O["where"], [condition, a, b])


def _cmp(name):
    def f(input, other):
        return _binary(name, input, other)
    f.__name__ = name
    return f


eq, ne, lt, le, gt, ge = (_cmp(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
logical_and, logical_or, logical_xor = (_cmp(n) for n in ("logical_and", "logical_or", "logical_xor"))


def logical_not(input):
    return apply(_O["logical_not"], [input])


def _unary(name):
    def f(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return apply(_O[name], [input])
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as torch.{name}."
    return f


_neg = _unary("neg")


def neg(input):
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                           "a mask, use the `~` or `logical_not()` operator instead.")
    return _neg(input)


negative = neg
exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
reciprocal = _unary("reciprocal")
_abs = _unary("abs")


def abs(input):  # noqa: A001
    """Elementwise abs, as torch.abs (a bool tensor is refused, as PyTorch refuses it)."""
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return _abs(input)


sign = _unary("sign")
sin = _unary("sin")
cos = _unary("cos")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
_relu = _unary("relu")


def relu(input):
    """Elementwise max(x, 0), as torch.relu (a bool tensor is refused, as PyTorch refuses it)."""
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _relu(input)


erf = _unary("erf")
log1p = _unary("log1p")
expm1 = _unary("expm1")


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return apply(_O["gelu"], [input], {"approximate": approximate})


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):   # ClampBackward0 (rows in engine/ops/nn/activation.py)
        ref = min if isinstance(min, Tensor) else max
        lo, hi = (b if b is None or isinstance(b, Tensor) else full((), b, dtype=ref.dtype, device=ref.device)
                  for b in (min, max))
        for b in (lo, hi):
            if b is not None:
                _broadcast_check(input, b)
        dt = _dtype.result_type([t for t in (input, lo, hi) if t is not None])
        input, lo, hi = (t if t is None or t.dtype is dt else t.to(dt) for t in (input, lo, hi))
        return apply(_O["clamp_tensor"], [input, lo, hi])
    input = _bound_promote(input, min, max)
    return apply(_O["clamp"], [input], {"min": min, "max": max})


def _inplace_bound_check(input, *bounds):
    """clamp_/clamp_min_/clamp_max_ write into ``input``: a bound of a higher kind is PyTorch's error
    (a Python number is named by its C++ type, as PyTorch names it)."""
    if input.dtype.is_floating_point:
        return
    for b in bounds:
        if b is None:
            continue
        dt = _dtype.result_type([input, b])
        if dt is not input.dtype:
            cpp = {"int64": "long int", "bool": "bool"}
            want = _short(input.dtype) if isinstance(b, Tensor) else cpp[input.dtype.name]
            raise RuntimeError(f"result type {_short(dt)} can't be cast to the desired output type {want}")


def _bound_promote(input, *bounds):
    """An integer (or bool) tensor clamped to a float bound is a float tensor, as in PyTorch."""
    if input.dtype.is_floating_point:
        return input
    dt = _dtype.result_type([input, *(b for b in bounds if b is not None)])
    return input if dt is input.dtype else input.to(dt)


clip = clamp


def _rounding(name, input, kernel, attrs=None):
    if input.dtype is _dtype.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return apply(_O[name], [input], attrs)


def floor(input):
    """Round down; a zero gradient (FloorBackward0), integers unchanged."""
    return _rounding("floor", input, "floor_vml_cpu")


def ceil(input):
    """Round up; a zero gradient (CeilBackward0), integers unchanged."""
    return _rounding("ceil", input, "ceil_vml_cpu")


def round(input, *, decimals=None):
    """Round half to even (to ``decimals`` places, when given: RoundBackward1); a zero gradient."""
    if decimals is not None:
        if not input.dtype.is_floating_point:
            kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_short(input.dtype)}'")
        return _rounding("round_decimals", input, "round_cpu", {"decimals": decimals})
    return _rounding("round", input, "round_vml_cpu")


def _type_short(d) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[d.name]


def isnan(input):
    return _nondiff(input, lambda xp, a: xp.isnan(a))


def isfinite(input):
    return _nondiff(input, lambda xp, a: xp.isfinite(a))


# ---- reductions ----------------------------------------------------------------------------
def _dims(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(dim, input.ndim)
    return apply(_O["sum"], [input], {"dim": dims, "keepdim": keepdim},
                 node_name="SumBackward0" if dims is None else "SumBackward1")


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_short(input.dtype)}")
    dims = _dims(dim, input.ndim)
    return apply(_O["mean"], [input], {"dim": dims, "keepdim": keepdim},
                 node_name="MeanBackward0" if dims is None else "MeanBackward1")


def _short(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def _spread_attrs(name, input, dim, unbiased, keepdim, correction, stacklevel=4):
    """The var/std attributes; warns as PyTorch when no degrees of freedom are left."""
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = _dims(dim, input.ndim)
    n = 1
    for d in (range(input.ndim) if dims is None else dims):
        n *= input.shape[d]
    if n - correction <= 0:
        import warnings
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=stacklevel)
    return {"dim": dims, "correction": correction, "keepdim": keepdim}


def _spread(name, input, dim, unbiased, keepdim, correction):
    return apply(_O[name], [input], _spread_attrs(name, input, dim, unbiased, keepdim, correction))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _spread("var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _spread("std", input, dim, unbiased, keepdim, correction)


def _maxmin(which, input, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return maximum(input, dim) if which == "max" else minimum(input, dim)
    if input.numel() == 0:
        raise RuntimeError(f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if dim is None:
        return apply(_O[f"{which}_all"], [input])
    d = _wrap_dim(dim, input.ndim)
    vals, aux = apply(_O[f"{which}_dim"], [input], {"dim": d, "keepdim": keepdim}, return_aux=True)
    return getattr(return_types, which)(vals, aux["indices"])


def max(input, dim=None, keepdim=False):
    return _maxmin("max", input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    return _maxmin("min", input, dim, keepdim)


def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (all dims when empty); ties share the gradient evenly."""
    dims = _dims(dim, input.ndim) if dim != () else None
    return apply(_O["amax"], [input], {"dim": dims, "keepdim": keepdim})


def amin(input, dim=(), keepdim=False):
    dims = _dims(dim, input.ndim) if dim != () else None
    return apply(_O["amin"], [input], {"dim": dims, "keepdim": keepdim})


def argmax(input, dim=None, keepdim=False):
    xp = input._storage.xp
    if dim is None:
        return Tensor._wrap(xp.astype(xp.argmax(xp.reshape(input._data, (-1,))), xp.int64))
    return Tensor._wrap(xp.astype(xp.argmax(input._data, axis=_wrap_dim(dim, input.ndim), keepdims=keepdim), xp.int64))


def argmin(input, dim=None, keepdim=False):
    xp = input._storage.xp
    if dim is None:
        return Tensor._wrap(xp.astype(xp.argmin(xp.reshape(input._data, (-1,))), xp.int64))
    return Tensor._wrap(xp.astype(xp.argmin(input._data, axis=_wrap_dim(dim, input.ndim), keepdims=keepdim), xp.int64))


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed stably (shifted by the max)."""
    if not input.dtype.is_floating_point:
        input = input.to(_dtype.get_default_dtype())
    return apply(_O["logsumexp"], [input], {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements (ProdBackward0) or along one ``dim`` (ProdBackward1); the
    gradient is right with zeros in the input (NOTE [ Product of the others ])."""
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod() received an invalid combination of arguments - got (tuple), but expected one of:\n"
                        " * (*, torch.dtype dtype = None)\n"
                        " * (int dim, bool keepdim = False, *, torch.dtype dtype = None)\n")
    xp = input._storage.xp
    out_dt = dtype if dtype is not None else (_dtype.int64 if not input.dtype.is_floating_point else input.dtype)
    if (not out_dt.is_floating_point and input.requires_grad and _grad_enabled()):
        raise RuntimeError(f"Autograd not support dtype: {_short(out_dt)}")
    adt = _dtype.to_array_dtype(xp, dtype) if dtype is not None and dtype is not input.dtype else None
    if dim is None:
        return apply(_O["prod"], [input], {"dtype": adt} if adt is not None else None)
    attrs = {"dim": _wrap_dim(dim, input.ndim), "keepdim": keepdim}
    if adt is not None:
        attrs["dtype"] = adt
    return apply(_O["prod_dim"], [input], attrs)


def _grad_enabled():
    from .core import grad_mode
    return grad_mode.is_grad_enabled()


def _all_any(name, input, dim, keepdim):
    xp = input._storage.xp
    axis = None if dim is None else _dims(dim, input.ndim)
    return Tensor._wrap(getattr(xp, name)(xp.astype(input._data, xp.bool), axis=axis, keepdims=keepdim))


def all(input, dim=None, keepdim=False):
    """Whether every element (along ``dim``, an int or a tuple) is nonzero."""
    return _all_any("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    """Whether some element (along ``dim``, an int or a tuple) is nonzero."""
    return _all_any("any", input, dim, keepdim)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (PyTorch's error when they do not)."""
    out = []
    for k, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i in range(1, len(shape) + 1):
            n = shape[-i]
            if i > len(out):
                out.insert(0, n)
            elif out[-i] == 1:
                out[-i] = n
            elif n != 1 and n != out[-i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at -{i}! Mismatching "
                                   f"argument at index {k} had {shape}; but expected shape should be "
                                   f"broadcastable to {out}")
    return Size(out)


def broadcast_tensors(*tensors):
    """Each tensor expanded to the common broadcast shape (views: ExpandBackward0 where it changes)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, a in enumerate(tensors):
        for b in tensors[i + 1:]:
            msg = broadcast_mismatch(tuple(a.shape), tuple(b.shape))
            if msg:
                raise RuntimeError(msg)
    shape = tuple(broadcast_shapes(*[t.shape for t in tensors]))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> builtins.bool:
    return builtins.bool(np.allclose(a.detach().numpy(force=True), b.detach().numpy(force=True), rtol, atol, equal_nan))


def equal(a, b) -> builtins.bool:
    return tuple(a.shape) == tuple(b.shape) and builtins.bool(np.array_equal(a.detach().numpy(force=True), b.detach().numpy(force=True)))


def nonzero(input, as_tuple=False):
    host = input.detach().numpy(force=True)
    nz = np.nonzero(host)
    dev = input.device
    if as_tuple:
        return tuple(tensor(i, dtype=int64, device=dev) for i in nz)
    return tensor(np.stack(nz, axis=1), dtype=int64, device=dev)


# ---- shapes --------------------------------------------------------------------------------
def _infer_shape(shape, numel, ndim_hint=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    return shape


def reshape(input, *shape):
    shape = _infer_shape(shape, input.numel())
    if input.is_contiguous():
        return apply(_O["view"], [input], {"shape": shape})
    # as PyTorch: copy to contiguous (CloneBackward0), then view the copy (UnsafeViewBackward0)
    return apply(_O["view"], [clone(input)], {"shape": shape}, node_name="UnsafeViewBackward0")


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported by glassgrad")
    shape = _infer_shape(shape, input.numel())
    if not input.is_contiguous():
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(_O["view"], [input], {"shape": shape})


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    shape = tuple(input.shape)
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    shape = tuple(input.shape)
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if (-1 not in sizes and known != shape[d]) or (-1 in sizes and (known == 0 or shape[d] % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({shape[d]}) in the input tensor")
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


def permute(input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) == input.ndim:
        dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not "
                           f"equal to len(dims) = {len(dims)}" if len(dims) != input.ndim else
                           "permute(): duplicate dims are not allowed.")
    return apply(_O["permute"], [input], {"dims": dims})


def transpose(input, dim0, dim1):
    n = input.ndim
    if n == 0:
        return apply(_O["transpose"], [input], {"dims": ()})
    a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    dims = list(range(n))
    dims[a], dims[b] = dims[b], dims[a]
    return apply(_O["transpose"], [input], {"dims": tuple(dims)})


swapaxes = swapdims = transpose


_T_DIMS = ((), (0,), (1, 0))


def t(input):
    n = len(input._data.shape)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return apply(_O["t"], [input], {"dims": _T_DIMS[n]})


def squeeze(input, dim=None):
    shape = tuple(input.shape)
    if dim is None:
        new = tuple(s for s in shape if s != 1)
        return apply(_O["squeeze"], [input], {"shape": new}, node_name="SqueezeBackward0")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = {_wrap_dim(d, input.ndim) for d in dims}
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return apply(_O["squeeze"], [input], {"shape": new})


def unsqueeze(input, dim):
    n = input.ndim + 1
    d = _wrap_dim(dim, n)
    shape = list(input.shape)
    shape.insert(d, 1)
    return apply(_O["unsqueeze"], [input], {"shape": tuple(shape)})


def expand(input, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({input.type()}{{{_shape_str(shape)}}}, size={_shape_str(sizes)}): the number "
                           "of sizes provided ({}) must be greater or equal to the number of dimensions in the "
                           "tensor ({})".format(len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        cur = shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            s = cur
        if cur is not None and cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {_shape_str(sizes)}.  Tensor sizes: "
                               f"{_shape_str(shape)}")
        out.append(s)
    return apply(_O["expand"], [input], {"shape": tuple(out)})


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def sum_to_size(input, *size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape, size = tuple(input.shape), tuple(int(s) for s in size)
    if shape == size:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != shape[i + lead] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                           f"{{[{', '.join(map(str, shape))}]}}.")
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size) if s == 1 and shape[i + lead] != 1)
    out = sum(input, dims, keepdim=True) if dims else input
    return out if tuple(out.shape) == size else reshape(out, size)     # keepdim already gave it: no view


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = tensors[0]
    d = _wrap_dim(dim, ref.ndim)
    for i, x in enumerate(tensors[1:], 1):
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for k in range(ref.ndim):
            if k != d and x.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {x.shape[k]} for tensor number {i} in the list.")
    return apply(_O["cat"], tensors, {"dim": d})


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors[1:], 1):
        if tuple(x.shape) != tuple(tensors[0].shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_shape_str(tensors[0].shape)} "
                               f"at entry 0 and {_shape_str(x.shape)} at entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1)
    return apply(_O["stack"], tensors, {"dim": d})


def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    return _getitem(input, (slice(None),) * d + (slice(start, start + length),))


def split(input, split_size_or_sections, dim=0):
    """Views of consecutive parts along ``dim``: one SplitBackward0 (an int size) or
    SplitWithSizesBackward0 (a list) for all of them (NOTE [ Several outputs ] 4 in core/dispatch.py)."""
    from .core.dispatch import apply_multi
    d = _wrap_dim(dim, input.ndim)
    shape = tuple(input.shape)
    n = shape[d]
    if isinstance(split_size_or_sections, int):
        k = split_size_or_sections
        if k < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={k}")
        if k == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        name, attrs = "split", {"split_size": k, "dim": d, "self_sym_sizes": shape}
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
        name, attrs = "split_with_sizes", {"split_sizes": tuple(sizes), "dim": d, "self_sym_sizes": shape}
    return apply_multi(_O[name], [input], attrs, (), views=True)


def chunk(input, chunks, dim=0):
    n = input.shape[_wrap_dim(dim, input.ndim)]
    size = -(-n // chunks)
    return split(input, size, dim)


def unbind(input, dim=0):
    """Views of each index along ``dim``, that dim removed: one UnbindBackward0 for all of them."""
    from .core.dispatch import apply_multi
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return apply_multi(_O["unbind"], [input], {"dim": _wrap_dim(dim, input.ndim)}, (), views=True)


def flip(input, dims):
    """A copy with the order along each of ``dims`` reversed (one FlipBackward0 keeping ``dims``)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    axes = tuple(_wrap_dim(d, builtins.max(input.ndim, 1)) for d in dims)
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    if input.ndim == 0:
        axes = ()
    return apply(_O["flip"], [input], {"dims": dims, "axes": axes})


def index_select(input, dim, index):
    if not isinstance(index, Tensor) or index.dtype is not _dtype.int64:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input.ndim)
    index = reshape(index, -1) if index.ndim == 0 else index
    n = input.shape[d] if input.ndim else 1
    host = index.detach().numpy(force=True)
    bad = host[(host < 0) | (host >= n)]
    if bad.size:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad[0])} axis_dim={n}")
    return apply(_O["index_select_dim"], [input, index], {"dim": d})


def _mask_check(mask):
    if not isinstance(mask, Tensor) or mask.dtype is not _dtype.bool_:
        got = _cname(mask.dtype) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {got}")


def masked_fill(input, mask, value):
    """MaskedFillBackward0 (keeps the mask); a value tensor that requires grad gets its gradient through where."""
    _mask_check(mask)
    if isinstance(value, Tensor):
        if value.requires_grad:
            return where(mask, value.to(input.dtype), input)
        value = value.item()
    return apply(_O["masked_fill"], [input, mask], {"value": value})


def masked_fill_(input, mask, value):
    _mask_check(mask)
    if isinstance(value, Tensor):
        value = value.item()
    return _inplace("masked_fill", input, mask, value=value)


def outer(a, b):
    return mul(unsqueeze(a, 1), unsqueeze(b, 0))


# ---- indexing ------------------------------------------------------------------------------
def _normalize_index(x, key):
    if not isinstance(key, tuple):
        key = (key,)
    parts, tensors = [], []
    for k in key:
        if isinstance(k, Tensor):
            if k.dtype is _dtype.float32 or k.dtype is _dtype.float64:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if k.ndim == 0 and k.dtype is _dtype.int64:
                parts.append(int(k.item()))
                continue
            if k.device != x.device:
                if k.device.type != "cpu":
                    raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed "
                                       f"tensor ({x.device})")
                k = k.to(x.device)  # CPU indices may index a CUDA tensor, as in PyTorch
            parts.append(_SLOT)
            tensors.append(k)
        elif isinstance(k, (list, np.ndarray)):
            t = tensor(k, device=x.device)
            if t.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            parts.append(_SLOT)
            tensors.append(t)
        elif isinstance(k, builtins.bool):
            parts.append(_SLOT)
            tensors.append(tensor(k, device=x.device))
        elif isinstance(k, (int, np.integer)):
            parts.append(int(k))
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            parts.append(k)
        elif k is None or k is Ellipsis:
            parts.append(k)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got " + type(k).__name__ + ")")
    return tuple(parts), tensors


def _check_bounds(x, parts):
    dim = 0
    ell = builtins.sum(1 for p in parts if p is Ellipsis)
    consumed = builtins.sum(1 for p in parts if p is not None and p is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    for p in parts:
        if p is Ellipsis:
            dim += x.ndim - consumed
            continue
        if p is None:
            continue
        if isinstance(p, int):
            n = x.shape[dim]
            if not -n <= p < n:
                raise IndexError(f"index {p} is out of bounds for dimension {dim} with size {n}")
        dim += 1


def _getitem(x, key):
    parts, tensors = _normalize_index(x, key)
    _check_bounds(x, parts)
    if not tensors:
        name = "SelectBackward0" if builtins.any(isinstance(p, int) for p in parts) else \
            ("UnsqueezeBackward0" if None in parts and builtins.all(
                p is None or p is Ellipsis or p == slice(None) for p in parts) else "SliceBackward0")
        return apply(_O["slice"], [x], {"idx": parts}, node_name=name)
    slots = [i for i, p in enumerate(parts) if p is _SLOT]
    for tidx, pos in zip(tensors, slots):
        if tidx.dtype is _dtype.int64 and tidx.numel() and Ellipsis not in parts[:pos]:
            host = tidx.detach().numpy(force=True)
            dim = builtins.sum(0 if p is None else (tensors[slots.index(i)].ndim if p is _SLOT and
                                                    tensors[slots.index(i)].dtype is _dtype.bool_ else 1)
                               for i, p in enumerate(parts[:pos]))
            if dim < x.ndim:
                n = x.shape[dim]
                bad = host[(host >= n) | (host < -n)]
                if bad.size:
                    raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {dim} with size {n}")
    basic, parts = _split_basic(x, parts, tensors)
    if basic is not None:
        x = _getitem(x, basic)
    return apply(_O["index"], [x] + tensors, {"template": parts})


def _split_basic(x, parts, tensors):
    """PyTorch's order for a key mixing index tensors with ints, slices, None or ``...``: the basic
    parts first, as one view; the tensors then index that view, every other dim a full slice.
    (So ``x[1, :, i]`` of a 3-D ``x`` is (x.shape[1], len(i)), as in PyTorch; NumPy's rule, which
    treats the int as an index array too, would put ``len(i)`` first.) Returns (the basic key, or
    None when it would select everything; the template for the tensors)."""
    widths, k = [], 0
    for p in parts:
        if p is _SLOT:
            t = tensors[k]
            k += 1
            widths.append(t.ndim if t.dtype is _dtype.bool_ else 1)
        else:
            widths.append(0 if p is None or p is Ellipsis else 1)
    rest = x.ndim - builtins.sum(widths)
    basic, adv = [], []
    for p, w in zip(parts, widths):
        if p is _SLOT:
            basic.extend([slice(None)] * w)
            adv.append(_SLOT)
        elif p is Ellipsis:
            basic.append(Ellipsis)
            adv.extend([slice(None)] * rest)
        elif isinstance(p, int):
            basic.append(p)          # the dim is gone from the view
        else:
            basic.append(p)          # a slice, or None (a new dim of size 1 in the view)
            adv.append(slice(None))
    everything = builtins.all(b is Ellipsis or (isinstance(b, slice) and b == slice(None)) for b in basic)
    return (None if everything else tuple(basic)), tuple(adv)


def _setitem(x, key, value):
    parts, tensors = _normalize_index(x, key)
    _check_bounds(x, parts)
    if x._requires_grad and x.grad_fn is None and _grad_enabled() and builtins.any(
            isinstance(p, int) or p is None or (isinstance(p, slice) and p != slice(None)) for p in parts):
        # PyTorch writes through a view here (x[0] = v is x.select(0, 0).copy_(v))
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if tensors and builtins.any(isinstance(p, int) for p in parts):
        parts, tensors = _coordinate_key(x, parts, tensors)
    if isinstance(value, Tensor) and value.device != x.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{x.device} and {value.device}!")
    if not isinstance(value, Tensor):
        value = _scalar_ok(value, "setitem")
    else:
        _setitem_shape_check(x, parts, tensors, value)
    apply(_O["setitem"], [x, value] + tensors, {"template": parts}, inplace=x)


def _coordinate_key(x, parts, tensors):
    """The region ``x[key]`` names in PyTorch's order (basic parts first, then the tensors; see
    _split_basic) as one index tensor per dim of ``x``, so NumPy's rule for ints among index arrays
    cannot reorder it. Each dim's coordinates come from a zero-stride view of ``arange``; only the
    region is materialized."""
    from .derivatives import _rebuild_index
    basic, adv = _split_basic(x, parts, tensors)
    adv = _rebuild_index(adv, [t.detach().numpy(force=True) for t in tensors])
    coords = []
    for d, n in enumerate(x.shape):
        shape = [1] * x.ndim
        shape[d] = n
        grid = np.broadcast_to(np.arange(n, dtype=np.int64).reshape(shape), tuple(x.shape))
        coords.append(tensor(np.ascontiguousarray((grid[basic] if basic is not None else grid)[adv]),
                             device=x.device))
    return (_SLOT,) * x.ndim, coords


def _setitem_shape_check(x, parts, tensors, value):
    """PyTorch's error when ``value`` cannot broadcast to the indexed region (index_put's words when
    the key holds tensors, expand's otherwise)."""
    from .derivatives import _rebuild_index
    proxy = np.broadcast_to(np.empty((), dtype=np.bool_), tuple(x.shape))  # no memory: zero strides
    idx = _rebuild_index(parts, [t.detach().numpy(force=True) for t in tensors])
    target = proxy[idx if builtins.any(p is Ellipsis for p in parts) else idx + (Ellipsis,)].shape
    src = tuple(value.shape)
    if len(src) > len(target):
        src = src[len(src) - len(target):] if builtins.all(s == 1 for s in src[:len(src) - len(target)]) else src
    lead = len(target) - len(src)
    if tensors and (lead < 0 or builtins.any(s != 1 and s != target[i + lead] for i, s in enumerate(src))):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(value.shape)} cannot be broadcast "
                           f"to indexing result of shape {_shape_str(target)}")
    for i, s in enumerate(src):
        if lead >= 0 and s != 1 and s != target[i + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({target[i + lead]}) must match the existing size "
                               f"({s}) at non-singleton dimension {i + lead}.  Target sizes: {_shape_str(target)}.  "
                               f"Tensor sizes: {_shape_str(value.shape)}")
    if lead < 0:
        raise RuntimeError(f"expand(torch.FloatTensor{{{_shape_str(value.shape)}}}, size={_shape_str(target)}): the "
                           f"number of sizes provided ({len(target)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(src)})")


def _index_put_add_new(shape, idx, values):
    parts, tensors = _normalize_index(values, idx)
    return apply(_O["index_put_add"], [values] + tensors, {"template": parts, "shape": tuple(shape)})


def _index_fill_new(x, idx, value):
    parts, tensors = _normalize_index(x, idx)
    return apply(_O["fill_index"], [x] + tensors, {"template": parts, "value": value})


# ---- linear algebra ------------------------------------------------------------------------
def _dtype_check(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a.dtype)} != {_cname(b.dtype)}")


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}[dt.name]


def matmul(input, other):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor")
    if input.device != other.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{input.device} and {other.device}!")
    _dtype_check(input, other)
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    sa, sb = tuple(input.shape), tuple(other.shape)
    if a == 1 and b == 1:
        if sa[0] != sb[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
                               f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
        return apply(_O["dot"], [input, other])
    if a == 2 and b == 2:
        if sa[1] != sb[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
        return apply(_O["mm"], [input, other])
    if a == 2 and b == 1:
        if sa[1] != sb[0]:
            raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), vec ({sb[0]})")
        return apply(_O["mv"], [input, other])
    if a == 1:
        out = matmul(unsqueeze(input, 0), other)
        shape = tuple(out.shape[:-2]) + (out.shape[-1],)
        # vector @ matrix: PyTorch's graph reads SqueezeBackward4 -> MmBackward0 -> UnsqueezeBackward0
        return apply(_O["squeeze"], [out], {"shape": shape}, node_name="SqueezeBackward4" if b == 2 else None)
    if b == 1:
        return squeeze(matmul(input, unsqueeze(other, -1)), -1)
    if sa[-1] != sb[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sb[0] if b > 2 else 1}, {sa[-1]}] but got: [{sb[0] if b > 2 else 1}, {sb[-2]}].")
    try:
        np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({sa[-3]}) must match the size of tensor b ({sb[-3]}) at "
                           "non-singleton dimension 0") from None
    return apply(_O["bmm"], [input, other])


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    return matmul(input, mat2)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


def mv(input, vec):
    return matmul(input, vec)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    _dtype_check(mat1, mat2)
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if beta != 1 or alpha != 1:
        return add(mul(input, beta), mul(mm(mat1, mat2), alpha))
    # the backward forms mat2's gradient in mat2's layout (see _mm_mat2_grad in derivatives.py)
    attrs = {"mat2_layout": "F"} if _backend.is_column_major(mat2._storage.xp, mat2._data) else None
    return apply(_O["addmm"], [input, mat1, mat2], attrs)


# ---- einsum ----------------------------------------------------------------------------------
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum(equation, *operands):
    """Einstein summation, as torch.einsum (``einsum("ij,jk->ik", a, b)`` or with a list of operands).

    Labels left out of an explicit output are summed; without ``->`` the output is ``...``
    then the labels that appear once, in alphabetical order (capitals first). Size-1 dims
    broadcast, ``...`` stands for the dims no label names, and a label repeated in one
    operand takes its diagonal. A single operand without repeats or ``...`` is a permute and
    a sum, as PyTorch's graph shows it; anything else is one EinsumBackward0 node (PyTorch
    shows a chain of permute, view and bmm nodes: see docs/saved-tensors.md).
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(t).__name__}")
    inputs, output = _einsum_parse(equation, len(operands))
    terms, out, sizes = _einsum_labels(inputs, output, operands)
    if len(operands) > 1:
        for t in operands[1:]:
            if t.dtype is not operands[0].dtype:
                raise RuntimeError(f"expected scalar type {_short(operands[0].dtype)} but found {_short(t.dtype)}")
        if operands[0].dtype is _dtype.bool_:
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    attrs = {"terms": tuple(terms), "out": out, "sizes": tuple(sizes.items())}
    if len(operands) == 1:
        term = terms[0]
        if len(set(term)) == len(term):
            # PyTorch's order: the output labels, then the summed ones alphabetically (capitals first)
            summed = sorted((c for c in term if c not in out), key=_LETTERS.index)
            perm = tuple(term.index(c) for c in list(out) + summed)
            res = permute(operands[0], perm)
            return sum(res, tuple(range(len(out), len(term)))) if summed else res
        return apply(_O["einsum_one"], [operands[0]], attrs)
    return apply(_O["einsum_two" if len(operands) == 2 else "einsum"], list(operands), attrs)


def _einsum_parse(equation, n_operands):
    """Split ``equation`` into per-operand label lists and the output's (None when implicit);
    ``...`` becomes the item ``"..."``. PyTorch's errors for malformed equations."""
    arrow = equation.find("->")
    lhs, rhs = (equation, None) if arrow < 0 else (equation[:arrow], equation[arrow + 2:])

    def scan(text, offset, is_output):
        terms, cur, i = [], [], 0
        while i < len(text):
            ch = text[i]
            if ch == ".":
                if "..." in cur:
                    raise RuntimeError(f"einsum(): found '.' for {_einsum_where(is_output, len(terms))} for which an "
                                       "ellipsis was already found")
                if text[i:i + 3] != "...":
                    raise RuntimeError(f"einsum(): found '.' for {_einsum_where(is_output, len(terms))} that is not "
                                       "part of any ellipsis" + (" (...)" if is_output else ""))
                cur.append("...")
                i += 3
                continue
            if ch == "," and not is_output:
                terms.append(cur)
                cur = []
            elif ch.isascii() and ch.isalpha():
                cur.append(ch)
            elif ch != " ":
                raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            i += 1
        terms.append(cur)
        return terms

    inputs = scan(lhs, 0, False)
    output = scan(rhs, arrow + 2, True)[0] if rhs is not None else None
    if len(inputs) > n_operands:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(inputs) < n_operands:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return inputs, output


def _einsum_where(is_output, k):
    return "output" if is_output else f"operand {k}"


def _einsum_labels(inputs, output, operands):
    """Explicit one-letter labels for every dim (``...`` becomes unused letters, right-aligned),
    the output's labels, and each label's size after broadcasting size-1 dims."""
    used = {c for t in inputs for c in t if c != "..."}
    ell_dims = 0
    for k, (t, x) in enumerate(zip(inputs, operands)):
        n = len(t) - ("..." in t)
        if "..." not in t and n != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({x.ndim}) for operand {k} and no ellipsis was given")
        if "..." in t and n > x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the number "
                               f"of dimensions ({x.ndim}) for operand {k}")
        if "..." in t:
            ell_dims = builtins.max(ell_dims, x.ndim - n)
    spare = [c for c in _LETTERS if c not in used]
    if ell_dims > len(spare):
        raise RuntimeError("einsum(): too many dimensions for the letters left to label them")
    ell = spare[:ell_dims]
    terms, sizes, ell_sizes = [], {}, {}
    for k, (t, x) in enumerate(zip(inputs, operands)):
        labels = []
        for c in t:
            labels.extend(ell[ell_dims - (x.ndim - (len(t) - 1)):] if c == "..." else [c])
        seen_here = {}
        for c, size in zip(labels, x.shape):
            if c in seen_here:
                if size != seen_here[c]:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't "
                                       f"match, {size} != {seen_here[c]}")
                continue
            seen_here[c] = size
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = size
            elif size != 1 and size != prev:
                if c in ell:
                    raise RuntimeError(f"einsum(): dimension {ell.index(c)} covered by ellipsis in operand {k}has "
                                       f"size {size} which does not broadcast with previously seen ellipsis with "
                                       f"size {prev} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {c} has size {size} for operand {k} which does not "
                                   f"broadcast with previously seen size {prev}")
        terms.append("".join(labels))
    if output is None:
        counts = collections.Counter(c for t in inputs for c in t if c != "...")
        out = "".join(ell) + "".join(sorted((c for c, n in counts.items() if n == 1), key=_LETTERS.index))
    else:
        out_labels = []
        for c in output:
            if c == "...":
                out_labels.extend(ell)
                continue
            if c in out_labels:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if c not in used:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            out_labels.append(c)
        out = "".join(out_labels)
    return terms, out, sizes


# ---- conversions used by Tensor.to ---------------------------------------------------------
def _to_dtype(input, dtype):
    if input.dtype is dtype:
        return input
    xp = input._storage.xp
    return apply(_O["to_dtype"], [input], {"dtype": _dtype.to_array_dtype(xp, dtype)})


# ---- more functions (cumsum, norm, tril/triu, gather, repeat, sort/topk ...) ----------------
def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return apply(_O["cumsum"], [input], {"dim": _wrap_dim(dim, input.ndim)})


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The 2-norm (Frobenius for matrices) over ``dim`` or everything; any other ``p`` (numbers,
    'nuc') goes through engine.linalg, as PyTorch's torch.norm does."""
    if p not in ("fro", 2, 2.0) or (isinstance(dim, (tuple, list)) and len(dim) > 2):
        from .linalg import torch_norm
        return torch_norm(input, p, dim, keepdim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    return apply(_O["norm"], [input], {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


def _tri(name, input, diagonal):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply(_O[name], [input], {"diagonal": int(diagonal)})


def tril(input, diagonal=0):
    return _tri("tril", input, diagonal)


def triu(input, diagonal=0):
    return _tri("triu", input, diagonal)


def gather(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    if index.dtype is not _dtype.int64:
        raise RuntimeError("gather(): Expected dtype int64 for index")
    if index.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {_shape_str(index.shape)} to be "
                               f"smaller than self {_shape_str(input.shape)} apart from dimension {d}")
    if index.numel():
        host = index.detach().numpy(force=True)
        n = input.shape[d]
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            raise RuntimeError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {n}")
    return apply(_O["gather"], [input, index], {"dim": d})


def repeat(input, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return apply(_O["repeat"], [input], {"repeats": tuple(int(s) for s in sizes)})


def _bound_type(fn, name, value):
    if not isinstance(value, (Tensor, builtins.int, builtins.float)):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (Tensor, {type(value).__name__}), "
                        f"but expected one of:\n * (Tensor input, Tensor {name}, *, Tensor out = None)\n"
                        f" * (Tensor input, Number {name}, *, Tensor out = None)\n")


def clamp_min(input, min):
    """ClampMinBackward0 for a number bound, ClampMinBackward1 for a tensor (engine/ops/nn/activation.py)."""
    _bound_type("clamp_min", "min", min)
    if isinstance(min, Tensor):
        _broadcast_check(input, min)
        return apply(_O["clamp_min_tensor"], [input, min])
    return apply(_O["clamp_min"], [_bound_promote(input, min)], {"min": min})


def clamp_max(input, max):
    _bound_type("clamp_max", "max", max)
    if isinstance(max, Tensor):
        _broadcast_check(input, max)
        return apply(_O["clamp_max_tensor"], [input, max])
    return apply(_O["clamp_max"], [_bound_promote(input, max)], {"max": max})


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (no gradient)."""
    a = input.detach()
    b = other.detach() if isinstance(other, Tensor) else other
    scale = abs(b) if isinstance(b, Tensor) else builtins.abs(b)
    close = le(abs(a - b), atol + rtol * scale)
    if equal_nan and isinstance(b, Tensor):
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def masked_select(input, mask):
    """The elements of ``input`` (broadcast with ``mask``) where ``mask`` is true, as a 1-D copy:
    one MaskedSelectBackward0 keeping ``self`` and ``mask``, as PyTorch's."""
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    msg = broadcast_mismatch(tuple(mask.shape), tuple(input.shape))     # PyTorch names the mask first
    if msg:
        raise RuntimeError(msg)
    return apply(_O["masked_select"], [input, mask])


def argsort(input, dim=-1, descending=False, stable=False):
    xp = input._storage.xp
    d = _wrap_dim(dim, input.ndim)
    return Tensor._wrap(xp.astype(xp.argsort(input._data, axis=d, descending=descending, stable=True), xp.int64))


def sort(input, dim=-1, descending=False, stable=False):
    """Values (differentiable, through a gather) and int64 indices, as torch.sort."""
    d = _wrap_dim(dim, input.ndim)
    idx = argsort(input, d, descending)
    return return_types.sort(apply(_O["take_sorted"], [input, idx], {"dim": d}), idx)


def topk(input, k, dim=-1, largest=True, sorted=True):
    d = _wrap_dim(dim, input.ndim)
    if not 0 <= k <= input.shape[d]:
        raise RuntimeError("selected index k out of range")
    idx = narrow(argsort(input, d, descending=largest), d, 0, k).contiguous()
    return return_types.topk(apply(_O["take_sorted"], [input, idx], {"dim": d}, node_name="TopkBackward0"), idx)


def clone(input, *, memory_format=None):
    return apply(_O["clone"], [input])


def detach(input):
    return input.detach()


def numel(input) -> int:
    return input.numel()


def is_tensor(obj) -> builtins.bool:
    return isinstance(obj, Tensor)


def is_floating_point(input) -> builtins.bool:
    return input.dtype.is_floating_point


def _im2col(x, geom):
    return apply(_O["im2col"], [x], {"geom": geom})


def _col2im(c, geom):
    return apply(_O["col2im"], [c], {"geom": geom})


def _inplace(name, target, *args, **attrs):
    return apply(_O[name], [target, *args], attrs or None, inplace=target)


def softmax(input, dim, dtype=None):
    from .nn.functional import softmax as _softmax
    return _softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    from .nn.functional import log_softmax as _log_softmax
    return _log_softmax(input, dim, dtype)


__all__ = [n for n in dir() if not n.startswith("_")]


# ---- the torch.* families beyond the core (engine/functions/, one module per family, paired with engine/ops/) ---
from .functions.elementwise import *  # noqa: E402,F401,F403
from .functions.reduce import *  # noqa: E402,F401,F403
from .functions.stats import *  # noqa: E402,F401,F403
from .functions.shape import *  # noqa: E402,F401,F403
from .functions.build import *  # noqa: E402,F401,F403
from .functions.search import *  # noqa: E402,F401,F403
from .functions.index import *  # noqa: E402,F401,F403
from .functions.index_dim import *  # noqa: E402,F401,F403
from .functions.linalg import *  # noqa: E402,F401,F403
from .functions.special import *  # noqa: E402,F401,F403
from .functions.random import *  # noqa: E402,F401,F403
from .functions.tensor_info import *  # noqa: E402,F401,F403
from .functions.factories import (asarray, bartlett_window, blackman_window, hamming_window, hann_window,  # noqa: E402
                                  kaiser_window, scalar_tensor)
from .functions import (build as _build, elementwise as _elementwise, index as _index,  # noqa: E402
                        index_dim as _index_dim, linalg as _linalg, random as _random, reduce as _reduce,
                        search as _search, shape as _shape, special as _special, stats as _stats,
                        tensor_info as _tensor_info)
for _family in (_elementwise, _reduce, _stats, _shape, _build, _search, _index, _index_dim, _linalg, _special,
                _random, _tensor_info):
    __all__ += _family.__all__
__all__ += ["asarray", "bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window",
            "scalar_tensor"]
