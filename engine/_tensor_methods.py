"""Tensor methods and operators, bound to the functions in ``engine.functional``."""
from __future__ import annotations

import warnings

from .backend import dtypes as _dtype, layout as _layout
from .memory import oom as _oom
from . import functional as E
from .backend.device import as_device, namespace_for
from .core.dispatch import apply
from .core.grad_mode import is_grad_enabled
from .core.inplace import write
from .core.table import OPS
from .core.tensor import Tensor
from .autograd.function import Function
from .functions.methods import bind_methods as _bind_family_methods
from .functions.indexing import copy_checks as _copy_checks
from . import special as _special


def _swap(fn):
    return lambda self, other: fn(other, self)


_methods = {
    "div": E.div,
    "divide": E.div, "true_divide": E.div, "pow": E.pow, "neg": E.neg, "negative": E.neg, "exp": E.exp,
    "log": E.log, "sqrt": E.sqrt, "rsqrt": E.rsqrt, "reciprocal": E.reciprocal, "abs": E.abs,
    "sign": E.sign, "sin": E.sin, "cos": E.cos, "tanh": E.tanh, "sigmoid": E.sigmoid, "relu": E.relu,
    "erf": E.erf, "clamp": E.clamp, "clip": E.clamp, "maximum": E.maximum, "minimum": E.minimum,
    "square": E.square, "floor": E.floor, "ceil": E.ceil, "round": E.round, "isnan": E.isnan,
    "eq": E.eq, "ne": E.ne, "lt": E.lt, "le": E.le, "gt": E.gt, "ge": E.ge,
    "logical_and": E.logical_and, "logical_or": E.logical_or, "logical_not": E.logical_not,
    "sum": E.sum, "prod": E.prod, "mean": E.mean, "var": E.var, "std": E.std, "max": E.max, "min": E.min, "amax": E.amax, "amin": E.amin,
    "argmax": E.argmax, "argmin": E.argmin, "logsumexp": E.logsumexp, "all": E.all, "any": E.any,
    "reshape": E.reshape, "view": E.view, "flatten": E.flatten, "unflatten": E.unflatten,
    "permute": E.permute, "transpose": E.transpose, "swapaxes": E.transpose, "t": E.t,
    "squeeze": E.squeeze, "unsqueeze": E.unsqueeze, "expand": E.expand, "broadcast_to": E.broadcast_to,
    "sum_to_size": E.sum_to_size, "narrow": E.narrow, "split": E.split, "chunk": E.chunk,
    "unbind": E.unbind, "index_select": E.index_select, "masked_fill": E.masked_fill,
    "matmul": E.matmul, "mm": E.mm, "bmm": E.bmm, "dot": E.dot, "mv": E.mv, "outer": E.outer,
    "clone": E.clone, "allclose": E.allclose, "equal": E.equal, "nonzero": E.nonzero, "where": None,
    "log1p": E.log1p, "expm1": E.expm1, "cumsum": E.cumsum, "norm": E.norm, "tril": E.tril, "triu": E.triu,
    "gather": E.gather, "repeat": E.repeat, "clamp_min": E.clamp_min, "clamp_max": E.clamp_max,
    "isclose": E.isclose, "masked_select": E.masked_select, "sort": E.sort, "argsort": E.argsort, "topk": E.topk,
}

for _name, _fn in _methods.items():
    if _fn is not None:
        setattr(Tensor, _name, _fn)

Tensor.where = lambda self, condition, other: E.where(condition, self, other)
Tensor.flip = lambda self, *dims: E.flip(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)
Tensor.floor_ = lambda self: E._inplace("floor", self)
Tensor.ceil_ = lambda self: E._inplace("ceil", self)
Tensor.round_ = lambda self, *, decimals=None: (E._inplace("round", self) if decimals is None
                                                 else E._inplace("round_decimals", self, decimals=decimals))
Tensor.gelu = lambda self, approximate="none": E.gelu(self, approximate)


def _softmax(self, dim, dtype=None):
    from .nn.functional import softmax
    return softmax(self, dim, dtype)


