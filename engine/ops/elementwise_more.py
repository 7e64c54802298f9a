"""Op-table rows for the rest of ``torch.*``'s elementwise functions: tan, fmax/fmin, copysign,
logaddexp2, ldexp, nextafter, rsub, the comparisons written in place (``eq_`` ...), and the
integer-only gcd, lcm and bitwise operations.

Each row keeps what PyTorch's node keeps; the user-facing functions are in engine/_elementwise_fns.py.

NOTE [ Integer-only kernels ]
1. gcd, lcm and the bitwise operations take int64 and bool arrays only (the array API has no
   gcd or lcm, so gcd is Euclid's algorithm run on the whole array until every divisor is 0).
2. Shifts follow PyTorch, not C: a shift by 64 or more, or by a negative count, gives 0 to the
   left, and 0 or -1 (the sign) to the right.
3. None of them has a gradient: their outputs are never floating point.
"""
from __future__ import annotations

import math

from ..derivatives import op

_LN2 = math.log(2.0)


def _zeros(F, g):
    """An exact zero gradient (``g * 0`` would carry NaN and inf through)."""
    return F.zeros(F.shape(g), g)


def _isnan(F, x):
    return F.logical_not(F.eq(x, x))


# ---- tan ------------------------------------------------------------------------------------------
op("tan", "TanBackward0", ("self",), lambda xp, a: xp.tan(a),
   lambda F, g, s: (g * (1.0 + s.result * s.result),), save={"result": ()}, float_op=True)


# ---- fmax / fmin: a NaN on one side loses -----------------------------------------------------------
def _fmaxmin_fwd(xp, a, b, pick):
    if a.dtype == xp.bool:
        return xp.logical_or(a, b) if pick is xp.maximum else xp.logical_and(a, b)
    if not xp.isdtype(a.dtype, "real floating"):
        return pick(a, b)
    return xp.where(xp.isnan(b), a, xp.where(xp.isnan(a), b, pick(a, b)))


def _fmaxmin_bwd(F, g, s, wins):
    """PyTorch's formula: ``self`` takes the whole gradient where it wins or ties, or where ``other``
    is NaN; ``other`` takes it everywhere else (no halving at a tie, unlike maximum)."""
    mine = F.logical_or(wins(s.self, s.other), _isnan(F, s.other))
    return (F.where(mine, g, 0.0) if s.needs[0] else None, F.where(mine, 0.0, g) if s.needs[1] else None)


op("fmax", "FmaxBackward0", ("self", "other"), lambda xp, a, b: _fmaxmin_fwd(xp, a, b, xp.maximum),
   lambda F, g, s: _fmaxmin_bwd(F, g, s, F.ge), save={"other": (), "self": ()})
op("fmin", "FminBackward0", ("self", "other"), lambda xp, a, b: _fmaxmin_fwd(xp, a, b, xp.minimum),
   lambda F, g, s: _fmaxmin_bwd(F, g, s, F.le), save={"other": (), "self": ()})


# ---- copysign ---------------------------------------------------------------------------------------
def _copysign_self(F, g, s):
    """``g * result / self``, 0 where ``self`` is 0 (PyTorch's copysign_tensor_self_backward)."""
    zero = F.eq(s.self, 0.0)
    return F.where(zero, 0.0, g * (s.result / F.where(zero, 1.0, s.self)))


op("copysign", "CopysignBackward0", ("self", "other"), lambda xp, a, b: xp.copysign(a, b),
   lambda F, g, s: (_copysign_self(F, g, s) if s.needs[0] else None, _zeros(F, g) if s.needs[1] else None),
   save={"self": ("self",), "result": ("self",)}, float_op=True)
op("copysign_number", "CopysignBackward1", ("self",),   # the number's sign read on the host (-0.0, -nan too)
   lambda xp, a, other: -xp.abs(a) if math.copysign(1.0, other) < 0 else xp.abs(a),
   lambda F, g, s: (_copysign_self(F, g, s),), save={"self": (), "result": ()}, float_op=True)


