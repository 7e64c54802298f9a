"""Shape rows that read or write at index tensors: gather, sort's values (take_sorted), index_select,
take, masked_select; index_put (and its add form), put, masked_fill, masked_scatter, the index fills,
scatter (NOTE [ Scatter ] in engine/functions/index.py), index_reduce; fill and copy; unique.

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/index.py.
"""
from __future__ import annotations

import functools

import numpy as np

from ...core.fns import ArrayFns
from ...core.primitives import _rebuild_index
from .index_dim import (
    _Iota,
    _scatter_reduce_bwd,
    _scatter_reduce_fwd,
    _src_grad,
    _where,
)
from .views import _contiguous, _full, op


# ---- scatter (NOTE [ Scatter ]) -----------------------------------------------------------------------
def _scatter_fwd(xp, a, index, src=None, dim=0, value=None):
    from ...backend.gaps import index_fill
    nd = len(a.shape)
    where = _where(_Iota(xp), index, dim, nd)
    if src is not None:
        vals = src[tuple(slice(0, n) for n in index.shape)]
    else:
        vals = xp.asarray(value, dtype=a.dtype)
    return index_fill(xp, xp.asarray(a, copy=True), where, vals)


def _scatter_src_bwd(F, g, s):
    nd = len(s.shapes[0])
    where = _where(F, s.index, s.dim, nd)
    gself = F.fill_index(g, where, 0.0) if s.needs[0] else None
    gsrc = None
    if s.needs[2]:
        gsrc = _src_grad(F, "ScatterBackward0", F.index(g, where), tuple(F.shape(s.index)), tuple(s.shapes[2]))
    return gself, None, gsrc


op("scatter", "ScatterBackward0", ("self", "index", "src"), _scatter_fwd, _scatter_src_bwd, save={"index": ()},
   promote=False, nondiff=("index",))
op("scatter_value", "ScatterBackward1", ("self", "index"), _scatter_fwd,
   lambda F, g, s: (F.fill_index(g, _where(F, s.index, s.dim, len(s.shapes[0])), 0.0), None),
   save={"index": ()}, promote=False, nondiff=("index",))


def _gather_fwd(xp, a, index, dim):
    part = tuple(slice(None) if k == dim else slice(0, index.shape[k]) for k in range(len(a.shape)))
    return xp.take_along_axis(a[part], index, axis=dim)   # PyTorch lets index be smaller off ``dim``


def _scatter_back(F, g, shape, idx, dim):
    """Scatter-add the gradient back where each element was read from (repeats add up)."""
    nd, ishape = len(shape), F.shape(idx)
    where = tuple(idx if k == dim else F.iota(ishape[k], k, nd, g) for k in range(nd))
    return F.scatter_add(shape, where, g, g)


# PyTorch's GatherBackward0 keeps self too (for its sparse-gradient option), so glassgrad does
op("gather", "GatherBackward0", ("self", "index"), _gather_fwd,
   lambda F, g, s: (_scatter_back(F, g, s.shapes[0], s.index, s.dim), None),
   save={"self": (), "index": ()}, promote=False, nondiff=("index",))
# sort and topk read their values the same way but keep only the indices (SortBackward0, TopkBackward0)
op("take_sorted", "SortBackward0", ("self", "indices"), _gather_fwd,
   lambda F, g, s: (_scatter_back(F, g, s.shapes[0], s.indices, s.dim), None),
   save={"indices": ()}, promote=False, nondiff=("indices",))


def _index_select_fwd(xp, a, index, dim):
    return xp.take(a, index, axis=dim)


def _index_select_bwd(F, g, s):
    d = s.dim
    return (F.scatter_add(s.shapes[0], (slice(None),) * d + (s.index,), g, g), None)


op("index_select_dim", "IndexSelectBackward0", ("self", "index"), _index_select_fwd, _index_select_bwd,
   save={"index": ()}, promote=False, nondiff=("index",))


# ---- take: the input read as 1-D at ``index`` (negative indices count from the end) -------------------
def _take_fwd(xp, a, index):
    from ...backend.gaps import gather
    flat = gather(xp, xp.reshape(a, (-1,)), (xp.reshape(index, (-1,)),))
    return xp.reshape(flat, tuple(index.shape))


def _take_bwd(F, g, s):
    shape = s.shapes[0]
    n = 1
    for k in shape:
        n *= k
    flat = F.scatter_add((n,), (F.reshape(s.index, (-1,)),), F.reshape(g, (-1,)), g)
    return F.reshape(flat, shape), None


op("take", "TakeBackward0", ("self", "index"), _take_fwd, _take_bwd, save={"self": (), "index": ()},
   promote=False, nondiff=("index",))


