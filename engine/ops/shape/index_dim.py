"""scatter_add, index_add, index_fill, index_copy and scatter_reduce for the op table: whole slices along
a dim (NOTE [ Index along a dim ] in engine/functions/index.py; NOTE [ Scatter ]'s index helpers
``_where`` and ``_Iota`` live here, below index.py, whose scatter and index_reduce rows import them)."""
from __future__ import annotations

from ...core import fns
from ...core.dispatch import broadcast_mismatch
from ...core.table import op


# ---- NOTE [ Scatter ]'s index helpers (index.py's scatter rows import them from here) --------------
def _where(ax, index, dim, nd):
    """The advanced index that puts element ``i`` of ``index`` at ``[.., index[i], ..]`` along ``dim``.
    ``ax.iota(n, k, nd, like)`` lays 0..n-1 along dim k."""
    shape = tuple(ax.shape(index))
    return tuple(index if k == dim else ax.iota(shape[k], k, nd, index) for k in range(nd))


class _Iota:
    """iota and shape on raw arrays, for the forward kernels (ArrayFns has them for the formulas)."""

    def __init__(self, xp):
        self.xp = xp

    def shape(self, x):
        return tuple(x.shape)

    def iota(self, n, axis, ndim, like):
        shape = [1] * ndim
        shape[axis] = n
        return self.xp.reshape(self.xp.arange(n, dtype=self.xp.int64), tuple(shape))


def _src_grad(F, node, gsrc, ishape, sshape):
    """src's gradient read at ``index`` (index's shape) taken to src's shape as PyTorch's engine takes
    it (NOTE [ Scatter ] 4): refused unless src's shape expands to index's (then it sums back: zeros)."""
    if ishape == sshape:
        return gsrc
    if len(ishape) != len(sshape) or any(s != i and s != 1 for i, s in zip(ishape, sshape)):
        raise RuntimeError(f"Function {node} returned an invalid gradient at index 1 - got "
                           f"[{', '.join(map(str, ishape))}] but expected shape compatible with "
                           f"[{', '.join(map(str, sshape))}]")
    return F.scatter_add(sshape, tuple(slice(0, n) for n in ishape), gsrc, gsrc)


def _along(index, dim):
    """The advanced index that picks slices ``index[i]`` along ``dim`` (everything else whole)."""
    return (slice(None),) * dim + (index,)


# ---- scatter_add: out[.., index[i], ..] += src[i] (NOTE [ Scatter ] 1; repeats add up) ------------
def _scatter_add_fwd(xp, a, index, src, dim):
    from ...backend.gaps import index_put_add
    where = _where(_Iota(xp), index, dim, len(a.shape))
    vals = src[tuple(slice(0, n) for n in index.shape)]
    return index_put_add(xp, xp.asarray(a, copy=True), where, vals)


def _scatter_add_bwd(F, g, s):
    gsrc = None
    if s.needs[2]:   # the gradient read back where each src element went (a gather)
        gsrc = F.index(g, _where(F, s.index, s.dim, len(s.shapes[0])))
        gsrc = _src_grad(F, "ScatterAddBackward0", gsrc, tuple(F.shape(s.index)), tuple(s.shapes[2]))
    return (g if s.needs[0] else None), None, gsrc


op("scatter_add", "ScatterAddBackward0", ("self", "index", "src"), _scatter_add_fwd, _scatter_add_bwd,
   save={"index": ("src",)}, promote=False, nondiff=("index",))


# ---- index_add: out.index_select(dim, index) += alpha * source (repeats add up) --------------------
def _index_add_fwd(xp, a, index, source, dim, alpha=1, source_dim=None):
    from ...backend.gaps import index_put_add
    if not a.size:   # PyTorch checks no index into an empty tensor of two or more dims
        return xp.asarray(a, copy=True)
    vals = source * alpha if alpha != 1 else source
    if vals.dtype != a.dtype:
        vals = xp.astype(vals, a.dtype)
    return index_put_add(xp, xp.asarray(a, copy=True), _along(index, dim), vals)


def _index_add_bwd(F, g, s):
    gsrc = None
    if s.needs[2]:
        shape = list(F.shape(g))
        count = F.shape(s.index)[0]
        if shape[s.dim] == 0 and count:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if 0 in shape:   # index_select reads nothing from an empty gradient (nor checks the index)
            shape[s.dim] = count
            return (g if s.needs[0] else None), None, F.zeros(shape, g)
        gsrc = F.index(g, _along(s.index, s.dim))
        gsrc = gsrc * s.alpha if s.alpha != 1 else gsrc
    return (g if s.needs[0] else None), None, gsrc


op("index_add", "IndexAddBackward0", ("self", "index", "source"), _index_add_fwd, _index_add_bwd,
   save={"index": ("source",), "source": ("source",)}, promote=False, nondiff=("index",))


# ---- index_fill: whole slices along dim set to one value (a number, or a 0-d tensor) ----------------
def _index_fill_fwd(xp, a, index, value=None, dim=0, number=None):
    from ...backend.gaps import index_fill
    v = xp.asarray(number, dtype=a.dtype) if value is None else xp.astype(value, a.dtype)
    if not a.size:   # nothing to fill (PyTorch checks no index here)
        return xp.asarray(a, copy=True)
    return index_fill(xp, xp.asarray(a, copy=True), _along(index, dim), v)