# ---- logaddexp2, ldexp, nextafter ---------------------------------------------------------------------
def _logaddexp2_fwd(xp, a, b):
    """``log2(2**a + 2**b)`` as ``max + log2(1 + 2**-|a - b|)``; equal inputs (infinities too) give a + 1."""
    big = xp.maximum(a, b)
    d = xp.abs(a - b)
    out = big + xp.log1p(xp.exp(-d * _LN2)) / _LN2
    return xp.where(a == b, a + 1.0, out)


op("logaddexp2", "Logaddexp2Backward0", ("self", "other"), _logaddexp2_fwd,
   lambda F, g, s: (g / (1.0 + F.exp((s.other - s.self) * _LN2)) if s.needs[0] else None,
                    g / (1.0 + F.exp((s.self - s.other) * _LN2)) if s.needs[1] else None),
   save={"other": (), "self": ()})


def _ldexp_fwd(xp, a, b):
    """``a * 2**b``; an integer ``b`` stays integer in the node (the float dtype is ``a``'s, or the wider)."""
    dt = a.dtype
    if xp.isdtype(b.dtype, "real floating") and b.dtype != a.dtype:
        dt = xp.result_type(a.dtype, b.dtype)
        a = xp.astype(a, dt)
    return a * xp.pow(xp.asarray(2.0, dtype=dt), xp.astype(b, dt))


def _ldexp_bwd(F, g, s):
    dt = F.dtype(g)
    other = s.other if F.dtype(s.other) is dt else F.astype(s.other, dt)
    return (g * 2.0 ** other if s.needs[0] else None, g * s.result * _LN2 if s.needs[1] else None)


op("ldexp", "LdexpBackward0", ("self", "other"), _ldexp_fwd, _ldexp_bwd,
   save={"other": ("self",), "result": ()}, promote=False)


def _nextafter_fwd(xp, a, b):
    return xp.nextafter(a, b)


op("nextafter", "NextafterBackward0", ("self", "other"), _nextafter_fwd,
   lambda F, g, s: (g if s.needs[0] else None, _zeros(F, g) if s.needs[1] else None),
   save={"other": (), "self": ()})


# ---- a number to a tensor power: one edge, the number kept as an attribute (PyTorch's PowBackward2) ------
def _pow_number_base_bwd(F, g, s):
    """``g * result * log(base)``: NaN for a negative base; for base 0, 0 where the exponent is >= 0."""
    base = s.self
    if base == 0:
        return (F.where(F.ge(s.exponent, 0.0), 0.0, g * s.result * -math.inf),)
    return (g * s.result * (math.log(base) if base > 0 else math.nan),)


op("pow_number_base", "PowBackward2", ("exponent",), lambda xp, b, self: self ** b, _pow_number_base_bwd,
   save={"exponent": (), "result": ()})


# ---- fmod and remainder: C's and Python's modulo ---------------------------------------------------------
def _fmod_fwd(xp, a, b):
    """The sign of the dividend: ``copysign(|a| mod |b|, a)`` (the array API has no fmod)."""
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=a.dtype)
    r = xp.remainder(xp.abs(a), xp.abs(b))
    if xp.isdtype(a.dtype, "real floating"):
        return xp.copysign(r, a)
    return xp.where(a < 0, -r, r)


def _remainder_fwd(xp, a, b):
    """The sign of the divisor, PyTorch's way: fmod, then ``+ b`` where the signs differ (-0.0 stays)."""
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=a.dtype)
    if not xp.isdtype(a.dtype, "real floating"):
        return xp.remainder(a, b)
    mod = _fmod_fwd(xp, a, b)
    return xp.where(xp.logical_and(mod != 0, (b < 0) != (mod < 0)), mod + b, mod)


op("fmod", "FmodBackward1", ("self", "other"), _fmod_fwd,
   lambda F, g, s: (g if s.needs[0] else None, -g * F.trunc(s.self / s.other) if s.needs[1] else None),
   save={"other": ("other",), "self": ("other",)})
