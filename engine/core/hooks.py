"""Hooks: on tensors (``register_hook``, ``retain_grad``), on several tensors at once, and on ops.

Tensor hooks run in backward (core/backward.py calls ``run_pre_hooks``/``run_post_hooks``);
op hooks run around every op in dispatch, which is how activation checkpointing and
``engine.compile`` watch a forward pass (NOTE [ Op hooks ]).

NOTE [ Op hooks ]
1. ``op_hooks.stack`` (per thread, empty unless checkpointing pushes one) holds objects
   with ``before(op, inputs, attrs, inplace)`` and ``after(op, inputs, attrs, result)``;
   with the stack empty an op pays one attribute read.
2. ``before`` runs ahead of the kernel, innermost hook first; it may raise (early stop
   of a recomputation) or return a tensor whose array and storage stand in for the
   kernel's output (a cached result of selective checkpointing). Returning one is only
   allowed for plain ops (no view, no in-place target, no aux outputs).
3. ``after`` runs once the op's output (and node) exist, before the op returns.
4. Before an op with several outputs runs, a hook with a ``multi_output(op)`` method is
   told; it may raise (``engine.compile``'s tracer stops its capture there: a graph break).
"""
from __future__ import annotations

import threading
import weakref

from .tensor import Tensor, _Handle


# ---- hooks on one tensor (bound as Tensor methods) ---------------------------------------------


def _retain_grad(self) -> None:
    """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    self._retains_grad = True
    self.grad_fn._own_dict("_retain_grad")[self._output_nr] = weakref.ref(self)


def _register_hook(self, hook):
    """Run ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        lst = self.grad_fn._own_dict("_tensor_pre_hooks").setdefault(self._output_nr, [])
    else:
        if self._hooks is None:
            self._hooks = []
        lst = self._hooks
    lst.append(hook)
    return _Handle(lst, hook)


def _register_post_accumulate_grad_hook(self, hook):
    """Run ``hook(tensor)`` each time a backward has accumulated into this leaf's ``.grad``."""
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not self._post_acc_hooks:
        self._post_acc_hooks = []   # an instance list; the class default is an empty tuple
    hooks = self._post_acc_hooks
    hooks.append(hook)
    return _Handle(hooks, hook)


Tensor.retain_grad = _retain_grad
Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook


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


def _hooks_multi_output(hooks, op):
    """NOTE [ Op hooks ] 4."""
    for h in reversed(hooks):
        tell = getattr(h, "multi_output", None)
        if tell is not None:
            tell(op)
