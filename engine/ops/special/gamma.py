"""lgamma, digamma, polygamma and mvlgamma for the op table, with their array-API kernels.

NOTE [ Gamma-family kernels ]
1. Everything runs in float64 through the array API (no boolean indexing: poles, NaN and
   infinities are swapped for safe values, computed, and put back with ``where``); float32
   input is computed in float64 and rounded once.
2. lgamma: for |x| < 0.5 and 0.5 <= x <= 2.5 a Taylor series of lgamma(2 + z),
   z (1 - gamma) + sum_k (-1)^k (zeta(k) - 1) z^k / k, with lgamma(x) = T(x - 2),
   T(x - 1) - log(x) or T(x) - log|x| - log1p(x): exact near the zeros at 1 and 2, where a
   Lanczos sum would lose the relative accuracy. Above 2.5 Lanczos' approximation (g = 7,
   nine terms; Godfrey's coefficients); below -0.5 the reflection formula
   lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), with sin(pi x) taken on x - round(x).
   Poles (0, negative integers) and +-inf give +inf, as PyTorch.
3. digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic
   series log x - 1/(2x) - sum B_2k / (2k x^2k) (14 terms); for x < 0 the reflection
   psi(x) = psi(1 - x) - pi / tan(pi x). PyTorch's specials: psi(+-0) = -+inf, negative
   integers and -inf give NaN.
4. polygamma(n >= 1, x) = (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta by Euler-Maclaurin
   summation: direct terms until q + k >= n + 11, then the integral, half a term and 12
   Bernoulli corrections (written as q^-s times a sum, so the result underflows to 0 for
   huge x where PyTorch's does; for n = 1 the integral 1/q is kept apart, as PyTorch's). For x < 0 (not an integer), with a = ceil(x) - x and b = x - floor(x),
   zeta(s, x) = zeta(s, b) + (-1)^s (zeta(s, a) - zeta(s, 1 - x)) (the negative terms of the
   series form a partial Hurwitz sum at a). PyTorch's specials are kept: for n >= 2, poles and
   -inf give (-1)^(n+1) inf and +inf gives NaN (its Cephes zeta); for n = 1 a negative integer
   gives PyTorch's (pi / sin(pi x))^2 - psi'(1 - x) (large, finite), +inf gives 0, -inf NaN.
   PyTorch's own trigamma (n = 1) keeps only three Bernoulli terms and is accurate to about
   5e-10; this kernel is accurate to a few ulp, so the two differ in the tenth digit there.
5. mvlgamma(x, p) = sum_j lgamma(x - j/2) (j < p) + p(p - 1)/4 log(pi), summed over the
   offsets in PyTorch's order; MvlgammaBackward0 keeps self (and p): sum_j digamma(x - j/2).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...core import fns
from ...core.table import op


_EULER = 0.57721566490153286061
_LOG_PI = math.log(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _bernoulli(m: int) -> list:
    """B_0 .. B_m as exact fractions (B_1 = -1/2)."""
    b = [Fraction(1)]
    for k in range(1, m + 1):
        b.append(-sum(math.comb(k + 1, j) * b[j] for j in range(k)) / (k + 1))
    return b


_B = _bernoulli(40)


def _zeta_minus_one(k: int) -> float:
    """zeta(k) - 1 for an integer k >= 2, in Python floats (direct terms to 9, Euler-Maclaurin after)."""
    n0 = 10.0
    terms = [n ** -k for n in range(2, 10)]
    terms += [n0 ** (1 - k) / (k - 1), 0.5 * n0 ** -k]
    rising = float(k)
    for j in range(1, 13):
        terms.append(float(_B[2 * j]) / math.factorial(2 * j) * rising * n0 ** (-k - 2 * j + 1))
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return math.fsum(terms)


_TAYLOR = tuple((-1) ** k * _zeta_minus_one(k) / k for k in range(2, 34))   # rule 2, coefficients of z^k
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_DIGAMMA_ASYM = tuple(float(_B[2 * k] / (2 * k)) for k in range(1, 15))   # B_2k / 2k


def _f64(xp, a):
    return a if a.dtype == xp.float64 else xp.astype(a, xp.float64)


def _back(xp, out, a):
    return out if a.dtype == xp.float64 else xp.astype(out, a.dtype)


def _const(xp, v):
    return xp.asarray(v, dtype=xp.float64)


def _is_pole(xp, x):
    """x <= 0 and an integer (-inf included)."""
    return xp.logical_and(x <= 0, xp.floor(x) == x)


def _lgamma2(xp, z):
    """lgamma(2 + z) for |z| <= 0.5 (rule 2's series)."""
    acc = _const(xp, 0.0)
    for c in reversed(_TAYLOR):
        acc = (acc + c) * z
    return z * (acc + (1.0 - _EULER))


def _lanczos(xp, x):
    """lgamma(x) for x >= 2.5."""
    y = x - 1.0
    s = _const(xp, _LANCZOS[0])
    for i in range(len(_LANCZOS) - 1, 0, -1):
        s = s + _LANCZOS[i] / (y + i)
    t = y + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (y + 0.5) * (xp.log(t) - 1.0) - _LANCZOS_G + xp.log(s)


def _lgamma_pos(xp, x):
    """lgamma(x) for x >= -0.5, x not a pole (rule 2)."""
    small = xp.abs(x) <= 0.5
    low = xp.logical_and(x > 0.5, x < 1.5)
    mid = xp.logical_and(x >= 1.5, x <= 2.5)
    xs = xp.where(small, x, 0.25)
    zl = xp.where(low, x - 1.0, 0.0)
    zm = xp.where(mid, x - 2.0, 0.0)
    r_small = _lgamma2(xp, xs) - xp.log(xp.abs(xs)) - xp.log1p(xs)
    r_low = _lgamma2(xp, zl) - xp.log(zl + 1.0)
    r_mid = _lgamma2(xp, zm)
    r_big = _lanczos(xp, xp.where(x > 2.5, x, 3.0))
    return xp.where(small, r_small, xp.where(low, r_low, xp.where(mid, r_mid, r_big)))


def _abs_sinpi(xp, x):
    r = x - xp.round(x)
    return xp.abs(xp.sin(math.pi * r))


def lgamma_f64(xp, x):
    """log|Gamma(x)| of a float64 array (rule 2)."""
    with np.errstate(all="ignore"):
        finite = xp.isfinite(x)
        pole = xp.logical_or(_is_pole(xp, x), xp.isinf(x))
        ok = xp.logical_and(finite, xp.logical_not(pole))
        xs = xp.where(ok, x, 1.0)
        neg = xs < -0.5
        refl = xp.where(neg, 1.0 - xs, 2.0)
        pos = _lgamma_pos(xp, xp.where(neg, refl, xs))
        out = xp.where(neg, _LOG_PI - xp.log(_abs_sinpi(xp, xp.where(neg, xs, 0.5))) - pos, pos)
        out = xp.where(pole, _const(xp, math.inf), out)
        return xp.where(xp.isnan(x), x, out)


def _digamma_pos(xp, y):
    """psi(y) for y > 0 (rule 3)."""
    acc = xp.zeros_like(y)
    for _ in range(6):
        m = y < 6.0
        acc = acc - xp.where(m, 1.0 / y, 0.0)
        y = xp.where(m, y + 1.0, y)
    r = 1.0 / (y * y)
    s = _const(xp, 0.0)
    for c in reversed(_DIGAMMA_ASYM):
        s = (s + c) * r
    return acc + xp.log(y) - 0.5 / y - s


def digamma_f64(xp, x):
    """psi(x) of a float64 array (rule 3)."""
    with np.errstate(all="ignore"):
        bad = xp.logical_or(xp.logical_not(xp.isfinite(x)), x == 0)
        pole = xp.logical_and(x < 0, xp.floor(x) == x)       # negative integers and -inf
        xs = xp.where(xp.logical_or(bad, pole), 1.0, x)
        neg = xs < 0
        r = xs - xp.round(xs)
        out = _digamma_pos(xp, xp.where(neg, 1.0 - xs, xs))
        out = xp.where(neg, out - math.pi / xp.tan(math.pi * xp.where(neg, r, 0.25)), out)
        zero = xp.where(xp.signbit(x), _const(xp, math.inf), _const(xp, -math.inf))
        out = xp.where(x == 0, zero, out)
        out = xp.where(pole, _const(xp, math.nan), out)
        out = xp.where(x == math.inf, _const(xp, math.inf), out)
        return xp.where(xp.isnan(x), x, out)


def _hurwitz_pos(xp, s: int, q):
    """zeta(s, q) for q > 0 (rule 4)."""
    lim = float(s + 10)
    acc = xp.zeros_like(q)
    y = q
    for _ in range(s + 11):
        m = y < lim
        acc = acc + xp.where(m, y ** (-s), 0.0)
        y = xp.where(m, y + 1.0, y)
    coef, rising = [], float(s)
    for j in range(1, 13):
        coef.append(float(_B[2 * j]) / math.factorial(2 * j) * rising)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    inv2 = 1.0 / (y * y)
    corr = _const(xp, 0.0)
    for c in reversed(coef):
        corr = corr * inv2 + c
    if s == 2:   # trigamma: 1/y stays representable where y^-2 underflows (PyTorch's trigamma keeps it)
        return acc + 1.0 / y + y ** (-s) * (0.5 + corr / y)
    return acc + y ** (-s) * (y / (s - 1) + 0.5 + corr / y)   # underflows where PyTorch's Cephes zeta does


def _factorial(n: int) -> float:
    try:
        return float(math.factorial(n))
    except OverflowError:
        return math.inf


def _zeta_any(xp, s: int, x):
    """zeta(s, x) for finite x that is not a pole (rule 4's identity below 0)."""
    neg = x < 0
    b = xp.where(neg, x - xp.floor(x), x)
    a = xp.where(neg, xp.ceil(x) - x, 1.0)
    sign = 1.0 if s % 2 == 0 else -1.0
    zeta = _hurwitz_pos(xp, s, b)
    # the two large sums first: they cancel exactly at half-integers for odd s
    both = (zeta + sign * _hurwitz_pos(xp, s, a)) - sign * _hurwitz_pos(xp, s, xp.where(neg, 1.0 - x, 1.0))
    return xp.where(neg, both, zeta)


def polygamma_f64(xp, n: int, x):
    """The n-th derivative of digamma of a float64 array (rule 4)."""
    if n == 0:
        return digamma_f64(xp, x)
    sign = 1.0 if n % 2 == 1 else -1.0
    with np.errstate(all="ignore"):
        pole = _is_pole(xp, x)                       # 0, negative integers, -inf
        ok = xp.logical_and(xp.isfinite(x), xp.logical_not(pole))
        out = (sign * _factorial(n)) * _zeta_any(xp, n + 1, xp.where(ok, x, 1.0))
        if n == 1:
            xneg = xp.where(xp.logical_and(pole, x > -math.inf), x, -0.5)
            torch_pole = (math.pi / xp.sin(math.pi * xneg)) ** 2 - _zeta_any(xp, 2, 1.0 - xneg)
            out = xp.where(x == 0, _const(xp, math.inf), out)
            out = xp.where(xp.logical_and(pole, x < 0), torch_pole, out)
            out = xp.where(x == math.inf, _const(xp, 0.0), out)
            out = xp.where(x == -math.inf, _const(xp, math.nan), out)
        else:
            out = xp.where(pole, _const(xp, sign * math.inf), out)
            out = xp.where(x == math.inf, _const(xp, math.nan), out)
        return xp.where(xp.isnan(x), x, out)


def mvlgamma_offsets(p: int) -> list:
    """PyTorch's arange(-p/2 + 1/2, 1/2, 1/2): -(p - 1)/2, ..., -1/2, 0."""
    return [-(p - 1) / 2 + j / 2 for j in range(p)]


# ---- array entry points (F.digamma / F.polygamma in engine/core/fns.py use these) ------------------------
def lgamma_array(xp, a):
    return _back(xp, lgamma_f64(xp, _f64(xp, a)), a)


def digamma_array(xp, a):
    return _back(xp, digamma_f64(xp, _f64(xp, a)), a)


def polygamma_array(xp, n, a):
    return _back(xp, polygamma_f64(xp, n, _f64(xp, a)), a)


def _mvlgamma_fwd(xp, a, p):
    offs = xp.asarray(mvlgamma_offsets(p), dtype=a.dtype)
    args = xp.expand_dims(a, axis=-1) + offs
    return xp.sum(lgamma_array(xp, args), axis=-1) + xp.asarray(p * (p - 1) / 4 * _LOG_PI, dtype=a.dtype)


def _mvlgamma_bwd(F, g, s):
    acc = None
    for off in mvlgamma_offsets(s.p):
        d = F.digamma(s.self + off)
        acc = d if acc is None else acc + d
    return (g * acc,)


op("lgamma", "LgammaBackward0", ("self",), lgamma_array, lambda F, g, s: (g * F.digamma(s.self),),
   save={"self": ()}, float_op=True)
op("digamma", "DigammaBackward0", ("self",), digamma_array, lambda F, g, s: (g * F.polygamma(1, s.self),),
   save={"self": ()}, float_op=True)
op("polygamma", "PolygammaBackward0", ("self",), lambda xp, a, n: polygamma_array(xp, n, a),
   lambda F, g, s: (g * F.polygamma(s.n + 1, s.self),), save={"self": ()}, float_op=True)
op("mvlgamma", "MvlgammaBackward0", ("self",), _mvlgamma_fwd, _mvlgamma_bwd, save={"self": ()}, float_op=True)


fns.register("digamma", array=digamma_array)   # F.digamma, F.polygamma (NOTE [ One formula, two currencies ] 5)
fns.register("polygamma", array=polygamma_array)