op("fmod_number", "FmodBackward0", ("self",), lambda xp, a, other: _fmod_fwd(xp, a, other),
   lambda F, g, s: (g,))
op("remainder", "RemainderBackward1", ("self", "other"), _remainder_fwd,
   lambda F, g, s: (g if s.needs[0] else None, -g * F.floor(s.self / s.other) if s.needs[1] else None),
   save={"other": ("other",), "self": ("other",)})
op("remainder_number", "RemainderBackward0", ("self",), lambda xp, a, other: _remainder_fwd(xp, a, other),
   lambda F, g, s: (g,))


# ---- angle and frexp ---------------------------------------------------------------------------------------
op("angle", "AngleBackward0", ("self",),   # of a real number: pi below zero (not at -0.0), NaN kept, else 0
   lambda xp, a: xp.where(a < 0, xp.full_like(a, math.pi), xp.where(xp.isnan(a), a, xp.zeros_like(a))),
   lambda F, g, s: (_zeros(F, g),), save={"self": ()}, float_op=True)


def _frexp_fwd(xp, a):
    """``a = mantissa * 2**exponent`` with ``0.5 <= |mantissa| < 1``; 0, inf and NaN give themselves and 0.
    The power of two is applied in two halves so neither overflows (float32's largest has exponent 128)."""
    finite = xp.logical_and(xp.isfinite(a), a != 0)
    mag = xp.where(finite, xp.abs(a), xp.ones_like(a))
    e = xp.floor(xp.log2(mag)) + 1.0
    half = xp.floor(e / 2.0)
    two = xp.asarray(2.0, dtype=a.dtype)
    m = mag / xp.pow(two, half) / xp.pow(two, e - half)
    big, small = m >= 1.0, m < 0.5          # log2's rounding near a power of two
    e = xp.where(big, e + 1.0, xp.where(small, e - 1.0, e))
    m = xp.where(big, m / 2.0, xp.where(small, m * 2.0, m))
    m = xp.where(finite, xp.copysign(m, a), a)
    return m, {"exponent": xp.astype(xp.where(finite, e, xp.zeros_like(e)), xp.int64)}


def _frexp_bwd(F, g, s):
    return (g / 2.0 ** F.astype(s.exponent, F.dtype(g)),)


op("frexp", "FrexpBackward0", ("self",), _frexp_fwd, _frexp_bwd, save={"exponent": ()}, aux=("exponent",),
   promote=False)


# ---- rsub: other - alpha * self ----------------------------------------------------------------------
op("rsub", "RsubBackward0", ("self", "other"), lambda xp, a, b, alpha=1: b - a * alpha if alpha != 1 else b - a,
   lambda F, g, s: (-g * s.alpha if s.alpha != 1 else -g, g))
op("rsub_number", "RsubBackward1", ("self",),
   lambda xp, a, other, alpha=1: other - a * alpha if alpha != 1 else other - a,
   lambda F, g, s: (-g * s.alpha if s.alpha != 1 else -g,))


# ---- div_(other, rounding_mode=...) on floating tensors: a zero gradient, as PyTorch's DivBackward2 ------
def floor_divide_floating(xp, a, b):
    """PyTorch's floating floor division (c10's div_floor_floating): ``(a - fmod(a, b)) / b`` rounded, so
    ``1.0 // 0.1`` is 9 as in Python, not the 10 that ``floor(a / b)`` gives; a zero divisor gives ``a / b``."""
    if not hasattr(a, "shape"):
        a = xp.asarray(a, dtype=b.dtype)
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=a.dtype)
    mod = _fmod_fwd(xp, a, b)
    div = (a - mod) / b
    div = xp.where(xp.logical_and(mod != 0, (b < 0) != (mod < 0)), div - 1.0, div)
    low = xp.floor(div)
    low = xp.where(div - low > 0.5, low + 1.0, low)
    out = xp.where(div != 0, low, xp.copysign(xp.zeros_like(div), a / b))
    return xp.where(b == 0, a / b, out)


