"""Unary elementwise rows: inverse trigonometric and hyperbolic functions, log2/log10, log1p/expm1,
sinc, logit, nan_to_num, trunc/frac, deg2rad/rad2deg, floor/ceil/round, tan, angle and frexp.

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/elementwise/.
"""
from __future__ import annotations

import math

from ...core.dispatch import apply
from ...core.table import OPS, op
from ..grad_rows import grad_of

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _isnan(F, x):
    return F.logical_not(F.eq(x, x))


def _zeros(F, g):
    """An exact zero gradient (``g * 0`` would carry NaN and inf through)."""
    return F.zeros(F.shape(g), g)


# ---- elementwise unary: each keeps its input ``self`` ---------------------------------------------
def _cosh(F, x):
    return (F.exp(x) + F.exp(-x)) * 0.5


def _sinh(F, x):
    return (F.exp(x) - F.exp(-x)) * 0.5


_UNARY = {   # name: (node, forward, d/dx as a formula of x)
    "asin": ("AsinBackward0", lambda xp, a: xp.asin(a), lambda F, x: 1.0 / F.sqrt(1.0 - x * x)),
    "acos": ("AcosBackward0", lambda xp, a: xp.acos(a), lambda F, x: -1.0 / F.sqrt(1.0 - x * x)),
    "sinh": ("SinhBackward0", lambda xp, a: xp.sinh(a), _cosh),
    "cosh": ("CoshBackward0", lambda xp, a: xp.cosh(a), _sinh),
    "asinh": ("AsinhBackward0", lambda xp, a: xp.asinh(a), lambda F, x: 1.0 / F.sqrt(x * x + 1.0)),
    "acosh": ("AcoshBackward0", lambda xp, a: xp.acosh(a), lambda F, x: 1.0 / F.sqrt((x - 1.0) * (x + 1.0))),
}
# d/dx = 1 / (a formula of x): PyTorch divides the gradient by it (a second-order graph shows DivBackward0)
_UNARY_DIV = {
    "atan": ("AtanBackward0", lambda xp, a: xp.atan(a), lambda F, x: x * x + 1.0),
    "atanh": ("AtanhBackward0", lambda xp, a: xp.atanh(a), lambda F, x: 1.0 - x * x),
    "log2": ("Log2Backward0", lambda xp, a: xp.log2(a), lambda F, x: x * _LN2),
    "log10": ("Log10Backward0", lambda xp, a: xp.log10(a), lambda F, x: x * _LN10),
}


def _unary_bwd(dfdx):
    return lambda F, g, s: (g * dfdx(F, s.self),)


def _unary_div_bwd(den):
    return lambda F, g, s: (g / den(F, s.self),)


for _name, (_node, _fwd, _d) in _UNARY.items():
    op(_name, _node, ("self",), _fwd, _unary_bwd(_d), save={"self": ()}, float_op=True)
for _name, (_node, _fwd, _d) in _UNARY_DIV.items():
    op(_name, _node, ("self",), _fwd, _unary_div_bwd(_d), save={"self": ()}, float_op=True)


# ---- asinh_, acosh_, atanh_: PyTorch has no derivative for the in-place forms -------------------------
# Their node is AsinhBackward1 (...) and the backward through it raises PyTorch's NotImplementedError.
def _no_inplace_derivative(name):
    def bwd(F, g, s):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")
    return bwd


for _name in ("asinh", "acosh", "atanh"):
    _node, _fwd = (_UNARY.get(_name) or _UNARY_DIV[_name])[:2]
    op(_name + "_inplace", _node[:-1] + "1", ("self",), _fwd, _no_inplace_derivative(_name), float_op=True)


def _sinc_fwd(xp, a):
    px = a * math.pi
    safe = xp.where(a == 0, xp.ones_like(px), px)
    return xp.where(a == 0, xp.ones_like(px), xp.sin(safe) / safe)


def _sinc_bwd(F, g, s):
    """d sinc = (cos(pi x) pi x - sin(pi x)) / (pi x^2); 0 at x = 0 (PyTorch's masked_fill)."""
    x = s.self
    zero = F.eq(x, 0.0)
    xs = F.where(zero, 1.0, x)
    px = xs * math.pi
    return (F.where(zero, 0.0, g * ((px * F.cos(px) - F.sin(px)) / (px * xs))),)


op("sinc", "SincBackward0", ("self",), _sinc_fwd, _sinc_bwd, save={"self": ()}, float_op=True)


def _logit_fwd(xp, a, eps=None):
    if eps is not None:
        a = xp.clip(a, eps, 1.0 - eps)
    return xp.log(a / (1.0 - a))


def _logit_bwd(F, g, s):
    """``g / (x (1 - x))``; outside [0, 1] NaN without ``eps``, and 0 outside [eps, 1 - eps] with it."""
    x = s.self
    d = g / (x * (1.0 - x))
    lo, hi = (0.0, 1.0) if s.eps is None else (s.eps, 1.0 - s.eps)
    out = F.logical_not(F.logical_and(F.ge(x, lo), F.le(x, hi)))
    return (F.where(out, math.nan if s.eps is None else 0.0, d),)


op("logit", "LogitBackward0", ("self",), _logit_fwd, _logit_bwd, save={"self": ()}, float_op=True)


