"""The in-place ``_`` forms of the elementwise functions: the Tensor methods engine/functions/methods.py
binds (``mul_``, ``div_``, ``eq_``, ``bitwise_and_``, ``logit_``, ``lerp_``, ``addcmul_`` ...) and
``torch.<name>_``, the same forms as functions (``torch.abs_(x)`` is ``x.abs_()``).
"""
from __future__ import annotations

import builtins

from ...backend import dtypes as _dtype
from ...core.operators import _broadcast_check, _is_bool, _scalar_ok, sub
from ..arithmetic import div, neg
from ...core import grad_mode
from ...core.dispatch import apply
from ...core.table import OPS as _O
from ...core.tensor import Tensor
from .binary import _ADDCDIV_INT, _cast_check, _lerp_check, _modulo, _number, _two_tensors
from .integer import _int_only
from ...backend.dtypes import short_name as _short
from ..args import need_tensor as _need_tensor


def _inplace(name, target, inputs, attrs=None):
    return apply(_O[name], inputs, attrs, inplace=target)


# ---- in-place forms ---------------------------------------------------------------------------------
def _unary_(row, check=None):
    def f(self):
        if check is not None:
            check(self)
        return apply(_O[row], [self], inplace=self)
    f.__name__ = row + "_"
    return f


def _no_bool(kernel):
    def check(self):
        if self.dtype is _dtype.bool_:
            raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return check


def _neg_check(self):
    if self.dtype is _dtype.bool_:
        neg(self)    # negation's bool error


def _square_(self):
    """``pow_(2)``, as PyTorch: PowBackward0 keeping the input as it was."""
    return apply(_O["pow_scalar"], [self], {"exponent": 2}, inplace=self)


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        _broadcast_check(self, exponent)
        return apply(_O["pow_tensor"], [self, exponent], inplace=self)
    return apply(_O["pow_scalar"], [self], {"exponent": _scalar_ok(exponent, "pow_")}, inplace=self)


def _mul_(self, other):
    _broadcast_check(self, other)
    return apply(_O["mul"], [self, _scalar_ok(other, "mul_")], inplace=self)


def _sub_(self, other, *, alpha=1):
    if _is_bool(self) or _is_bool(other):
        sub(self, other)        # subtraction's bool errors
    _broadcast_check(self, other)
    return apply(_O["sub"], [self, _scalar_ok(other, "sub_")], {"alpha": alpha} if alpha != 1 else None,
                 inplace=self)


def _div_(self, other, *, rounding_mode=None):
    other = _scalar_ok(other, "div_")
    _broadcast_check(self, other)
    if rounding_mode is None:
        return apply(_O["div"], [self, other], inplace=self)
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    if self.dtype.is_floating_point:      # DivBackward2: a zero gradient
        return apply(_O["div_rounding"], [self, other], {"rounding_mode": rounding_mode}, inplace=self)
    _cast_check(self, other)
    with grad_mode.no_grad():           # integers: floor_divide's ZeroDivisionError, no history to keep
        out = div(self, other, rounding_mode=rounding_mode)
    return apply(_O["copy"], [self, out], inplace=self)


def _cmp_(name):
    def f(self, other):
        if isinstance(other, Tensor):
            _broadcast_check(self, other)
            return apply(_O[name + "_"], [self, other], inplace=self)
        return apply(_O[name + "_number_"], [self], {"other": _scalar_ok(other, name + "_")}, inplace=self)
    f.__name__ = name + "_"
    f.__doc__ = (f"``self = ({name}(self, other))`` in self's dtype (1 or 0). A tensor ``other`` gives "
                 f"{name[0].upper() + name[1:]}Backward1, a number {name[0].upper() + name[1:]}Backward0: a zero "
                 "gradient.")
    return f


def _logical_(name):
    def f(self, *other):
        if other:
            _need_tensor(name + "_", other[0], "other", 1)
        # NOTE: as in PyTorch, these carry no autograd formula: the history and leaf status stay as they were
        with grad_mode.no_grad():
            return apply(_O[name], [self, *other], inplace=self)
    f.__name__ = name + "_"
    return f


def _copysign_(self, other):
    other = _number("copysign_", other)
    if isinstance(other, Tensor):
        _broadcast_check(self, other)
        return apply(_O["copysign"], [self, other], inplace=self)
    return apply(_O["copysign_number"], [self], {"other": builtins.float(other)}, inplace=self)