def _div_rounding_fwd(xp, a, b, rounding_mode):
    return floor_divide_floating(xp, a, b) if rounding_mode == "floor" else xp.trunc(a / b)


op("div_rounding", "DivBackward2", ("self", "other"), _div_rounding_fwd,
   lambda F, g, s: (_zeros(F, g) if s.needs[0] else None, _zeros(F, g) if s.needs[1] else None),
   save={"other": ("self", "other"), "self": ("other",)})


# ---- comparisons written in place: a zero gradient, self keeps its dtype -------------------------------
_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _cmp_number_fwd(f):
    def fwd(xp, a, other):
        """Compare with a Python number in the kind both share (the array API mixes no kinds)."""
        if isinstance(other, float) and not xp.isdtype(a.dtype, "real floating"):
            a = xp.astype(a, xp.float64)
        elif isinstance(other, int) and not isinstance(other, bool) and a.dtype == xp.bool:
            a = xp.astype(a, xp.int64)
        elif isinstance(other, bool) and a.dtype != xp.bool:
            other = float(other) if xp.isdtype(a.dtype, "real floating") else int(other)
        return f(a, other)
    return fwd


for _n, _f in _CMP.items():
    _node = _n[0].upper() + _n[1:] + "Backward"
    op(_n + "_", _node + "1", ("self", "other"), (lambda f: lambda xp, a, b: f(a, b))(_f),
       lambda F, g, s: (_zeros(F, g) if s.needs[0] else None, _zeros(F, g) if s.needs[1] else None))
    op(_n + "_number_", _node + "0", ("self",), _cmp_number_fwd(_f), lambda F, g, s: (_zeros(F, g),))


# ---- integer-only: gcd, lcm, bitwise (NOTE [ Integer-only kernels ]) ------------------------------------
def _gcd_fwd(xp, a, b):
    a, b = xp.abs(a), xp.abs(b)
    while bool(xp.any(b != 0)):
        nz = b != 0
        r = xp.where(nz, a % xp.where(nz, b, xp.ones_like(b)), xp.zeros_like(b))
        a = xp.where(nz, b, a)
        b = r
    return a


def _lcm_fwd(xp, a, b):
    g = _gcd_fwd(xp, a, b)
    zero = g == 0
    return xp.abs(xp.where(zero, xp.zeros_like(a), a // xp.where(zero, xp.ones_like(g), g)) * b)


op("gcd", None, ("self", "other"), _gcd_fwd, differentiable=False)
op("lcm", None, ("self", "other"), _lcm_fwd, differentiable=False)
op("bitwise_and", None, ("self", "other"), lambda xp, a, b: xp.bitwise_and(a, b), differentiable=False)
op("bitwise_or", None, ("self", "other"), lambda xp, a, b: xp.bitwise_or(a, b), differentiable=False)
op("bitwise_xor", None, ("self", "other"), lambda xp, a, b: xp.bitwise_xor(a, b), differentiable=False)
op("bitwise_not", None, ("self",), lambda xp, a: xp.bitwise_invert(a), differentiable=False)


def _shift_fwd(xp, a, b, left):
    a, b = (x if hasattr(x, "shape") else xp.asarray(x, dtype=xp.int64) for x in (a, b))
    out_of_range = xp.logical_or(b < 0, b >= 64)
    count = xp.clip(b, 0, 63)
    if left:
        return xp.where(out_of_range, xp.zeros_like(a), xp.bitwise_left_shift(a, count))
    sign = xp.where(a < 0, -xp.ones_like(a), xp.zeros_like(a))
    return xp.where(out_of_range, sign, xp.bitwise_right_shift(a, count))


op("bitwise_left_shift", None, ("self", "other"), lambda xp, a, b: _shift_fwd(xp, a, b, True),
   differentiable=False)
op("bitwise_right_shift", None, ("self", "other"), lambda xp, a, b: _shift_fwd(xp, a, b, False),
   differentiable=False)
