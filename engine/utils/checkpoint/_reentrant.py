"""Reentrant checkpointing: an autograd Function that reruns its region in backward.

NOTE [ Reentrant checkpoint ]
1. Forward runs the function under no_grad (no node inside the region is made, so
   nothing inside is saved and no ``checkpoint_drop`` event exists for it) and saves
   only the region's tensor inputs.
2. Backward reruns the function under enable_grad on detached copies of those inputs
   (phase "recompute", region stamped, forward RNG state replayed), then runs a nested
   backward from the rerun's outputs, which needs the engine to be reentrant; the
   gradients that reach the detached inputs are this node's result.
3. Because the nested backward cannot see the outer call's ``inputs``, the variant
   refuses ``autograd.grad`` and ``backward(inputs=...)``, with PyTorch's error.
4. Only outputs that require grad take part; none at all is PyTorch's error.
"""
from __future__ import annotations

import contextlib
import warnings

from ... import events as _events
from ...core.tensor import Tensor
from ...autograd import backward as _autograd_backward
from ...core import grad_mode
from ...core.graph import current_task_has_inputs
from ...autograd.function import Function
from . import _common
from ._rng import RngStash


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng = RngStash(args) if preserve_rng_state else None
        ctx.region = _events.new_id()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        if _events.active:
            _events.emit("checkpoint_enter", region=ctx.region, fn=_common.fn_name(run_function))
        with grad_mode.no_grad(), _common.region_scope(ctx.region):
            outputs = run_function(*args)
        if _events.active:
            _events.emit("checkpoint_exit", region=ctx.region)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if current_task_has_inputs():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _common.recompute_scope(ctx.region), (ctx.rng.replay() if ctx.rng else contextlib.nullcontext()):
            detached = _common.detach_variable(tuple(inputs))
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad, grads = [], []
        for out, g in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                with_grad.append(out)
                grads.append(g)
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _autograd_backward(with_grad, grads)
        del outputs, with_grad, grads
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)