def _index_fill_bwd(F, g, s):
    where = _along(s.index, s.dim)
    if 0 in F.shape(g):   # an empty self: nothing was filled
        return (g if s.needs[0] else None), None, *((F.sum(g),) if len(s.needs) > 2 else ())
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
def _index_copy_fwd(xp, a, index, source, dim, source_dim=None):
    from ...backend.gaps import index_fill
    return index_fill(xp, xp.asarray(a, copy=True), _along(index, dim), source)


def _index_copy_bwd(F, g, s):
    where = _along(s.index, s.dim)
    gself = F.fill_index(g, where, 0.0) if s.needs[0] else None
    gsrc = F.index(g, where) if s.needs[2] else None
    return gself, None, gsrc


op("index_copy", "IndexCopyBackward0", ("self", "index", "source"), _index_copy_fwd, _index_copy_bwd,
   save={"index": (), "source": ("source",)}, promote=False, nondiff=("index",))


# ---- scatter_reduce (NOTE [ Scatter reduce ] in engine/functions/index.py) ------------------------------------
_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum", "max": "maximum",
          "min": "minimum"}


def _identity(reduce, dt):
    import numpy as np
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dt.kind == "f" else np.iinfo(dt).max
    return -big if reduce in ("amax", "max") else big


def _scatter_reduce_fwd(xp, a, index, src, dim, reduce, include_self=True):
    """NumPy's ufunc.at on host arrays (the array API has no scatter with a reduction)."""
    import numpy as np

    from ...backend import gaps as _backend
    h = np.array(_backend.to_numpy(xp, a), copy=True)
    hi = _backend.to_numpy(xp, index)
    vals = _backend.to_numpy(xp, src)[tuple(slice(0, n) for n in hi.shape)]
    where = tuple(hi if k == dim else np.arange(hi.shape[k]).reshape([-1 if j == k else 1 for j in range(h.ndim)])
                  for k in range(h.ndim))
    if not include_self:
        h[where] = _identity(reduce, h.dtype)
    with np.errstate(invalid="ignore"):   # NaN meets NaN or inf in a max: PyTorch is silent
        getattr(np, _UFUNC[reduce]).at(h, where, vals)
    if reduce == "mean":
        count = np.full(h.shape, 1 if include_self else 0, dtype=np.int64)
        np.add.at(count, where, 1)
        count[count == 0] = 1
        h = h / count.astype(h.dtype) if h.dtype.kind == "f" else np.floor_divide(h, count)   # float32 stays float32
    return _backend.from_numpy(xp, np.ascontiguousarray(h))


def _scatter_reduce_bwd(F, g, s):
    nd = len(s.shapes[0])
    where = _where(F, s.index, s.dim, nd)
    ishape, sshape = tuple(F.shape(s.index)), tuple(s.shapes[2])
    if s.reduce not in ("sum", "mean"):   # PyTorch's formula compares src with the gathered result
        msg = broadcast_mismatch(sshape, ishape)
        if msg:
            raise RuntimeError(msg)
    src = s.src   # src's shape: amax/amin/prod compare it, broadcast, with index-shaped values (as PyTorch)

    def gather(t):
        return F.index(t, where)

    def scatter_sum(v):   # only v's first index-shaped block is scattered
        v = F.index(v, tuple(slice(0, n) for n in ishape)) if tuple(F.shape(v)) != ishape else v
        return F.scatter_add(s.shapes[0], where, v, v)

    def reduce_again(x, y):
        return F.scatter_reduce(x, s.dim, s.index, y, s.reduce, s.include_self)

    dt = F.dtype(g)
    if s.reduce == "sum":
        gself, gsrc = g, gather(g)
    elif s.reduce == "mean":
        n = scatter_sum(gather(g) * 0.0 + 1.0) + (1.0 if s.include_self else 0.0)
        gself = g / F.where(F.eq(n, 0.0), 1.0, n)
        gsrc = gather(gself)
    elif s.reduce == "prod":
        masked_self = F.where(F.eq(s.self, 0.0), 1.0, s.self)
        gself = g * reduce_again(masked_self, src) / masked_self
        src_zero = F.eq(src, 0.0)
        zeros_there = gather(scatter_sum(F.astype(src_zero, dt)))
        single = F.logical_and(src_zero, F.eq(zeros_there, 1.0))    # the one zero a product has
        without = reduce_again(s.self, F.where(single, 1.0, src))
        gsrc = F.where(single, gather(g * without), gather(g * s.result) / F.where(src_zero, 1.0, src))
    else:   # amax / amin (or max / min): the gradient is shared evenly among the values equal to the result
        self_is = F.astype(F.eq(s.self, s.result), dt)
        src_is = F.astype(F.eq(src, gather(s.result)), dt)
        shared = g / (self_is + scatter_sum(src_is))
        gself, gsrc = self_is * shared, src_is * gather(shared)
    if not s.include_self:
        gself = F.fill_index(gself, where, 0.0)
    if not s.needs[2]:
        return (gself if s.needs[0] else None), None, None
    return (gself if s.needs[0] else None), None, _src_grad(F, "ScatterReduceBackward0", gsrc, tuple(F.shape(gsrc)),
                                                           sshape)


scatter_reduce_array = _scatter_reduce_fwd   # F.scatter_reduce on arrays (engine/core/fns.py)
op("scatter_reduce", "ScatterReduceBackward0", ("self", "index", "src"), _scatter_reduce_fwd, _scatter_reduce_bwd,
   save={"self": (), "index": (), "src": (), "result": ()}, promote=False, nondiff=("index",))


fns.register("scatter_reduce", array=scatter_reduce_array)   # F.scatter_reduce (NOTE [ One formula, two currencies ] 5)
