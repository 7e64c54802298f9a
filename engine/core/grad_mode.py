"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``."""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    enabled = True          # per thread; the class values are a new thread's
    inference = False


_state = _State()
_inference_blocks = 0   # inference_mode blocks open in any thread: a cheap pre-check for Tensor._wrap


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _set(enabled: bool) -> None:
    _state.enabled = enabled


class _Mode:
    """Context manager and decorator base, as in torch.autograd.grad_mode.

    As a decorator the mode holds for each call (and, for a generator function, while
    the generator runs each step), and is restored after it.
    """

    def __call__(self, fn):
        make = functools.partial(self.__class__, *self._args)
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                try:
                    with make():
                        value = next(gen)
                    while True:
                        try:
                            sent = yield value
                        except BaseException as e:  # noqa: BLE001 - passed on into the generator
                            with make():
                                value = gen.throw(e)
                        else:
                            with make():
                                value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make():
                return fn(*args, **kwargs)
        return wrapper

    _args: tuple = ()


class _NoParams(_Mode):
    """``@no_grad`` works without the parentheses too, as in PyTorch."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParams):
    """Disable gradient recording inside the block."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(False)

    def __exit__(self, *exc):
        _set(self.prev)


class enable_grad(_NoParams):
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

    def __call__(self, fn):
        _set(self.prev)  # used as a decorator: the mode applies inside calls only
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(self.prev)


class inference_mode(_Mode):
    """Like no_grad; tensors made inside are inference tensors (they never require grad)."""

    def __new__(cls, mode=True):
        if callable(mode):  # @inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

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
