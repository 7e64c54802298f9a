"""torch.*'s whole slices along a dim: ``scatter_add``, ``scatter_reduce`` (NOTE [ Scatter reduce ]),
``index_add``, ``index_fill``, ``index_copy`` and ``fill_diagonal_`` (rows in engine/ops/shape/index_dim.py).

NOTE [ Index along a dim ]
1. ``index_add``/``index_fill``/``index_copy`` act on whole slices: the i-th slice of
   ``source`` along ``dim`` goes to slice ``index[i]`` of self (``index`` is 1-D or 0-D).
2. Repeats: index_add sums them; index_copy and index_fill write (the last write wins
   on NumPy; PyTorch leaves the order unspecified).
3. Backward: self's gradient passes whole (add) or is zero on the written slices (copy,
   fill); source's is the gradient read at those slices (``index_select``), times
   ``alpha`` for index_add; a 0-d fill value gets the sum over the filled places (each
   once, however often ``index`` repeats it).
4. index_add and index_copy reject negative indices as PyTorch does; index_fill wraps them.
   index_add into a 0-d or 1-D self, or with ``alpha`` other than 1, raises ``IndexError: index
   out of range in self`` (else the ``index 5 is out of bounds`` RuntimeError); into
   an empty self of two or more dims it checks nothing (and source's gradient is zeros, or
   index_select's error when the dim itself is empty). index_fill along an empty dim raises
   the ``setStorage`` error of PyTorch's restrided view; into other empty tensors it checks
   nothing.
"""
from __future__ import annotations

import builtins
import numbers

from ..backend import gaps as _backend, dtypes as _dtype
from ..backend.low_precision import autocast_slot
from .factories import arange
from .index import _scatter_checks
from ..core import grad_mode
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..core.tensor import Tensor, _wrap_dim
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor, host as _host


def _bounds(index, n, dim, negative_ok=False, prefix="", exc=RuntimeError):
    if not index.numel():
        return
    host = _host(index).reshape(-1)
    bad = host[(host >= n) | (host < (-n if negative_ok else 0))]
    if bad.size:
        raise exc(f"{prefix}index {int(bad[0])} is out of bounds for dimension {dim} with size {n}")


def _flat_range(index, n):
    if index.numel():
        host = _host(index).reshape(-1)
        if ((host < 0) | (host >= n)).any():
            raise IndexError("index out of range in self")


def _vector(index):
    return index.reshape(1) if index.ndim == 0 else index


def _run(name, inputs, attrs, inplace):
    return apply(_O[name], inputs, attrs, inplace=inputs[0] if inplace else None)


# ---- scatter_add (NOTE [ Scatter ] in engine/functions/index.py; repeats add up) --------------------------
def scatter_add(input, dim, index, src):
    """``out[.., index[i], ..] += src[i]`` along ``dim`` on a copy of ``input``. ScatterAddBackward0:
    input's gradient passes whole; src's is the gradient gathered at ``index``."""
    return _scatter_add(input, dim, index, src, False)


def scatter_add_(self, dim, index, src):
    return _scatter_add(self, dim, index, src, True)


def _scatter_add(input, dim, index, src, inplace):
    _need_tensor("scatter_add", src, "src", 4)
    if index.dtype is not _dtype.int64:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    d = _scatter_checks(input, dim, index, src)
    return _run("scatter_add", [input, index, src], {"dim": d}, inplace)


