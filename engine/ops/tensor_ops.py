"""roll, scatter, unique and the random draws that keep a graph (normal, bernoulli) for the op table."""
from __future__ import annotations

import functools

import numpy as np

from ..derivatives import op


# ---- roll --------------------------------------------------------------------------------------------
def _roll_fwd(xp, a, shifts, dims):
    if not dims:   # no dims: roll the flattened tensor, as PyTorch
        return xp.reshape(xp.roll(xp.reshape(a, (-1,)), shift=shifts[0]), tuple(a.shape))
    return xp.roll(a, shift=tuple(shifts), axis=tuple(dims))


def _roll_bwd(F, g, s):
    back = tuple(-k for k in s.shifts)
    if F.differentiable:
        from .. import functional as E
        return (E.roll(g, back, s.dims or None),)
    return (_roll_fwd(F.xp, g, back, s.dims),)


op("roll", "RollBackward0", ("self",), _roll_fwd, _roll_bwd, promote=False)


# ---- scatter (NOTE [ Scatter ]) -----------------------------------------------------------------------
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


def _scatter_fwd(xp, a, index, src=None, dim=0, value=None):
    from ..backend.gaps import index_fill
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
        gsrc = F.index(g, where)
        ishape, sshape = tuple(F.shape(s.index)), tuple(s.shapes[2])
        if ishape != sshape:   # src larger than index: its other elements were never read
            gsrc = F.scatter_add(sshape, tuple(slice(0, n) for n in ishape), gsrc, gsrc)
    return gself, None, gsrc


op("scatter", "ScatterBackward0", ("self", "index", "src"), _scatter_fwd, _scatter_src_bwd, save={"index": ()},
   promote=False, nondiff=("index",))
op("scatter_value", "ScatterBackward1", ("self", "index"), _scatter_fwd,
   lambda F, g, s: (F.fill_index(g, _where(F, s.index, s.dim, len(s.shapes[0])), 0.0), None),
   save={"index": ()}, promote=False, nondiff=("index",))


# ---- draws that keep a graph: the gradient is zero, as PyTorch's (not a reparameterisation) ------------
def _draw_fwd(xp, *arrays):
    return xp.asarray(arrays[-1], copy=True)   # the drawn values (the last input), as a new tensor


def _zero_bwd(n):
    def bwd(F, g, s):
        return tuple((g * 0.0 if s.needs[k] else None) for k in range(n)) + (None,)
    return bwd


op("normal_mean", "NormalBackward1", ("mean", "sample"), _draw_fwd, _zero_bwd(1), promote=False,
   nondiff=("sample",))
op("normal_std", "NormalBackward2", ("std", "sample"), _draw_fwd, _zero_bwd(1), promote=False, nondiff=("sample",))
op("normal_both", "NormalBackward3", ("mean", "std", "sample"), _draw_fwd, _zero_bwd(2), promote=False,
   nondiff=("sample",))
op("bernoulli", "BernoulliBackward0", ("self", "sample"), _draw_fwd, _zero_bwd(1), promote=False,
   nondiff=("sample",))


# ---- unique ------------------------------------------------------------------------------------------
def _unique_fwd(xp, a, dim=None):
    """Sorted distinct values (rows along ``dim``), with each element's inverse index and the counts.
    The array API has no ``unique`` with inverse and counts along an axis: NumPy computes it on the host."""
    from ..backend import gaps as _backend
    host = _backend.to_numpy(xp, a)
    vals, inv, counts = np.unique(host, return_inverse=True, return_counts=True, axis=dim)
    inv = inv.reshape(host.shape if dim is None else (host.shape[dim],))
    to = functools.partial(_backend.from_numpy, xp)
    return to(vals), {"inverse": to(inv.astype(np.int64)), "counts": to(counts.astype(np.int64))}


def _unique_bwd(F, g, s):
    raise RuntimeError("the derivative for '_unique2' is not implemented.")


op("unique", "Unique2Backward0", ("self",), _unique_fwd, _unique_bwd, aux=("inverse", "counts"), promote=False)