def _nan_to_num_fwd(xp, a, nan=0.0, posinf=None, neginf=None):
    if not xp.isdtype(a.dtype, "real floating"):
        return xp.asarray(a, copy=True)
    fi = xp.finfo(a.dtype)
    big = fi.max if posinf is None else posinf
    small = fi.min if neginf is None else neginf
    a = xp.where(xp.isnan(a), xp.asarray(nan, dtype=a.dtype), a)
    a = xp.where(a == math.inf, xp.asarray(big, dtype=a.dtype), a)
    return xp.where(a == -math.inf, xp.asarray(small, dtype=a.dtype), a)


def _finite(F, x):
    return F.logical_and(F.eq(x, x), F.lt(F.abs(x), math.inf))


op("nan_to_num", "NanToNumBackward0", ("self",), _nan_to_num_fwd,
   lambda F, g, s: (F.where(_finite(F, s.self), g, 0.0),), save={"self": ()}, promote=False)

# rounding and unit changes: nothing saved
op("trunc", "TruncBackward0", ("self",), lambda xp, a: xp.trunc(a) if xp.isdtype(a.dtype, "real floating") else
   xp.asarray(a, copy=True), lambda F, g, s: (g * 0.0,), promote=False)
op("frac", "FracBackward0", ("self",), lambda xp, a: a - xp.trunc(a), lambda F, g, s: (g,), promote=False)
op("deg2rad", "Deg2RadBackward0", ("self",), lambda xp, a: a * (math.pi / 180.0),
   lambda F, g, s: (g * (math.pi / 180.0),), float_op=True)
op("rad2deg", "Rad2DegBackward0", ("self",), lambda xp, a: a * (180.0 / math.pi),
   lambda F, g, s: (g * (180.0 / math.pi),), float_op=True)


# ---- log1p, expm1 ----------------------------------------------------------------------------------
op("log1p", "Log1PBackward0", ("self",), lambda xp, a: xp.log1p(a), lambda F, g, s: (g / (s.self + 1.0),),
   save={"self": ()}, float_op=True)
op("expm1", "Expm1Backward0", ("self",), lambda xp, a: xp.expm1(a), lambda F, g, s: (g * (s.result + 1.0),),
   save={"result": ()}, float_op=True)


# ---- tan ------------------------------------------------------------------------------------------
op("tan", "TanBackward0", ("self",), lambda xp, a: xp.tan(a),
   lambda F, g, s: (g * (1.0 + s.result * s.result),), save={"result": ()}, float_op=True)


# ---- floor, ceil, round: their gradient is zero everywhere it exists, and, as in PyTorch, they
# still make a node (FloorBackward0, CeilBackward0, RoundBackward0/1) that keeps nothing ----------
def _zero(F, g, s):
    return (F.zeros(s.shapes[0], g),)


def _round_decimals(xp, a, decimals):
    scale = 10.0 ** decimals
    return xp.round(a * scale) / scale


def _keep_ints(fn):
    """Integers are already whole: they come back as a copy, as PyTorch's kernels give them."""
    return lambda xp, a: fn(a) if xp.isdtype(a.dtype, "real floating") else xp.asarray(a, copy=True)


op("floor", "FloorBackward0", ("self",), lambda xp, a: _keep_ints(xp.floor)(xp, a), _zero, promote=False)
op("ceil", "CeilBackward0", ("self",), lambda xp, a: _keep_ints(xp.ceil)(xp, a), _zero, promote=False)
op("round", "RoundBackward0", ("self",), lambda xp, a: _keep_ints(xp.round)(xp, a), _zero, promote=False)
op("round_decimals", "RoundBackward1", ("self",), _round_decimals, _zero, promote=False)


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


# ---- backward rows of the core's tanh and sigmoid (NOTE [ Backward rows ] in ops/grad_rows.py) ---
# tanh_backward(g, y) = g * (1 - y^2); sigmoid_backward(g, y) = g * y * (1 - y), the formulas of the
# core's rows, as ops of their own: a create_graph backward shows one node for each.
def _tanh_bwd_bwd(F, gg, s):
    y = s.output
    return (gg * (1.0 - y * y) if s.needs[0] else None,
            gg * s.grad_output * -2.0 * y if s.needs[1] else None)


op("tanh_backward", "TanhBackwardBackward0", ("grad_output", "output"), lambda xp, g, y: g * (1.0 - y * y),
   _tanh_bwd_bwd, save={"grad_output": ("output",), "output": ()})
grad_of("tanh_backward", [("tanh", "self", ("result",))])


def _sigmoid_bwd_bwd(F, gg, s):
    y = s.output
    return (gg * y * (1.0 - y) if s.needs[0] else None,
            gg * s.grad_output * (1.0 - 2.0 * y) if s.needs[1] else None)


op("sigmoid_backward", "SigmoidBackwardBackward0", ("grad_output", "output"),
   lambda xp, g, y: g * y * (1.0 - y), _sigmoid_bwd_bwd, save={"grad_output": ("output",), "output": ()})
grad_of("sigmoid_backward", [("sigmoid", "self", ("result",))])


# ---- abs: PyTorch's formula is ``grad * self.sgn()`` ----------------------------------------------------
# The core's row computes it on arrays as a where (the same values: sgn is 0 at NaN); a recorded backward
# (create_graph=True) builds PyTorch's graph, MulBackward0 over SgnBackward0 (NOTE [ Backward rows ] 3).
def _abs_recorded_bwd(F, g, s):
    return (g * apply(OPS["sgn"], [s.self]),)


OPS["abs"].grad_bwd = _abs_recorded_bwd
