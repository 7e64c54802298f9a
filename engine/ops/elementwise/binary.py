"""Binary elementwise rows: atan2, hypot, logaddexp, xlogy, lerp, addcmul/addcdiv, floor_divide,
heaviside, fmax/fmin, copysign, logaddexp2, ldexp, nextafter, a number to a tensor power, fmod and
remainder, rsub, rounded division, the comparisons written in place (``eq_`` ...) and ``tensor * number``,
``tensor / number``, ``tensor + number``, ``tensor - number`` (PyTorch's Scalar overloads).

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/elementwise/.
"""
from __future__ import annotations

import math

from ...backend import dtypes as _dtype
from ...core.table import op
from .unary import _isnan, _zeros

_LN2 = math.log(2.0)


# ---- elementwise binary ---------------------------------------------------------------------------
_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
             "use the `~` or `logical_not()` operator instead.")
_BOOL_NEG = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
             "the `~` or `logical_not()` operator instead.")


def _is_bool(s, k):
    """Whether input ``k`` of the node was a bool tensor (a saved copy was promoted); a compiled graph's
    node keeps no input metadata, and is not checked."""
    meta = getattr(s._node, "_in_meta", None)
    return meta is not None and meta[k] is not None and meta[k][1] is _dtype.bool_


def _atan2_bwd(F, g, s):
    if s.needs[1] and _is_bool(s, 0):
        raise RuntimeError(_BOOL_NEG)       # other's gradient is -grad * self / (...): PyTorch negates a bool
    a, b = s.self, s.other
    d = a * a + b * b
    r = F.where(F.eq(d, 0.0), 0.0, g / d)     # as PyTorch: a zero gradient at the origin, not 0/0
    return (r * b if s.needs[0] else None, -r * a if s.needs[1] else None)


op("atan2", "Atan2Backward0", ("self", "other"), lambda xp, a, b: xp.atan2(a, b), _atan2_bwd,
   save={"other": (), "self": ()}, float_op=True)
op("hypot", "HypotBackward0", ("self", "other"), lambda xp, a, b: xp.hypot(a, b),
   lambda F, g, s: (g * s.self / s.result if s.needs[0] else None, g * s.other / s.result if s.needs[1] else None),
   save={"other": ("other",), "self": ("self",), "result": ()})


def _logaddexp_bwd(F, g, s):
    if _is_bool(s, 0) or _is_bool(s, 1):
        raise RuntimeError(_BOOL_SUB)       # PyTorch's formula subtracts the inputs
    return (g / (1.0 + F.exp(s.other - s.self)) if s.needs[0] else None,
            g / (1.0 + F.exp(s.self - s.other)) if s.needs[1] else None)


op("logaddexp", "LogaddexpBackward0", ("self", "other"), lambda xp, a, b: xp.logaddexp(a, b), _logaddexp_bwd,
   save={"other": (), "self": ()})


def _xlogy_fwd(xp, a, b):
    """``a * log(b)``, 0 where ``a`` is 0 (unless ``b`` is NaN). ``a`` or ``b`` may be a number."""
    like = b if hasattr(b, "shape") else a
    if not hasattr(a, "shape"):
        a = xp.asarray(a, dtype=like.dtype)
    if not hasattr(b, "shape"):
        b = xp.asarray(b, dtype=like.dtype)
    prod = a * xp.log(b)
    return xp.where(xp.logical_and(a == 0, xp.logical_not(xp.isnan(b))), xp.zeros_like(prod), prod)


def _xlogy_bwd(F, g, s):
    """PyTorch's formulas: ``g * log(other)``, 0 where self is 0 and other <= 0; ``g * self / other``."""
    a, b = s.self, s.other
    ga = gb = None
    if s.needs[0]:
        if type(b) in (int, float):
            ga = g * (math.log(b) if b > 0 else (-math.inf if b == 0 else math.nan))
            if b <= 0:
                ga = F.where(F.eq(a, 0.0), 0.0, ga)
        else:
            ga = F.where(F.logical_and(F.eq(a, 0.0), F.le(b, 0.0)), 0.0, g * F.log(b))
    if s.needs[1]:
        gb = g * a / b
    return ga, gb


class _Both:
    """A one-tensor xlogy node's saved values seen as the two-operand node's (the number as an attribute)."""

    def __init__(self, s, tensor_is_self):
        self._s, self._self_side = s, tensor_is_self
        self.needs = (s.needs[0], False) if tensor_is_self else (False, s.needs[0])

    def __getattr__(self, name):
        return getattr(self._s, name)


op("xlogy", "XlogyBackward0", ("self", "other"), _xlogy_fwd, _xlogy_bwd, save={"other": (), "self": ()},
   float_op=True)
# one operand a number: one edge, the number kept as an attribute (XlogyBackward2 / XlogyBackward1)
op("xlogy_number_other", "XlogyBackward2", ("self",), lambda xp, a, other: _xlogy_fwd(xp, a, other),
   lambda F, g, s: (_xlogy_bwd(F, g, _Both(s, True))[0],), save={"self": ()}, float_op=True)
