"""torch.*'s unary elementwise functions (rows in engine/ops/elementwise/unary.py): inverse trigonometric
and hyperbolic functions, log2, log10, sinc, trunc/fix, frac, logit, nan_to_num, deg2rad/rad2deg, tan,
positive, absolute, angle, frexp, the complex-number API on real tensors (conj, real, imag, ...), the
tests on values (isinf, isposinf, isneginf, signbit, isreal), and the constants ``pi``, ``e``, ``inf``,
``nan``, ``newaxis``.
"""
from __future__ import annotations

import builtins
import math

from ... import return_types
from ...backend import dtypes as _dtype
from .. import arithmetic
from ...core.dispatch import apply
from ...core.table import OPS as _O
from ...core.tensor import Tensor
from ...backend.dtypes import short_name as _short
from ..args import need_tensor as _need_tensor

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


def _float_only(kernel, *xs):
    for x in xs:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(x.dtype)}'")


# ---- elementwise unary -----------------------------------------------------------------------------
def _unary(name, doc):
    def f(input):
        _need_tensor(name, input)
        return apply(_O[name], [input])
    f.__name__ = name
    f.__doc__ = doc
    return f


asin = arcsin = _unary("asin", "Inverse sine; integers give the default float dtype. AsinBackward0 keeps the input.")
acos = arccos = _unary("acos", "Inverse cosine. AcosBackward0 keeps the input.")
atan = arctan = _unary("atan", "Inverse tangent. AtanBackward0 keeps the input.")
sinh = _unary("sinh", "Hyperbolic sine. SinhBackward0 keeps the input.")
cosh = _unary("cosh", "Hyperbolic cosine. CoshBackward0 keeps the input.")
asinh = arcsinh = _unary("asinh", "Inverse hyperbolic sine. AsinhBackward0 keeps the input.")
acosh = arccosh = _unary("acosh", "Inverse hyperbolic cosine. AcoshBackward0 keeps the input.")
atanh = arctanh = _unary("atanh", "Inverse hyperbolic tangent. AtanhBackward0 keeps the input.")
log2 = _unary("log2", "Base-2 logarithm. Log2Backward0 keeps the input.")
log10 = _unary("log10", "Base-10 logarithm. Log10Backward0 keeps the input.")
sinc = _unary("sinc", "Normalized sinc, sin(pi x) / (pi x), 1 at 0. SincBackward0 keeps the input.")
deg2rad = _unary("deg2rad", "Degrees to radians (Deg2RadBackward0, nothing saved).")
rad2deg = _unary("rad2deg", "Radians to degrees (Rad2DegBackward0, nothing saved).")


def trunc(input):
    """Round toward zero; integers come back unchanged. TruncBackward0: a zero gradient."""
    _need_tensor("trunc", input)
    if input.dtype is _dtype.bool_:
        raise NotImplementedError("\"trunc_vml_cpu\" not implemented for 'Bool'")
    return apply(_O["trunc"], [input])


fix = trunc


def frac(input):
    """``input - trunc(input)``, for floating inputs. FracBackward0 passes the gradient through."""
    _need_tensor("frac", input)
    _float_only("frac_cpu", input)
    return apply(_O["frac"], [input])


def logit(input, eps=None):
    """``log(p / (1 - p))``; with ``eps`` the input is first clamped to [eps, 1 - eps]."""
    _need_tensor("logit", input)
    return apply(_O["logit"], [input], {"eps": None if eps is None else builtins.float(eps)})


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's
    largest and smallest finite values); integer tensors come back as a copy."""
    _need_tensor("nan_to_num", input)
    return apply(_O["nan_to_num"], [input], {"nan": nan, "posinf": posinf, "neginf": neginf})


# ---- unary ----------------------------------------------------------------------------------------
def tan(input):
    """Tangent; integers give the default float dtype. TanBackward0 keeps the result."""
    _need_tensor("tan", input)
    return apply(_O["tan"], [input])


def positive(input):
    """``input`` itself (the very same tensor), as PyTorch's ``+x``; a bool tensor is refused."""
    _need_tensor("positive", input)
    if input.dtype is _dtype.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


absolute = arithmetic.abs


# ---- angle, frexp and the complex-number API on real tensors ---------------------------------------------
def angle(input):
    """The argument of each (real) number: pi below zero, 0 at or above (and at -0.0), NaN kept; integers
    give the default float dtype. AngleBackward0 keeps the input; its gradient is 0 for real inputs."""
    _need_tensor("angle", input)
    return apply(_O["angle"], [input])


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``, as
    ``torch.return_types.frexp``. The exponent is int64 (the kernel's; PyTorch's is int32).
    FrexpBackward0 keeps the exponent: the mantissa's gradient is ``grad / 2**exponent``."""
    _need_tensor("frexp", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, aux = apply(_O["frexp"], [input], return_aux=True)
    return _FrexpResult(mantissa, aux["exponent"])


def _frexp_result():
    found = getattr(return_types, "frexp", None)
    return found if found is not None else return_types._make("frexp", ("mantissa", "exponent"))


_FrexpResult = _frexp_result()


def conj(input):
    """A real tensor is its own conjugate: ``input`` itself (as PyTorch's conj, conj_physical, resolve_conj,
    resolve_neg and real on real tensors)."""
    _need_tensor("conj", input)
    return input


conj_physical = resolve_conj = resolve_neg = real = conj


def imag(input):
    """PyTorch's error: a real tensor has no imaginary part to view."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def is_conj(input):
    """False: glassgrad's tensors are real."""
    return False


is_neg = is_conj


# ---- tests on values (no graph) ----------------------------------------------------------------------
def _test(fn, name):
    def f(input):
        _need_tensor(name, input, "input", 1)
        xp = input._storage.xp
        a = input._data
        if input.dtype.is_floating_point:
            return Tensor._wrap(fn(xp, a))
        return Tensor._wrap(xp.zeros(tuple(a.shape), dtype=xp.bool) if name != "signbit" or input.dtype is
                            _dtype.bool_ else a < 0)
    f.__name__ = name
    return f


isinf = _test(lambda xp, a: xp.isinf(a), "isinf")
isposinf = _test(lambda xp, a: a == float("inf"), "isposinf")
isneginf = _test(lambda xp, a: a == float("-inf"), "isneginf")
signbit = _test(lambda xp, a: xp.signbit(a), "signbit")


def isreal(input):
    """True everywhere: glassgrad's tensors are all real."""
    _need_tensor("isreal", input, "input", 1)
    xp = input._storage.xp
    return Tensor._wrap(xp.ones(tuple(input._data.shape), dtype=xp.bool))


isinf.__doc__ = "True where the element is +inf or -inf (never for integers)."
isposinf.__doc__ = "True where the element is +inf."
isneginf.__doc__ = "True where the element is -inf."
signbit.__doc__ = "True where the sign bit is set (negative numbers, -0.0, -inf)."


__all__ = ["pi", "e", "inf", "nan", "newaxis", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh",
           "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "log2", "log10", "trunc", "fix", "frac",
           "deg2rad", "rad2deg", "logit", "sinc", "nan_to_num", "tan", "positive", "absolute", "angle", "frexp",
           "conj", "conj_physical", "resolve_conj", "resolve_neg", "real", "imag", "is_conj", "is_neg", "isinf",
           "isposinf", "isneginf", "isreal", "signbit"]
