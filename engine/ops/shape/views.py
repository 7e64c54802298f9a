"""Shape rows that rearrange or copy: split/chunk (SplitBackward0), split with sizes, unbind, unfold
(a strided view), narrow_copy, flip, roll, rot90, repeat, tril/triu, and the diagonals: diagonal,
diagonal_copy, diag_embed and trace.

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/shape.py.
"""
from __future__ import annotations

from ...core.primitives import _clone_fwd, _inverse
from ...core.table import OPS
from ...core.table import op as _op


def op(name, *args, **kw):
    """A new row; a name another family already uses would replace its row, so it is refused."""
    if name in OPS:
        raise RuntimeError(f"op table: a row named {name!r} exists already")
    return _op(name, *args, **kw)


def _contiguous(xp, a):
    return _clone_fwd(xp, a)


def _full(key):
    from ...core.fns import _full_index
    return _full_index(tuple(key))


# ---- split / chunk / unbind: one node with one view output per part ---------------------------------
# Run by ``apply_multi(..., views=True)`` (NOTE [ Several outputs ] 4 in core/dispatch.py). The nodes keep
# no tensor, only PyTorch's attributes (``_saved_dim``, ``_saved_split_size``, ``_saved_split_sizes``,
# ``_saved_self_sym_sizes``); backward concatenates the parts' gradients, zeros standing in for a part
# that got none.
def split_sizes(n: int, split_size: int) -> list:
    """The part lengths ``split(split_size)`` gives along a dim of length ``n``."""
    sizes = [split_size] * (n // split_size) if split_size else []
    if not sizes or n % split_size:
        sizes.append(n - sum(sizes))
    return sizes


def _parts(xp, a, dim, sizes):
    out, start = [], 0
    lead = (slice(None),) * dim
    for n in sizes:
        out.append(a[lead + (slice(start, start + n), Ellipsis)])
        start += n
    return tuple(out)


def _cat_parts(F, g, shape, dim, sizes, squeezed=False):
    """The input's gradient: each part's gradient (zeros where none came) joined along ``dim``."""
    like = next(x for x in g if x is not None)
    parts = []
    for k, n in enumerate(sizes):
        gk = g[k]
        if gk is None:
            sh = list(shape)
            sh[dim] = n
            gk = F.zeros(sh, like)
        elif squeezed:
            gk = F.expand_dims(gk, axis=dim)
        parts.append(gk)
    return (F.concat(parts, dim),)


op("split", "SplitBackward0", ("self",),
   lambda xp, a, split_size, dim, self_sym_sizes: _parts(xp, a, dim, split_sizes(self_sym_sizes[dim], split_size)),
   lambda F, g, s: _cat_parts(F, g, s.self_sym_sizes, s.dim, split_sizes(s.self_sym_sizes[s.dim], s.split_size)),
   promote=False, aux=("multi",))
op("split_with_sizes", "SplitWithSizesBackward0", ("self",),
   lambda xp, a, split_sizes, dim, self_sym_sizes: _parts(xp, a, dim, split_sizes),
   lambda F, g, s: _cat_parts(F, g, s.self_sym_sizes, s.dim, s.split_sizes),
   promote=False, aux=("multi",))
op("unbind", "UnbindBackward0", ("self",),
   lambda xp, a, dim: tuple(a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim])),
   lambda F, g, s: _cat_parts(F, g, s.shapes[0], s.dim, [1] * s.shapes[0][s.dim], squeezed=True),
   promote=False, aux=("multi",))


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
    from ...backend import gaps as _backend
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
    from ...backend.gaps import gather
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


# ---- flip: one FlipBackward0 that keeps only ``dims`` (a new, contiguous array) ------------------
def _flip_fwd(xp, a, dims, axes):
    return _clone_fwd(xp, xp.flip(a, axis=axes)) if axes else _clone_fwd(xp, a)


