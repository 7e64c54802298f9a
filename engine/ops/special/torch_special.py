"""Op-table rows for ``torch.special`` functions the rest of the engine lacks: erfc, exp2, entr, xlog1py,
i0, i1, ndtri and log_ndtr (the user-facing functions are in engine/special.py).

NOTE [ special kernels ]
1. All run in float64 through the array API and round once to the input's dtype.
2. erfc: 1 - erf(x) for |x| <= 0.46875, else Cody's tail exp(-x^2) R(|x|) (NOTE [ erf ]), and
   2 - erfc(-x) below -0.46875: relative accuracy in the right tail.
3. i0/i1: the power series sum (x^2/4)^k / (k! (k + nu)!) (x/2)^nu for |x| <= 30, Hankel's
   asymptotic series e^|x| / sqrt(2 pi |x|) (1 - (4nu^2 - 1)/(8|x|) + ...) above; i1 is odd.
4. log_ndtr: log(1 - erfc(x / sqrt 2) / 2) via log1p above -1; below, log(R(y) / 2) - y^2 with
   y = -x / sqrt 2, so it stays finite far into the left tail. ndtri: sqrt 2 erfinv(2p - 1)
   in the middle, and -sqrt 2 erfcinv(2p) from Newton steps on log erfc in the tails.
"""
from __future__ import annotations

import math

import numpy as np

from ...backend import erf as _erf
from ...core import fns
from ...core.table import op
from .erfinv import _erfc_pos, erfinv_f64


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LN2 = math.log(2.0)


def _f64(xp, a):
    return a if a.dtype == xp.float64 else xp.astype(a, xp.float64)


def _round(fn):
    def fwd(xp, a, *rest, **kw):
        with np.errstate(all="ignore"):
            out = fn(xp, _f64(xp, a), *rest, **kw)
        return out if a.dtype == xp.float64 else xp.astype(out, a.dtype)
    return fwd


def erfc_f64(xp, x):
    """erfc of a float64 array (rule 2)."""
    ax = xp.abs(x)
    small = 1.0 - _erf._small(xp.clip(x, -_erf._SMALL, _erf._SMALL))
    tail = _erfc_pos(xp, xp.where(xp.isnan(ax), 1.0, ax))
    out = xp.where(ax <= _erf._SMALL, small, xp.where(x < 0, 2.0 - tail, tail))
    return xp.where(xp.isnan(x), x, out)


def _erfcx_pos(xp, y):
    """exp(y^2) erfc(y) for y > 0.46875 (Cody's R)."""
    y_mid = xp.clip(y, _erf._SMALL, _erf._MID)
    y_big = xp.clip(y, _erf._MID, 1e150)
    return xp.where(y > _erf._MID, _erf._large(y_big), _erf._mid(y_mid))


def _bessel_series(xp, ax, nu):
    q = ax * ax * 0.25
    term = xp.ones_like(ax) if nu == 0 else ax * 0.5
    total = term
    for k in range(1, 90):
        term = term * q / (k * (k + nu))
        total = total + term
    return total


def _bessel_asym(xp, ax, nu):
    mu = 4.0 * nu * nu
    term = xp.ones_like(ax)
    total = term
    for k in range(1, 30):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total = total + term
    return xp.exp(ax) / xp.sqrt(2.0 * math.pi * ax) * total


def bessel_i_f64(xp, x, nu):
    """I_nu(x), nu in {0, 1}, of a float64 array (rule 3)."""
    ax = xp.abs(xp.where(xp.isfinite(x), x, 0.0))
    big = ax > 30.0
    out = xp.where(big, _bessel_asym(xp, xp.where(big, ax, 31.0), nu),
                   _bessel_series(xp, xp.where(big, 0.0, ax), nu))
    if nu == 1:
        out = xp.where(x < 0, -out, out)
    return xp.where(xp.isinf(x), math.nan, xp.where(xp.isnan(x), x, out))   # PyTorch's i0(+-inf) is NaN


def log_ndtr_f64(xp, x):
    """log Phi(x) of a float64 array (rule 4)."""
    upper = x > -1.0
    xu = xp.where(upper, x, 0.0)
    hi = xp.where(xu > 0, xp.log1p(-0.5 * erfc_f64(xp, xu / _SQRT2)), xp.log(0.5 * erfc_f64(xp, -xu / _SQRT2)))
    yl = -xp.where(upper, -2.0, x) / _SQRT2
    lo = xp.log(_erfcx_pos(xp, yl) * 0.5) - yl * yl
    out = xp.where(upper, hi, lo)
    return xp.where(xp.isnan(x), x, out)


def ndtri_f64(xp, p):
    """Phi^-1(p) of a float64 array (rule 4)."""
    mid = xp.logical_and(p > 0.02, p < 0.98)
    x_mid = _SQRT2 * erfinv_f64(xp, xp.where(mid, 2.0 * p - 1.0, 0.0))
    # tails: x = -sqrt2 * erfcinv(2 t), t = min(p, 1 - p), by Newton on log(Phi(x)) = log t
    t = xp.where(p < 0.5, p, 1.0 - p)
    tt = xp.clip(xp.where(mid, 0.01, t), 1e-320, 0.02)
    x = -_SQRT2 * erfinv_f64(xp, 1.0 - 2.0 * xp.clip(tt, 1e-16, 0.02))
    x = xp.where(tt < 1e-16, -xp.sqrt(-2.0 * xp.log(tt)), x)
    log_t = xp.log(tt)
    for _ in range(8):
        lp = log_ndtr_f64(xp, x)
        # d log Phi / dx = phi(x) / Phi(x) = exp(-x^2/2 - log Phi) / sqrt(2 pi)
        x = x - (lp - log_t) / (xp.exp(-0.5 * x * x - lp) * _INV_SQRT_2PI)
    x_tail = xp.where(p < 0.5, x, -x)
    out = xp.where(mid, x_mid, x_tail)
    out = xp.where(p == 0, -math.inf, xp.where(p == 1, math.inf, out))
    out = xp.where(xp.logical_or(p < 0, p > 1), math.nan, out)
    return xp.where(xp.isnan(p), p, out)


