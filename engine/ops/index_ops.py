"""scatter_add, index_add, index_fill and index_copy for the op table (NOTE [ Index along a dim ]
in engine/_index_fns.py; scatter_add reuses NOTE [ Scatter ]'s index helpers)."""
from __future__ import annotations

from ..derivatives import op
from .tensor_ops import _Iota, _where


def _along(index, dim):
    """The advanced index that picks slices ``index[i]`` along ``dim`` (everything else whole)."""
    return (slice(None),) * dim + (index,)


# ---- scatter_add: out[.., index[i], ..] += src[i] (NOTE [ Scatter ] 1; repeats add up) ------------
def _scatter_add_fwd(xp, a, index, src, dim):
    from .._backend import index_put_add
    where = _where(_Iota(xp), index, dim, len(a.shape))
    vals = src[tuple(slice(0, n) for n in index.shape)]
    return index_put_add(xp, xp.asarray(a, copy=True), where, vals)


def _scatter_add_bwd(F, g, s):
    gsrc = None
    if s.needs[2]:   # the gradient read back where each src element went (a gather)
        gsrc = F.index(g, _where(F, s.index, s.dim, len(s.shapes[0])))
        ishape, sshape = tuple(F.shape(s.index)), tuple(s.shapes[2])
        if ishape != sshape:   # src larger than index: its other elements were never read
            gsrc = F.scatter_add(sshape, tuple(slice(0, n) for n in ishape), gsrc, gsrc)
    return (g if s.needs[0] else None), None, gsrc


op("scatter_add", "ScatterAddBackward0", ("self", "index", "src"), _scatter_add_fwd, _scatter_add_bwd,
   save={"index": ("src",)}, promote=False, nondiff=("index",))


# ---- index_add: out.index_select(dim, index) += alpha * source (repeats add up) --------------------
def _index_add_fwd(xp, a, index, source, dim, alpha=1):
    from .._backend import index_put_add
    vals = source * alpha if alpha != 1 else source
    if vals.dtype != a.dtype:
        vals = xp.astype(vals, a.dtype)
    return index_put_add(xp, xp.asarray(a, copy=True), _along(index, dim), vals)


def _index_add_bwd(F, g, s):
    gsrc = None
    if s.needs[2]:
        gsrc = F.index(g, _along(s.index, s.dim))
        gsrc = gsrc * s.alpha if s.alpha != 1 else gsrc
    return (g if s.needs[0] else None), None, gsrc


op("index_add", "IndexAddBackward0", ("self", "index", "source"), _index_add_fwd, _index_add_bwd,
   save={"index": ("source",), "source": ("source",)}, promote=False, nondiff=("index",))


# ---- index_fill: whole slices along dim set to one value (a number, or a 0-d tensor) ----------------
def _index_fill_fwd(xp, a, index, value=None, dim=0, number=None):
    from .._backend import index_fill
    v = xp.asarray(number, dtype=a.dtype) if value is None else xp.astype(value, a.dtype)
    return index_fill(xp, xp.asarray(a, copy=True), _along(index, dim), v)


def _index_fill_bwd(F, g, s):
    where = _along(s.index, s.dim)
    gself = F.fill_index(g, where, 0.0) if s.needs[0] else None
    if len(s.needs) < 3:
        return gself, None
    gval = None
    if s.needs[2]:   # the sum over the filled places, each once however often the index names it
        gval = F.sum(g) - F.sum(gself if gself is not None else F.fill_index(g, where, 0.0))
    return gself, None, gval


op("index_fill", "IndexFillBackward0", ("self", "index"), _index_fill_fwd, _index_fill_bwd,
   save={"index": ()}, promote=False, nondiff=("index",))
op("index_fill_tensor", "IndexFillBackward1", ("self", "index", "value"), _index_fill_fwd, _index_fill_bwd,
   save={"index": ()}, promote=False, nondiff=("index",))


# ---- index_copy: whole slices along dim replaced by source's (the last of repeats wins on NumPy) ----
def _index_copy_fwd(xp, a, index, source, dim):
    from .._backend import index_fill
    return index_fill(xp, xp.asarray(a, copy=True), _along(index, dim), source)


def _index_copy_bwd(F, g, s):
    where = _along(s.index, s.dim)
    gself = F.fill_index(g, where, 0.0) if s.needs[0] else None
    gsrc = F.index(g, where) if s.needs[2] else None
    return gself, None, gsrc


op("index_copy", "IndexCopyBackward0", ("self", "index", "source"), _index_copy_fwd, _index_copy_bwd,
   save={"index": (), "source": ("source",)}, promote=False, nondiff=("index",))