op("flip", "FlipBackward0", ("self",),
   _flip_fwd,
   lambda F, g, s: (F.flip(g, s.axes),))


# ---- roll --------------------------------------------------------------------------------------------
def _roll_fwd(xp, a, shifts, dims):
    if not dims:   # no dims: roll the flattened tensor, as PyTorch
        return xp.reshape(xp.roll(xp.reshape(a, (-1,)), shift=shifts[0]), tuple(a.shape))
    return xp.roll(a, shift=tuple(shifts), axis=tuple(dims))


def _roll_bwd(F, g, s):
    back = tuple(-k for k in s.shifts)
    if F.differentiable:
        E = F.E   # the torch.* namespace (core/fns.py rule 5)
        return (E.roll(g, back, s.dims or None),)
    return (_roll_fwd(F.xp, g, back, s.dims),)


op("roll", "RollBackward0", ("self",), _roll_fwd, _roll_bwd, promote=False)


def _rot90_fwd(xp, a, k, dims):
    d0, d1 = dims
    k %= 4
    if k == 0:
        return _clone_fwd(xp, a)
    perm = list(range(len(a.shape)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if k == 2:
        return _clone_fwd(xp, xp.flip(a, axis=(d0, d1)))
    flipped = _clone_fwd(xp, xp.flip(a, axis=d1 if k == 1 else d0))
    return xp.permute_dims(flipped, tuple(perm))   # transposed, as PyTorch's (a strided result)


def _rot90_bwd(F, g, s):
    if F.differentiable:
        rot90 = F.E.rot90   # torch.rot90, recorded
        return (rot90(g, -s.k, s.dims),)
    return (_rot90_fwd(F.xp, g, -s.k, s.dims),)


op("rot90", "Rot90Backward0", ("self",), _rot90_fwd, _rot90_bwd, promote=False)


def _repeat_fwd(xp, a, repeats):
    a = xp.reshape(a, (1,) * (len(repeats) - len(a.shape)) + tuple(a.shape))
    return xp.tile(a, tuple(repeats))


def _repeat_bwd(F, g, s):
    shape, reps = s.shapes[0], s.repeats
    padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
    split = tuple(v for r, n in zip(reps, padded) for v in (r, n))   # each dim as (copies, size)
    g = F.sum(F.reshape(g, split), axis=tuple(range(0, 2 * len(reps), 2)))
    return (F.reshape(g, shape),)


op("repeat", "RepeatBackward0", ("self",), _repeat_fwd, _repeat_bwd, promote=False)


def _tri_fwd(lower):
    def fwd(xp, a, diagonal=0):
        n, m = a.shape[-2], a.shape[-1]
        d = xp.reshape(xp.arange(m, dtype=xp.int64), (1, m)) - xp.reshape(xp.arange(n, dtype=xp.int64), (n, 1))
        return xp.where(d <= diagonal if lower else d >= diagonal, a, xp.zeros_like(a))
    return fwd


def _tri_bwd(lower):
    def bwd(F, g, s):
        nd = len(s.shapes[0])
        d = F.iota(s.shapes[0][-1], nd - 1, nd, g) - F.iota(s.shapes[0][-2], nd - 2, nd, g)
        return (F.where(F.le(d, s.diagonal) if lower else F.ge(d, s.diagonal), g, 0.0),)
    return bwd


op("tril", "TrilBackward0", ("self",), _tri_fwd(True), _tri_bwd(True), promote=False)
op("triu", "TriuBackward0", ("self",), _tri_fwd(False), _tri_bwd(False), promote=False)


# ---- diagonals ----------------------------------------------------------------------------------
def _diag_positions(n1, n2, offset):
    """(first row, first column, length) of the diagonal ``offset`` of an n1 x n2 matrix."""
    r0, c0 = max(-offset, 0), max(offset, 0)
    return r0, c0, max(min(n1 - r0, n2 - c0), 0)


def _diagonal_fwd(xp, a, offset=0, dim1=0, dim2=1):
    """A view on NumPy and CuPy (as_strided over the same buffer); elsewhere (array_api_strict, which has
    no strided views) a gather, so a write through it does not reach the base there."""
    from ...backend import gaps as _backend
    shape = tuple(a.shape)
    r0, c0, n = _diag_positions(shape[dim1], shape[dim2], offset)
    rest = [k for k in range(len(shape)) if k not in (dim1, dim2)]
    if _backend._is_numpy(xp) or _backend._is_cupy(xp):
        if _backend._is_numpy(xp):
            from numpy.lib.stride_tricks import as_strided
        else:
            from cupy.lib.stride_tricks import as_strided
        st = a.strides
        start = a[tuple(slice(r0, None) if k == dim1 else slice(c0, None) if k == dim2 else slice(None)
                        for k in range(len(shape)))] if n else a
        return as_strided(start, tuple(shape[k] for k in rest) + (n,),
                          tuple(st[k] for k in rest) + (st[dim1] + st[dim2],))
    moved = xp.permute_dims(a, tuple(rest) + (dim1, dim2))
    ii = xp.arange(n, dtype=xp.int64)
    from ...backend.gaps import gather
    return gather(xp, moved, (Ellipsis, ii + r0, ii + c0))


def _diag_scatter(F, g, shape, offset, dim1, dim2):
    """``g`` (the diagonal, last) laid into zeros of ``shape`` along dims ``dim1``, ``dim2``."""
    r0, c0, n = _diag_positions(shape[dim1], shape[dim2], offset)
    rest = [k for k in range(len(shape)) if k not in (dim1, dim2)]
    moved = tuple(shape[k] for k in rest) + (shape[dim1], shape[dim2])
    ii = F.iota(n, 0, 1, g)
    z = F.scatter_add(moved, (Ellipsis, ii + r0, ii + c0), g, g)
    return F.permute(z, _inverse(tuple(rest) + (dim1, dim2)))


op("diagonal", "DiagonalBackward0", ("self",), _diagonal_fwd,
   lambda F, g, s: (_diag_scatter(F, g, s.shapes[0], s.offset, s.dim1, s.dim2),), promote=False, view=True)
op("diagonal_copy", "DiagonalBackward0_copy", ("self",), lambda xp, a, offset=0, dim1=0, dim2=1:
   _clone_fwd(xp, _diagonal_fwd(xp, a, offset, dim1, dim2)),
   lambda F, g, s: (_diag_scatter(F, g, s.shapes[0], s.offset, s.dim1, s.dim2),), promote=False)


def _diag_embed_fwd(xp, a, offset=0):
    from ...backend.gaps import index_fill
    n = a.shape[0]
    m = n + abs(offset)
    ii = xp.arange(n, dtype=xp.int64)
    return index_fill(xp, xp.zeros((m, m), dtype=a.dtype), (ii + max(-offset, 0), ii + max(offset, 0)), a)


def _diag_embed_bwd(F, g, s):
    n = s.shapes[0][0]
    ii = F.iota(n, 0, 1, g)
    return (F.index(g, (ii + max(-s.offset, 0), ii + max(s.offset, 0))),)


op("diag_embed", "DiagEmbedBackward0", ("self",), _diag_embed_fwd, _diag_embed_bwd, promote=False)


def _trace_fwd(xp, a):
    d = _diagonal_fwd(xp, a)
    if a.dtype == xp.bool:
        d = xp.astype(d, xp.int64)
    kw = {"dtype": xp.int64} if d.dtype == xp.int64 else {}
    return xp.sum(d, **kw)


def _trace_bwd(F, g, s):
    n, m = s.shapes[0]
    return (F.where(F.eq(F.iota(n, 0, 2, g), F.iota(m, 1, 2, g)), F.broadcast_to(g, (n, m)), 0.0),)


op("trace", "TraceBackward0", ("self",), _trace_fwd, _trace_bwd, promote=False)
