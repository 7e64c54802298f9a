"""In-place writes: the version bump, the checks PyTorch makes, and a view's base rebased.

``x.mul_(2)`` runs the ``mul`` row through ``dispatch.apply(..., inplace=x)``; this file is
what happens to ``x`` then: its array is overwritten, its version counter bumped (saved
copies of it then refuse to unpack: NOTE [ Saved tensors ] in core/graph.py), its history
rebased onto the new node, and, when ``x`` is a view, its base's history too
(NOTE [ In-place on a view ]).
"""
from __future__ import annotations

import numpy as np

from .. import events as _events
from ..backend import dtypes as _dtype
from ..backend.gaps import from_numpy
from .graph import Node, edge_of
from .tensor import Tensor
from ..backend.dtypes import short_name as _short


def _move_retain_grad(t: Tensor, old_fn, old_nr) -> None:
    """retain_grad follows a tensor to the new history an in-place op gave it (as in PyTorch)."""
    if t._retains_grad and old_fn is not None and old_fn is not t.grad_fn:
        old_fn._own_dict("_retain_grad").pop(old_nr, None)
        t._retains_grad = False
        t.retain_grad()


def _snapshot(t: Tensor) -> Tensor:
    """A copy of an in-place target as it was before the write (for ops that save it)."""
    xp = t._storage.xp
    c = Tensor._wrap(xp.asarray(t._data, copy=True))
    c.grad_fn, c._output_nr, c._requires_grad = t.grad_fn, t._output_nr, t._requires_grad
    return c


def write(target: Tensor, out) -> None:
    """``target``'s elements := ``out``, with PyTorch's error when several of them share one memory
    location (an ``expand()``ed tensor, which NumPy hands out read-only)."""
    try:
        target._data[...] = out
    except ValueError:
        if any(st == 0 and n > 1 for n, st in zip(target.shape, target.stride())):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the "
                               "operation.") from None
        raise


def _write_inplace(op, target: Tensor, out, grad_on: bool) -> Tensor:
    if grad_on and target.grad_fn is not None and getattr(target.grad_fn, "multi_view", False):
        raise RuntimeError(multi_view_error(target))
    if grad_on and target.grad_fn is None and target._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = target._base
    if grad_on and base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if tuple(out.shape) != tuple(target._data.shape):
        raise RuntimeError(f"output with shape [{', '.join(map(str, target._data.shape))}] doesn't match "
                           f"the broadcast shape [{', '.join(map(str, out.shape))}]")
    xp = target._storage.xp
    adt = _dtype.to_array_dtype(xp, target.dtype)
    if out.dtype != adt:
        src = Tensor._engine_dtype_of(xp, out.dtype)
        if src._rank > target.dtype._rank and src._kind != target.dtype._kind:
            raise RuntimeError(f"result type {_short(src)} can't be cast to the desired output type "
                               f"{_short(target.dtype)}")
        out = xp.astype(out, adt)
    write(target, out)
    bump_version(target, op.name)
    return target


def bump_version(t: Tensor, opname: str) -> None:
    vc = t._vc if t._vc is not None else t._storage     # NOTE [ Version counters ] (engine/core/tensor.py)
    vc.version += 1
    if _events.active:
        _events.emit("version", tensor=t._id, storage=t._storage.id, version=vc.version, op=opname)


class CopySlices(Node):
    """The new grad_fn of a view's base after an in-place op on the view (NOTE [ In-place on a view ])."""

    _name = "CopySlices"

    def __init__(self, fn, base_edge, positions, base_shape):
        super().__init__()
        self._fn = fn
        self._pos = positions
        self._base_shape = base_shape
        self.next_functions = (base_edge,) + tuple(fn.next_functions[1:])

    def apply(self, grads, F=None):
        g = grads[0]
        n = _numel(self._base_shape)
        flat = F.reshape(g, (n,))
        idx = (_positions(self._pos, F),)
        res = self._fn.apply([F.index(flat, idx)], F)
        gbase = None
        if self.next_functions[0][0] is not None:
            gbase = F.fill_index(flat, idx, 0.0)
            if res[0] is not None:
                gbase = gbase + F.scatter_add((n,), idx, res[0], res[0])
            gbase = F.reshape(gbase, self._base_shape)
        return [gbase] + list(res[1:])


class AsStridedBackward(Node):
    """The new grad_fn of a view whose base was rebased: the view read back out of the base."""

    _name = "AsStridedBackward0"

    def __init__(self, base_node, positions, base_shape):
        super().__init__()
        self._pos = positions
        self._base_shape = base_shape
        self.next_functions = ((base_node, 0),)

    def apply(self, grads, F=None):
        g = grads[0]
        n = _numel(self._base_shape)
        return [F.reshape(F.scatter_add((n,), (_positions(self._pos, F),), g, g), self._base_shape)]


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _positions(pos, F):
    return Tensor._wrap(pos) if F.differentiable else pos


def rebase_view(view: Tensor, fn: Node) -> None:
    """NOTE [ In-place on a view ]
    1. An in-place op on a view changes its base too, so the base's history must learn of
       it: the base gets a CopySlices node holding the in-place op's node ``fn``.
    2. Which base elements the view covers is read off the strides: ``positions`` (int64,
       the view's shape) holds each view element's flat index in the (contiguous) base.
    3. CopySlices' backward takes the base gradient, hands the view's slice of it to
       ``fn``, routes fn's gradient for the old view values back into the same slice of
       the old base's gradient (the rest of which passes through unchanged), and fn's other
       gradients to their own edges.
    4. The view itself now reads from the rebased base: its grad_fn becomes
       AsStridedBackward0 -> CopySlices.
    """
    base = view._base
    if not base.is_contiguous():
        raise NotImplementedError("glassgrad: in-place on a view of a non-contiguous tensor that requires grad")
    shape = tuple(view.shape)
    pos = np.asarray(view.storage_offset() - base.storage_offset(), dtype=np.int64)
    for k, (size, st) in enumerate(zip(shape, view.stride())):
        pos = pos + np.arange(size, dtype=np.int64).reshape((size,) + (1,) * (len(shape) - k - 1)) * st
    pos = from_numpy(view._storage.xp, np.ascontiguousarray(np.broadcast_to(pos, shape)))
    base_edge = edge_of(base) if base.requires_grad else (None, 0)
    cs = CopySlices(fn, base_edge, pos, tuple(base.shape))
    old = base.grad_fn, base._output_nr
    base.grad_fn, base._output_nr = cs, 0
    _move_retain_grad(base, *old)
    view.grad_fn, view._output_nr = AsStridedBackward(cs, pos, tuple(base.shape)), 0
    _move_retain_grad(view, fn, 0)


def multi_view_error(t) -> str | None:
    """PyTorch's refusal of an in-place write to an output of a node with several view outputs
    (NOTE [ Several outputs ] 4), or None when ``t`` is not one."""
    fn = t.grad_fn
    if fn is None or not getattr(fn, "multi_view", False):
        return None
    return (f"Output {t._output_nr} of {fn.name()[:-len('Backward0')]} is a view and is being modified inplace. "
            "This view is the output of a function that returns multiple views. Such functions do not allow "
            "the output views to be modified inplace. You should replace the inplace operation by an "
            "out-of-place one.")
