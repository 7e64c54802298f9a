"""The Tensor: an array in a storage, plus its place in the autograd graph."""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from ..backend import gaps as _backend, dtypes as _dtype
from .. import events as _events
from ..backend.device import CPU as _CPU, _numpy as _numpy_ns, device_of_array, namespace_for
from ..backend.size import Size
from .storage import Storage
from . import grad_mode

_DT_CACHE: dict = {}
_ndarray = np.ndarray
_tuple_new = tuple.__new__
_np_xp = None          # the array-API namespace of NumPy, once first asked for
_NP_DT: dict = {}      # NumPy dtype -> engine dtype, for that namespace


def _numpy_xp():
    global _np_xp
    _np_xp = _numpy_ns()
    for adt in (np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64)):
        _NP_DT[adt] = _engine_dtype(_np_xp, adt)
    return _np_xp


def _engine_dtype(xp, adt):
    key = (xp.__name__, adt)
    d = _DT_CACHE.get(key)
    if d is None:
        d = _DT_CACHE[key] = _dtype.from_array_dtype(xp, adt)
    return d


CANNOT_REQUIRE_GRAD = "Only Tensors of floating point and complex dtype can require gradients"  # factories


class VersionCounter:
    """A version counter that is not its storage's (see :func:`version_counter`)."""

    __slots__ = ("version",)

    def __init__(self):
        self.version = 0


def version_counter(t):
    """The object whose ``version`` counts ``t``'s in-place changes.

    NOTE [ Version counters ]
    1. A tensor's in-place ops bump a version counter; a saved tensor remembers the version
       it was saved at and refuses to unpack once it moved (PyTorch's "modified by an
       inplace operation" error).
    2. The counter is the storage's (``Storage.version``): views, ``detach()`` and every
       alias of one storage share it, as in PyTorch.
    3. ``x.data`` shares the storage but gets a counter of its own (``t._vc``), so in-place
       changes made through it are invisible to autograd, as in PyTorch; views and
       ``detach()`` of such a tensor share its counter.
    """
    vc = t._vc
    return vc if vc is not None else t._storage