def _log_softmax(self, dim, dtype=None):
    from .nn.functional import log_softmax
    return log_softmax(self, dim, dtype)


Tensor.softmax = _softmax
Tensor.log_softmax = _log_softmax

# operators
# __add__, __sub__, __mul__ (and add, sub, mul) are bound in engine/core/operators.py
Tensor.__truediv__ = lambda self, other: E.div(self, other)
Tensor.__rtruediv__ = lambda self, other: E.reciprocal(self) * other   # PyTorch's __rdiv__: MulBackward0
Tensor.__mod__ = lambda self, other: E.remainder(self, other)
Tensor.__rmod__ = lambda self, other: E.remainder(other, self)
Tensor.__pow__ = lambda self, other: E.pow(self, other)
Tensor.__rpow__ = lambda self, other: E.pow(other, self)
Tensor.__matmul__ = lambda self, other: E.matmul(self, other)
Tensor.__rmatmul__ = lambda self, other: E.matmul(other, self)
Tensor.__neg__ = lambda self: E.neg(self)
Tensor.__abs__ = lambda self: E.abs(self)
Tensor.__eq__ = lambda self, other: False if other is None else E.eq(self, other)   # t == None is False
Tensor.__ne__ = lambda self, other: True if other is None else E.ne(self, other)
Tensor.__lt__ = lambda self, other: E.lt(self, other)
Tensor.__le__ = lambda self, other: E.le(self, other)
Tensor.__gt__ = lambda self, other: E.gt(self, other)
Tensor.__ge__ = lambda self, other: E.ge(self, other)
Tensor.__getitem__ = lambda self, key: E._getitem(self, key)
Tensor.__setitem__ = lambda self, key, value: E._setitem(self, key, value)
Tensor.__hash__ = lambda self: id(self)

Tensor.T = property(lambda self: E.permute(self, tuple(reversed(range(self.ndim)))))


_ZERO_D = {"mT": "This function is the identity in these cases.", "mH": "Consider using x.conj()."}


def _matrix_transpose(name):
    """``x.mT``/``x.mH`` (real tensors: the same): the last two dims swapped; a 1-D tensor is PyTorch's error,
    a 0-D tensor is returned itself, with PyTorch's deprecation warning."""
    def get(self):
        if self.ndim == 0:
            warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {_ZERO_D[name]}", UserWarning, stacklevel=2)
            return self
        if self.ndim == 1:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        t = E.transpose(self, -2, -1)
        return E.conj(t) if name == "mH" and self.dtype.is_complex else t    # complex: the conjugate transpose
    return get


Tensor.mT = property(_matrix_transpose("mT"))
Tensor.mH = property(_matrix_transpose("mH"))


# ---- in-place variants ---------------------------------------------------------------------
def _inplace_binary(name):
    def f(self, other, *, alpha=1):
        E._broadcast_check(self, other)
        attrs = {"alpha": alpha} if alpha != 1 else {}
        return E._inplace(name, self, E._scalar_ok(other, name + "_"), **attrs)
    f.__name__ = name + "_"
    return f


Tensor.add_ = _inplace_binary("add")


Tensor.__iadd__ = lambda self, other: self.add_(other)


def _unary_inplace(name):
    def f(self):
        return E._inplace(name, self)
    f.__name__ = name + "_"
    return f


for _n in ("relu", "exp", "sigmoid", "tanh", "sqrt", "sin", "cos", "log"):   # neg_, abs_: functions/methods.py
    setattr(Tensor, _n + "_", _unary_inplace(_n))


def _clamp_(self, min=None, max=None):
    E._inplace_bound_check(self, min, max)
    return E._inplace("clamp", self, min=min, max=max)


def _zero_(self):
    """ZeroBackward0, as PyTorch names ``zero_``'s node (its input gets a zero gradient)."""
    return apply(OPS["fill"], [self], {"value": 0}, inplace=self, node_name="ZeroBackward0")


