"""Module backward hooks: ``register_full_backward_hook`` and ``register_full_backward_pre_hook``.

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

import warnings

from ..core.tensor import Tensor
from ..autograd.function import Function


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
