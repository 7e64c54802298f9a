"""torch.* for the core's reduction rows: sum, mean, var/std, max/min, amax/amin, argmax/argmin,
logsumexp, prod, all/any, cumsum, softmax and log_softmax."""
from __future__ import annotations


from .. import return_types
from ..backend import dtypes as _dtype
from ..core import grad_mode
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .arithmetic import _short, maximum, minimum
from .factories import empty_like
from .dims import reduce_dims as _dims, row_for, wrap_dim as _wrap_dim


def _need_floating(name, input):
    """var/std and their _mean forms refuse integer and bool tensors, in PyTorch's words."""
    if not input.dtype.is_floating_point:
        what = "std and var" if name in ("std", "var") else name
        raise RuntimeError(f"{what} only support floating point and complex dtypes")


def _empty_dim(name, input, dims):
    """PyTorch's IndexError for a max/min-like reduction over a dim of size 0."""
    for d in (() if dims is None else dims):
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(dim, input.ndim)
    return apply(_O["sum"], [input], {"dim": dims, "keepdim": keepdim},
                 node_name="SumBackward0" if dims is None else "SumBackward1")


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_short(input.dtype)}")
    dims = _dims(dim, input.ndim)
    return apply(_O["mean"], [input], {"dim": dims, "keepdim": keepdim},
                 node_name="MeanBackward0" if dim is None else "MeanBackward1")


def _spread_attrs(name, input, dim, unbiased, keepdim, correction, stacklevel=4):
    """The var/std attributes; warns as PyTorch when no degrees of freedom are left."""
    _need_floating(name, input)
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
    if dim is None and input.numel() == 0:
        raise RuntimeError(f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if dim is None:
        return apply(_O[f"{which}_all"], [input])
    d = _wrap_dim(dim, input.ndim)
    _empty_dim(which, input, (d,) if input.ndim else ())
    vals, aux = apply(row_for(f"{which}_dim", input), [input], {"dim": d, "keepdim": keepdim}, return_aux=True)
    return getattr(return_types, which)(vals, aux["indices"])


def max(input, dim=None, keepdim=False):
    return _maxmin("max", input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    return _maxmin("min", input, dim, keepdim)


def _amaxmin(name, input, dim, keepdim):
    dims = _dims(dim, input.ndim)
    if input.numel() == 0:
        if dims is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        for d in ((dim,) if isinstance(dim, int) else dim):   # amax/amin name the dim as given
            if input.shape[_wrap_dim(d, input.ndim)] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return apply(_O[name], [input], {"dim": dims, "keepdim": keepdim})


def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (all dims when empty); ties share the gradient evenly."""
    return _amaxmin("amax", input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    return _amaxmin("amin", input, dim, keepdim)


def _arg(name, input, dim, keepdim):
    if input.dtype is _dtype.bool_ or input.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support {'bool' if input.dtype is _dtype.bool_ else 'complex'} input")
    xp = input._storage.xp
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        out = getattr(xp, name)(xp.reshape(input._data, (-1,)))
        if keepdim:
            out = xp.reshape(out, (1,) * input.ndim)
        return Tensor._wrap(xp.astype(out, xp.int64))
    d = _wrap_dim(dim, input.ndim)
    if not input.ndim:      # NOTE [ A 0-d tensor's one dim ] 3: the one value is at index 0
        return Tensor._wrap(xp.zeros((), dtype=xp.int64))
    _empty_dim(name, input, (d,))
    return Tensor._wrap(xp.astype(getattr(xp, name)(input._data, axis=d, keepdims=keepdim), xp.int64))


def argmax(input, dim=None, keepdim=False):
    """The index of the largest value (of the flattened input, or along ``dim``); int64, no gradient."""
    return _arg("argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """The index of the smallest value (of the flattened input, or along ``dim``); int64, no gradient."""
    return _arg("argmin", input, dim, keepdim)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed stably (shifted by the max)."""
    if not input.dtype.is_floating_point:
        input = input.to(_dtype.get_default_dtype())
    dims = _dims(dim, input.ndim)
    if dims is None:
        dims = tuple(range(input.ndim))
    return apply(_O["logsumexp"], [input], {"dim": dims, "keepdim": keepdim})


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements (ProdBackward0) or along one ``dim`` (ProdBackward1); the
    gradient is right with zeros in the input (NOTE [ Product of the others ])."""
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod() received an invalid combination of arguments - got (tuple), but expected one of:\n"
                        " * (*, torch.dtype dtype = None)\n"
                        " * (int dim, bool keepdim = False, *, torch.dtype dtype = None)\n")
    xp = input._storage.xp
    exact = input.dtype.is_floating_point or input.dtype.is_complex     # integers and bool give int64
    out_dt = dtype if dtype is not None else (input.dtype if exact else _dtype.int64)
    if (not (out_dt.is_floating_point or out_dt.is_complex) and input.requires_grad and _grad_enabled()):
        raise RuntimeError(f"Autograd not support dtype: {_short(out_dt)}")
    adt = _dtype.to_array_dtype(xp, dtype) if dtype is not None and dtype is not input.dtype else None
    if dim is None:
        return apply(_O["prod"], [input], {"dtype": adt} if adt is not None else None)
    attrs = {"dim": _wrap_dim(dim, input.ndim), "keepdim": keepdim}
    if adt is not None:
        attrs["dtype"] = adt
    return apply(row_for("prod_dim", input), [input], attrs)


def _grad_enabled():
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


def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return apply(row_for("cumsum", input), [input], {"dim": _wrap_dim(dim, input.ndim)})


def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (SoftmaxBackward0, a core row); nn.functional.softmax is this."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if _softmax_dtype("softmax", input, dim):
        return empty_like(input)
    return apply(row_for("softmax", input), [input], {"dim": _wrap_dim(dim, input.ndim)})


def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (LogSoftmaxBackward0, a core row)."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if _softmax_dtype("log_softmax", input, dim):
        return empty_like(input)
    return apply(row_for("log_softmax", input), [input], {"dim": _wrap_dim(dim, input.ndim)})


def _softmax_dtype(name, input, dim) -> bool:
    """PyTorch's kernels refuse integer and bool inputs (the last-dim kernel has its own name); an empty
    one never reaches a kernel and comes back as an empty tensor of its dtype (True: return that)."""
    if input.dtype.is_floating_point:
        return False
    _wrap_dim(dim, input.ndim)
    if not input.numel():
        return True
    last = input.ndim <= 1 or _wrap_dim(dim, input.ndim) == input.ndim - 1
    kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(input.dtype)}'")


__all__ = ["sum", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp", "prod",
           "all", "any", "cumsum", "softmax", "log_softmax"]