def _float_power_(self, exponent):
    if self.dtype is not _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_short(self.dtype)} but the operation's "
                           "result requires dtype Double")
    if isinstance(exponent, Tensor):
        _broadcast_check(self, exponent)
        return apply(_O["pow_tensor"], [self, exponent.to(_dtype.float64)], inplace=self)
    return apply(_O["pow_scalar"], [self], {"exponent": builtins.float(exponent)}, inplace=self)


def _ldexp_(self, other):
    _two_tensors("ldexp_", self, other)
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_short(self.dtype)}")
    return apply(_O["ldexp"], [self, other], inplace=self)


def _nextafter_(self, other):
    _two_tensors("nextafter_", self, other)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_short(self.dtype)}'")
    return apply(_O["nextafter"], [self, other], inplace=self)


def _integer_(name, bool_ok):
    def f(self, other):
        if name in ("gcd", "lcm"):
            _need_tensor(name + "_", other, "other", 1)
        other = _number(name + "_", other, pos=1)
        dt = _dtype.result_type([self, other])
        if not self.dtype.is_floating_point:
            _cast_check(self, other)
        _int_only(name, dt, bool_ok)
        _broadcast_check(self, other)
        return apply(_O[name], [self, other], inplace=self)
    f.__name__ = name + "_"
    return f


def _bitwise_not_(self):
    _int_only("bitwise_not", self.dtype, True)
    return apply(_O["bitwise_not"], [self], inplace=self)


def _modulo_(name):
    def f(self, other):
        return _modulo(name, self, other, inplace=self)
    f.__name__ = name + "_"
    return f


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _abs_check(self):
    if self.dtype is _dtype.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")


def _unary_inplace(name):
    row = name + "_inplace" if name in ("asinh", "acosh", "atanh") else name   # no derivative in place

    def f(self):
        if name == "frac" and not self.dtype.is_floating_point:
            raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_short(self.dtype)}'")
        return _inplace(row, self, [self])
    f.__name__ = name + "_"
    return f


def _binary_inplace(name, check=None):
    def f(self, other):
        if check is not None:
            check(self, other)
        _broadcast_check(self, other)
        return _inplace(name, self, [self, _scalar_ok(other, name + "_")])
    f.__name__ = name + "_"
    return f


def _logit_(self, eps=None):
    return _inplace("logit", self, [self], {"eps": None if eps is None else builtins.float(eps)})


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return _inplace("nan_to_num", self, [self], {"nan": nan, "posinf": posinf, "neginf": neginf})


def _lerp_(self, end, weight):
    _lerp_check(self, end, weight)
    if isinstance(weight, Tensor):
        return _inplace("lerp_tensor", self, [self, end, weight])
    return _inplace("lerp", self, [self, end], {"weight": weight})


def _addc(name):
    def f(self, tensor1, tensor2, *, value=1):
        if name == "addcdiv" and not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
            raise RuntimeError(_ADDCDIV_INT)
        return _inplace(name, self, [self, tensor1, tensor2], {"value": value} if value != 1 else None)
    f.__name__ = name + "_"
    return f


# ---- torch.<name>_ : the in-place forms as functions ----------------------------------------------------
_TORCH_INPLACE = (
    "abs_", "absolute_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_", "arcsin_",
    "arcsinh_", "arctan_", "arctanh_", "ceil_", "floor_", "round_", "trunc_", "fix_", "frac_", "cos_", "cosh_",
    "sin_", "sinh_", "tan_", "tanh_", "sigmoid_", "exp_", "exp2_", "expm1_", "log_", "log10_", "log1p_", "log2_",
    "sqrt_", "rsqrt_", "reciprocal_", "square_", "erf_", "erfc_", "i0_", "neg_", "negative_", "deg2rad_",
    "rad2deg_", "logit_", "xlogy_", "sinc_", "nan_to_num_", "clamp_", "clip_", "gcd_", "lcm_", "ldexp_")


def _torch_inplace(name):
    def f(input, *args, **kwargs):
        _need_tensor(name, input)
        return getattr(input, name)(*args, **kwargs)
    f.__name__ = name
    f.__doc__ = f"``input.{name}(...)``: the in-place form, as torch.{name}."
    return f


for _name in _TORCH_INPLACE:
    globals()[_name] = _torch_inplace(_name)


__all__ = list(_TORCH_INPLACE)
