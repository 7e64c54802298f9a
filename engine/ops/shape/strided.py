"""Strided views: PyTorch's stride rule for ``view`` (``view_strides``, its computeStride) and
``as_strided`` with its AsStridedBackward0, the node a view also gets back once its base changed in
place (NOTE [ A view's grad_fn after an in-place op ] in view_history.py).

NOTE [ Strided views ]
1. ``view`` copies nothing, so a new shape must be expressible over the old strides. Walking the
   old dims from the last, a "chunk" is a run of dims laid out contiguously (dim d's stride is
   dim d+1's stride times dim d+1's size; size-1 dims are skipped). Each chunk must be covered
   exactly by a run of new dims, which get the chunk's base stride times the sizes after them.
   ``view_strides`` is PyTorch's computeStride: the new strides, or None where the view is
   impossible (``view`` raises, ``reshape`` copies).
2. A tensor of zero elements can take any shape of zero elements (contiguous strides, or its
   own strides for its own shape).
3. ``as_strided(size, stride, storage_offset)`` reads the storage directly: element i of the
   result is at storage position ``storage_offset + sum(i_k * stride_k)``.
4. AsStridedBackward0 adds each gradient element at its storage position, then reads the
   input's positions back out (positions the input does not cover get nothing). When several
   input elements share one position (an ``expand``ed input), each gets the sum divided by
   their count, as PyTorch's as_strided backward.
"""
from __future__ import annotations

import math

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op as _op
from ...core.tensor import Tensor


def view_strides(shape, strides, new_shape):
    """The strides of ``new_shape`` viewed over (``shape``, ``strides``), or None (NOTE [ Strided views ] 1-2)."""
    if math.prod(shape) == 0 or not shape:
        if tuple(shape) == tuple(new_shape):
            return tuple(strides)
        out, acc = [], 1
        for n in reversed(new_shape):
            out.append(acc)
            acc *= max(n, 1)
        return tuple(reversed(out))
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = strides[-1]                 # the stride of the chunk's last dim
    chunk_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != chunk_numel * base):    # a chunk ends at d
            while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                return None
            if d > 0:
                base, chunk_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new) if view_d == -1 else None


def positions(shape, strides, offset):
    """int64 array of ``shape``: each element's storage position (NOTE [ Strided views ] 3)."""
    pos = np.full((), offset, dtype=np.int64)
    for k, (n, st) in enumerate(zip(shape, strides)):
        pos = pos + np.arange(n, dtype=np.int64).reshape((n,) + (1,) * (len(shape) - k - 1)) * st
    return np.broadcast_to(pos, tuple(shape))


class _Window:
    """What ``np.asarray`` builds a strided window of memory from (its ``base`` keeps the memory alive)."""

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


def _as_strided_fwd(xp, a, size, stride, storage_offset, self_geometry):
    rel = storage_offset - self_geometry[2]      # from the input's first element, in elements
    size, stride = tuple(size), tuple(stride)
    if _backend._is_numpy(xp):
        item = a.dtype.itemsize
        ptr, readonly = a.__array_interface__["data"]
        return np.asarray(_Window({"shape": size, "typestr": a.dtype.str, "data": (ptr + rel * item, readonly),
                                   "strides": tuple(s * item for s in stride), "version": 3}, a))
    if _backend._is_cupy(xp):
        import cupy
        item = a.dtype.itemsize
        return cupy.ndarray(size, a.dtype, a.data + rel * item, tuple(s * item for s in stride))
    # no strided views on this backend: a gather from the input, read as contiguous (a copy)
    flat = xp.reshape(a, (-1,))
    idx = _backend.from_numpy(xp, np.ascontiguousarray(positions(size, stride, rel)))
    return xp.reshape(xp.take(flat, xp.reshape(idx, (-1,))), size)


def _int_array(F, like, a):
    """``a`` (a NumPy int64 array) in F's currency, on ``like``'s device."""
    if F.differentiable:
        return Tensor._wrap(_backend.from_numpy(like._storage.xp, np.ascontiguousarray(a)))
    return _backend.from_numpy(F.xp, np.ascontiguousarray(a))


def _as_strided_bwd(F, g, s):
    shape, strides, offset = s.self_geometry
    out_pos = positions(s.size, s.stride, s.storage_offset)
    in_pos = positions(shape, strides, offset)
    both = [p for p in (out_pos, in_pos) if p.size]
    lo = min((int(p.min()) for p in both), default=0)
    n = max((int(p.max()) for p in both), default=lo - 1) + 1 - lo
    mem = F.scatter_add((n,), (_int_array(F, g, out_pos - lo),), g, g)
    grad = F.index(mem, (_int_array(F, g, in_pos - lo),))
    counts = np.bincount((in_pos - lo).reshape(-1), minlength=n)
    if in_pos.size and counts.max() > 1:      # NOTE [ Strided views ] 4: elements that share memory
        share = (1.0 / counts[in_pos - lo]).astype(F.dtype(g).name)
        share = _backend.from_numpy(F.xp if not F.differentiable else g._storage.xp, np.ascontiguousarray(share))
        grad = grad * (Tensor._wrap(share) if F.differentiable else share)
    return (grad,)


AS_STRIDED = _op("as_strided", "AsStridedBackward0", ("self",), _as_strided_fwd, _as_strided_bwd,
                 promote=False, view=True)


def geometry(t) -> tuple:
    """``(shape, strides, storage_offset)`` of ``t``."""
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()