# ---- index_put: values written (or added, accumulate=True) at an advanced index ----------------------
def _index_put_fwd(xp, a, values, *index_arrays, template, accumulate):
    from ...backend.gaps import index_fill, index_put_add
    from ...core.fns import _is_basic
    out = _contiguous(xp, a)
    idx = _rebuild_index(template, index_arrays)
    if values.dtype != a.dtype:
        values = xp.astype(values, a.dtype)
    if _is_basic(idx):
        key = _full(idx)
        if accumulate:
            out[key] = out[key] + values
        else:
            out[key] = values
        return out
    if accumulate:   # duplicates add up
        target = xp.broadcast_to(values, tuple(gather_shape(xp, a, idx)))
        return index_put_add(xp, out, idx, target)
    return index_fill(xp, out, idx, values)


def gather_shape(xp, a, idx):
    """The shape ``a[idx]`` has, from a zero-stride stand-in (no copy of ``a``)."""
    import numpy as np

    from ...backend.gaps import to_numpy
    proxy = np.broadcast_to(np.empty((), dtype=np.bool_), tuple(a.shape))
    return proxy[tuple(to_numpy(xp, i) if hasattr(i, "shape") else i for i in idx)].shape


def _index_put_bwd(F, g, s):
    idx = _rebuild_index(s.template, s.indices)
    gself = None
    if s.needs[0]:
        gself = g if s.accumulate else F.fill_index(g, idx, 0.0)
    gval = F.index(g, idx) if s.needs[1] else None
    return (gself, gval) + (None,) * len(s.indices)


op("index_put", "IndexPutBackward0", ("self", "values", "*indices"), _index_put_fwd, _index_put_bwd,
   save={"indices": ()}, promote=False, nondiff=("indices",))


# ---- put: source written (or added) into the input read as 1-D ------------------------------------------
def _put_fwd(xp, a, index, source, accumulate=False):
    from ...backend.gaps import index_fill, index_put_add
    flat = xp.reshape(_contiguous(xp, a), (-1,))
    idx = (xp.reshape(index, (-1,)),)
    src = xp.reshape(source, (-1,))
    flat = index_put_add(xp, flat, idx, src) if accumulate else index_fill(xp, flat, idx, src)
    return xp.reshape(flat, tuple(a.shape))


def _put_bwd(F, g, s):
    idx = (F.reshape(s.index, (-1,)),)
    gself = gsrc = None
    if s.needs[0]:
        gself = g if s.accumulate else F.reshape(F.fill_index(F.reshape(g, (-1,)), idx, 0.0), s.shapes[0])
    if s.needs[2]:
        gsrc = F.reshape(F.index(F.reshape(g, (-1,)), idx), s.shapes[2])
    return gself, None, gsrc


op("put", "PutBackward0", ("self", "index", "source"), _put_fwd, _put_bwd,
   save={"index": (), "source": ("source",)}, promote=False, nondiff=("index",))


# ---- masked_scatter: source's first elements, in order, where the mask is True ------------------------
def _masked_scatter_fwd(xp, a, mask, source, count):
    from ...backend.gaps import index_fill
    shape = tuple(a.shape)
    out = xp.reshape(_contiguous(xp, a), (-1,))
    flat_mask = xp.reshape(xp.broadcast_to(mask, shape), (-1,))
    vals = xp.reshape(source, (-1,))[:count]
    return xp.reshape(index_fill(xp, out, (flat_mask,), vals), shape)


def _masked_scatter_bwd(F, g, s):
    shape = F.shape(g)
    mask = s.mask if F.shape(s.mask) == shape else F.broadcast_to(s.mask, shape)
    gself = F.where(mask, 0.0, g) if s.needs[0] else None
    gsrc = None
    if s.needs[2]:
        picked = F.index(g, (mask,))                       # row-major order: source's first elements
        n = 1
        for k in s.shapes[2]:
            n *= k
        gsrc = F.reshape(F.scatter_add((n,), (slice(0, s.count),), picked, picked), s.shapes[2])
    return gself, None, gsrc


op("masked_scatter", "MaskedScatterBackward0", ("self", "mask", "source"), _masked_scatter_fwd, _masked_scatter_bwd,
   save={"mask": ()}, promote=False, nondiff=("mask",))


def _index_put_add_fwd(xp, values, *index_arrays, template, shape):
    return ArrayFns(xp).scatter_add(shape, _rebuild_index(template, index_arrays), values, values)


op("index_put_add", "IndexPutBackward0", ("values", "*indices"), _index_put_add_fwd,
   lambda F, g, s: (F.index(g, _rebuild_index(s.template, s.indices)),) + (None,) * len(s.indices),
   save={"indices": ()}, promote=False, nondiff=("indices",))