def _fill_(self, value):
    """PyTorch's fill_.Scalar (FillBackward2) or fill_.Tensor (FillBackward3: a 0-d ``value`` that requires
    grad takes the sum of the gradient, as a copy of it broadcast)."""
    if not isinstance(value, Tensor):
        return apply(OPS["fill"], [self], {"value": value}, inplace=self, node_name="FillBackward2")
    if value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    if value.requires_grad and is_grad_enabled():
        return apply(OPS["copy"], [self, value], inplace=self, node_name="FillBackward3")
    return apply(OPS["fill"], [self], {"value": value.item()}, inplace=self, node_name="FillBackward3")


def _copy_(self, src, non_blocking=False):
    if src.device != self.device:
        src = src.to(self.device)
    _copy_checks(self, src)   # PyTorch's refusals, in its order
    return E._inplace("copy", self, src)


def _masked_fill_(self, mask, value):
    return E.masked_fill_(self, mask, value)


def _fill_random(self, kind, scale, shift, generator, opname):
    """Draw on the host, scale in place there, write into ``self``: no engine temporaries."""
    from .backend.gaps import from_numpy
    from .core.inplace import bump_version
    from .random import generator_for
    if not self.dtype.is_floating_point:   # the factories raise PyTorch's error for integer dtypes
        (E.randn if kind == "normal" else E.rand)(1, dtype=self.dtype, device=self.device)
    gen = generator or generator_for(self.device)
    npdt = "float64" if self.dtype is _dtype.float64 else "float32"
    host = gen.normal(tuple(self.shape), npdt) if kind == "normal" else gen.uniform(tuple(self.shape), npdt)
    host *= scale
    host += shift
    write(self, from_numpy(self._storage.xp, host))
    bump_version(self, opname)
    return self


def _uniform_(self, a=0.0, b=1.0, generator=None):
    return _fill_random(self, "uniform", b - a, a, generator, "uniform_")


def _normal_(self, mean=0.0, std=1.0, generator=None):
    return _fill_random(self, "normal", std, mean, generator, "normal_")


Tensor.clamp_ = _clamp_
Tensor.zero_ = _zero_
Tensor.fill_ = _fill_
Tensor.copy_ = _copy_
Tensor.masked_fill_ = _masked_fill_
Tensor.uniform_ = _uniform_
Tensor.normal_ = _normal_


# ---- conversion ----------------------------------------------------------------------------
class _ToDevice(Function):
    @staticmethod
    def forward(ctx, x, device):
        from .backend.gaps import from_numpy, to_numpy
        ctx.src = x.device
        xp = namespace_for(device)
        return Tensor._wrap(from_numpy(xp, to_numpy(x._storage.xp, x._data).copy()))

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.src), None


_ToDevice.__name__ = "ToCopy"


def _to(self, *args, **kwargs):
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(other_tensor)``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif a is not None:
            device = a
    out = self
    if device is not None:
        dev = as_device(device)
        if dev != self.device:
            namespace_for(dev)  # raises the clear no-GPU error before anything else
            out = _ToDevice.apply(out, dev)
    if dtype is not None and dtype is not out.dtype:
        out = E._to_dtype(out, dtype)
    return out


Tensor.to = _oom.translated(_to)     # NOTE [ Out of memory ] 3
Tensor.cpu = lambda self: self.to("cpu")
Tensor.cuda = lambda self, device=None: self.to(device if device is not None else "cuda")
Tensor.float = lambda self: self.to(_dtype.float32)
Tensor.double = lambda self: self.to(_dtype.float64)
Tensor.long = lambda self: self.to(_dtype.int64)
Tensor.int = lambda self: self.to(_dtype.int32)
Tensor.bool = lambda self: self.to(_dtype.bool_)


Tensor.half = lambda self, memory_format=None: self.to(_dtype.float16)
Tensor.bfloat16 = lambda self, memory_format=None: self.to(_dtype.bfloat16)
Tensor.short = lambda self, memory_format=None: self.to(_dtype.int16)
Tensor.char = lambda self, memory_format=None: self.to(_dtype.int8)
Tensor.byte = lambda self, memory_format=None: self.to(_dtype.uint8)
Tensor.cfloat = lambda self, memory_format=None: self.to(_dtype.complex64)
Tensor.cdouble = lambda self, memory_format=None: self.to(_dtype.complex128)
Tensor.type_as = lambda self, other: self.to(other.dtype)
Tensor.view_as = lambda self, other: E.view(self, tuple(other.shape))
Tensor.reshape_as = lambda self, other: E.reshape(self, tuple(other.shape))
Tensor.expand_as = lambda self, other: E.expand(self, tuple(other.shape))
Tensor.contiguous = lambda self, memory_format=None: (self if self.is_contiguous() else
                                                      E.clone(self, memory_format=memory_format or _layout.contiguous_format))
