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


NOTE [ Several outputs ]
1. slogdet, qr, svd and eigh give several tensors from one node, each with its ``output_nr``
   (PyTorch's LinalgEighBackward0 is the grad_fn of both eigenvalues and eigenvectors).
   ``apply_multi`` runs such an op: the kernel returns a tuple of arrays, one per name in
   ``outs``; every floating output gets the node; the node saves outputs as outputs (array
   and storage only, no cycle) under their PyTorch names (``_saved_eigenvectors``).
2. The backward formula gets a ``Grads`` as its gradient: ``g[i]`` is output i's gradient,
   or None when nothing reached that output.
3. The op event names the first output. Selective checkpointing never caches such an op
   (``aux`` is set); ``engine.compile`` stops its capture at it (a graph break, NOTE [ Op hooks ] 4).
4. ``split``/``chunk`` (SplitBackward0), ``split`` with sizes (SplitWithSizesBackward0) and
   ``unbind`` (UnbindBackward0) run the same way with ``views=True``: every output is a view
   sharing the input's storage, base and version counter, and the node is marked
   ``multi_view``. As in PyTorch, an in-place write to such an output while grad mode is on
   and it has that node as its grad_fn is refused (``multi_view_error`` in core/inplace.py).
"""
from __future__ import annotations

import numpy as np

from ..backend import dtypes as _dtype, low_precision as _lp
from .. import events as _events
from ..memory import oom as _oom
from .tensor import _NP_DT, Tensor, tensor_info
from .table import SLOT as _SLOT, OpDef
from . import grad_mode
from .graph import Node, NodeTypes, SavedTensor, edge_of, node_info, watch_death
from .hooks import _hooks_after, _hooks_before, _hooks_multi_output, op_hooks
from .inplace import _move_retain_grad, _snapshot, _write_inplace, rebase_view


def _device_check(op, tensors):
    dev = tensors[0]._storage.device
    for t in tensors[1:]:
        d = t._storage.device
        if d is not dev and d != dev:
            a, b = sorted({str(dev), str(t.device)})
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                               f"devices, {a} and {b}!")
    return dev


_ndarray = np.ndarray
_grad_state = grad_mode._state
_slot, _LOW = _lp.autocast_slot, _lp.LOW


def apply(op: OpDef, inputs: list, attrs: dict | None = None, inplace: Tensor | None = None,
          node_name: str | None = None, return_aux: bool = False):
    """Run ``op`` on ``inputs`` (tensors or Python scalars) and return the output tensor(s)."""
    attrs = attrs or {}
    # float16/bfloat16 and autocast: NOTE [ Low-precision results ] in backend/low_precision.py (rules 1-3)
    inputs = _slot.cast(op.name, inputs) if _slot.cast is not None and inplace is None else inputs
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
        if op.float_op and not (target.is_floating_point or target.is_complex):
            target = cast_to = _dtype.get_default_dtype()
        arrays = [((t._data if t.dtype is target else _cast(xp, t, target)) if isinstance(t, Tensor) else t)
                  for t in inputs]
    else:
        arrays = [t._data if isinstance(t, Tensor) else t for t in inputs]
    low = target if op.promote else tensors[0].dtype
    arrays = _lp.widen(xp, arrays, op, inplace) if low in _LOW else arrays
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
    out = _lp.round_low(xp, out, low, attrs, op.aux) if low in _LOW else out
    out = op.layout(out, arrays) if op.layout is not None and type(out) is _ndarray and out.ndim > 1 else out
    aux = None
    if op.aux:
        out, aux = out
        # one tensor per aux array: what a node saves and what the caller gets share a storage
        aux = {k: Tensor._wrap(v) for k, v in aux.items()}

    grad_on = _grad_state.enabled    # grad_mode.is_grad_enabled(), inlined
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
    elif op.alias:
        result = Tensor._wrap(out, cached._storage if cached is not None else st0)   # the input's bytes, no base
    else:
        result = Tensor._wrap(out, cached._storage if cached is not None else None)

    if not (grad_on and op.differentiable and any_needs and (result.dtype.is_floating_point or result.dtype.is_complex)):
        if inplace is not None and grad_on and inplace.grad_fn is not None:
            inplace.grad_fn = None  # a non-differentiable in-place op cuts the history
        if _events.active:
            _emit_op(op, inputs, result, None, attrs)
        if hooks:
            _hooks_after(hooks, op, inputs, attrs, result)
        return (result, aux) if return_aux else result

    node = OP_TYPES[node_name or op.node](op, inputs, needs, attrs)    # NOTE [ Node types ] (core/graph.py)
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


# NOTE [ Direct path ]
# ``direct(op, a, b)`` runs a two-argument op for ``a * b``, ``x - 0.1`` and the like (core/operators.py
# calls it first) when all of these hold, and returns None otherwise:
# 1. ``a`` is a floating tensor (not float16/bfloat16); ``b`` is a tensor of the same dtype on
#    the same device, or a Python float; the op is a plain row (no view, alias or aux output);
# 2. no op hook, no autocast region, no trace recording;
# 3. the kernel succeeds (on a failure the caller's general path raises PyTorch's error).
# Under 1-2 the general path's promotion, casts, device check, rounding, hooks and events have
# nothing to do, so they are skipped; the output, node, saved tensors and memory accounting are
# made by the same code as in ``apply`` (tests/core/test_direct_path.py compares the two).
def direct(op: OpDef, a, b):
    """``apply(op, [a, b])`` by NOTE [ Direct path ], or None where it does not apply."""
    dt = a.dtype
    if not (dt.is_floating_point and (type(b) is float or isinstance(b, Tensor) and b.dtype is dt
                                      and b._storage.device is a._storage.device)
            and op.plain and not op_hooks.stack and not _events.active and _slot.cast is None) or dt in _LOW:
        return None
    try:
        out = op.fwd(a._storage.xp, a._data, b if type(b) is float else b._data)
    except (ValueError, TypeError, IndexError, MemoryError):
        return None
    if op.layout is not None and out.ndim > 1:      # NOTE [ Output layout ] (backend/layout.py)
        out = op.layout(out, (a._data, b if type(b) is float else b._data))
    result = Tensor._wrap(out)
    needs = (a._requires_grad or a.grad_fn is not None,
             type(b) is not float and (b._requires_grad or b.grad_fn is not None))
    if (needs[0] or needs[1]) and op.differentiable and result.dtype.is_floating_point \
            and _grad_state.enabled:
        inputs = [a, b]
        result._grad_fn = node = OP_TYPES[op.node](op, inputs, needs, {})    # a new output: no view, output_nr 0
        _save(op, node, inputs, needs, result, None)
    return result


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


def _cast(xp, t: Tensor, target):
    if t.dtype is target:
        return t._data
    return xp.astype(t._data, _dtype.to_array_dtype(xp, target))


def _save(op, node, inputs, needs, result, aux):
    if not op.save:
        return
    names = op.plans.get(needs)
    if names is None:     # which saved names these needs want, worked out once per op and needs
        names = op.plans[needs] = tuple(name for name, needed_by in op.save.items() if _wanted(op, needs, needed_by))
    argpos = op.argpos
    for name in names:
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


def _wanted(op, needs, needed_by) -> bool:
    """Whether a saved name is needed: some argument in ``needed_by`` needs a gradient (``()``: always)."""
    if not needed_by:
        return True
    if op.variadic and op.args[-1] in needed_by and any(needs[len(op.args) - 1:]):
        return True
    return any(needs[op.argpos[a]] for a in needed_by if not (op.variadic and a == op.args[-1]))


class OpNode(Node):
    """The grad_fn of a table op."""

    __slots__ = ("_attrs", "_edge_pos", "_in_meta", "_needs", "_op")
    _promote_to = None

    def __init__(self, op, inputs, needs, attrs):      # made as OP_TYPES[name]: the name is its class's
        self.id = _events.new_id()           # Node.__init__, inlined (in its order: a dying node
        self.next_functions = ()             # drops its edges before its saved tensors)
        self._saved = {}
        self.num_outputs = 1
        if _events.active:                   # NOTE [ Node death ] in graph.py
            watch_death(self)
        self._op = op
        self._attrs = {**op.defaults, **attrs} if op.defaults else dict(attrs) if attrs else {}
        self._needs = needs
        self._in_meta = meta = []     # loops, not comprehensions: no frame of their own on this path
        for t in inputs:
            meta.append((tuple(t._data.shape), t.dtype) if isinstance(t, Tensor) else None)
        if op.nondiff:  # NOTE [ Dispatch ] 6
            names = op.args + (op.args[-1],) * (len(inputs) - len(op.args)) if op.variadic else op.args
            self._edge_pos = [i for i in range(len(inputs)) if names[i] not in op.nondiff]
        else:
            self._edge_pos = None
        if self._edge_pos is None:
            edges = []
            for t, n in zip(inputs, needs):
                edges.append(edge_of(t) if n else (None, 0))     # n: t is a tensor that requires grad
            self.next_functions = tuple(edges)
        else:
            self.next_functions = tuple(edge_of(t) if (isinstance(t, Tensor) and n) else (None, 0)
                                        for k, (t, n) in enumerate(zip(inputs, needs))
                                        if k in self._edge_pos)

    def apply(self, grads, F=None):
        g = grads[0]
        s = _SavedView(self, F)
        op = self._op      # a recorded backward may run the op's backward rows (ops/grad_rows.py)
        res = (op.grad_bwd if op.grad_bwd and getattr(F, "differentiable", 0) else op.bwd)(F, g, s)
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
        if item == "_saved_indices" and "template" in (getattr(self, "_attrs", None) or ()):
            return self._aligned_indices()
        try:
            return super().__getattr__(item)
        except AttributeError:
            # as PyTorch: a tensor the op saves only when some gradient needs it reads as None
            op = getattr(self, "_op", None)
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
            return node._attrs[name]
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


# ---- several outputs (NOTE [ Several outputs ]) ----------------------------------------------------
class Grads(tuple):
    """The incoming gradients of a node with several outputs (None where none came)."""


class MultiOutputNode(OpNode):
    def apply(self, grads, F=None):
        return OpNode.apply(self, [Grads(grads)], F)


def apply_multi(opdef, inputs, attrs, outs, views=False):
    """Run ``opdef`` whose kernel returns one array per name in ``outs``; a tuple of tensors back.
    With ``views``, the arrays are views of the first input (NOTE [ Several outputs ] 4)."""
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    if len(tensors) > 1:
        _device_check(opdef, tensors)
    xp = tensors[0]._storage.xp
    hooks = op_hooks.stack
    if hooks:
        _hooks_multi_output(hooks, opdef)
        _hooks_before(hooks, opdef, inputs, attrs, None)
    arrays = opdef.fwd(xp, *[t._data if isinstance(t, Tensor) else t for t in inputs], **attrs)
    results = tuple(_view_of(inputs[0], a) for a in arrays) if views else tuple(Tensor._wrap(a) for a in arrays)
    needs = tuple(isinstance(t, Tensor) and (t._requires_grad or t.grad_fn is not None) for t in inputs)
    node = None
    if grad_mode.is_grad_enabled() and any(needs) and opdef.differentiable:
        node = MULTI_TYPES[opdef.node](opdef, inputs, needs, attrs)
        node.num_outputs = len(results)
        node.multi_view = views
        for i, r in enumerate(results):
            if r.dtype.is_floating_point:
                r.grad_fn, r._output_nr = node, i
        for name, needed_by in opdef.save.items():
            if needed_by and not any(needs[opdef.argpos[a]] for a in needed_by):
                continue
            if name in outs:
                node.save(name, results[outs.index(name)], is_output=True)
            else:
                node.save(name, inputs[opdef.argpos[name]])
    if _events.active:
        _emit_op(opdef, inputs, results[0], node, attrs)
    if hooks:
        _hooks_after(hooks, opdef, inputs, attrs, results[0])
    return results


def _view_of(src, array):
    """``array`` (a view of ``src``'s array) as a view tensor: ``src``'s storage, base and version counter."""
    t = Tensor._wrap(array, src._storage, base_tensor=src._base if src._base is not None else src)
    t._vc = src._vc
    return t


OP_TYPES, MULTI_TYPES = NodeTypes(OpNode), NodeTypes(MultiOutputNode)    # name -> its subclass (NOTE [ Node types ])
