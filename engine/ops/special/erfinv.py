"""erfinv and sgn for the op table.

NOTE [ erfinv ]
1. A first guess from M. Giles' rational approximation ("Approximating the erfinv
   function", GPU Computing Gems, 2010), in w = -log((1 - a)(1 + a)) for a = |y|;
   it is good to about 1e-7.
2. Three Newton steps on f(x) = erf(x) - a then make it exact to float64 rounding.
   For a > 0.5 the residual is taken as (1 - a) - erfc(x) (1 - a is exact there), so
   the tail loses no bits to the 1 - erfc cancellation.
3. On NumPy and array_api_strict two last Newton steps take their residual from the C
   library's erf/erfc (math.erf, within an ulp): NOTE [ erf ]'s kernel is within 4 ulp,
   and an error in erf near the binade edges moves erfinv by twice as many of its ulps;
   the result is then within 1 ulp of the true value (and of PyTorch's).
4. All in float64 through the array API (no boolean indexing), cast back after;
   erfinv(+-1) is +-inf, |y| > 1 and NaN give NaN, and -0.0 stays -0.0.
"""
from __future__ import annotations

import math

import numpy as np

from ...backend import gaps as _backend, erf as _erf
from ...core import fns
from ...core.table import op


_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
            -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
         0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _horner(coeffs, w):
    p = coeffs[0]
    for c in coeffs[1:]:
        p = p * w + c
    return p


def _erfc_pos(xp, x):
    """erfc(x) for x >= 0, with relative accuracy in the tail (NOTE [ erf ] in engine/backend/erf.py)."""
    small = 1.0 - _erf._small(xp.clip(x, 0.0, _erf._SMALL))
    y_mid = xp.clip(x, _erf._SMALL, _erf._MID)
    y_big = xp.clip(x, _erf._MID, 30.0)
    big = x > _erf._MID
    y = xp.where(big, y_big, y_mid)
    tail = _erf._erfc_tail(xp, y, xp.where(big, _erf._large(y_big), _erf._mid(y_mid)))
    return xp.where(x <= _erf._SMALL, small, tail)


_erf_host = np.frompyfunc(math.erf, 1, 1)
_erfc_host = np.frompyfunc(math.erfc, 1, 1)


def _polish(x, a):
    """One Newton step with the C library's erf/erfc (rule 4), on host float64 arrays."""
    tail = a > 0.5
    # np.asarray: on a 0-d array a ufunc from frompyfunc gives a Python float, not an array
    f = np.where(tail, (1.0 - a) - np.asarray(_erfc_host(x), dtype=np.float64),
                 np.asarray(_erf_host(x), dtype=np.float64) - a)
    return x - f / (_TWO_OVER_SQRT_PI * np.exp(-x * x))


def erfinv_f64(xp, y):
    """erfinv of a float64 array (rules 1-3)."""
    a = xp.abs(y)
    ok = a < 1.0
    ac = xp.where(ok, a, 0.0)                         # safe values everywhere; masked at the end
    w = -xp.log((1.0 - ac) * (1.0 + ac))
    sw = xp.sqrt(w)
    x = xp.where(w < 5.0, _horner(_CENTRAL, w - 2.5), _horner(_TAIL, sw - 3.0)) * ac
    tail = ac > 0.5
    rest = xp.where(tail, 1.0 - ac, 1.0)              # exact for ac > 0.5 (Sterbenz)
    log_rest = xp.log(rest)
    for _ in range(4):
        xc = xp.clip(x, 0.0, 30.0)
        # central: Newton on erf(x) - a; tail: Newton on log erfc(x) - log(1 - a), with
        # erfc(x) = exp(-x^2) R(x), so log erfc(x) = -x^2 + log R(x) (rule 2)
        f = xp.where(xc <= _erf._SMALL, _erf._small(xp.clip(xc, 0.0, _erf._SMALL)), 1.0 - _erfc_pos(xp, xc)) - ac
        step_c = f / (_TWO_OVER_SQRT_PI * xp.exp(-xc * xc))
        y_mid = xp.clip(xc, _erf._SMALL, _erf._MID)
        y_big = xp.clip(xc, _erf._MID, 30.0)
        r = xp.where(xc > _erf._MID, _erf._large(y_big), _erf._mid(y_mid))
        step_t = -(-xc * xc + xp.log(r) - log_rest) * r / _TWO_OVER_SQRT_PI
        x = xc - xp.where(tail, step_t, step_c)
    if _backend._is_numpy(xp) or _backend._is_strict(xp):
        hx, ha = _backend.to_numpy(xp, x), _backend.to_numpy(xp, ac)
        x = _backend.from_numpy(xp, _polish(_polish(hx, ha), ha))
    x = xp.where(ok, x, xp.where(a == 1.0, xp.asarray(math.inf, dtype=y.dtype), xp.asarray(math.nan, dtype=y.dtype)))
    return xp.copysign(x, y)


def _erfinv_fwd(xp, a):
    if a.dtype == xp.float64:
        return erfinv_f64(xp, a)
    return xp.astype(erfinv_f64(xp, xp.astype(a, xp.float64)), a.dtype)


erfinv_array = _erfinv_fwd   # F.erfinv on arrays (engine/core/fns.py)


def _erfinv_bwd(F, g, s):
    inv = F.erfinv(s.self)
    return (g * (0.5 * math.sqrt(math.pi)) * F.exp(inv * inv),)


op("erfinv", "ErfinvBackward0", ("self",), _erfinv_fwd, _erfinv_bwd, save={"self": ()}, float_op=True)


# ---- sgn: sign for real input, 0 at NaN as PyTorch's; its gradient is zero (SgnBackward0) ----------
def _sgn_fwd(xp, a):
    if a.dtype == xp.bool:
        return xp.asarray(a, copy=True)
    if xp.isdtype(a.dtype, "real floating"):
        return xp.where(xp.isnan(a), xp.zeros((), dtype=a.dtype), xp.sign(a))
    return xp.sign(a)


op("sgn", "SgnBackward0", ("self",), _sgn_fwd, lambda F, g, s: (g * 0.0,), save={"self": (), "result": ()},
   promote=False)


fns.register("erfinv", array=erfinv_array)   # F.erfinv (NOTE [ One formula, two currencies ] 5)
