"""``engine.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``.

Trade compute for memory: a checkpointed region keeps only its inputs in forward and
recomputes what backward needs. Two variants (``use_reentrant``), selective
checkpointing by op policy, ``checkpoint_sequential`` for chains, and a planner
(``engine.utils.planner``) that picks the segments for a memory budget.

Differs from PyTorch: ``determinism_check="default"`` also compares values (by a
fingerprint, NOTE [ Checkpoint determinism check ]); "metadata" is PyTorch's default
check. ``debug=True`` is not supported (record a trace with ``engine.record()``).
Selective-checkpoint policies name ops by strings ("mm", "relu").
"""
from __future__ import annotations

import contextlib
import warnings

from ._common import CheckpointError, detach_variable
from ._nonreentrant import GraphExecGroup, checkpoint_without_reentrant
from ._reentrant import CheckpointFunction, check_backward_validity
from ._rng import get_device_states, set_device_states
from ._selective import CheckpointPolicy, SelectiveCheckpointContext, create_selective_checkpoint_contexts

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "noop_context_fn",
           "set_checkpoint_early_stop", "detach_variable", "check_backward_validity", "get_device_states",
           "set_device_states", "GraphExecGroup", "DefaultDeviceType", "set_checkpoint_debug_enabled"]


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_early_stop_override = None


class DefaultDeviceType:
    """The device type whose RNG state is stashed when no tensor argument names one (as PyTorch)."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if DefaultDeviceType._default_device_type is None:
            from ...cuda import is_available
            DefaultDeviceType._default_device_type = "cuda" if is_available() else "cpu"
        return DefaultDeviceType._default_device_type


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """PyTorch's switch for checkpoint(debug=True) everywhere; glassgrad has no debug mode
    (record a trace with engine.record() instead), so enabling it raises."""
    if enabled:
        raise NotImplementedError("checkpoint debug mode is not supported by glassgrad; record the run with "
                                  "engine.record() to see every op of the forward and the recomputation")
    yield


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Within the block, non-reentrant checkpoints created stop (or not) recomputing early."""
    global _early_stop_override
    prev = _early_stop_override
    _early_stop_override = enable
    try:
        yield
    finally:
        _early_stop_override = prev


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its activations; recompute them in backward.

    ``use_reentrant=None`` warns and uses the reentrant variant, as PyTorch 2.13 does.
    ``preserve_rng_state=True`` (a keyword) replays the forward's RNG state in the recompute.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
            "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
            "is recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if debug:
        raise NotImplementedError("checkpoint(debug=True) is not supported by glassgrad; record the run with "
                                  "engine.record() to see every op of the forward and the recomputation")
    if use_reentrant:
        if context_fn is not noop_context_fn:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    stop = _early_stop_override if _early_stop_override is not None else early_stop
    return checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, stop, args, kwargs)


def _children(functions) -> list:
    from ...nn import Sequential
    if isinstance(functions, Sequential):
        return list(functions.children())
    return list(functions)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Split ``functions`` (an nn.Sequential or a list of callables) into ``segments`` chunks
    and checkpoint every chunk but the last, as PyTorch.

    Chunks have ``len(functions) // segments`` functions; the last one takes the rest and
    runs normally (so ``segments=1`` checkpoints nothing).
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
            "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    functions = _children(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_run_range(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _run_range(functions, end + 1, len(functions) - 1)(input)


def _run_range(functions, start, end):
    def forward(input):
        for j in range(start, end + 1):
            input = functions[j](input)
        return input
    forward.__qualname__ = f"segment[{start}:{end + 1}]"
    return forward
