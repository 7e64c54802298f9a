"""``autograd.Function``: user-defined ops with ``forward(ctx, ...)`` and ``backward(ctx, ...)``."""
from __future__ import annotations

import weakref

from .. import events as _events
from ..core import grad_mode
from ..core.graph import Node


class FunctionCtx:
    """The ``ctx`` object passed to forward and backward."""

    def __init__(self):
        self.to_save = ()
        self.needs_input_grad = ()
        self.dirty = ()
        self.non_differentiable = ()
        self.materialize_grads = True
        self._node = None

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def mark_dirty(self, *tensors):
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value

    @property
    def saved_tensors(self):
        node = self._node() if self._node is not None else None
        if node is None:
            return tuple(self.to_save)
        return tuple(node._saved[f"{i}"].unpack(node) if f"{i}" in node._saved else None
                     for i in range(node._n_saved))


class BackwardCFunction(Node):
    """The grad_fn of a custom Function: calls the Function's backward."""

    takes_tensors = True   # the engine hands it gradient tensors, not arrays (one storage each)

    def __init__(self, cls, ctx, inputs, needs):
        super().__init__()
        self._cls = cls
        self._name = cls.__name__ + "Backward"
        self.ctx = ctx
        self._needs = needs
        self._n_saved = 0
        self._in_meta = [(tuple(t.shape), t.dtype) if _is_tensor(t) else None for t in inputs]
        # as PyTorch's: one edge per *tensor* argument of apply; other arguments get none
        self._tensor_pos = [i for i, t in enumerate(inputs) if _is_tensor(t)]
        from ..core.graph import edge_of
        self.next_functions = tuple(edge_of(inputs[i]) if needs[i] else (None, 0) for i in self._tensor_pos)

    def __repr__(self):    # as PyTorch's: a Python class, named with its module
        return f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>"

    def apply(self, grads, F=None):
        from ..core.fns import TensorFns
        from ..core.tensor import Tensor
        from .. import functional as E
        tensor_mode = isinstance(F, TensorFns)
        gs = []
        for g, meta in zip(grads, self._out_meta):
            if g is None and self.ctx.materialize_grads:
                g = E.zeros(meta[0], dtype=meta[1], device=meta[2])
            elif g is not None and not isinstance(g, Tensor):
                g = Tensor._wrap(g)
            gs.append(g)
        result = self._cls.backward(self.ctx, *gs)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) < len(self._needs):
            raise RuntimeError(f"function {self._name} returned an incorrect number of gradients "
                               f"(expected {len(self._needs)}, got {len(result)})")
        result = result[:len(self._needs)]
        out = []
        for r, meta, need in zip(result, self._in_meta, self._needs):
            if r is not None and meta is None:
                raise RuntimeError(f"function {self._name} returned a gradient different than None at position "
                                   f"{len(out) + 1}, but the corresponding forward input was not a Variable")
            if r is None or not need:
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise TypeError(f"function {self._name} returned a gradient that is not a Tensor")
            if meta is not None and tuple(r.shape) != meta[0]:
                raise RuntimeError(f"Function {self._name} returned an invalid gradient at index "
                                   f"{len(out)} - got [{', '.join(map(str, r.shape))}] but expected shape "
                                   f"compatible with [{', '.join(map(str, meta[0]))}]")
            if meta is not None and r.dtype != meta[1]:
                r = r.to(dtype=meta[1])   # as PyTorch's engine: a gradient takes its input's dtype
            out.append(r if tensor_mode else r._data)
        return [out[i] for i in self._tensor_pos]    # one gradient per edge


def _is_tensor(x) -> bool:
    from ..core.tensor import Tensor
    return isinstance(x, Tensor)


class Function:
    """Base class for custom autograd ops; call ``MyFn.apply(*args)``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # each Function gets its own node class, named as PyTorch names it (``ExpBackward``)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,), {"__module__": __name__})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..core.inplace import bump_version
        from ..core.tensor import Tensor
        ctx = FunctionCtx()
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.needs_input_grad = needs
        with grad_mode.no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        track = grad_mode.is_grad_enabled() and any(needs)
        dirty_ids = {id(t) for t in ctx.dirty}
        for t in ctx.dirty:
            bump_version(t, cls.__name__)
        if not track:
            return out
        node = cls._backward_cls(cls, ctx, args, needs)
        node._out_meta = []
        non_diff = {id(t) for t in ctx.non_differentiable}
        input_ids = {id(a) for a in args if isinstance(a, Tensor)}
        wrapped = []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                wrapped.append(o)
                node._out_meta.append(None)
                continue
            if id(o) in input_ids and id(o) not in dirty_ids:
                o = o.detach()  # an input returned as is becomes an alias with new history
            node._out_meta.append((tuple(o.shape), o.dtype, o.device))
            if id(o) not in non_diff and o.dtype.is_floating_point:
                o.grad_fn = node
                o._output_nr = i
            wrapped.append(o)
        node.num_outputs = len(outs)
        outputs = [w for w in wrapped if isinstance(w, Tensor)]
        for i, t in enumerate(ctx.to_save):
            if t is None:
                continue
            node.save(f"{i}", t, is_output=any(t is w for w in outputs))
        node._n_saved = len(ctx.to_save)
        # the node holds them now: ctx keeping them too would keep them alive after release, and a
        # strong ctx -> node reference would close a cycle (node.ctx -> ctx) that only gc frees
        ctx.to_save = ()
        ctx._node = weakref.ref(node)
        if _events.active:
            from ..core.graph import node_info
            from ..core.tensor import tensor_info
            f, line = _events.user_frame()
            _events.emit("op", op=cls.__name__, inputs=[tensor_info(a) for a in args if isinstance(a, Tensor)],
                         output=tensor_info(outputs[0]) if outputs else None, node=node_info(node),
                         file=f, line=line, region=_events.region())
        return wrapped[0] if single else tuple(wrapped)


class InplaceFunction(Function):
    pass


def once_differentiable(fn):
    return fn