# NOTE [ Scatter reduce ]
# 1. Each src element (placed as NOTE [ Scatter ] 1 says) is combined into its target with
#    ``reduce``: sum, prod, mean, amax or amin; with include_self=False a target that
#    receives anything starts from the reduction's identity instead of its own value.
# 2. mean divides by the number of values combined (self counted when included); integer
#    tensors take the floor, as PyTorch.
# 3. Backward is PyTorch's: prod takes exclusive products without dividing by a zero (a
#    lone zero in a product gets the product of the others); amax/amin share the gradient
#    evenly among every value equal to the result (self included, whatever include_self);
#    with include_self=False self's gradient is zero where something was scattered.
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin", "max", "min")   # max/min: amax/amin, as PyTorch takes them


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Combine ``src`` into a copy of ``input`` at ``index`` along ``dim`` with ``reduce``
    (NOTE [ Scatter reduce ]). ScatterReduceBackward0 keeps self, index, src and the result."""
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce(self, dim, index, src, reduce, include_self, True)


def _scatter_reduce(input, dim, index, src, reduce, include_self, inplace):
    _need_tensor("scatter_reduce", src, "src", 4)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if index.dtype is not _dtype.int64:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    d = _scatter_checks(input, dim, index, src)
    return _run("scatter_reduce", [input, index, src], {"dim": d, "reduce": reduce,
                                                       "include_self": bool(include_self)}, inplace)


# ---- index_add / index_fill / index_copy (NOTE [ Index along a dim ]) -------------------------------
def index_add(input, dim, index, source, *, alpha=1):
    """Add ``alpha * source``'s slices along ``dim`` into slices ``index`` of a copy of ``input``
    (repeats add up). IndexAddBackward0 keeps ``index`` and ``source`` when source needs a gradient."""
    return _index_add(input, dim, index, source, alpha, False)


def index_add_(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha, True)


def _index_add(input, dim, index, source, alpha, inplace):
    _need_tensor("index_add", source, "source", 4)
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_short(index.dtype)} and size: {list(index.shape)}")
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_short(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({_short(input.dtype)}) and source ({_short(source.dtype)}) must "
                           f"have the same scalar type")
    if source.ndim == 0 and index.numel() != 1:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    index = _vector(index)
    count = source.shape[d] if source.ndim else 1
    if index.numel() != count:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({count}), for dim: {d}")
    if source.ndim != input.ndim or builtins.any(source.shape[k] != input.shape[k]
                                                 for k in range(input.ndim) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    if input.ndim <= 1 or (alpha != 1 and index.numel() and input.numel()):
        _flat_range(index, input.shape[d] if input.ndim else 1)
    elif index.numel() and input.numel():   # PyTorch checks nothing else (NOTE [ Index along a dim ] 4)
        _bounds(index, input.shape[d], d)
    if not input.dtype.is_floating_point and alpha != 1:
        alpha = int(alpha)
    if input.ndim == 0:
        out = _index_add(input.reshape(1), 0, index, source.reshape(1), alpha, False).reshape(())
        return input.copy_(out) if inplace else out
    return _run("index_add", [input, index, source], {"dim": d, "alpha": alpha, "source_dim": source.ndim}, inplace)


def index_fill(input, dim, index, value):
    """Set slices ``index`` along ``dim`` of a copy of ``input`` to ``value`` (a number:
    IndexFillBackward0; a 0-d tensor: IndexFillBackward1, whose gradient sums the filled places)."""
    return _index_fill(input, dim, index, value, False)


def index_fill_(self, dim, index, value):
    return _index_fill(self, dim, index, value, True)


def _index_fill(input, dim, index, value, inplace):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    d = _wrap_dim(dim, input.ndim)
    if index.dtype is not _dtype.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    index = _vector(index)
    n = input.shape[d] if input.ndim else 1
    if not input.numel():   # NOTE [ Index along a dim ] 4
        if n == 0 and index.numel():
            _restrided_error(input, d, index.numel())
    else:
        _bounds(index, n, d, negative_ok=True, exc=IndexError)
    if input.ndim == 0:
        return _index_fill(input.reshape(1), 0, index, value, False).reshape(()) if not inplace else \
            input.copy_(_index_fill(input.reshape(1), 0, index, value, False).reshape(()))
    if isinstance(value, Tensor):
        return _run("index_fill_tensor", [input, index, value], {"dim": d}, inplace)
    return _run("index_fill", [input, index], {"dim": d, "number": value}, inplace)


def _restrided_error(input, d, count):
    """PyTorch's error when index_fill restrides an empty self to ``count`` slices along ``d``."""
    sizes, strides, step = list(input.shape), [0] * input.ndim, 1
    for k in reversed(range(input.ndim)):   # a contiguous tensor's strides (an empty dim counts as 1)
        strides[k] = step
        step *= builtins.max(sizes[k], 1)
    sizes[d], strides[d] = count, 0
    need = (1 + builtins.sum((n - 1) * st for n, st in zip(sizes, strides))) * input.element_size()
    raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset 0, and itemsize "
                       f"{input.element_size()} requiring a storage size of {need} are out of bounds for storage "
                       f"of size 0")