op("xlogy_number_self", "XlogyBackward1", ("other",), lambda xp, b, self: _xlogy_fwd(xp, self, b),
   lambda F, g, s: (_xlogy_bwd(F, g, _Both(s, False))[1],), save={"other": ()}, float_op=True)


def _lerp_fwd(xp, a, b, weight):
    """``a + w (b - a)`` for ``w < 0.5``, ``b - (b - a)(1 - w)`` above: exact at both ends (PyTorch's form)."""
    d = b - a
    if not hasattr(weight, "shape"):
        return a + d * weight if abs(weight) < 0.5 else b - d * (1.0 - weight)
    return xp.where(xp.abs(weight) < 0.5, a + weight * d, b - d * (1.0 - weight))


op("lerp", "LerpBackward0", ("self", "end"), _lerp_fwd,
   lambda F, g, s: (g * (1.0 - s.weight) if s.needs[0] else None, g * s.weight if s.needs[1] else None),
   promote=False)
op("lerp_tensor", "LerpBackward1", ("self", "end", "weight"), _lerp_fwd,
   lambda F, g, s: (g * (1.0 - s.weight) if s.needs[0] else None, g * s.weight if s.needs[1] else None,
                    g * (s.end - s.self) if s.needs[2] else None),
   save={"end": ("weight",), "self": ("weight",), "weight": ("self", "end")}, promote=False)


def _addcmul_fwd(xp, a, t1, t2, value=1):
    return a + t1 * t2 * value if value != 1 else a + t1 * t2


op("addcmul", "AddcmulBackward0", ("self", "tensor1", "tensor2"), _addcmul_fwd,
   lambda F, g, s: (g, g * s.tensor2 * s.value if s.needs[1] else None,
                    g * s.tensor1 * s.value if s.needs[2] else None),
   save={"tensor1": ("tensor2",), "tensor2": ("tensor1",)})


def _addcdiv_fwd(xp, a, t1, t2, value=1):
    return a + t1 / t2 * value if value != 1 else a + t1 / t2


op("addcdiv", "AddcdivBackward0", ("self", "tensor1", "tensor2"), _addcdiv_fwd,
   lambda F, g, s: (g, g * s.value / s.tensor2 if s.needs[1] else None,
                    -g * s.value * s.tensor1 / (s.tensor2 * s.tensor2) if s.needs[2] else None),
   save={"tensor1": ("tensor2",), "tensor2": ()})


def _not_implemented(name):
    def bwd(F, g, s):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return bwd


def _floor_divide_fwd(xp, a, b):
    if xp.isdtype(a.dtype, "real floating"):
        return floor_divide_floating(xp, a, b)
    return xp.floor_divide(a, b)


# no gradient formula in PyTorch: the node is NotImplemented and backward through it raises
op("floor_divide", "NotImplemented", ("self", "other"), _floor_divide_fwd, _not_implemented("floor_divide"))
op("floor_divide_number", "NotImplemented", ("self",), _floor_divide_fwd, _not_implemented("floor_divide"))


def _heaviside_fwd(xp, a, values):
    """``values`` where ``a`` is 0, else 1 for ``a > 0`` and 0 below (and for NaN)."""
    step = xp.where(a > 0, xp.ones_like(a), xp.zeros_like(a))
    return xp.where(a == 0, values, step)


op("heaviside", "NotImplemented", ("self", "values"), _heaviside_fwd, _not_implemented("heaviside"), promote=False)


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


def _logaddexp2_bwd(F, g, s):
    if _is_bool(s, 0) or _is_bool(s, 1):
        raise RuntimeError(_BOOL_SUB)
    return (g / (1.0 + F.exp((s.other - s.self) * _LN2)) if s.needs[0] else None,
            g / (1.0 + F.exp((s.self - s.other) * _LN2)) if s.needs[1] else None)


op("logaddexp2", "Logaddexp2Backward0", ("self", "other"), _logaddexp2_fwd, _logaddexp2_bwd,
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
# a number ``self``: PyTorch's remainder(Scalar, Tensor) has no derivative (a NotImplemented node)
op("remainder_number_self", "NotImplemented", ("other",),
   lambda xp, b, self: _remainder_fwd(xp, xp.asarray(self, dtype=b.dtype), b), _not_implemented("remainder"))


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


# ``tensor * number`` and ``tensor / number`` as PyTorch's C++ code calls them (the Scalar overloads):
# MulBackward1 / DivBackward1, one edge, ``other`` the number (composite losses use them)
op("mul_number", "MulBackward1", ("self",), lambda xp, a, other: a * other, lambda F, g, s: (g * s.other,),
   promote=False)
op("div_number", "DivBackward1", ("self",), lambda xp, a, other: a / other, lambda F, g, s: (g * (1.0 / s.other),),
   promote=False)


# ``tensor + number`` as PyTorch's C++ code calls it (add.Scalar): AddBackward1, one edge, nothing saved
# (rms_norm adds its eps this way)
op("add_number", "AddBackward1", ("self",), lambda xp, a, other: a + other, lambda F, g, s: (g,), promote=False)


# ``tensor - number`` as PyTorch's C++ code calls it (sub.Scalar): SubBackward1, one edge, nothing saved
op("sub_number", "SubBackward1", ("self",), lambda xp, a, other: a - other, lambda F, g, s: (g,), promote=False)
