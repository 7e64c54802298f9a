"""The sparse COO tensor: a Tensor whose elements are an indices tensor and a values tensor.

NOTE [ A sparse COO tensor ]
1. ``SparseCooTensor`` is a ``Tensor`` subclass made from two ordinary tensors: ``_indices()``
   (int64, shape ``(sparse_dim, nnz)``) and ``_values()`` (shape ``(nnz, *dense_shape)``).
   Their storages are the sparse tensor's memory: the bytes count once, under those two
   storages, as PyTorch counts a sparse tensor's indices and values.
2. Its ``_data`` is a ``_SparseShape``: the shape and dtype, and no elements. Every engine op
   reads ``_data``, so an op this package does not implement stops there with a
   NotImplementedError naming it (never a NumPy traceback); methods PyTorch itself refuses on
   sparse tensors raise PyTorch's own error (``view``, ``reshape``, ``numpy``, ...).
3. Its ``_storage`` is the values' storage, so ``device`` and the events' ``storage`` field
   name the values; the indices' storage is in the op event's inputs.
4. Entries may repeat an index (uncoalesced): ``coalesce()`` sums them and sorts the indices,
   ``is_coalesced()`` tells; ``indices()``/``values()`` need a coalesced tensor, ``_indices()``/
   ``_values()`` do not (as in PyTorch).
5. Only the ops in ``engine.sparse`` take a sparse tensor (``ops.py``, ``softmax.py``); the
   methods that run them (``values``, ``coalesce``, ``to_dense``, ``sum``, ``mm``, ``@``) find
   them in ``SparseCooTensor._ops``, which ``ops.py`` fills in (so this module imports no op).
   Their graph nodes and gradients: ``nodes.py`` (NOTE [ Sparse gradients in flight ]).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .. import events as _events
from ..core.tensor import Tensor
from .layout import sparse_coo

_GG = "glassgrad does not implement {} for sparse tensors yet; call .to_dense() first"


def _refuse(what: str):
    raise NotImplementedError(_GG.format(f"'{what}'"))


class _SparseShape:
    """A sparse tensor's ``_data``: its shape and dtype, no elements (NOTE 2)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __array__(self, *args, **kwargs):
        _refuse("conversion to an array")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        _refuse(func.__name__)

    def __getattr__(self, name):
        if name.startswith("__array"):     # NumPy reaching for the elements
            _refuse("conversion to an array")
        if name.startswith("__"):          # other protocol probes: absent, as on any object
            raise AttributeError(name)
        _refuse(name)

    def __getitem__(self, key):
        _refuse("indexing")

    def __setitem__(self, key, value):
        _refuse("indexing")

    def __iter__(self):
        _refuse("iteration")


def _arith(name):
    def refuse(self, *args):
        _refuse(name)
    return refuse


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
              "pow", "rpow", "matmul", "rmatmul", "neg", "pos", "abs", "lt", "le", "gt", "ge", "and", "or",
              "xor", "invert", "mod", "rmod", "iadd", "isub", "imul", "itruediv"):
    setattr(_SparseShape, f"__{_name}__", _arith(_name))
_SparseShape.__eq__ = _arith("eq")
_SparseShape.__ne__ = _arith("ne")
_SparseShape.__hash__ = None


class SparseCooTensor(Tensor):
    """A sparse tensor in COO layout (NOTE [ A sparse COO tensor ])."""

    _sink = None        # weakref to the gradient sink of a leaf that requires grad (nodes.py)
    _ops: ClassVar[dict] = {}   # the ops its methods run, filled in by ops.py (NOTE 5), which imports this module

    @classmethod
    def _make(cls, indices: Tensor, values: Tensor, size, coalesced: bool):
        """The sparse tensor over these two tensors (aliases, no copy); no graph node."""
        t = object.__new__(cls)
        t._indices_t, t._values_t, t._coalesced = indices, values, bool(coalesced)
        t._data = _SparseShape(size, values._data.dtype)
        t._storage = values._storage
        t.dtype = values.dtype
        t._grad_fn = None
        t._output_nr = 0
        t._requires_grad = False
        t._base = None
        t._view_version = 0
        t._no_grad_view = False
        t._id = _events.new_id()
        t._vc = None
        return t

    # ---- what it is ----------------------------------------------------------------------------
    layout = sparse_coo
    is_sparse = True
    is_sparse_csr = False

    def sparse_dim(self) -> int:
        return int(self._indices_t.shape[0])

    def dense_dim(self) -> int:
        return self.ndim - self.sparse_dim()

    def _nnz(self) -> int:
        return int(self._indices_t.shape[1])

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        """The indices tensor itself (an alias: no graph, no copy), coalesced or not."""
        return _alias(self._indices_t)

    def _values(self) -> Tensor:
        """The values tensor itself (an alias with no grad_fn, as PyTorch's ``_values()``)."""
        return _alias(self._values_t)

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return _alias(self._indices_t)

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._ops["values"](self)

    def coalesce(self):
        return self._ops["coalesce"](self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self._ops["to_dense"](self)

    def to_sparse(self, *args, **kwargs):
        return self

    def sum(self, dim=None, keepdim=False, dtype=None):
        if keepdim or dtype is not None:
            _refuse("sum with keepdim or dtype")
        return self._ops["sum"](self) if dim is None else self._ops["sum"](self, dim)

    def mm(self, mat2):
        return self._ops["mm"](self, mat2)

    matmul = __matmul__ = mm

    def detach(self):
        return SparseCooTensor._make(self._indices_t, self._values_t, self._data.shape, self._coalesced)

    def __repr__(self):
        from .printing import sparse_repr
        return sparse_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)

    # ---- what PyTorch refuses on a sparse tensor, with its errors (NOTE 2) ----------------------------
    def view(self, *shape):
        raise NotImplementedError("Could not run 'aten::view' with arguments from the 'SparseCPU' backend. "
                                  "This could be because the operator doesn't exist for this backend, or was "
                                  "omitted during the selective/custom build process (if using custom build).")

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    tolist = data_ptr

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def stride(self, dim=None):
        st = (0,) * self.ndim      # PyTorch's answer for a sparse tensor
        return st if dim is None else st[dim]

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def __getitem__(self, key):
        _refuse("indexing")

    def __setitem__(self, key, value):
        _refuse("indexing")

    def retain_grad(self):
        _refuse("retain_grad")      # its gradient travels as entries, not as a tensor (nodes.py NOTE 1)

    def register_hook(self, hook):
        _refuse("register_hook")


def _alias(t: Tensor) -> Tensor:
    """A new tensor over ``t``'s array and storage, with no history (no bytes, no graph)."""
    return Tensor._wrap(t._data, t._storage)
