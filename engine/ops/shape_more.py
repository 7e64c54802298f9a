"""Op-table rows for the shape and index functions of engine/_shape_fns.py: unfold (a strided view),
narrow_copy, take, index_put, put, masked_scatter, the ``*_scatter`` family, diag_embed over any
dims, block_diag and index_reduce. Each row keeps what PyTorch's node keeps (its ``_saved_*``
tensors); everything else in that module is composed from existing ops and views.
"""
from __future__ import annotations

import numpy as np

from ..derivatives import OPS, _clone_fwd, _inverse, _rebuild_index
from ..derivatives import op as _op


def op(name, *args, **kw):
    """A new row; a name another family already uses would replace its row, so it is refused."""
    if name in OPS:
        raise RuntimeError(f"op table: a row named {name!r} exists already")
    return _op(name, *args, **kw)


def _contiguous(xp, a):
    return _clone_fwd(xp, a)


def _full(key):
    from ..core.fns import _full_index
    return _full_index(tuple(key))


# ---- unfold: windows of ``size`` every ``step`` along ``dim``, as a new last dim (a view) ------------
def _windows(ax, n_win, size, step, like):
    """int64 (n_win, size): the source position of window element [w, j] along the unfolded dim."""
    return ax.iota(n_win, 0, 2, like) * step + ax.iota(size, 1, 2, like)


class _AxIota:
    def __init__(self, xp):
        self.xp = xp

    def iota(self, n, axis, ndim, like):
        shape = [1] * ndim
        shape[axis] = n
        return self.xp.reshape(self.xp.arange(n, dtype=self.xp.int64), tuple(shape))


def _unfold_fwd(xp, a, dimension, size, step):
    """A view on NumPy and CuPy (as_strided over the same buffer, the dim's stride times ``step`` for
    the windows and the dim's own stride for the new last dim); elsewhere (array_api_strict, which
    has no strided views) a gather, so writes through it do not reach the base there."""
    from ..backend import gaps as _backend
    shape = tuple(a.shape)
    n_win = (shape[dimension] - size) // step + 1
    out_shape = shape[:dimension] + (n_win,) + shape[dimension + 1:] + (size,)
    if _backend._is_numpy(xp) or _backend._is_cupy(xp):
        if _backend._is_numpy(xp):
            from numpy.lib.stride_tricks import as_strided
        else:
            from cupy.lib.stride_tricks import as_strided
        st = tuple(a.strides)
        strides = st[:dimension] + (st[dimension] * step,) + st[dimension + 1:] + (st[dimension],)
        return as_strided(a, out_shape, strides)
    from ..backend.gaps import gather
    picked = gather(xp, a, (slice(None),) * dimension + (_windows(_AxIota(xp), n_win, size, step, a),))
    nd = len(shape)   # picked: pre + (n_win, size) + post; the window element goes last
    perm = tuple(range(dimension + 1)) + tuple(range(dimension + 2, nd + 1)) + (dimension + 1,)
    return xp.permute_dims(picked, perm)


def _unfold_bwd(F, g, s):
    """Each window element's gradient added back at its source position (overlaps add up)."""
    shape, d = s.shapes[0], s.dimension
    nd = len(shape)
    n_win = F.shape(g)[d]
    perm = tuple(range(d + 1)) + (nd,) + tuple(range(d + 1, nd))   # pre + (n_win, size) + post
    idx = (slice(None),) * d + (_windows(F, n_win, s.size, s.step, g),)
    return (F.scatter_add(shape, idx, F.permute(g, perm), g),)


op("unfold_windows", "UnfoldBackward0", ("self",), _unfold_fwd, _unfold_bwd, promote=False, view=True)


# ---- narrow_copy: a slice, copied ----------------------------------------------------------------------
def _narrow_key(dim, start, length):
    return (slice(None),) * dim + (slice(start, start + length),)


op("narrow_copy", "NarrowCopyBackward0", ("self",),
   lambda xp, a, dim, start, length: _contiguous(xp, a[_full(_narrow_key(dim, start, length))]),
   lambda F, g, s: (F.scatter_add(s.shapes[0], _narrow_key(s.dim, s.start, s.length), g, g),), promote=False)


# ---- take: the input read as 1-D at ``index`` (negative indices count from the end) -------------------
def _take_fwd(xp, a, index):
    from ..backend.gaps import gather
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
    from ..backend.gaps import index_fill, index_put_add
    from ..core.fns import _is_basic
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

    from ..backend.gaps import to_numpy
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
    from ..backend.gaps import index_fill, index_put_add
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
    from ..backend.gaps import index_fill
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


# ---- select_scatter / slice_scatter: src written over one basic-index region of a copy ------------------
def _embed_fwd(xp, a, src, key, **_):
    out = _contiguous(xp, a)
    out[_full(key)] = src if src.dtype == a.dtype else xp.astype(src, a.dtype)
    return out


def _embed_bwd(F, g, s):
    return (F.fill_index(g, s.key, 0.0) if s.needs[0] else None,
            F.index(g, s.key) if s.needs[1] else None)


op("select_scatter", "SelectScatterBackward0", ("self", "src"), _embed_fwd, _embed_bwd, promote=False)
op("slice_scatter", "SliceScatterBackward0", ("self", "src"), _embed_fwd, _embed_bwd, promote=False)


