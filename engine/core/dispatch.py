"""Running an op: checks, promotion, the forward kernel, and the graph node it leaves.

NOTE [ Dispatch ]
1. Every tensor argument must live on one device; otherwise PyTorch's device error.
2. Ops with ``promote`` cast tensor arguments to ``result_type`` first (Python scalars
   join as scalars); ``float_op`` ops further lift integer results to the default dtype.
3. The forward kernel receives arrays (and scalars) and the op's attributes, and
   returns the output array, or ``(output, {aux arrays})`` when it declares ``aux``;
   each aux array becomes one tensor, both saved and returned (``return_aux``).
4. A node is made only when grad mode is on, some argument requires grad and the
   output is floating point. It saves what the op's ``save`` table names, for the
   inputs whose gradients need it (see NOTE [ Saved tensors ]).
5. An in-place op writes the output into its target's array, bumps the version and
   gives the target the new node as its ``grad_fn`` (history rebase). On a view, the
   base's history is rebased too (NOTE [ In-place on a view ]).
6. As in PyTorch, a node has one ``next_functions`` edge per differentiable argument:
   arguments an op declares ``nondiff`` (indices, targets, conditions, masks) get no
   edge, and the node hands backward one gradient per edge.
7. A node saves its inputs as they were (an int64 divisor stays int64, as PyTorch saves
   it); when rule 2 cast some of them, the array-currency backward reads saved inputs
   cast to the dtype the forward computed in, so formulas never mix dtypes (which the
   array API forbids, and which in NumPy would compute float32 work in float64).

NOTE [ Op hooks ]
1. ``op_hooks.stack`` (per thread, empty unless checkpointing pushes one) holds objects
   with ``before(op, inputs, attrs, inplace)`` and ``after(op, inputs, attrs, result)``;
   with the stack empty an op pays one attribute read.
2. ``before`` runs ahead of the kernel, innermost hook first; it may raise (early stop
   of a recomputation) or return a tensor whose array and storage stand in for the
   kernel's output (a cached result of selective checkpointing). Returning one is only
   allowed for plain ops (no view, no in-place target, no aux outputs).
3. ``after`` runs once the op's output (and node) exist, before the op returns.
"""
from __future__ import annotations

import threading

import numpy as np

from ..backend import dtypes as _dtype
from .. import events as _events
from ..backend.gaps import from_numpy
from ..memory import oom as _oom
from .tensor import _NP_DT, Tensor, tensor_info
from .table import SLOT as _SLOT, OpDef
from . import grad_mode
from .graph import Node, SavedTensor, edge_of, node_info




def _device_check(op, tensors):
    dev = tensors[0]._storage.device
    for t in tensors[1:]:
        d = t._storage.device
        if d is not dev and d != dev:
            a, b = sorted({str(dev), str(t.device)})
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                               f"devices, {a} and {b}!")
    return dev


class _OpHooks(threading.local):
    stack: tuple = ()


op_hooks = _OpHooks()


class push_op_hook:
    """Push an op hook on this thread's stack for the block (NOTE [ Op hooks ])."""

    def __init__(self, hook):
        self.hook = hook

    def __enter__(self):
        self.old = op_hooks.stack
        op_hooks.stack = self.old + (self.hook,)
        return self

    def __exit__(self, *exc):
        op_hooks.stack = self.old
        return False
_ndarray = np.ndarray
_grad_state = grad_mode._state


