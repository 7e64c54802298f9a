"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``."""
from __future__ import annotations

import functools
import threading

_state = threading.local()
_inference_blocks = 0   # inference_mode blocks open in any thread: a cheap pre-check for Tensor._wrap


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def is_inference_mode_enabled() -> bool:
    return getattr(_state, "inference", False)


def _set(enabled: bool) -> None:
    _state.enabled = enabled


class _Mode:
    """Context manager and decorator base, as in torch.autograd.grad_mode."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper

    _args: tuple = ()


class no_grad(_Mode):
    """Disable gradient recording inside the block."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(False)

    def __exit__(self, *exc):
        _set(self.prev)


class enable_grad(_Mode):
    """Enable gradient recording inside the block (e.g. within no_grad)."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(True)

    def __exit__(self, *exc):
        _set(self.prev)


class set_grad_enabled(_Mode):
    """Enable or disable gradient recording; works as a function or a context manager."""

    def __init__(self, mode: bool):
        self._args = (mode,)
        self.prev = is_grad_enabled()
        _set(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(self.prev)


class inference_mode(_Mode):
    """Like no_grad; tensors made inside are inference tensors (they never require grad)."""

    def __init__(self, mode: bool = True):
        self._args = (mode,)
        self.mode = mode

    def __enter__(self):
        global _inference_blocks
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        if self.mode:
            _set(False)
            _state.inference = True
            _inference_blocks += 1

    def __exit__(self, *exc):
        global _inference_blocks
        _set(self.prev[0])
        _state.inference = self.prev[1]
        if self.mode:
            _inference_blocks -= 1
