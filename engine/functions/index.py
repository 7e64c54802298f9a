"""torch.*'s reads and writes at index tensors (rows in engine/ops/shape/index.py and embed.py): ``take``,
``take_along_dim`` (expand, gather), ``index_put``/``index_put_``, ``put``, ``masked_scatter``, ``scatter``
(NOTE [ Scatter ]), ``select_scatter``, ``slice_scatter``, ``diagonal_scatter`` and ``index_reduce``.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..backend import dtypes as _dtype
from ..core.operators import _broadcast_check, add
from .arithmetic import lt
from .build import diagonal
from .indexing import _check_bounds, _getitem, _normalize_index, _setitem_shape_check, gather, where
from .views import broadcast_shapes, expand, reshape
from ..core.dispatch import apply, broadcast_mismatch
from ..core.table import OPS as _O, SLOT as _SLOT
from ..core.tensor import Tensor, _wrap_dim
from .shape import select
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor, host as _host


def _shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


# NOTE [ Scatter ]
# 1. ``out[..., index[i], ...] = src[i]`` along ``dim``: element i of ``index`` (any position,
#    same rank as self) names where along ``dim`` the value at i goes; the other coordinates
#    are i's own. ``index`` may be smaller than self and src off ``dim``.
# 2. Backward: self's gradient is zero where something was written (ScatterBackward0/1 keep
#    ``index``); src's is the gradient read back at those places (a gather).
# 3. Repeated targets: the last write wins on NumPy; PyTorch leaves the order unspecified.
# 4. src larger than index: PyTorch's formula gives src a gradient of index's shape, which its
#    engine refuses (``Function ScatterAddBackward0 returned an invalid gradient at index 1``)
#    unless src's shape expands to index's (``_src_grad`` in index_dim.py). scatter_reduce's
#    amax/amin/prod formula compares the whole src, broadcast, with index-shaped values: a
#    broadcast error where they do not broadcast, else a gradient of src's shape, nonzero even
#    where src was never read (prod divides the gathered product by each src element).
def _scatter_checks(self, dim, index, src):
    d = _wrap_dim(dim, self.ndim)
    if index.dtype is not _dtype.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    if index.ndim != self.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    ishape, sshape = list(index.shape), list(self.shape)
    bad = any(ishape[k] > sshape[k] for k in range(self.ndim) if k != d)
    if src is not None and (bad or any(ishape[k] > src.shape[k] for k in range(self.ndim))):
        raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} apart from dimension {d} and "
                           f"to be no larger size than src {list(src.shape)}")
    if bad:
        raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} apart from dimension {d}")
    if index.numel():
        host = index.detach().numpy(force=True)
        out = host[(host < 0) | (host >= self.shape[d])]
        if out.size:
            raise RuntimeError(f"index {int(out.flat[0])} is out of bounds for dimension {d} with size {self.shape[d]}")
    return d


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """Write ``src`` (a tensor) or ``value`` (a number) into a copy of ``input`` at ``index`` along
    ``dim`` (NOTE [ Scatter ])."""
    return _scatter(input, dim, index, src, value, reduce, False)


def _scatter(input, dim, index, src, value, reduce, inplace):
    if reduce is not None:
        raise NotImplementedError("glassgrad's scatter does not support reduce; use scatter_add or index_put")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    d = _scatter_checks(input, dim, index, src)
    target = input if inplace else None
    if src is not None:
        return apply(_O["scatter"], [input, index, src], {"dim": d}, inplace=target)
    return apply(_O["scatter_value"], [input, index], {"dim": d, "value": value}, inplace=target)


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    return _scatter(self, dim, index, src, value, reduce, True)


# ---- indexed reads ----------------------------------------------------------------------------------
def _long_index(fn, index, word="a long tensor"):
    if not isinstance(index, Tensor) or index.dtype is not _dtype.int64:
        got = _short(index.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{fn}(): Expected {word} for index, but got {got}")


def _flat_bounds(index, n, empty=None):
    if index.numel() and not n and empty:
        raise IndexError(empty)
    if index.numel():
        host = _host(index).reshape(-1)
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements.")


def take(input, index):
    """``input`` read as 1-D at ``index`` (negative counts from the end); the result has index's
    shape. TakeBackward0 keeps self and index."""
    _need_tensor("take", input)
    _long_index("take", index)
    _flat_bounds(index, input.numel(), "take(): tried to take from an empty tensor")
    return apply(_O["take"], [input, index])


def take_along_dim(input, indices, dim=None):
    """``gather`` after broadcasting ``input`` and ``indices`` against each other off ``dim``
    (PyTorch's expand then gather; negative indices count from the end, so the index gather keeps
    is a new tensor); without ``dim``, a gather of the flattened input."""
    _need_tensor("take_along_dim", input)
    if not isinstance(indices, Tensor) or indices.dtype is not _dtype.int64:
        got = _short(indices.dtype) if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {got}")
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    d = _wrap_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    n = input.shape[d]
    indices = where(lt(indices, 0), add(indices, n), indices)   # negative ones count from the end
    own = list(input.shape)
    own[d] = indices.shape[d]
    idx = expand(indices, _infer_size(own, indices.shape))
    other = list(indices.shape)
    other[d] = input.shape[d]
    src = expand(input, _infer_size(other, input.shape))
    return gather(src, d, idx)


def _infer_size(a, b):
    """The broadcast of shapes ``a`` and ``b`` (PyTorch's ``infer_size`` and its words)."""
    msg = broadcast_mismatch(tuple(a), tuple(b))
    if msg:
        raise RuntimeError(msg)
    return tuple(broadcast_shapes(tuple(a), tuple(b)))


# ---- indexed writes ---------------------------------------------------------------------------------
def _index_put_key(input, indices):
    if isinstance(indices, Tensor) or not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 2) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for k, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(t).__name__}")
    width = builtins.sum(t.ndim if t.dtype is _dtype.bool_ else 1 for t in indices)
    if width > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {width})")
    parts, tensors = _normalize_index(input, tuple(indices))
    dim, k = 0, 0
    for p in parts:
        if p is _SLOT:
            t = tensors[k]
            k += 1
            if t.dtype is _dtype.int64 and t.numel():
                n = input.shape[dim]
                host = _host(t)
                bad = host[(host >= n) | (host < -n)]
                if bad.size:
                    raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {dim} with size {n}")
            dim += t.ndim if t.dtype is _dtype.bool_ else 1
        else:
            dim += 1
    if builtins.any(isinstance(p, int) for p in parts):   # a 0-d index tensor became an int
        _check_bounds(input, parts)
    return parts, tensors