def index_copy(input, dim, index, source):
    """Replace slices ``index`` along ``dim`` of a copy of ``input`` by ``source``'s slices.
    IndexCopyBackward0 keeps ``index`` (and ``source`` when it needs a gradient)."""
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp): cast before the dtype check
        input, index, source = autocast_slot.cast("index_copy", [input, index, source])
    return _index_copy(input, dim, index, source, False)


def index_copy_(self, dim, index, source):
    return _index_copy(self, dim, index, source, True)


def _index_copy(input, dim, index, source, inplace):
    _need_tensor("index_copy", source, "source", 4)
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_short(index.dtype)}")
    if source.ndim != input.ndim and source.ndim and input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    mine = [s for k, s in enumerate(input.shape) if k != d]
    theirs = [s for k, s in enumerate(source.shape) if k != d]
    if mine != theirs:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, mine))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, theirs))} at dimension 0.")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_short(input.dtype)} and (source) {_short(source.dtype)}")
    index = _vector(index)
    count = source.shape[d] if source.ndim else 1
    if index.numel() != count:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({count})")
    _bounds(index, input.shape[d] if input.ndim else 1, d, prefix="index_copy_(): ", exc=IndexError)
    if source.ndim == 0:
        source = source.reshape((1,) * builtins.max(input.ndim, 1))
    if input.ndim == 0:
        out = _index_copy(input.reshape(1), 0, index, source, False).reshape(())
        return input.copy_(out) if inplace else out
    return _run("index_copy", [input, index, source], {"dim": d, "source_dim": source.ndim}, inplace)


# ---- fill_diagonal_ -----------------------------------------------------------------------------
def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal in place (all dims equal, or 2-D; ``wrap`` restarts
    a tall matrix's diagonal every ``cols + 1`` rows, as NumPy's fill_diagonal). The node is the
    CopySlices of an indexed write, as PyTorch's."""
    if isinstance(fill_value, Tensor) or not isinstance(fill_value, numbers.Number):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
                        f"{type(fill_value).__name__}")
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if grad_mode.is_grad_enabled() and self.grad_fn is None and self.requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    xp = self._storage.xp
    if self.ndim == 2 and not (wrap and self.shape[0] > self.shape[1] + 1) and not _backend._is_strict(xp):
        # an in-place write through a view: CopySlices saving nothing, as PyTorch's (array_api_strict
        # has no strided views to rebase through, so it takes the indexed write below)
        self.diagonal().fill_(fill_value)
        return self
    if self.ndim == 2:   # the wrapped diagonal of a tall matrix: an indexed write
        rows, cols = self.shape
        end = rows * cols if wrap and rows > cols + 1 else builtins.min(rows, cols) * (cols + 1)
        flat = arange(0, builtins.min(end, rows * cols), cols + 1, device=self.device)
        where = (flat // cols, flat % cols)
    else:
        ii = arange(self.shape[0], device=self.device)
        where = (ii,) * self.ndim
    self[where] = fill_value
    return self


__all__ = ["scatter_add", "scatter_reduce", "index_add", "index_fill", "index_copy"]
