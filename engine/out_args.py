"""``out=`` on the torch.* functions programs pass it to: the result written into a given tensor.

NOTE [ out= arguments ]
1. ``torch.add(a, b, out=t)`` computes ``add(a, b)`` and writes it into ``t``, which it returns.
   Only the ``torch.*`` face takes ``out=``: the library's own calls and the backward formulas use
   ``engine.functional`` directly and never pay for it.
2. As in PyTorch: with grad mode on and an argument that requires grad, ``out=`` is refused (an
   out tensor has no history); a result that cannot be cast to ``out``'s dtype (a float into an
   integer tensor) is refused in PyTorch's words, otherwise it is cast; an ``out`` of another shape
   is resized, with PyTorch's warning when it held elements.
3. The write goes through ``out``'s storage (its version goes up), so views of ``out`` see it.
"""
from __future__ import annotations

import functools
import warnings

from .core.grad_mode import is_grad_enabled, no_grad
from .core.tensor import Tensor

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


def write(result, out, name: str):
    """Rules 2-3."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.dtype is not out.dtype:
        if result.dtype.is_floating_point and not out.dtype.is_floating_point:
            raise RuntimeError(f"result type {_short(result.dtype)} can't be cast to the desired output type "
                               f"{_short(out.dtype)}")
        result = result.to(out.dtype)
    with no_grad():
        if tuple(out.shape) != tuple(result.shape):
            if out.numel():
                warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                              f"which does not match the required output shape {list(result.shape)}. This behavior "
                              "is deprecated, and in a future PyTorch release outputs will not be resized unless "
                              "they have zero elements.", UserWarning, stacklevel=3)
            out.data = result.clone()
        else:
            out.copy_(result)
    return out


def _short(dt) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool"}.get(dt.name,
                                                                                                       dt.name)


def with_out(fn, name: str):
    """Rule 1: ``fn`` taking ``out=``."""
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if is_grad_enabled() and _requires_grad(args, kwargs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        return write(fn(*args, **kwargs), out, name)
    return call