def _entr_f64(xp, x):
    pos = x > 0
    xs = xp.where(pos, x, 1.0)
    out = xp.where(pos, -xs * xp.log(xs), xp.where(x == 0, 0.0, -math.inf))
    return xp.where(xp.isnan(x), x, out)


def _xlog1py_f64(xp, a, b):
    like = b if hasattr(b, "shape") else a
    a = a if hasattr(a, "shape") else xp.asarray(a, dtype=like.dtype)
    b = b if hasattr(b, "shape") else xp.asarray(b, dtype=like.dtype)
    prod = a * xp.log1p(b)
    return xp.where(xp.logical_and(a == 0, xp.logical_not(xp.isnan(b))), xp.zeros_like(prod), prod)


def _xlog1py_fwd(xp, a, b):
    with np.errstate(all="ignore"):
        return _xlog1py_f64(xp, a, b)


def _xlog1py_bwd(F, g, s):
    """PyTorch's: ``g * log1p(other)`` (0 where self is 0 and other <= -1); ``g * self / (other + 1)``."""
    a, b = s.self, s.other
    ga = gb = None
    if s.needs[0]:
        if type(b) in (int, float):
            lb = math.log1p(b) if b > -1 else (-math.inf if b == -1 else math.nan)
            ga = g * lb
            if b <= -1:
                ga = F.where(F.eq(a, 0.0), 0.0, ga)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                ga = F.where(F.logical_and(F.eq(a, 0.0), F.le(b, -1.0)), 0.0, g * F.log1p(b))
    if s.needs[1]:
        gb = g * a / (b + 1.0)
    return ga, gb


class _Side:
    """A one-tensor xlog1py node's saved values seen as the two-operand node's."""

    def __init__(self, s, tensor_is_self):
        self._s = s
        self.needs = (s.needs[0], False) if tensor_is_self else (False, s.needs[0])

    def __getattr__(self, name):
        return getattr(self._s, name)


def _i1_bwd(F, g, s):
    """PyTorch's i1_backward: g / 2 at 0, else g (i0(x) - i1(x) / x)."""
    x = s.self
    zero = F.eq(x, 0.0)
    safe = F.where(zero, 1.0, x)
    return (F.where(zero, g * 0.5, g * (F.i0(x) - s.result / safe)),)


op("erfc", "ErfcBackward0", ("self",), _round(erfc_f64),
   lambda F, g, s: (g * (-_TWO_OVER_SQRT_PI) * F.exp(-(s.self * s.self)),), save={"self": ()}, float_op=True)
op("exp2", "Exp2Backward0", ("self",), _round(lambda xp, x: 2.0 ** x),
   lambda F, g, s: (g * s.result * _LN2,), save={"result": ()}, float_op=True)
def _entr_bwd(F, g, s):
    with np.errstate(divide="ignore"):        # log(0) = -inf: the gradient at 0 is +inf, silently as PyTorch
        return (g * (-(1.0 + F.log(s.self))),)


op("special_entr", "SpecialEntrBackward0", ("self",), _round(_entr_f64), _entr_bwd, save={"self": ()}, float_op=True)
op("i0", "I0Backward0", ("self",), _round(lambda xp, x: bessel_i_f64(xp, x, 0)),
   lambda F, g, s: (g * F.i1(s.self),), save={"self": ()}, float_op=True)
op("special_i1", "SpecialI1Backward0", ("self",), _round(lambda xp, x: bessel_i_f64(xp, x, 1)), _i1_bwd,
   save={"self": (), "result": ()}, float_op=True)
op("special_ndtri", "SpecialNdtriBackward0", ("self",), _round(ndtri_f64),
   lambda F, g, s: (g * math.sqrt(2.0 * math.pi) * F.exp(s.result * s.result * 0.5),), save={"result": ()},
   float_op=True)
op("special_log_ndtr", "SpecialLogNdtrBackward0", ("self",), _round(log_ndtr_f64),
   lambda F, g, s: (g * _INV_SQRT_2PI * F.exp(-(s.result + s.self * s.self * 0.5)),),
   save={"self": (), "result": ()}, float_op=True)
op("special_xlog1py", "SpecialXlog1PyBackward0", ("self", "other"), _xlog1py_fwd, _xlog1py_bwd,
   save={"other": (), "self": ()}, float_op=True)
op("special_xlog1py_number_self", "SpecialXlog1PyBackward1", ("other",),
   lambda xp, b, self: _xlog1py_fwd(xp, self, b), lambda F, g, s: (_xlog1py_bwd(F, g, _Side(s, False))[1],),
   save={"other": ()}, float_op=True)
op("special_xlog1py_number_other", "SpecialXlog1PyBackward2", ("self",),
   lambda xp, a, other: _xlog1py_fwd(xp, a, other), lambda F, g, s: (_xlog1py_bwd(F, g, _Side(s, True))[0],),
   save={"self": ()}, float_op=True)


def i0_array(xp, a):
    return _round(lambda xp_, x: bessel_i_f64(xp_, x, 0))(xp, a)


def i1_array(xp, a):
    return _round(lambda xp_, x: bessel_i_f64(xp_, x, 1))(xp, a)


fns.register("i0", array=i0_array)   # F.i0, F.i1 on arrays (NOTE [ One formula, two currencies ] 5)
fns.register("i1", array=i1_array)
