"""Reduction rows: prod (NOTE [ Product of the others ]), nansum, median/nanmedian, kthvalue, mode,
aminmax and histogram.

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/reduce.py.
"""
from __future__ import annotations

from ...core.primitives import _count
from ...core.table import op
from ..elementwise.unary import _isnan


# ---- prod ------------------------------------------------------------------------------------
def _any_zero(F, x) -> bool:
    """Whether ``x`` holds a zero: one host-side answer (a device sync on CUDA, as PyTorch's
    prod backward makes too). A formula traced for a compiled graph cannot branch on values,
    so there the answer is yes: the zero-safe form is right either way (NOTE [ Product of the others ])."""
    from ...core.fns import ArrayFns
    if F.differentiable:
        return bool((x == 0.0).any().item())
    if isinstance(F, ArrayFns):
        return bool(F.xp.any(x == 0.0))
    return True


def _exclusive(F, c, d, n, nd):
    """``c`` (a running product along ``d``) shifted one step: 1 first, then c[0] .. c[n-2]."""
    head = F.index(c, (slice(None),) * d + (slice(0, n - 1),))
    shifted = F.scatter_add(F.shape(c), (slice(None),) * d + (slice(1, n),), head, head)
    return F.where(F.eq(F.iota(n, d, nd, c), 0), 1.0, shifted)


def _prod_others(F, x, d):
    """NOTE [ Product of the others ]
    1. ``prod``'s gradient at element i is the product of every other element of its slice.
       Without zeros that is ``result / x_i`` (what PyTorch computes then too); with a zero
       the division is 0/0, so the product is formed without dividing.
    2. As PyTorch's prod_safe_zeros_backward: an exclusive running product from the front
       times one from the back, ``(x_0 ... x_{i-1}) * (x_{i+1} ... x_{n-1})``.
    3. On arrays the running products are cumprods (``F.cumprod``), the one from the back on
       the reversed slice. For ``create_graph`` they are built slice by slice from mul and
       cat, so the second derivative is right at the zeros too (its formula is that of mul).
    """
    n, nd = F.shape(x)[d], len(F.shape(x))
    if F.differentiable:
        E = F.E
        parts = [E.narrow(x, d, i, 1) for i in range(n)]
        left, right = [None] * n, [None] * n
        left[0] = right[n - 1] = E.ones_like(parts[0])
        for i in range(1, n):
            left[i] = left[i - 1] * parts[i - 1]
        for i in range(n - 2, -1, -1):
            right[i] = right[i + 1] * parts[i + 1]
        return E.cat([lf * r for lf, r in zip(left, right)], d)
    rev = (slice(None),) * d + (slice(None, None, -1),)
    left = _exclusive(F, F.cumprod(x, d), d, n, nd)
    right = F.index(_exclusive(F, F.cumprod(F.index(x, rev), d), d, n, nd), rev)
    return left * right


def _prod_fwd(xp, a, dim=None, keepdim=False, dtype=None):
    if not a.shape:
        dim = None          # a 0-d input has one element whatever the dim (0 or -1) says
    if dtype is not None:
        a = xp.astype(a, dtype)
    elif a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)   # as sum: a product of bools counts in int64
    kw = {"dtype": xp.int64} if a.dtype == xp.int64 else {}
    return xp.prod(a, axis=dim, keepdims=keepdim, **kw)


def _prod_all_bwd(F, g, s):
    """PyTorch's prod_backward: ``g * result / self`` without zeros, NOTE [ Product of the others ] with."""
    x, shape = s.self, s.shapes[0]
    if not shape:
        return (g,)
    if not _any_zero(F, x):
        return (g * (s.result / x),)
    n = _count(shape, None)
    return (F.reshape(g * _prod_others(F, F.reshape(x, (n,)), 0), shape),)