def apply(op: OpDef, inputs: list, attrs: dict | None = None, inplace: Tensor | None = None,
          node_name: str | None = None, return_aux: bool = False):
    """Run ``op`` on ``inputs`` (tensors or Python scalars) and return the output tensor(s)."""
    attrs = attrs or {}
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError(f"{op.name}(): expected at least one Tensor argument")
    _device_check(op, tensors) if len(tensors) > 1 else None
    st0 = tensors[0]._storage
    xp = st0.xp
    cast_to = None     # the dtype a backward formula computes in, when some input tensor had another
    if op.promote:
        target = _promote_pair(inputs) if len(inputs) == 2 else _promote_same(inputs)
        if target is None:
            target = _dtype.result_type(inputs)
            cast_to = target
        if op.float_op and not target.is_floating_point:
            target = cast_to = _dtype.get_default_dtype()
        arrays = [((t._data if t.dtype is target else _cast(xp, t, target)) if isinstance(t, Tensor) else t)
                  for t in inputs]
    else:
        arrays = [t._data if isinstance(t, Tensor) else t for t in inputs]
    hooks = op_hooks.stack
    cached = _hooks_before(hooks, op, inputs, attrs, inplace) if hooks else None
    if cached is not None:
        out = cached._data
    else:
        try:
            out = op.fwd(xp, *arrays, **attrs)
        except (ValueError, TypeError, IndexError) as e:
            msg = _broadcast_error(tensors) if "broadcast" in str(e) else None
            raise RuntimeError(msg or f"{op.name}: {e}") from None
        except MemoryError as e:     # NOTE [ Out of memory ]
            raise _oom.translate(e) from None
    aux = None
    if op.aux:
        out, aux = out
        # one tensor per aux array: what a node saves and what the caller gets share a storage
        aux = {k: Tensor._wrap(v) for k, v in aux.items()}

    grad_on = getattr(_grad_state, "enabled", True)    # grad_mode.is_grad_enabled(), inlined
    needs = tuple([isinstance(t, Tensor) and (t._requires_grad or t.grad_fn is not None) for t in inputs])
    any_needs = any(needs)
    save_inputs = inputs
    if inplace is not None and grad_on and any_needs and op.saves_args:
        # the input as it was before the write (PyTorch's original_self); an op that keeps only
        # its result (relu_, sigmoid_, ...) needs no copy
        save_inputs = [_snapshot(t) if t is inplace else t for t in inputs]
    if inplace is not None:
        result = _write_inplace(op, inplace, out, grad_on)
    elif op.view:
        base = tensors[0]._base if tensors[0]._base is not None else tensors[0]
        result = Tensor._wrap(out, st0, base_tensor=base)
        result._vc = tensors[0]._vc   # NOTE [ Version counters ] 3
    else:
        result = Tensor._wrap(out, cached._storage if cached is not None else None)

    if not (grad_on and op.differentiable and any_needs and result.dtype.is_floating_point):
        if inplace is not None and grad_on and inplace.grad_fn is not None:
            inplace.grad_fn = None  # a non-differentiable in-place op cuts the history
        if _events.active:
            _emit_op(op, inputs, result, None, attrs)
        if hooks:
            _hooks_after(hooks, op, inputs, attrs, result)
        return (result, aux) if return_aux else result

    node = OpNode(op, node_name or op.node, inputs, needs, attrs)
    if cast_to is not None and any(isinstance(t, Tensor) and t.dtype is not cast_to for t in inputs):
        node._promote_to = cast_to     # NOTE [ Dispatch ] 7
    old_fn, old_nr = result.grad_fn, result._output_nr
    result.grad_fn = node  # before saving: a saved output unpacks with this history
    result._output_nr = 0
    if inplace is not None:
        _move_retain_grad(result, old_fn, old_nr)
    _save(op, node, save_inputs, needs, result, aux)
    if inplace is not None and inplace._base is not None:
        rebase_view(inplace, node)
    if _events.active:
        _emit_op(op, inputs, result, node, attrs)
    if hooks:
        _hooks_after(hooks, op, inputs, attrs, result)
    return (result, aux) if return_aux else result


