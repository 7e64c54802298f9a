"""Dtypes with PyTorch's names, and PyTorch's type-promotion rules for them."""
from __future__ import annotations

import threading


class dtype:
    """A tensor element type (``engine.float32`` ...), named as in PyTorch."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed", "_kind")

    def __init__(self, name: str, itemsize: int, kind: str, signed: bool = True):
        self.name = name
        self.itemsize = itemsize
        self._kind = kind  # "b", "i", "f" or "c": PyTorch's promotion category (NOTE [ Type promotion ])
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = signed and kind != "b"

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def itemsize_bits(self) -> int:
        return self.itemsize * 8

    def to_real(self):
        """The real dtype of a complex one (complex64 -> float32); a real dtype is itself."""
        return _REAL.get(self, self)

    def to_complex(self):
        """The complex dtype whose parts are this float dtype (float32 -> complex64)."""
        if self.is_complex:
            return self
        if self not in _COMPLEX:
            raise RuntimeError(f"Unknown Complex ScalarType for {short_name(self)}")
        return _COMPLEX[self]


bool_ = dtype("bool", 1, "b")
uint8 = dtype("uint8", 1, "i", signed=False)
int8 = dtype("int8", 1, "i")
int16 = dtype("int16", 2, "i")
int32 = dtype("int32", 4, "i")
int64 = dtype("int64", 8, "i")
float16 = dtype("float16", 2, "f")
bfloat16 = dtype("bfloat16", 2, "f")
float32 = dtype("float32", 4, "f")
float64 = dtype("float64", 8, "f")
complex64 = dtype("complex64", 8, "c")
complex128 = dtype("complex128", 16, "c")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_NAMES = {d.name: d for d in ALL}
_NAMES.update({"bool_": bool_, "int": int32, "long": int64, "float": float32, "double": float64, "half": float16,
               "short": int16, "cfloat": complex64, "cdouble": complex128})
_REAL = {complex64: float32, complex128: float64}
_COMPLEX = {float16: complex64, float32: complex64, float64: complex128}

# PyTorch dtypes glassgrad lacks: ``torch.<name>`` says which dtypes exist (missing_dtype)
LACKING = ("uint16", "uint32", "uint64", "complex32", "chalf", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
           "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
           "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16")


def missing_dtype(name: str) -> AttributeError:
    """The error for ``torch.<name>``, a PyTorch dtype glassgrad lacks."""
    have = [d.name for d in ALL]
    return AttributeError(f"glassgrad has no dtype torch.{name}: its dtypes are {', '.join(have[:-1])} and "
                          f"{have[-1]}", name=name)


_SHORT = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
          "float16": "Half", "bfloat16": "BFloat16", "int8": "Char", "uint8": "Byte", "int16": "Short",
          "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


SHORT_NAMES = _SHORT     # dtype name -> PyTorch's scalar-type name


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


def _bfloat16_array_dtype(xp):
    """NumPy has no bfloat16; ml_dtypes gives it one (PyTorch's CPU kernels compute it in float32 and
    round, and so do ml_dtypes' ufuncs). CuPy has none at all."""
    if "cupy" in getattr(xp, "__name__", ""):
        raise TypeError("glassgrad has no bfloat16 on CUDA (CuPy has no such dtype): use torch.float16 there")
    import ml_dtypes
    _teach_isdtype(xp)
    return ml_dtypes.bfloat16


def _teach_isdtype(xp) -> None:
    """NOTE [ bfloat16 on NumPy ]
    1. ml_dtypes' bfloat16 is no subclass of ``numpy.floating``, so NumPy's ``isdtype`` refuses it
       (a TypeError). The namespace's ``isdtype`` is wrapped once: bfloat16 is a "real floating"
       (and "numeric") dtype; every other question goes to the original.
    2. ml_dtypes widens to float32 where NumPy has no bfloat16 loop with the other operand
       (a Python float, ``matmul``); ops compute it in float32 and round once (NOTE [ Low-precision
       results ] in backend/low_precision.py).
    """
    orig = getattr(xp, "isdtype", None)
    if orig is None or getattr(orig, "_knows_bfloat16", False) or xp.__name__ == "numpy":
        return      # NumPy itself is left alone: the engine asks its array-API namespace
    import ml_dtypes
    import numpy as np
    bf16 = np.dtype(ml_dtypes.bfloat16)

    def isdtype(dt, kind):
        if dt == bf16:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            return any(k in ("real floating", "numeric") or (not isinstance(k, str) and k == dt) for k in kinds)
        return orig(dt, kind)

    isdtype._knows_bfloat16 = True
    xp.isdtype = isdtype


def from_array_dtype(xp, adt) -> dtype:
    """The engine dtype of an array dtype (numpy/cupy/array_api_strict)."""
    for d in ALL:
        if d is bfloat16:
            if getattr(adt, "name", str(adt)) == "bfloat16":
                _teach_isdtype(xp)
                return d
            continue
        if adt == getattr(xp, "bool" if d is bool_ else d.name, None):
            return d
    name = str(adt)
    if "complex" in name:
        return complex128 if "128" in name else complex64
    if "float" in name:
        return float64 if "64" in name else float32
    if "int" in name or "uint" in name:
        return int64
    raise TypeError(f"unsupported array dtype {adt!r}; glassgrad supports "
                    + ", ".join(d.name for d in ALL))


def to_array_dtype(xp, d: dtype):
    if d is bfloat16:
        return _bfloat16_array_dtype(xp)
    return getattr(xp, "bool" if d is bool_ else d.name)


def scalar_dtype(value) -> dtype:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return get_default_dtype()
    if isinstance(value, complex):
        return get_default_dtype().to_complex()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def promote_types(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype both ``a`` and ``b`` convert to (NOTE [ Type promotion ] 4)."""
    if a is b:
        return a
    ka, kb = _KIND_RANK[a._kind], _KIND_RANK[b._kind]
    if ka != kb:
        hi, lo = (a, b) if ka > kb else (b, a)
        if hi.is_complex and lo.is_floating_point and lo.itemsize > hi.itemsize // 2:
            return lo.to_complex()          # float64 with complex64 -> complex128
        return hi
    if a._kind == "i" and (a is uint8 or b is uint8):
        other = b if a is uint8 else a
        return int16 if other is int8 else other   # uint8 with int8 needs int16
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a.itemsize >= b.itemsize else b


_KIND_RANK = {"b": 0, "i": 1, "f": 2, "c": 3}


def _combine(higher, lower):
    """PyTorch's ``combine_categories``: a lower-priority group counts only in a higher category."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(operands) -> dtype:
    """PyTorch's promotion over tensors and Python scalars.

    NOTE [ Type promotion ]
    1. Operands fall in three groups: tensors with dims, zero-dim tensors, Python scalars.
    2. Within a group ``promote_types`` decides (rule 4).
    3. A lower-priority group only matters when its category (bool < int < float < complex) is
       higher than every higher-priority group's: then a zero-dim tensor gives its own dtype
       (promoted with the higher group's: an int32 tensor and a float64 zero-dim tensor give
       float64), a Python float gives the default dtype, a Python int gives int64, a Python
       complex the default complex dtype; a complex lower group over a float higher group
       gives the complex dtype of the higher group's float (float64 tensor * 1j is complex128).
    4. ``promote_types``: bool joins anything; uint8 with int8 is int16 (neither holds the
       other), other integers the wider; float16 with bfloat16 is float32; a float with a
       complex the complex wide enough for both (float64 with complex64 is complex128);
       across categories the higher one, else the wider.
    """
    dims = zeros = scal = None
    for o in operands:
        if isinstance(o, (bool, int, float, complex)):
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
    result = _combine(dims, _combine(zeros, scal))
    return result if result is not None else get_default_dtype()
