"""Where ``a * b`` and ``loss.backward()`` land: thin functions over the primitive rows.

``a * b`` is ``Tensor.__mul__`` -> :func:`mul` -> ``dispatch.apply(OPS["mul"], ...)``
(core/primitives.py has the row, core/dispatch.py runs it); ``loss.backward()`` is
:func:`core.backward.backward`. The rest of the Tensor methods are bound by the functions
layer (``engine/_tensor_methods.py``), each name in exactly one place.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..backend import dtypes as _dtype
from .backward import backward
from .dispatch import apply, broadcast_mismatch, direct
from .table import OPS as _O
from .tensor import Tensor


def _t(x):
    """``x`` when it is a tensor, else None."""
    return x if isinstance(x, Tensor) else None


def _shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _broadcast_check(a, b):
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return
    sa, sb = a._data.shape, b._data.shape
    if sa == sb:
        return
    msg = broadcast_mismatch(sa, sb)
    if msg:
        raise RuntimeError(msg)


def _scalar_ok(x, name):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic):      # before the float check: np.float64 is a float, but a NumPy scalar
        return x.item()                # would make NumPy compute in float64; PyTorch treats it as a number
    if isinstance(x, (builtins.bool, int, builtins.float, complex)):
        return x
    raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, not {type(x).__name__}")


def _binary(name, a, b, **attrs):
    if not attrs and isinstance(a, Tensor):
        out = direct(_O[name], a, b)    # NOTE [ Direct path ]
        if out is not None:
            return out
    a = _scalar_ok(a, name)
    b = _scalar_ok(b, name)
    _broadcast_check(a, b)
    return apply(_O[name], [a, b], attrs or None)


# ---- arithmetic ----------------------------------------------------------------------------
def add(input, other, *, alpha=1):
    return _binary("add", input, other, **({"alpha": alpha} if alpha != 1 else {}))


def _is_bool(x):
    return x.dtype is _dtype.bool_ if isinstance(x, Tensor) else isinstance(x, builtins.bool)

def sub(input, other, *, alpha=1):
    if alpha == 1 and isinstance(input, Tensor):
        out = direct(_O["sub"], input, other)    # NOTE [ Direct path ]: floating operands, no bool check due
        if out is not None:
            return out
    if _is_bool(input) or _is_bool(other):
        if _is_bool(input) and _is_bool(other):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                               "`logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return _binary("sub", input, other, **({"alpha": alpha} if alpha != 1 else {}))


subtract = sub


def mul(input, other):
    return _binary("mul", input, other)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of this tensor w.r.t. graph leaves (accumulated into ``.grad``)."""
    backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


Tensor.backward = _tensor_backward
# the functions themselves, no lambda between: ``a * b`` calls mul(a, b) (x.__radd__(2) is add(x, 2))
Tensor.add = Tensor.__add__ = Tensor.__radd__ = add
Tensor.sub = Tensor.subtract = Tensor.__sub__ = sub
Tensor.__rsub__ = lambda self, other: sub(other, self)
Tensor.mul = Tensor.multiply = Tensor.__mul__ = Tensor.__rmul__ = mul
