"""Dim arguments as PyTorch reads them; every torch.* function that takes a dim goes through here.

NOTE [ A 0-d tensor's one dim ]
1. A dim wraps as PyTorch's ``maybe_wrap_dim``: ``-ndim <= dim < ndim`` counts from the end, and a
   0-d tensor is treated as having one dim of size 1, so it takes 0 and -1 (``wrap_dim``). The few
   ops PyTorch wraps with ``wrap_scalar=False`` (``size``, ``roll``, ``take_along_dim``, ...) refuse
   a 0-d tensor: ``Dimension specified as 0 but tensor has no dimensions`` (``scalar=False``).
2. A list of dims (sum, mean, var/std, amax/amin, logsumexp, nansum, norm, all/any, count_nonzero,
   ...) is wrapped dim by dim and a dim named twice is refused (``dim 0 appears multiple times in the
   list of dims``). On a 0-d tensor the one dim is not an axis of the array: ``reduce_dims`` gives
   ``()``, the kernel reduces over no axis, and the value comes back as it is (shape ``[]``, with
   or without keepdim). None and an empty list mean every dim.
3. An op along one dim (softmax, log_softmax, cumsum, cumprod, sort, topk, max/min along a dim,
   median, mode, kthvalue, cummax/cummin, prod along a dim, ...) of a 0-d tensor runs its row on
   the array seen as shape ``(1,)`` and gives shape ``()`` back, in the forward and in the backward
   formula alike (``row_for``, engine/ops/reduce/scalar_dim.py); the node is the row's own, so the
   graph shows PyTorch's grad_fn. An index along that dim (argmax, argmin, argsort) is 0.
4. Such a row is the table's row read through a reshape, not a row of the table: engine.compile
   breaks its graph there and runs the op eagerly.
"""
from __future__ import annotations

from ..core.table import OPS as _O
from ..core.tensor import _wrap_dim
from ..ops.reduce.scalar_dim import along_one_dim


def wrap_dim(dim, ndim: int, scalar: bool = True) -> int:
    """``dim`` as an index in ``range(max(ndim, 1))`` (NOTE [ A 0-d tensor's one dim ] 1)."""
    if ndim == 0 and not scalar:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def reduce_dims(dim, ndim: int):
    """The array axes a reduction over ``dim`` (an int, a list or None) folds: None for all of them,
    else a sorted tuple (NOTE [ A 0-d tensor's one dim ] 2)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return None
    seen = []
    for d in dim:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(sorted(seen)) if ndim else ()


def row_for(name: str, input):
    """The table row ``name``, or its form along the one dim of a 0-d ``input`` (NOTE [ A 0-d
    tensor's one dim ] 3)."""
    row = _O[name]
    return row if input.ndim else along_one_dim(row)
