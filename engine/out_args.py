"""``out=`` on the torch.* functions programs pass it to: the result written into a given tensor.

NOTE [ out= arguments ]
1. ``torch.add(a, b, out=t)`` computes ``add(a, b)`` and writes it into ``t``, which it returns.
   Only the ``torch.*`` face takes ``out=``: the library's own calls and the backward formulas use
   ``engine.functional`` directly and never pay for it.
2. As in PyTorch (the write is ``into_out`` in engine/functions/factories.py, the factories' too): with grad mode on and an argument that requires grad, ``out=`` is refused (an
   out tensor has no history); a result that cannot be cast to ``out``'s dtype (a float into an
   integer tensor) is refused in PyTorch's words, otherwise it is cast; an ``out`` of another shape
   is resized, with PyTorch's warning when it held elements.
3. The write goes through ``out``'s storage (its version goes up), so views of ``out`` see it.
"""
from __future__ import annotations

import functools

from .core.grad_mode import is_grad_enabled
from .core.tensor import Tensor
from .functions.factories import into_out

NAMES = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "matmul", "mm", "bmm",
         "cat", "concat", "concatenate", "stack", "sum", "mean", "prod", "clamp", "clip", "exp", "log", "sqrt",
         "abs", "neg", "pow", "maximum", "minimum", "where", "sigmoid", "tanh", "sin", "cos", "floor", "ceil",
         "round", "remainder", "fmod", "mv", "addmm", "cumsum", "argmax", "argmin", "eq", "ne", "lt", "le", "gt",
         "ge", "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or")


def _requires_grad(args, kwargs) -> bool:
    def walk(v):
        if isinstance(v, Tensor):
            return v.requires_grad
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        return False
    return any(walk(a) for a in args) or any(walk(v) for v in kwargs.values())


def with_out(fn, name: str):
    """Rule 1: ``fn`` taking ``out=``."""
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if is_grad_enabled() and _requires_grad(args, kwargs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        return into_out(fn(*args, **kwargs), out, name)
    return call