def _prod_dim_bwd(F, g, s):
    x, shape = s.self, s.shapes[0]
    if not shape:
        return (g,)
    res = s.result
    if not s.keepdim:
        g, res = F.expand_dims(g, axis=s.dim), F.expand_dims(res, axis=s.dim)
    if not _any_zero(F, x):
        return (g * (res / x),)
    return (g * _prod_others(F, x, s.dim),)


op("prod", "ProdBackward0", ("self",), lambda xp, a, dtype=None: _prod_fwd(xp, a, None, False, dtype),
   _prod_all_bwd, save={"self": (), "result": ()}, promote=False)
op("prod_dim", "ProdBackward1", ("self",), _prod_fwd, _prod_dim_bwd, save={"self": (), "result": ()},
   promote=False)


# ---- reductions ---------------------------------------------------------------------------------
def _keep(F, g, dim, keepdim):
    if dim is None or keepdim:
        return g
    for d in sorted(dim):
        g = F.expand_dims(g, axis=d)
    return g


def _nansum_fwd(xp, a, dim=None, keepdim=False):
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)
    if xp.isdtype(a.dtype, "real floating"):
        a = xp.where(xp.isnan(a), xp.zeros_like(a), a)
    kw = {"dtype": xp.int64} if a.dtype == xp.int64 else {}
    return xp.sum(a, axis=dim, keepdims=keepdim, **kw)


op("nansum", "NansumBackward0", ("self",), _nansum_fwd,
   lambda F, g, s: (F.where(_isnan(F, s.self), 0.0,
                            F.broadcast_to(_keep(F, g, s.dim, s.keepdim), s.shapes[0])),),
   save={"self": ()}, promote=False)


def _median_all_fwd(xp, a, ignore_nan=False):
    flat = xp.reshape(a, (-1,))
    if flat.shape[0] == 0:                       # PyTorch: nan, and an empty gradient in backward
        return xp.full((), xp.nan, dtype=a.dtype)
    return _select_sorted(xp, flat, 0, ignore_nan, keepdim=False)[0]