def _fill_index_fwd(xp, a, *index_arrays, template, value):
    return ArrayFns(xp).fill_index(a, _rebuild_index(template, index_arrays), value)


op("fill_index", "IndexFillBackward0", ("self", "*indices"), _fill_index_fwd,
   lambda F, g, s: (F.fill_index(g, _rebuild_index(s.template, s.indices), 0.0),) + (None,) * len(s.indices),
   save={"indices": ()}, promote=False, nondiff=("indices",))


op("masked_fill", "MaskedFillBackward0", ("self", "mask"),
   lambda xp, a, mask, value: xp.where(mask, xp.asarray(value, dtype=a.dtype), a),
   lambda F, g, s: (F.where(s.mask, 0.0, g), None), save={"mask": ()}, promote=False, nondiff=("mask",))


# in-place helpers that carry no gradient to their input
op("fill", "FillBackward0", ("self",), lambda xp, a, value: xp.full(a.shape, value, dtype=a.dtype),
   lambda F, g, s: (g * 0.0,), promote=False)  # a zero gradient, not none: the input still gets a .grad
op("copy", "CopyBackwards", ("self", "src"), lambda xp, a, b: xp.astype(xp.broadcast_to(b, a.shape), a.dtype),
   lambda F, g, s: (F.zeros(F.shape(g), g) if s.needs[0] else None, g), promote=False)   # self's values are gone


# ---- index_reduce: source's slices combined into slices ``index`` along ``dim`` (prod/mean/amax/amin) ------
def _index_full(ax, index, dim, shape):
    """The 1-D ``index`` laid along ``dim`` and broadcast to ``shape`` (source's): a scatter index."""
    lay = [1] * len(shape)
    lay[dim] = ax.shape(index)[0]
    return ax.broadcast_to(ax.reshape(index, tuple(lay)), tuple(shape))


class _Shapes:
    def __init__(self, xp):
        self.xp = xp
        self.reshape, self.broadcast_to = xp.reshape, xp.broadcast_to

    def shape(self, x):
        return tuple(x.shape)


def _index_reduce_fwd(xp, a, index, source, dim, reduce, include_self=True):
    full = _index_full(_Shapes(xp), index, dim, tuple(source.shape))
    return _scatter_reduce_fwd(xp, a, full, source, dim, reduce, include_self)


class _AsScatter:
    """index_reduce's saved values as scatter_reduce's formula reads them (index broadcast, src)."""

    def __init__(self, F, s):
        self._s = s
        self.index = _index_full(F, s.index, s.dim, s.shapes[2])
        self.src = s.source

    def __getattr__(self, name):
        return getattr(self._s, name)


def _index_reduce_bwd(F, g, s):
    return _scatter_reduce_bwd(F, g, _AsScatter(F, s))


op("index_reduce", "IndexReduceBackward0", ("self", "index", "source"), _index_reduce_fwd, _index_reduce_bwd,
   save={"self": (), "index": (), "source": (), "result": ()}, promote=False, nondiff=("index",))


# ---- masked_select: MaskedSelectBackward0 keeps ``self`` and the mask, as PyTorch's ---------------
def _masked_select_fwd(xp, a, mask):
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(mask.shape)))
    from ...backend.gaps import gather
    return gather(xp, xp.broadcast_to(a, shape), (xp.broadcast_to(mask, shape),))


def _masked_select_bwd(F, g, s):
    shape = tuple(np.broadcast_shapes(tuple(s.shapes[0]), tuple(s.shapes[1])))
    mask = F.broadcast_to(s.mask, shape)
    return F.scatter_add(shape, (mask,), g, g), None     # summed back to self's shape by the node


op("masked_select", "MaskedSelectBackward0", ("self", "mask"), _masked_select_fwd, _masked_select_bwd,
   save={"self": (), "mask": ()}, promote=False, nondiff=("mask",))


# ---- unique ------------------------------------------------------------------------------------------
def _unique_fwd(xp, a, dim=None):
    """Sorted distinct values (rows along ``dim``), with each element's inverse index and the counts.
    The array API has no ``unique`` with inverse and counts along an axis: NumPy computes it on the host."""
    from ...backend import gaps as _backend
    host = _backend.to_numpy(xp, a)
    vals, inv, counts = np.unique(host, return_inverse=True, return_counts=True, axis=dim)
    inv = inv.reshape(host.shape if dim is None else (host.shape[dim],))
    to = functools.partial(_backend.from_numpy, xp)
    return to(vals), {"inverse": to(inv.astype(np.int64)), "counts": to(counts.astype(np.int64))}


def _unique_bwd(F, g, s):
    raise RuntimeError("the derivative for '_unique2' is not implemented.")


op("unique", "Unique2Backward0", ("self",), _unique_fwd, _unique_bwd, aux=("inverse", "counts"), promote=False)