def _index_put(input, indices, values, accumulate, inplace):
    _need_tensor("index_put", input)
    _need_tensor("index_put", values, "values", 3)
    parts, tensors = _index_put_key(input, indices)
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_short(input.dtype)} for the destination and {_short(values.dtype)} for the source.")
    if tensors:
        _setitem_shape_check(input, parts, tensors, values)
    return apply(_O["index_put"], [input, values] + tensors, {"template": parts, "accumulate": builtins.bool(accumulate)},
                 inplace=input if inplace else None)


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (a tuple of index tensors),
    or added there with ``accumulate=True``, where repeated indices add up. IndexPutBackward0 keeps
    the indices."""
    return _index_put(input, indices, values, accumulate, False)


def index_put_(input, indices, values, accumulate=False):
    return _index_put(input, indices, values, accumulate, True)


def _put(input, index, source, accumulate, inplace):
    _need_tensor("put", input)
    _need_tensor("put", source, "source", 3)
    _long_index("put_", index)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_short(input.dtype)} and source.dtype = {_short(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    _flat_bounds(index, input.numel(), "put_(): Tried to put elements into an empty tensor")
    return apply(_O["put"], [input, index, source], {"accumulate": builtins.bool(accumulate)},
                 inplace=input if inplace else None)


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written at the flat positions ``index`` (added with
    ``accumulate=True``). PutBackward0 keeps index (and source when it needs a gradient)."""
    return _put(input, index, source, accumulate, False)


def put_(self, index, source, accumulate=False):
    return _put(self, index, source, accumulate, True)


