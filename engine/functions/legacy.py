"""PyTorch's legacy constructors: ``torch.Tensor(...)`` and the typed classes ``FloatTensor``,
``DoubleTensor``, ``LongTensor``, ``IntTensor``, ``BoolTensor``, ``HalfTensor``, ``BFloat16Tensor``, ``ByteTensor``,
``CharTensor``, ``ShortTensor`` (CPU only, as their PyTorch names say).

``torch.Tensor(2, 3)`` makes an uninitialized 2x3 tensor of the default dtype, ``torch.Tensor([1, 2])``
one from data; ``isinstance(x, torch.FloatTensor)`` asks whether ``x`` is a float32 CPU tensor.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..backend import dtypes as _dtype
from ..backend.size import Size
from ..core.tensor import Tensor
from .factories import empty, tensor


_NAMES = {"FloatTensor": "float32", "DoubleTensor": "float64", "LongTensor": "int64", "IntTensor": "int32",
          "BoolTensor": "bool", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8",
          "CharTensor": "int8", "ShortTensor": "int16"}


def _dt(name: str):
    return _dtype.bool_ if name == "bool" else getattr(_dtype, name)


def legacy_new(dtype, args, kwargs):
    """What ``torch.Tensor(*args)`` / ``torch.FloatTensor(*args)`` build (``dtype`` None: the default)."""
    dt = dtype or _dtype.get_default_dtype()
    device = kwargs.pop("device", None)
    if kwargs:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"new() received an invalid combination of arguments - got ({got})")
    if not args:
        return empty(0, dtype=dt, device=device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            return a            # PyTorch hands back the very tensor
        if isinstance(a, Size):
            return empty(*a, dtype=dt, device=device)
        if isinstance(a, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(a, (list, tuple, np.ndarray)):
            host = np.asarray(a)
            if host.dtype.kind not in "biuf":
                raise TypeError(f"new(): invalid data type '{host.dtype.name}'")
            return tensor(host.astype(_dtype.to_array_dtype(np, dt)), device=device)
        if isinstance(a, numbers.Real) and not isinstance(a, numbers.Integral):
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return empty(*args, dtype=dt, device=device)
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got})")


class _TypedMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype.name == cls._dtype_name and obj.device.type == "cpu"


def _typed(name: str):
    def __new__(cls, *args, **kwargs):
        return legacy_new(_dt(cls._dtype_name), args, dict(kwargs))
    return _TypedMeta(name, (), {"__new__": __new__, "_dtype_name": _NAMES[name], "__module__": "torch",
                                 "__doc__": f"``torch.{name}(...)``: a {_NAMES[name]} CPU tensor (legacy)."})


FloatTensor = _typed("FloatTensor")
DoubleTensor = _typed("DoubleTensor")
LongTensor = _typed("LongTensor")
IntTensor = _typed("IntTensor")
BoolTensor = _typed("BoolTensor")
HalfTensor = _typed("HalfTensor")
BFloat16Tensor = _typed("BFloat16Tensor")
ByteTensor = _typed("ByteTensor")
CharTensor = _typed("CharTensor")
ShortTensor = _typed("ShortTensor")


def dtype_of_type_name(t):
    """The dtype a ``x.type(...)`` argument names: a dtype, a typed class or 'torch.FloatTensor'."""
    if isinstance(t, _TypedMeta):
        return _dt(t._dtype_name)
    if isinstance(t, str):
        short = t.split(".")[-1]
        if short in _NAMES:
            return _dt(_NAMES[short])
        raise ValueError(f"invalid type: '{t}'")
    return t


def _bind_legacy_constructor():
    """``torch.Tensor(...)`` calls :func:`legacy_new` (the core's Tensor.__new__ reads it)."""
    Tensor._legacy_new = staticmethod(legacy_new)


_bind_legacy_constructor()