Tensor.is_floating_point = lambda self: self.dtype.is_floating_point
Tensor.new_zeros = lambda self, *size, dtype=None, device=None, requires_grad=False: E.zeros(
    *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
Tensor.new_ones = lambda self, *size, dtype=None, device=None, requires_grad=False: E.ones(
    *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
Tensor.new_full = lambda self, size, value, dtype=None, device=None, requires_grad=False: E.full(
    size, value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
Tensor.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: E.tensor(
    data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _type(self, dtype=None):
    if dtype is None:
        n = "torch." + _dtype.short_name(self.dtype) + "Tensor"
        return n.replace("torch.", "torch.cuda.") if self.device.type == "cuda" else n
    from .functions.legacy import dtype_of_type_name
    return self.to(dtype_of_type_name(dtype))


Tensor.type = _type


# ---- roll, scatter/scatter_, bernoulli, multinomial (engine/functions/shape.py, index.py, random.py) ---------
def _roll(self, shifts, dims=None):
    return E.roll(self, shifts, dims)


Tensor.roll = _roll
Tensor.scatter = lambda self, dim, index, src=None, value=None, *, reduce=None: E.scatter(
    self, dim, index, src, value, reduce=reduce)
Tensor.unique = lambda self, sorted=True, return_inverse=False, return_counts=False, dim=None: E.unique(
    self, sorted, return_inverse, return_counts, dim)
Tensor.bernoulli = lambda self, p=None, *, generator=None: E.bernoulli(self, p, generator=generator)
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: E.multinomial(
    self, num_samples, replacement, generator=generator)


def _scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    from .functions.index import scatter_
    return scatter_(self, dim, index, src, value, reduce=reduce)


Tensor.scatter_ = _scatter_


def _bernoulli_(self, p=0.5, *, generator=None):
    """Fill ``self`` with 0/1 draws, 1 with probability ``p`` (a number or a tensor of probabilities)."""
    probs = p if isinstance(p, Tensor) else E.full(tuple(self.shape), float(p), dtype=_dtype.float64,
                                                     device=self.device)
    return self.copy_(E.bernoulli(E.broadcast_to(probs.detach(), tuple(self.shape)), generator=generator))


Tensor.bernoulli_ = _bernoulli_


# ---- the torch.* families' methods, one table (engine/functions/methods.py) -------------------------------
_bind_family_methods(Tensor)

# ---- erfc, exp2, i0 (engine/special.py) ----------------------------------------------------------------
Tensor.erfc, Tensor.exp2, Tensor.i0 = _special.erfc, _special.exp2, _special.i0

# ---- the dense side of sparse tensors (engine/sparse) ------------------------------------------------
from .sparse import ops as _sparse_ops  # noqa: E402
from .sparse.layout import strided as _strided  # noqa: E402
Tensor.layout, Tensor.is_sparse, Tensor.is_sparse_csr = _strided, False, False
Tensor.to_sparse = _sparse_ops.to_sparse
Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: self   # already dense: itself, as PyTorch

# ---- numpy(): NumPy has no bfloat16, and PyTorch's numpy() says so ------------------------------------------
_core_numpy = Tensor.numpy


def _numpy(self, *, force=False):
    """The tensor's array. A bfloat16 tensor raises PyTorch's TypeError; ``force=True`` (what the
    engine's own functions and ``np.asarray`` use) still hands back ml_dtypes' bfloat16 array."""
    if self.dtype is _dtype.bfloat16 and not force and not self.requires_grad:
        raise TypeError("Got unsupported ScalarType BFloat16")
    return _core_numpy(self, force=force)


Tensor.numpy = _numpy
