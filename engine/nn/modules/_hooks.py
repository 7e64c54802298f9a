"""A Module's hooks: forward pre-hooks and hooks (its own and the global ones), full backward hooks
(``register_full_backward_hook``, ``register_full_backward_pre_hook``) and the handles they
return; mixed into ``Module`` (module.py).

NOTE [ Module backward hooks ]
1. As PyTorch's BackwardHook: the module's tensor inputs that require grad pass through one
   identity Function before forward, and its tensor outputs through another after it, so the
   graph shows two BackwardHookFunctionBackward nodes around the module's own nodes.
2. The outputs' node sees the gradient with respect to the outputs (``grad_output``) first: the
   backward pre-hooks run there, ``hook(module, grad_output)``, and may return a replacement.
3. The inputs' node sees the gradient with respect to the inputs (``grad_input``): the backward
   hooks run there, ``hook(module, grad_input, grad_output)``, and may return a replacement.
   ``grad_input`` has one entry per positional tensor argument (None where it needs no gradient).
4. When no input requires grad, the hooks run at the outputs' node with ``grad_input`` all None.
"""
from __future__ import annotations

import itertools
import warnings

from ...core.tensor import Tensor
from ...core.graph import _Handle
from ...autograd.function import Function

_global_forward_pre_hooks: list = []
_global_forward_hooks: list = []


class BackwardHookFunction(Function):
    """The identity; its node is where a module's backward hooks see gradients."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _replace(old: tuple, new, what: str) -> tuple:
    if new is None:
        return old
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"Backward hook returned an invalid number of grad_{what}, got {len(new)}, but "
                           f"expected {len(old)}")
    return new


def call_with_backward_hooks(module, args, kwargs, run):
    """``run(args, kwargs)`` (the forward with its forward hooks) wrapped as NOTE [ Module backward hooks ]."""
    state = {"grad_output": None}
    slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    needs = [i for i in slots if args[i].requires_grad]
    args = list(args)
    if needs:
        wrapped = BackwardHookFunction.apply(*[args[i] for i in needs])
        for i, t in zip(needs, wrapped):
            args[i] = t

        def at_inputs(grad_inputs, grad_outputs):         # rule 3 (the node's outputs are the module's inputs)
            given = dict(zip(needs, grad_outputs))
            grad_input = tuple(given.get(i) for i in slots)
            for hook in list(module._backward_hooks.values()):
                grad_input = _replace(grad_input, hook(module, grad_input, state["grad_output"]), "input")
            by_slot = dict(zip(slots, grad_input))
            return tuple(by_slot[i] for i in needs)
        wrapped[0].grad_fn.register_hook(at_inputs)
    elif module._backward_hooks:
        warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                      "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                      "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=3)
    out = run(tuple(args), kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    pos = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not pos:
        return out
    hooked = BackwardHookFunction.apply(*[outs[k] for k in pos])
    new_outs = list(outs)
    for k, t in zip(pos, hooked):
        new_outs[k] = t

    def at_outputs(grad_outputs):                          # rules 2 and 4
        grad_output = tuple(grad_outputs)
        for hook in list(module._backward_pre_hooks.values()):
            grad_output = _replace(grad_output, hook(module, grad_output), "output")
        state["grad_output"] = grad_output
        if not needs:
            grad_input = (None,) * len(slots)
            for hook in list(module._backward_hooks.values()):
                hook(module, grad_input, grad_output)
        return grad_output
    hooked[0].grad_fn.register_prehook(at_outputs)
    return tuple(new_outs) if isinstance(out, tuple) else new_outs[0]


class _HooksMixin:
    """The hooks of ``Module``: registration, and the call that runs them."""

    def _call_with_hooks(self, args, kwargs):
        for hid, hook in itertools.chain(((None, h) for h in _global_forward_pre_hooks),
                                         list(self._forward_pre_hooks.items())):
            if hid is not None and hid in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hid, hook in itertools.chain(((None, h) for h in _global_forward_hooks),
                                         list(self._forward_hooks.items())):
            if hid is not None and hid in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, out)
            else:
                res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``(module, args, kwargs)``) runs before forward; may replace args."""
        return self._add_hook(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs, hook, prepend,
                              with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` runs after forward; a returned value replaces the output."""
        return self._add_hook(self._forward_hooks, self._forward_hooks_with_kwargs, hook, prepend, with_kwargs)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect to the module's
        inputs are computed; a returned tuple replaces grad_input (NOTE [ Module backward hooks ])."""
        return self._add_hook(self._backward_hooks, set(), hook, prepend, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients with respect to the module's outputs are
        known; a returned tuple replaces grad_output (NOTE [ Module backward hooks ])."""
        return self._add_hook(self._backward_pre_hooks, set(), hook, prepend, False)

    @staticmethod
    def _add_hook(table, kw_set, hook, prepend, with_kwargs):
        handle = _ModuleHookHandle(table, kw_set)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        if with_kwargs:
            kw_set.add(handle.id)
        return handle


class _ModuleHookHandle:
    """What ``register_forward_hook`` returns; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, table, kw_set):
        self.id = next(_ModuleHookHandle._ids)
        self._table = table
        self._kw = kw_set

    def remove(self) -> None:
        self._table.pop(self.id, None)
        self._kw.discard(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_module_forward_pre_hook(hook):
    """A pre-hook ``hook(module, args)`` run before every module's forward."""
    _global_forward_pre_hooks.append(hook)
    return _Handle(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook):
    """A hook ``hook(module, args, output)`` run after every module's forward."""
    _global_forward_hooks.append(hook)
    return _Handle(_global_forward_hooks, hook)