def _masked_scatter(input, mask, source, inplace):
    _need_tensor("masked_scatter", input)
    _need_tensor("masked_scatter", source, "source", 3)
    if not isinstance(mask, Tensor) or mask.dtype is not _dtype.bool_:
        got = _short(mask.dtype) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {got}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_short(input.dtype)} and {_short(source.dtype)}")
    if inplace:
        _broadcast_check(input, mask)
        shape = tuple(input.shape)
        if tuple(broadcast_shapes(shape, tuple(mask.shape))) != shape:
            raise RuntimeError(f"expand(torch.BoolTensor{{{_shape_str(mask.shape)}}}, size={_shape_str(shape)}): "
                               f"the number of sizes provided ({len(shape)}) must be greater or equal to the number "
                               f"of dimensions in the tensor ({mask.ndim})")
    else:
        _broadcast_check(input, mask)
        shape = tuple(broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
        if tuple(input.shape) != shape:
            input = expand(input, shape)
    count = int(np.count_nonzero(np.broadcast_to(_host(mask), shape)))
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(_O["masked_scatter"], [input, mask, source], {"count": count}, inplace=input if inplace else None)


def masked_scatter(input, mask, source):
    """A copy of ``input`` with source's first elements, in order, where ``mask`` is True.
    MaskedScatterBackward0 keeps the mask."""
    return _masked_scatter(input, mask, source, False)


def masked_scatter_(self, mask, source):
    return _masked_scatter(self, mask, source, True)


def _embed_check(src, region_shape):
    if tuple(src.shape) != tuple(region_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src.shape)}, slice size = {_shape_str(region_shape)}")


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written over ``input.select(dim, index)``
    (SelectScatterBackward0, keeps no tensors)."""
    _need_tensor("select_scatter", src, "src", 2)
    region = select(input, dim, index)
    _embed_check(src, region.shape)
    d = _wrap_dim(dim, input.ndim)
    index = int(index) % input.shape[d]
    return apply(_O["select_scatter"], [input, src],
                 {"key": (slice(None),) * d + (index,), "dim": d, "index": index})


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written over ``input[.., start:end:step, ..]`` along ``dim``
    (SliceScatterBackward0, keeps no tensors)."""
    _need_tensor("slice_scatter", src, "src", 2)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    lo, hi, _ = slice(start, end, step).indices(n)
    hi = builtins.max(hi, lo)
    key = (slice(None),) * d + (slice(lo, hi, step),)
    _embed_check(src, _getitem(input.detach(), key).shape)
    return apply(_O["slice_scatter"], [input, src], {"key": key, "dim": d, "start": start, "end": end,
                                                     "step": step})


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written over ``input.diagonal(offset, dim1, dim2)``
    (DiagonalScatterBackward0, keeps no tensors)."""
    _need_tensor("diagonal_scatter", src, "src", 2)
    a, b = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    _embed_check(src, diagonal(input.detach(), offset, a, b).shape)
    return apply(_O["diagonal_scatter"], [input, src], {"offset": int(offset), "dim1": a, "dim2": b})


# ---- index_reduce ---------------------------------------------------------------------------------------
def _index_reduce(input, dim, index, source, reduce, include_self, inplace):
    _need_tensor("index_reduce", input)
    _need_tensor("index_reduce", source, "source", 4)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _wrap_dim(dim, input.ndim)
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim if isinstance(index, Tensor) else 0} with type: "
                         f"{_short(index.dtype) if isinstance(index, Tensor) else type(index).__name__} and size: "
                         f"{list(index.shape) if isinstance(index, Tensor) else []}")
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_short(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_short(input.dtype)}) and source ({_short(source.dtype)}) must "
                           f"have the same scalar type")
    index = index.reshape(1) if index.ndim == 0 else index
    if input.ndim == 0 or source.ndim != input.ndim:
        raise RuntimeError("index_reduce_(): glassgrad needs self and source of one number of dims (1 or more)")
    if index.numel() != source.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    if builtins.any(source.shape[k] != input.shape[k] for k in range(input.ndim) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    n = input.shape[d]
    if index.numel():
        host = _host(index)
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {n}")
        if (host < 0).any():
            index = where(lt(index, 0), add(index, n), index)
    return apply(_O["index_reduce"], [input, index, source],
                 {"dim": d, "reduce": reduce, "include_self": builtins.bool(include_self)},
                 inplace=input if inplace else None)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Combine source's slices along ``dim`` into slices ``index`` of a copy of ``input`` with
    ``reduce`` (prod, mean, amax or amin; NOTE [ Scatter reduce ] in engine/functions/index_dim.py, whose
    formulas it shares). IndexReduceBackward0 keeps self, index, source and the result."""
    return _index_reduce(input, dim, index, source, reduce, include_self, False)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(self, dim, index, source, reduce, include_self, True)


__all__ = ["scatter", "take", "take_along_dim", "index_put", "index_put_", "put", "masked_scatter", "select_scatter",
           "slice_scatter", "diagonal_scatter", "index_reduce"]
