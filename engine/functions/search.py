"""torch.*'s searching and uniqueness: ``argwhere``, ``isin``, ``searchsorted``, ``bucketize`` (no graph),
``unique`` (Unique2Backward0, whose backward refuses, as PyTorch's) and ``unique_consecutive``.
"""
from __future__ import annotations

import numpy as np

from .. import return_types
from ..backend import dtypes as _dtype
from . import factories
from .factories import tensor
from .indexing import gather, nonzero
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .dims import row_for, wrap_dim as _wrap_dim
from .indexing import narrow
from .args import need_tensor as _need_tensor, host as _host


def _new(host, like, dtype=None):
    return tensor(host, dtype=dtype, device=like.device)


def _on(array, like):
    """A host array as a tensor on ``like``'s device (no graph)."""
    return factories.tensor(np.array(array), device=like.device)


def argwhere(input):
    """The indices of the non-zero elements, one row each (int64, as ``nonzero``)."""
    return nonzero(input)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is among ``test_elements`` (either may be a number)."""
    like = elements if isinstance(elements, Tensor) else test_elements
    e = _host(elements) if isinstance(elements, Tensor) else np.asarray(elements)
    t = _host(test_elements) if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _new(np.isin(e, t, invert=invert), like, _dtype.bool_)


def _search(boundaries, values, right, out_int32=False):
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
    dt = _dtype.int32 if out_int32 else _dtype.int64
    return _new(np.asarray(res, dtype=np.int32 if out_int32 else np.int64), boundaries, dt)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value the index where it would go in the sorted last dim of ``sorted_sequence``
    (the first such place, or the last with ``right=True`` / ``side="right"``); int64, or int32 with
    ``out_int32``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if sorter is not None:
        sorted_sequence = gather(sorted_sequence, -1, sorter)
    return _search(sorted_sequence, input, right, out_int32)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among the 1-D sorted ``boundaries`` (searchsorted with the roles swapped)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search(boundaries, input, right, out_int32)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive elements (or slices along ``dim``) squeezed to one, with the
    inverse (which run each element fell in) and the run lengths when asked. No gradient."""
    _need_tensor("unique_consecutive", input)
    a = _host(input)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.shape[0], dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse = (np.cumsum(starts) - 1).reshape(a.shape)
    else:
        d = _wrap_dim(dim, input.ndim)
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        starts = np.ones(moved.shape[0], dtype=bool)
        starts[1:] = np.any(moved[1:] != moved[:-1], axis=1)
        values = np.take(a, np.nonzero(starts)[0], axis=d)
        inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.nonzero(starts)[0], starts.shape[0]))
    out = factories.tensor(np.array(values), dtype=input.dtype, device=input.device)
    extra = []
    if return_inverse:
        extra.append(factories.tensor(np.array(inverse, dtype=np.int64), dtype=_dtype.int64,
                              device=input.device))
    if return_counts:
        extra.append(factories.tensor(counts.astype(np.int64), dtype=_dtype.int64, device=input.device))
    return (out, *extra) if extra else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values (rows along ``dim``) in ascending order; optionally each element's index into them
    and how often each occurs. Always sorted, as PyTorch's CPU kernel is; Unique2Backward0 refuses backward."""
    if dim is not None:
        dim = _wrap_dim(dim, input.ndim)
    vals, aux = apply(_O["unique"], [input], {"dim": dim}, return_aux=True)
    out = (vals,) + ((aux["inverse"],) if return_inverse else ()) + ((aux["counts"],) if return_counts else ())
    return out[0] if len(out) == 1 else out


def argsort(input, dim=-1, descending=False, stable=False):
    """The int64 indices that sort ``input`` along ``dim`` (ties keep their order); no gradient."""
    xp = input._storage.xp
    d = _wrap_dim(dim, input.ndim)
    if not input.ndim:      # NOTE [ A 0-d tensor's one dim ] 3: the one value is at index 0
        return Tensor._wrap(xp.zeros((), dtype=xp.int64))
    return Tensor._wrap(xp.astype(xp.argsort(input._data, axis=d, descending=descending, stable=True), xp.int64))


def sort(input, dim=-1, descending=False, stable=False):
    """Values (differentiable, through a gather) and int64 indices, as torch.sort."""
    d = _wrap_dim(dim, input.ndim)
    idx = argsort(input, d, descending)
    return return_types.sort(apply(row_for("take_sorted", input), [input, idx], {"dim": d}), idx)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices (TopkBackward0)."""
    if input.dtype is _dtype.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _wrap_dim(dim, input.ndim)
    if not 0 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError("selected index k out of range")
    idx = argsort(input, d, descending=largest)
    idx = narrow(idx, d, 0, k).contiguous() if input.ndim else idx
    return return_types.topk(apply(row_for("take_sorted", input), [input, idx], {"dim": d},
                                   node_name="TopkBackward0"), idx)


__all__ = ["argwhere", "isin", "searchsorted", "bucketize", "unique_consecutive", "unique", "argsort", "sort", "topk"]