def broadcast_mismatch(sa, sb) -> str | None:
    """PyTorch's message when shapes ``sa`` and ``sb`` do not broadcast, else None."""
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for i in reversed(range(n)):  # PyTorch names the last mismatching dimension
        x, y = pa[i], pb[i]
        if x != y and x != 1 and y != 1:
            return (f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {i}")
    return None


def _broadcast_error(tensors):
    """The first pair of ``tensors`` whose shapes do not broadcast, in PyTorch's words (None if all do)."""
    shapes = [tuple(t._data.shape) for t in tensors]
    for i, sa in enumerate(shapes):
        for sb in shapes[i + 1:]:
            msg = broadcast_mismatch(sa, sb)
            if msg:
                return msg
    return None


def _promote_pair(inputs):
    """NOTE [ Type promotion ]'s answer for the common pairs, else None: two tensors of one
    dtype give that dtype; a floating tensor and a Python float give the tensor's dtype."""
    a, b = inputs
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            return a.dtype if a.dtype is b.dtype else None
        if type(b) is float and a.dtype.is_floating_point:
            return a.dtype
    elif type(a) is float and isinstance(b, Tensor) and b.dtype.is_floating_point:
        return b.dtype
    return None


def _promote_same(inputs):
    """The dtype shared by ``inputs`` when all are tensors of one dtype (addmm's usual call), else None."""
    dt = None
    for t in inputs:
        if not isinstance(t, Tensor) or (dt is not None and t.dtype is not dt):
            return None
        dt = t.dtype
    return dt


def _hooks_before(hooks, op, inputs, attrs, inplace):
    """NOTE [ Op hooks ] 2."""
    for h in reversed(hooks):
        cached = h.before(op, inputs, attrs, inplace)
        if cached is not None:
            return cached
    return None


def _hooks_after(hooks, op, inputs, attrs, result):
    for h in reversed(hooks):
        h.after(op, inputs, attrs, result)


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


def _cast(xp, t: Tensor, target):
    if t.dtype is target:
        return t._data
    return xp.astype(t._data, _dtype.to_array_dtype(xp, target))


def _write_inplace(op, target: Tensor, out, grad_on: bool) -> Tensor:
    if grad_on and target.grad_fn is not None and getattr(target.grad_fn, "multi_view", False):
        from ..ops.linalg import multi_view_error
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
    target._data[...] = out
    bump_version(target, op.name)
    return target


def _short(d) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[d.name]


def bump_version(t: Tensor, opname: str) -> None:
    vc = t._vc if t._vc is not None else t._storage     # NOTE [ Version counters ] (engine/core/tensor.py)
    vc.version += 1
    if _events.active:
        _events.emit("version", tensor=t._id, storage=t._storage.id, version=vc.version, op=opname)


def _save(op, node, inputs, needs, result, aux):
    if not op.save:
        return
    argpos = op.argpos
    for name, needed_by in op.save.items():
        if needed_by:
            if op.variadic and op.args[-1] in needed_by:
                want = any(needs[len(op.args) - 1:]) or any(needs[argpos[a]] for a in needed_by if a != op.args[-1])
            else:
                want = False
                for a in needed_by:
                    if needs[argpos[a]]:
                        want = True
                        break
            if not want:
                continue
        if name == "result":
            node._saved["result"] = SavedTensor(result, "result", node, True)     # node.save, inlined
        elif aux is not None and name in aux:
            node._saved[name] = SavedTensor(aux[name], name, node, False)
        elif op.variadic and name == op.args[-1]:
            rest = inputs[len(op.args) - 1:]
            node._attrs[name + "#n"] = len(rest)
            for k, t in enumerate(rest):
                if isinstance(t, Tensor):
                    node.save(f"{name}#{k}", t)
        else:
            t = inputs[argpos[name]]
            if isinstance(t, Tensor):
                node._saved[name] = SavedTensor(t, name, node, t is result)
            else:
                node._attrs[name] = t


class OpNode(Node):
    """The grad_fn of a table op."""

    _promote_to = None

    def __init__(self, op, name, inputs, needs, attrs):
        self.id = _events.new_id()           # Node.__init__, inlined (in its order: a dying node
        self.next_functions = ()             # drops its edges before its saved tensors)
        self._saved = {}
        self.num_outputs = 1
        self._op = op
        self._name = name
        self._attrs = {**op.defaults, **attrs} if op.defaults else dict(attrs)
        self._needs = needs
        self._in_meta = [(tuple(t._data.shape), t.dtype) if isinstance(t, Tensor) else None for t in inputs]
        if op.nondiff:  # NOTE [ Dispatch ] 6
            names = op.args + (op.args[-1],) * (len(inputs) - len(op.args)) if op.variadic else op.args
            self._edge_pos = [i for i in range(len(inputs)) if names[i] not in op.nondiff]
        else:
            self._edge_pos = None
        if self._edge_pos is None:
            self.next_functions = tuple([edge_of(t) if (n and isinstance(t, Tensor)) else (None, 0)
                                         for t, n in zip(inputs, needs)])
        else:
            self.next_functions = tuple(edge_of(t) if (isinstance(t, Tensor) and n) else (None, 0)
                                        for k, (t, n) in enumerate(zip(inputs, needs))
                                        if k in self._edge_pos)

    def apply(self, grads, F=None):
        g = grads[0]
        s = _SavedView(self, F)
        res = self._op.bwd(F, g, s)
        out = []
        for r, meta, need in zip(res, self._in_meta, self._needs):
            if r is None or not need:
                out.append(None)
                continue
            shape, dt = meta
            if type(r) is _ndarray:   # F.shape / F.dtype without the calls
                if r.shape != shape:
                    r = F.sum_to(r, shape)
                if _NP_DT.get(r.dtype) is not dt:
                    if F.dtype(r) is not dt:
                        r = F.astype(r, dt)
            else:
                if F.shape(r) != shape:
                    r = F.sum_to(r, shape)
                if F.dtype(r) is not dt:
                    r = F.astype(r, dt)
            out.append(r)
        return out if self._edge_pos is None else [out[i] for i in self._edge_pos]


    def __getattr__(self, item):
        if item == "_saved_indices" and "template" in self.__dict__.get("_attrs", ()):
            return self._aligned_indices()
        try:
            return super().__getattr__(item)
        except AttributeError:
            # as PyTorch: a tensor the op saves only when some gradient needs it reads as None
            op = self.__dict__.get("_op")
            if op is not None and item.startswith("_saved_") and item[7:] in op.save:
                return None
            raise


    def _aligned_indices(self):
        """The index tensors one per indexed dim, None for a dim a full slice keeps, up to the last
        tensor (PyTorch's ``_saved_indices`` of IndexBackward0: ``x[:, i]`` gives ``(None, i)``)."""
        tensors = iter(super().__getattr__("_saved_indices"))
        out = tuple(next(tensors) if p is _SLOT else None for p in self._attrs["template"])
        last = max((k for k, p in enumerate(self._attrs["template"]) if p is _SLOT), default=-1)
        return out[:last + 1]


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


class _SavedView:
    """Attribute access to a node's saved values and attributes, in F's currency."""

    def __init__(self, node, F):
        self._node = node
        self._F = F
        self.needs = node._needs

    def __getattr__(self, name):
        node = self._node
        if name == "shapes":   # built on first use
            value = self.shapes = [m[0] if m else None for m in node._in_meta]
            return value
        if name in node._saved:
            value = self._F.unpack(node._saved[name], node)  # one unpack per apply
            to = node._promote_to
            if to is not None and not self._F.differentiable and self._F.dtype(value) is not to:
                value = self._F.astype(value, to)       # NOTE [ Dispatch ] 7
            self.__dict__[name] = value
            return value
        if name in node._attrs:
            n = node._attrs[name]
            if name + "#n" in node._attrs:
                pass
            return n
        if name + "#n" in node._attrs:
            return [self._F.unpack(node._saved[f"{name}#{k}"], node) if f"{name}#{k}" in node._saved else None
                    for k in range(node._attrs[name + "#n"])]
        raise AttributeError(name)


def _emit_op(op, inputs, result, node, attrs):
    f, line = _events.user_frame()
    _events.emit("op", op=op.name,
                 inputs=[tensor_info(t) if isinstance(t, Tensor) else {"scalar": repr(t)} for t in inputs],
                 output=tensor_info(result),
                 node=node_info(node) if node is not None else None,
                 file=f, line=line, region=_events.region())