class Tensor:
    """A multi-dimensional array that records the operations applied to it.

    Differs from PyTorch: always contiguous or a NumPy/CuPy view; no sparse or quantized
    tensors; PyTorch's common dtypes only (no float8, uint16 or complex32), and no
    bfloat16 on CUDA.
    """

    # Set for every tensor. The rarely set ones (_grad, _accum, _retains_grad, _hooks, _gg_name,
    # _is_param) are class defaults below: _wrap skips them, and a tensor that sets one gets it in
    # its __dict__.
    __slots__ = ("_data", "_storage", "dtype", "_grad_fn", "_output_nr", "_requires_grad",
                 "_base", "_id", "_vc", "_view_version", "_no_grad_view", "__weakref__", "__dict__")
    _grad = None
    _accum = None          # weakref to the AccumulateGrad of a leaf that requires grad
    _retains_grad = False
    _hooks = None
    _gg_name = None
    _is_param = False
    _view_history = None   # a stale view's grad_fn, rebuilt (set by engine/ops/shape/view_history.py)

    # ---- construction -------------------------------------------------------
    @classmethod
    def _wrap(cls, array, storage: Storage | None = None, base: str = "other", base_tensor=None):
        t = object.__new__(cls)
        if type(array) is _ndarray:   # the usual case: a NumPy array on the CPU
            if storage is None:
                storage = Storage(array, _CPU, _np_xp or _numpy_xp(), base)
            d = _NP_DT.get(array.dtype) if storage.xp is _np_xp else None
            if d is None:
                d = _engine_dtype(storage.xp, array.dtype)
        else:
            if isinstance(array, np.generic):   # a NumPy reduction's scalar: held as a 0-d array, so it is writable
                array = np.asarray(array)
            if storage is None:
                storage = Storage(array, device_of_array(array), _xp_of(array), base)
            d = _engine_dtype(storage.xp, array.dtype)
        t._data = array
        t._storage = storage
        t.dtype = d
        t._grad_fn = None
        t._output_nr = 0
        t._requires_grad = False
        t._base = base_tensor
        # a view's version and grad mode when made: NOTE [ A view's grad_fn after an in-place op ] 1
        t._view_version = 0 if base_tensor is None else version_counter(base_tensor).version
        t._no_grad_view = base_tensor is not None and not grad_mode.is_grad_enabled()
        t._id = _events.new_id()
        t._vc = None
        if grad_mode._inference_blocks and grad_mode.is_inference_mode_enabled():
            t._inference = True
        return t

    _engine_dtype_of = staticmethod(lambda xp, adt: _engine_dtype(xp, adt))
    _post_acc_hooks = ()   # register_post_accumulate_grad_hook gives a tensor its own list

    _legacy_new = None     # torch.Tensor(...)'s legacy constructor, set by the functions layer

    def __new__(cls, *args, **kwargs):
        """``torch.Tensor(...)``, PyTorch's legacy constructor (bound from the functions layer)."""
        return cls._legacy_new(None, args, dict(kwargs))

    def __init__(self, *args, **kwargs):
        pass    # built by __new__ (or _wrap)

    # ---- metadata -----------------------------------------------------------
    @property
    def device(self):
        return self._storage.device

    @property
    def shape(self):
        if type(self._data) is _ndarray:    # NumPy's shape is already a tuple of ints
            return _tuple_new(Size, self._data.shape)
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return int(self._data.shape[_wrap_dim(dim, self.ndim)])

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    def dim(self) -> int:
        return len(self._data.shape)

    def numel(self) -> int:
        return math.prod(self._data.shape)

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def stride(self, dim=None):
        st = _backend.strides(self._storage.xp, self._data, self.dtype.itemsize)
        return st if dim is None else st[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        """PyTorch's rule: row-major strides over the dims longer than 1, or no elements at all."""
        expected = 1
        for n, st in zip(reversed(self._data.shape), reversed(self.stride())):
            if n != 1 and st != expected:
                return 0 in self._data.shape
            expected *= n
        return True

    def storage_offset(self) -> int:
        xp = self._storage.xp
        data, base = self._data, self._storage.array
        if _backend._is_strict(xp):
            data, base = data._array, base._array   # the NumPy arrays array_api_strict wraps
        elif not _backend._is_numpy(xp) and not _backend._is_cupy(xp):
            return 0
        if hasattr(base, "__array_interface__"):
            return (data.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // self.dtype.itemsize
        return (data.data.ptr - base.data.ptr) // self.dtype.itemsize

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def grad_fn(self):
        """The node that made this tensor. A view's is rebuilt when its base changed in place since it
        was made (NOTE [ A view's grad_fn after an in-place op ] in engine/ops/shape/view_history.py)."""
        if self._base is None or self._view_version == (self._vc or self._storage).version:
            return self._grad_fn
        return self._view_history()

    @grad_fn.setter
    def grad_fn(self, fn):
        self._grad_fn = fn
        if self._base is not None:      # the version this view's node stands for
            self._view_version = (self._vc or self._storage).version

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables." if value else
                               "you can only change requires_grad flags of leaf variables. If you want "
                               "to use a computed variable in a subgraph that doesn't require differentiation "
                               "use var_no_grad = var.detach().")
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):   # PyTorch's three paths word it three ways
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if value and self.is_inference() and not grad_mode.is_inference_mode_enabled():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True):
        if requires_grad and self.grad_fn is None and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not (requires_grad and self.grad_fn is not None):  # a non-leaf already requires grad
            self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                          "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                          "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                          "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                          "instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"assigned grad has data of a different size")
            value._storage.set_base("gradient")
        self._grad = value

    @property
    def _version(self) -> int:
        return version_counter(self).version

    @property
    def data(self):
        """The same storage, outside autograd, with a version counter of its own (NOTE [ Version counters ] 3)."""
        t = Tensor._wrap(self._data, self._storage)
        t._vc = VersionCounter()
        return t

    @data.setter
    def data(self, value):
        self._data = value._data
        self._storage = value._storage
        self.dtype = value.dtype

    @property
    def name(self):
        return self._gg_name

    def is_inference(self) -> bool:
        """True for tensors made inside ``inference_mode()``."""
        return self.__dict__.get("_inference", False)

    def untyped_storage(self):
        return self._storage
    storage = untyped_storage    # PyTorch's deprecated TypedStorage: here the same storage (same data_ptr)

    # ---- autograd -----------------------------------------------------------

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def detach(self):
        t = Tensor._wrap(self._data, self._storage)
        t._vc = self._vc
        return t

    def detach_(self):
        self.grad_fn = None
        self._requires_grad = False
        return self

    # ---- conversion ---------------------------------------------------------
    def numpy(self, *, force=False):
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.device.type != "cpu" and not force:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.")
        return _backend.to_numpy(self._storage.xp, self._data)

    # NumPy's operators defer to a tensor's reflected ones (np.float64(2) * t is t.__rmul__), as for torch.Tensor
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy(force=True)
        return a.astype(dtype) if dtype is not None else a

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        v = _backend.to_numpy(self._storage.xp, self._data).reshape(()).item()
        return v

    def tolist(self):
        return _backend.to_numpy(self._storage.xp, self._data).tolist()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._data.shape[0])

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self.dtype is not _dtype.int64 or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, proto):
        raise TypeError("pickling glassgrad tensors is not supported; use engine.save(obj, f)")


def _xp_of(array):
    if type(array).__module__.startswith("array_api_strict"):
        return sys.modules["array_api_strict"]     # its arrays exist, so it is imported
    dev = device_of_array(array)
    return _numpy_ns() if dev.type == "cpu" else namespace_for(dev)


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


class _Handle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out of its list."""

    __slots__ = ("lst", "item")

    def __init__(self, lst, item):
        self.lst, self.item = lst, item

    def remove(self):
        if self.item in self.lst:
            self.lst.remove(self.item)


def tensor_info(t) -> dict:
    """The JSON-ready description of ``t`` that events carry."""
    return {"id": t._id, "storage": t._storage.id, "shape": list(t._data.shape), "dtype": t.dtype.name,
            "bytes": t.numel() * t.dtype.itemsize, "storage_bytes": t._storage.nbytes,
            "device": str(t.device), "requires_grad": t.requires_grad, "leaf": t.grad_fn is None,
            "grad_fn": t.grad_fn.id if t.grad_fn is not None else None, "name": t._gg_name}
