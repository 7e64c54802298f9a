"""In-place writes: the version bump, the checks PyTorch makes, and a view's base rebased.

``x.mul_(2)`` runs the ``mul`` row through ``dispatch.apply(..., inplace=x)``; this file is
what happens to ``x`` then: its array is overwritten, its version counter bumped (saved
copies of it then refuse to unpack: NOTE [ Saved tensors ] in core/graph.py), its history
rebased onto the new node, and, when ``x`` is a view, its base's history too
(NOTE [ In-place on a view ]).
"""
from __future__ import annotations

import math
import weakref

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


def write(target: Tensor, out, opname: str = "") -> None:
    """``target``'s elements := ``out``. NumPy hands an ``expand()``ed array out read-only: where no two
    elements share memory, or for the ops PyTorch lets write such memory (fill_, zero_, masked_fill_, a
    setitem), the changed elements are written through a writable alias; other ops get PyTorch's error."""
    try:
        target._data[...] = out
    except ValueError:
        a = target._data
        if any(st == 0 and n > 1 for n, st in zip(a.shape, target.stride())) and opname not in _SHARED_OK:
            raise RuntimeError(SHARED_MEMORY) from None
        if type(a) is not np.ndarray or not target._storage.array.flags.writeable:
            raise
        changed = np.asarray(out != a)
        np.asarray(_Writable(a))[changed] = np.broadcast_to(out, a.shape)[changed]


_SHARED_OK = ("fill", "masked_fill", "setitem")
SHARED_MEMORY = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                 "location. Please clone() the tensor before performing the operation.")


class _Writable:   # a writable window onto a read-only array's memory, for np.asarray (keeps ``a`` alive)
    def __init__(self, a):
        self.__array_interface__, self.base = dict(a.__array_interface__, data=(a.ctypes.data, False)), a


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
        if _dtype._KIND_RANK[src._kind] > _dtype._KIND_RANK[target.dtype._kind]:
            raise RuntimeError(f"result type {_short(src)} can't be cast to the desired output type "
                               f"{_short(target.dtype)}")
        out = xp.astype(out, adt)
    write(target, out, op.name)
    global writing      # NOTE [ A view's grad_fn after an in-place op ] 7 (engine/ops/shape/view_history.py)
    version, root_fn = bump_version(target, op.name), (base if base is not None else target)._grad_fn
    writing = (version, root_fn and weakref.ref(root_fn)) if grad_on else None
    return target


writing = None   # the last write with grad mode on: ((its counter's id, version), weakref to its base's node)


def bump_version(t: Tensor, opname: str) -> tuple:
    """One more version of ``t``'s counter; returns (the counter's id, its new version)."""
    vc = t._vc if t._vc is not None else t._storage     # NOTE [ Version counters ] (engine/core/tensor.py)
    vc.version += 1
    if _events.active:
        _events.emit("version", tensor=t._id, storage=t._storage.id, version=vc.version, op=opname)
    return id(vc), vc.version


class CopySlices(Node):
    """The new grad_fn of a view's base after an in-place op on the view (NOTE [ In-place on a view ])."""

    _name = "CopySlices"
    __module__ = "builtins"      # NOTE [ Node types ] 1 (core/graph.py)

    def __init__(self, fn, base_edge, positions, base_shape, shared=False):
        super().__init__()
        self._fn = fn
        self._pos = positions
        self._base_shape = base_shape
        self._shared = shared       # two view elements at one base element
        self.next_functions = (base_edge,) + tuple(fn.next_functions[1:])

    def apply(self, grads, F=None):
        g = grads[0]
        n = math.prod(self._base_shape)
        flat = F.reshape(g, (n,))
        idx = (Tensor._wrap(self._pos) if F.differentiable else self._pos,)
        res = self._fn.apply([F.index(flat, idx)], F)
        gbase = None
        if self.next_functions[0][0] is not None:
            if self._shared and res[0] is not None:   # PyTorch writes the view's gradient back through the view
                raise RuntimeError(SHARED_MEMORY)
            gbase = F.fill_index(flat, idx, 0.0)
            if res[0] is not None:
                gbase = gbase + F.scatter_add((n,), idx, res[0], res[0])
            gbase = F.reshape(gbase, self._base_shape)
        return [gbase] + list(res[1:])


def rebase_view(view: Tensor, fn: Node) -> None:
    """NOTE [ In-place on a view ]
    1. An in-place op on a view changes its base too, so the base's history must learn of
       it: the base gets a CopySlices node holding the in-place op's node ``fn``.
    2. Which base elements the view covers is read off the strides: ``positions`` (int64,
       the view's shape) holds each view element's index in the base, flattened row-major
       (the element of the base at the same storage position).
    3. CopySlices' backward takes the base gradient, hands the view's slice of it to
       ``fn``, routes fn's gradient for the old view values back into the same slice of
       the old base's gradient (the rest of which passes through unchanged), and fn's other
       gradients to their own edges.
    4. The view itself now reads from the rebased base: its grad_fn is rebuilt when next read,
       AsStridedBackward0 -> CopySlices (NOTE [ A view's grad_fn after an in-place op ] in
       engine/ops/shape/view_history.py).
    """
    base = view._base
    at = _storage_positions(base, base.storage_offset()).reshape(-1)    # base element k is at at[k]
    index = np.zeros(int(at.max(initial=-1)) + 1, dtype=np.int64)
    index[at] = np.arange(at.size, dtype=np.int64)
    pos = np.ascontiguousarray(index[_storage_positions(view, base.storage_offset())])
    base_edge = edge_of(base) if base.requires_grad else (None, 0)
    cs = CopySlices(fn, base_edge, from_numpy(view._storage.xp, pos), tuple(base.shape),
                    np.unique(pos).size < pos.size)
    old = base.grad_fn, base._output_nr
    base.grad_fn, base._output_nr = cs, 0
    _move_retain_grad(base, *old)
    view._view_version = -1      # rule 4: out of date


def _storage_positions(t: Tensor, origin: int) -> np.ndarray:
    """int64 of ``t``'s shape: each element's position in its storage, counted from ``origin``."""
    shape = tuple(t.shape)
    pos = np.asarray(t.storage_offset() - origin, dtype=np.int64)
    for k, (size, st) in enumerate(zip(shape, t.stride())):
        pos = pos + np.arange(size, dtype=np.int64).reshape((size,) + (1,) * (len(shape) - k - 1)) * st
    return np.broadcast_to(pos, shape)


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