def _select_sorted(xp, a, dim, ignore_nan, keepdim, k=None):
    """The lower median (or the ``k``-th smallest, 0-based) along ``dim`` and its index. NaN sorts last:
    a slice holding one gives NaN and its first NaN's index unless ``ignore_nan``."""
    idx = xp.argsort(a, axis=dim, stable=True)
    n = a.shape[dim]
    if k is None:
        if xp.isdtype(a.dtype, "real floating"):
            nans = xp.sum(xp.astype(xp.isnan(a), xp.int64), axis=dim, keepdims=True)
            valid = n - nans
            pos = xp.where(valid > 0, (valid - 1) // 2, xp.zeros_like(valid)) if ignore_nan else \
                xp.where(nans > 0, valid, xp.full_like(nans, (n - 1) // 2))
        else:
            shape = list(a.shape)
            shape[dim] = 1
            pos = xp.full(tuple(shape), (n - 1) // 2, dtype=xp.int64)
    else:
        shape = list(a.shape)
        shape[dim] = 1
        pos = xp.full(tuple(shape), k, dtype=xp.int64)
    where = xp.take_along_axis(idx, pos, axis=dim)
    vals = xp.take_along_axis(a, where, axis=dim)
    if not keepdim:
        vals, where = xp.squeeze(vals, axis=dim), xp.squeeze(where, axis=dim)
    return vals, xp.astype(where, xp.int64)


def _evenly_bwd(F, g, s):
    """PyTorch's evenly_distribute_backward: the gradient split among the elements equal to the
    result (among the NaNs when the result is NaN)."""
    x, r = s.self, s.result
    mask = F.where(_isnan(F, r), _isnan(F, x), F.eq(x, r))
    count = F.sum(F.astype(mask, F.dtype(g)))
    return (F.where(mask, g / count, 0.0),)


op("median", "MedianBackward0", ("self",), _median_all_fwd, _evenly_bwd, save={"self": (), "result": ()},
   promote=False)
op("nanmedian", "NanmedianBackward0", ("self",), lambda xp, a: _median_all_fwd(xp, a, True), _evenly_bwd,
   save={"self": (), "result": ()}, promote=False)


def _pick_bwd(F, g, s):
    """The gradient to the picked element of each slice (value_selecting_reduction_backward)."""
    shape, d, idx = s.shapes[0], s.dim, s.indices
    if not s.keepdim:
        g, idx = F.expand_dims(g, axis=d), F.expand_dims(idx, axis=d)
    return (F.where(F.eq(F.iota(shape[d], d, len(shape), g), idx), g, 0.0),)


def _dim_select_fwd(kind):
    def fwd(xp, a, dim, keepdim=False, k=None):
        if kind == "mode":
            vals, where = _mode_fwd(xp, a, dim, keepdim)
        else:
            vals, where = _select_sorted(xp, a, dim, kind == "nanmedian", keepdim, k)
        return vals, {"indices": where}
    return fwd


def _mode_fwd(xp, a, dim, keepdim):
    """The most frequent value of each slice (the smallest among equally frequent ones) and the index
    of its last occurrence, as PyTorch's CPU kernel; counted on the host."""
    import numpy as np

    from ...backend.gaps import from_numpy, to_numpy
    h = np.moveaxis(to_numpy(xp, a), dim, -1)
    rows = h.reshape(-1, h.shape[-1])
    vals = np.empty(rows.shape[0], dtype=h.dtype)
    where = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        u, counts = np.unique(row, return_counts=True)
        v = u[int(np.argmax(counts))]
        vals[r] = v
        where[r] = int(np.nonzero(row == v)[0][-1]) if v == v else int(np.nonzero(row != row)[0][-1])
    out_shape = h.shape[:-1]
    vals, where = vals.reshape(out_shape), where.reshape(out_shape)
    if keepdim:
        vals, where = np.expand_dims(vals, dim), np.expand_dims(where, dim)
    # np.array copies C-contiguous and keeps a 0-d result 0-d (np.ascontiguousarray makes it 1-d)
    return from_numpy(xp, np.array(vals, order="C")), from_numpy(xp, np.array(where, order="C"))


for _name, _node in (("median_dim", "MedianBackward1"), ("nanmedian_dim", "NanmedianBackward1"),
                     ("kthvalue", "KthvalueBackward0"), ("mode", "ModeBackward0")):
    op(_name, _node, ("self",), _dim_select_fwd(_name.replace("_dim", "")), _pick_bwd, save={"indices": ()},
       aux=("indices",), promote=False)


# ---- aminmax: one node for both results (NOTE [ Several outputs ] in engine/core/dispatch.py) -----------
def _aminmax_fwd(xp, a, dim=None, keepdim=False):
    return xp.min(a, axis=dim, keepdims=keepdim), xp.max(a, axis=dim, keepdims=keepdim)


def _aminmax_bwd(F, g, s):
    """Each result's gradient shared evenly among the elements equal to it (as amin's and amax's)."""
    shape, out = s.shapes[0], None
    for grad, res in ((g[0], s.min), (g[1], s.max)):
        if grad is None:
            continue
        grad, res = _keep(F, grad, s.dim, s.keepdim), _keep(F, res, s.dim, s.keepdim)
        mask = F.eq(s.self, res)
        count = F.sum(F.astype(mask, F.dtype(grad)), axis=s.dim, keepdims=True)
        term = F.where(mask, F.broadcast_to(grad / count, shape), 0.0)
        out = term if out is None else out + term
    return (out,)


op("aminmax", "AminmaxBackward0", ("self",), _aminmax_fwd, _aminmax_bwd, save={"self": (), "min": (), "max": ()},
   promote=False, aux=("multi",))


# ---- histogram: no derivative in PyTorch; a tensor that requires grad gives a NotImplemented node ------
def _histogram_bwd(F, g, s):
    raise RuntimeError("derivative for aten::histogram is not implemented")


op("histogram", "NotImplemented", ("self", "counts"), lambda xp, a, counts: xp.asarray(counts, copy=True),
   _histogram_bwd, promote=False, nondiff=("counts",))
