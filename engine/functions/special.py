"""``torch.lgamma``, ``torch.digamma``, ``torch.polygamma``, ``torch.mvlgamma`` (rows and kernels in
engine/ops/special/gamma.py, NOTE [ Gamma-family kernels ]), ``torch.erfinv`` and ``torch.sgn`` (rows in
engine/ops/special/erfinv.py), and their in-place Tensor methods. torch.special is engine/special.py.
"""
from __future__ import annotations

from ..core.dispatch import apply
from ..core.table import OPS as _O
from .args import need_tensor as _need_tensor


def _need_int(fn, n, arg, pos):
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be int, not {type(n).__name__}")


def lgamma(input):
    """log|Gamma(x)|; integers give the default float dtype. LgammaBackward0 keeps the input."""
    _need_tensor("lgamma", input)
    return apply(_O["lgamma"], [input])


def digamma(input):
    """psi(x) = d/dx lgamma(x). DigammaBackward0 keeps the input; its gradient is polygamma(1, x)."""
    _need_tensor("digamma", input)
    return apply(_O["digamma"], [input])


def _check_n(n):
    _need_int("polygamma", n, "n", 1)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def polygamma(n, input):
    """The n-th derivative of digamma. PolygammaBackward0 keeps the input and n."""
    _check_n(n)
    _need_tensor("polygamma", input, "input", 2)
    return apply(_O["polygamma"], [input], {"n": n})


def _check_p(p):
    _need_int("mvlgamma", p, "p", 2)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def mvlgamma(input, p):
    """The multivariate log-gamma of dimension ``p``. MvlgammaBackward0 keeps the input and p."""
    _need_tensor("mvlgamma", input)
    _check_p(p)
    return apply(_O["mvlgamma"], [input], {"p": p})


def _lgamma_(self):
    return apply(_O["lgamma"], [self], inplace=self)


def _digamma_(self):
    return apply(_O["digamma"], [self], inplace=self)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    _check_n(n)
    return apply(_O["polygamma"], [self], {"n": n}, inplace=self)


def _mvlgamma_(self, p):
    _check_p(p)
    return apply(_O["mvlgamma"], [self], {"p": p}, inplace=self)


# ---- erfinv, sgn (rows in engine/ops/special/erfinv.py) ------------------------------------------------------
def erfinv(input):
    """Inverse error function (NOTE [ erfinv ]); integers give the default float dtype.
    ErfinvBackward0 keeps the input."""
    _need_tensor("erfinv", input, "input", 1)
    return apply(_O["erfinv"], [input])


def sgn(input):
    """sign for real tensors (0 at NaN); SgnBackward0, a zero gradient, keeps self and the result."""
    _need_tensor("sgn", input, "input", 1)
    if input.dtype.is_complex:      # z / |z|, with its complex gradient (engine/ops/complex.py)
        return apply(_O["sgn_complex"], [input])
    return apply(_O["sgn"], [input])


def _sgn_(self):
    return apply(_O["sgn"], [self], inplace=self)


def _erfinv_(self):
    return apply(_O["erfinv"], [self], inplace=self)


__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "erfinv", "sgn"]
