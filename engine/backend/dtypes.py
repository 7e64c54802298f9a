"""Dtypes with PyTorch's names, and PyTorch's type-promotion rules for them."""
from __future__ import annotations

import threading


class dtype:
    """A tensor element type (``engine.float32`` ...), named as in PyTorch."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed", "_rank", "_kind")

    def __init__(self, name: str, itemsize: int, kind: str, rank: int):
        self.name = name
        self.itemsize = itemsize
        self._kind = kind  # "b", "i" or "f": PyTorch's promotion category
        self._rank = rank
        self.is_floating_point = kind == "f"
        self.is_complex = False
        self.is_signed = kind != "b"

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return self


bool_ = dtype("bool", 1, "b", 0)
int32 = dtype("int32", 4, "i", 1)   # kept where it is asked for; PyTorch's rules decide what ops give
int64 = dtype("int64", 8, "i", 2)
float32 = dtype("float32", 4, "f", 3)
float64 = dtype("float64", 8, "f", 4)

ALL = (bool_, int32, int64, float32, float64)
_NAMES = {d.name: d for d in ALL}
_NAMES.update({"bool_": bool_, "int": int32, "long": int64, "float": float32, "double": float64})


_SHORT = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool"}


def short_name(d: dtype) -> str:
    """PyTorch's scalar-type name of ``d`` as its error messages print it ("Float", "Long")."""
    return _SHORT[d.name]


def _by_name(name: str) -> dtype:
    return _NAMES[name]


_state = threading.local()


def get_default_dtype() -> dtype:
    """The dtype of float tensors made from Python floats (float32 unless changed)."""
    return getattr(_state, "default", float32)


def set_default_dtype(d: dtype) -> None:
    """Set the default floating point dtype; only float32 and float64 are allowed."""
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _state.default = d


def from_array_dtype(xp, adt) -> dtype:
    """The engine dtype of an array dtype (numpy/cupy/array_api_strict)."""
    for d in ALL:
        if adt == to_array_dtype(xp, d):
            return d
    name = str(adt)
    if "float" in name:
        return float64 if "64" in name else float32
    if "int" in name or "uint" in name:
        return int64
    raise TypeError(f"unsupported array dtype {adt!r}; glassgrad supports bool, int32, int64, float32, float64")


def to_array_dtype(xp, d: dtype):
    return getattr(xp, "bool" if d is bool_ else d.name)


def scalar_dtype(value) -> dtype:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return get_default_dtype()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def promote_types(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: the larger of two dtypes."""
    return a if a._rank >= b._rank else b


_KIND_RANK = {"b": 0, "i": 1, "f": 2}


def result_type(operands) -> dtype:
    """PyTorch's promotion over tensors and Python scalars.

    NOTE [ Type promotion ]
    1. Operands fall in three groups: tensors with dims, zero-dim tensors, Python scalars.
    2. Within a group the largest dtype wins.
    3. A lower-priority group only matters when its category (bool < int < float) is
       higher than every higher-priority group's: then a zero-dim tensor gives its own
       dtype, a Python float gives the default dtype, a Python int gives int64.
    """
    dims = zeros = scal = None
    for o in operands:
        if isinstance(o, (bool, int, float)):
            d = scalar_dtype(o)
            scal = d if scal is None else promote_types(scal, d)
        elif hasattr(o, "dtype") and hasattr(o, "shape"):
            d = o.dtype
            if len(o._data.shape if hasattr(o, "_data") else o.shape) == 0:
                zeros = d if zeros is None else promote_types(zeros, d)
            else:
                dims = d if dims is None else promote_types(dims, d)
        else:
            d = scalar_dtype(o)
            scal = d if scal is None else promote_types(scal, d)
    result = dims
    for group in (zeros, scal):
        if group is not None and (result is None or _KIND_RANK[group._kind] > _KIND_RANK[result._kind]):
            result = group
    return result if result is not None else get_default_dtype()