# ---- diagonal_scatter and diag_embed: a diagonal over dims (dim1, dim2) -----------------------------------
def _diag_where(shape, offset, dim1, dim2, ax, like):
    """(perm moving dim1, dim2 last; the advanced index of the diagonal in the permuted layout)."""
    from .math_ops import _diag_positions
    r0, c0, n = _diag_positions(shape[dim1], shape[dim2], offset)
    perm = tuple(k for k in range(len(shape)) if k not in (dim1, dim2)) + (dim1, dim2)
    ii = ax.iota(n, 0, 1, like)
    return perm, (Ellipsis, ii + r0, ii + c0)


def _diagonal_scatter_fwd(xp, a, src, offset=0, dim1=0, dim2=1):
    from ..backend.gaps import index_fill
    perm, where = _diag_where(tuple(a.shape), offset, dim1, dim2, _AxIota(xp), a)
    moved = _contiguous(xp, xp.permute_dims(a, perm))
    moved = index_fill(xp, moved, where, src if src.dtype == a.dtype else xp.astype(src, a.dtype))
    return _contiguous(xp, xp.permute_dims(moved, _inverse(perm)))


def _diagonal_scatter_bwd(F, g, s):
    perm, where = _diag_where(s.shapes[0], s.offset, s.dim1, s.dim2, F, g)
    moved = F.permute(g, perm)
    gself = F.permute(F.fill_index(moved, where, 0.0), _inverse(perm)) if s.needs[0] else None
    return gself, (F.index(moved, where) if s.needs[1] else None)


op("diagonal_scatter", "DiagonalScatterBackward0", ("self", "src"), _diagonal_scatter_fwd, _diagonal_scatter_bwd,
   promote=False)


def _diag_embed_fwd(xp, a, offset, dim1, dim2):
    """The last dim of ``a`` laid on the diagonal ``offset`` of new dims ``dim1``, ``dim2``."""
    from ..backend.gaps import index_fill
    n = a.shape[-1]
    m = n + abs(offset)
    shape = list(a.shape[:-1])
    out_shape = [0] * (len(shape) + 2)
    rest = [k for k in range(len(out_shape)) if k not in (dim1, dim2)]
    for k, size in zip(rest, shape):
        out_shape[k] = size
    out_shape[dim1] = out_shape[dim2] = m
    perm, where = _diag_where(tuple(out_shape), offset, dim1, dim2, _AxIota(xp), a)
    z = index_fill(xp, xp.zeros(tuple(shape) + (m, m), dtype=a.dtype), where, a)
    return _contiguous(xp, xp.permute_dims(z, _inverse(perm)))


def _diag_embed_bwd(F, g, s):
    perm, where = _diag_where(F.shape(g), s.offset, s.dim1, s.dim2, F, g)
    return (F.index(F.permute(g, perm), where),)


op("diag_embed_dims", "DiagEmbedBackward0", ("self",), _diag_embed_fwd, _diag_embed_bwd, promote=False)


# ---- block_diag: each input (as a matrix) on the diagonal of a zero matrix -------------------------------
def _as_matrix_shape(shape):
    shape = tuple(shape)
    return (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape


def _block_diag_fwd(xp, *arrays):
    mats = [xp.reshape(a, _as_matrix_shape(a.shape)) for a in arrays]
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = xp.zeros((rows, cols), dtype=mats[0].dtype)
    r = c = 0
    for m in mats:
        h, w = m.shape
        if h and w:
            out[r:r + h, c:c + w] = m
        r, c = r + h, c + w
    return out


def _block_diag_bwd(F, g, s):
    out, r, c = [], 0, 0
    for shape in s.shapes:
        h, w = _as_matrix_shape(shape)
        out.append(F.reshape(F.index(g, (slice(r, r + h), slice(c, c + w))), tuple(shape)))
        r, c = r + h, c + w
    return tuple(out)


op("block_diag", "BlockDiagBackward0", ("*tensors",), _block_diag_fwd, _block_diag_bwd)


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
    from .index_ops import _scatter_reduce_fwd
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
    from .index_ops import _scatter_reduce_bwd
    return _scatter_reduce_bwd(F, g, _AsScatter(F, s))


op("index_reduce", "IndexReduceBackward0", ("self", "index", "source"), _index_reduce_fwd, _index_reduce_bwd,
   save={"self": (), "index": (), "source": (), "result": ()}, promote=False, nondiff=("index",))


# ---- flip: one FlipBackward0 that keeps only ``dims`` (a new, contiguous array) ------------------
def _flip_fwd(xp, a, dims, axes):
    return _clone_fwd(xp, xp.flip(a, axis=axes)) if axes else _clone_fwd(xp, a)


op("flip", "FlipBackward0", ("self",),
   _flip_fwd,
   lambda F, g, s: (F.flip(g, s.axes),))


# ---- masked_select: MaskedSelectBackward0 keeps ``self`` and the mask, as PyTorch's ---------------
def _masked_select_fwd(xp, a, mask):
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(mask.shape)))
    from ..backend.gaps import gather
    return gather(xp, xp.broadcast_to(a, shape), (xp.broadcast_to(mask, shape),))


def _masked_select_bwd(F, g, s):
    shape = tuple(np.broadcast_shapes(tuple(s.shapes[0]), tuple(s.shapes[1])))
    mask = F.broadcast_to(s.mask, shape)
    return F.scatter_add(shape, (mask,), g, g), None     # summed back to self's shape by the node


op("masked_select", "MaskedSelectBackward0", ("self", "mask"), _masked_select_fwd, _masked_select_bwd,
   save={"self": (), "mask": ()}, promote=False, nondiff=("mask",))
