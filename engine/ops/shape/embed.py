"""Shape rows that write one tensor into a copy of a larger one: select_scatter, slice_scatter,
diagonal_scatter, diag_embed over any dims (DiagEmbedBackward0) and block_diag.

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/shape.py and index.py.
"""
from __future__ import annotations

from ...core.primitives import _inverse
from .views import _AxIota, _contiguous, _diag_positions, _full, op


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
    r0, c0, n = _diag_positions(shape[dim1], shape[dim2], offset)
    perm = tuple(k for k in range(len(shape)) if k not in (dim1, dim2)) + (dim1, dim2)
    ii = ax.iota(n, 0, 1, like)
    return perm, (Ellipsis, ii + r0, ii + c0)


def _diagonal_scatter_fwd(xp, a, src, offset=0, dim1=0, dim2=1):
    from ...backend.gaps import index_fill
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
    from ...backend.gaps import index_fill
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
