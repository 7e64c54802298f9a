"""``torch.special``: the special functions under PyTorch's names. Most are the engine's own functions under
another name (gammaln is lgamma, expit is sigmoid, psi is digamma ...), so each shows the grad_fn PyTorch's
does; the rows that only live here are in engine/ops/special/torch_special.py (NOTE [ special kernels ])."""
from __future__ import annotations

import math

from .backend.dtypes import get_default_dtype
from .core import fns
from .core.dispatch import apply
from .core.operators import _broadcast_check, _scalar_ok
from .core.table import OPS as _O
from .core.tensor import Tensor
from .functions import arithmetic, reductions
from .functions.arithmetic import erf, expm1, log1p, sigmoid
from .functions.elementwise.binary import xlogy
from .functions.elementwise.unary import logit, sinc
from .functions.reductions import logsumexp
from .functions.special import digamma, erfinv, polygamma
from .functions.special import lgamma as gammaln
from .functions.special import mvlgamma as multigammaln
from .functions.args import need_tensor as _need_tensor

psi = digamma
expit = sigmoid


def _unary(row, name, doc):
    def f(input):
        _need_tensor(f"special_{name}" if name not in ("erfc", "exp2", "i0") else name, input)
        return apply(_O[row], [input])
    f.__name__ = name
    f.__doc__ = doc
    return f


erfc = _unary("erfc", "erfc", "1 - erf(x), exact in the right tail. ErfcBackward0 keeps the input.")
exp2 = _unary("exp2", "exp2", "2 ** x. Exp2Backward0 keeps the result.")
entr = _unary("special_entr", "entr", "-x log x (0 at 0, -inf below). SpecialEntrBackward0 keeps the input.")
i0 = _unary("i0", "i0", "The modified Bessel function of order 0. I0Backward0 keeps the input (its grad is i1).")
i1 = _unary("special_i1", "i1", "The modified Bessel function of order 1. SpecialI1Backward0 keeps input and result.")
ndtri = _unary("special_ndtri", "ndtri", "The standard normal quantile. SpecialNdtriBackward0 keeps the result.")
log_ndtr = _unary("special_log_ndtr", "log_ndtr",
                  "log of the standard normal cdf, finite far into the left tail. SpecialLogNdtrBackward0 keeps "
                  "the input and the result.")


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN). SpecialXlog1PyBackward0
    keeps both; a number ``input`` gives SpecialXlog1PyBackward1, a number ``other`` SpecialXlog1PyBackward2."""
    a, b = isinstance(input, Tensor), isinstance(other, Tensor)
    if not a and not b:
        raise TypeError(f"special_xlog1py() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    if not b:
        return apply(_O["special_xlog1py_number_other"], [input], {"other": _scalar_ok(other, "xlog1py")})
    if not a:
        return apply(_O["special_xlog1py_number_self"], [other], {"self": _scalar_ok(input, "xlog1py")})
    _broadcast_check(input, other)
    return apply(_O["special_xlog1py"], [input, other])


def ndtr(input):
    """The standard normal cdf, composed as PyTorch's: ``(1 + erf(x / sqrt 2)) * 0.5`` (MulBackward1,
    AddBackward1, ErfBackward0, MulBackward1)."""
    _need_tensor("special_ndtr", input)
    if not input.dtype.is_floating_point:
        input = input.to(get_default_dtype())
    x = apply(_O["mul_number"], [input], {"other": 1.0 / math.sqrt(2.0)})
    return apply(_O["mul_number"], [apply(_O["add_number"], [erf(x)], {"other": 1.0})], {"other": 0.5})


def round(input, *, decimals=0):
    """Round half to even; PyTorch's special.round always takes the ``decimals`` overload (RoundBackward1)."""
    _need_tensor("special_round", input)
    if not input.dtype.is_floating_point:
        return arithmetic.round(input)
    return apply(_O["round_decimals"], [input], {"decimals": decimals})


def softmax(input, dim, *, dtype=None):
    """softmax along ``dim`` (SoftmaxBackward0)."""
    return reductions.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along ``dim`` (LogSoftmaxBackward0)."""
    return reductions.log_softmax(input, dim, dtype=dtype)


__all__ = ["gammaln", "digamma", "psi", "polygamma", "multigammaln", "erf", "erfc", "erfinv", "expit", "logit",
           "xlogy", "xlog1py", "exp2", "expm1", "log1p", "sinc", "entr", "logsumexp", "log_softmax", "softmax",
           "round", "i0", "i1", "ndtr", "ndtri", "log_ndtr", "lgamma", "mvlgamma"]


fns.register("i0", tensor=i0)   # TensorFns.i0 / i1: the differentiable forms (core/fns.py rule 5)
fns.register("i1", tensor=i1)
