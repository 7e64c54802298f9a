"""The rest of ``torch.*``'s elementwise API (rows in engine/ops/elementwise_more.py): tan, fmax, fmin,
copysign, float_power, logaddexp2, ldexp, nextafter, rsub, positive, gcd, lcm and the bitwise
operations (with the ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` operators); the constants ``pi``, ``e``,
``inf``, ``nan``, ``newaxis``; the aliases (``greater``, ``multiply_``, ``absolute`` ...) and the in-place
``_`` forms PyTorch has as Tensor methods and as ``torch.*`` functions.

Where PyTorch composes a function from other ops (float_power: a cast to float64, then pow) glassgrad
composes the same ops, so the graph shows the same nodes.
"""
from __future__ import annotations

import builtins
import math

from .backend import dtypes as _dtype
from . import functional as E
from .core.dispatch import apply
from .core.tensor import Tensor
from .core import grad_mode
from .derivatives import OPS as _O

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


def _short(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def _need_tensor(fn, x, arg="input", pos=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _number(fn, x, arg="other", pos=2):
    if isinstance(x, Tensor):
        return x
    try:
        return E._scalar_ok(x, fn)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor or Number, not "
                        f"{type(x).__name__}") from None


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


absolute = E.abs


# ---- binary with gradients --------------------------------------------------------------------------
def _two_tensors(fn, input, other):
    _need_tensor(fn, input)
    _need_tensor(fn, other, "other", 2)
    E._broadcast_check(input, other)


def fmax(input, other):
    """The larger of each pair, NaN only where both are NaN. FmaxBackward0 keeps both; ``input`` takes
    the gradient where it is not smaller (or ``other`` is NaN), ``other`` everywhere else."""
    _two_tensors("fmax", input, other)
    return apply(_O["fmax"], [input, other])


def fmin(input, other):
    """The smaller of each pair, NaN only where both are NaN. FminBackward0 keeps both."""
    _two_tensors("fmin", input, other)
    return apply(_O["fmin"], [input, other])


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (-0.0 counts as negative); integers give the default float
    dtype. CopysignBackward0 (a tensor ``other``, which gets a zero gradient) or CopysignBackward1 (a
    number) keep ``input`` and the result."""
    _need_tensor("copysign", input)
    other = _number("copysign", other)
    if isinstance(other, Tensor):
        E._broadcast_check(input, other)
        return apply(_O["copysign"], [input, other])
    return apply(_O["copysign_number"], [input], {"other": builtins.float(other)})


def float_power(input, exponent):
    """``input ** exponent`` computed in float64, as PyTorch composes it: each tensor operand is cast to
    float64 (ToCopyBackward0), then pow (PowBackward0, PowBackward1 or PowBackward2)."""
    a, b = isinstance(input, Tensor), isinstance(exponent, Tensor)
    if not a and not b:
        raise TypeError(f"float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
                        " * (Number self, Tensor exponent, *, Tensor out = None)\n"
                        " * (Tensor input, Number exponent, *, Tensor out = None)\n")
    f64 = _dtype.float64
    if not b:
        return E.pow(input.to(f64), builtins.float(_number("float_power", exponent, "exponent")))
    if not a:
        return E.pow(builtins.float(_number("float_power", input, "self", 1)), exponent.to(f64))
    E._broadcast_check(input, exponent)
    return E.pow(input.to(f64), exponent.to(f64))


def logaddexp2(input, other):
    """``log2(2**input + 2**other)`` without overflow, floating inputs only. Logaddexp2Backward0 keeps
    both inputs."""
    _two_tensors("logaddexp2", input, other)
    dt = _dtype.result_type([input, other])
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"logaddexp2_cpu\" not implemented for '{_short(dt)}'")
    return apply(_O["logaddexp2"], [input, other])


def _ldexp_base(input, other):
    if input.dtype.is_floating_point:
        return input
    dt = other.dtype if other.dtype.is_floating_point else _dtype.get_default_dtype()
    return input.to(dt)


def ldexp(input, other):
    """``input * 2**other``; integers give the default float dtype. LdexpBackward0 keeps ``other`` (an
    int64 ``other`` stays int64) and the result."""
    _two_tensors("ldexp", input, other)
    return apply(_O["ldexp"], [_ldexp_base(input, other), other])


def nextafter(input, other):
    """The next floating-point value after ``input`` toward ``other``. NextafterBackward0 keeps both; as
    PyTorch, ``input`` gets the gradient unchanged and ``other`` a zero one."""
    _two_tensors("nextafter", input, other)
    dt = _dtype.result_type([input, other])
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_short(dt)}'")
    return apply(_O["nextafter"], [input, other])


def rsub(input, other, alpha=1):
    """``other - alpha * input``. RsubBackward0 (a tensor ``other``) or RsubBackward1 (a number) keep
    ``alpha``; bool operands get subtraction's error."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Number alpha = 1)\n"
                        " * (Tensor input, Number other, Number alpha = 1)\n")
    other = _number("rsub", other)
    if E._is_bool(input) or E._is_bool(other):
        E.sub(other, input)            # subtraction's bool errors
    attrs = {"alpha": alpha} if alpha != 1 else None
    if isinstance(other, Tensor):
        E._broadcast_check(input, other)
        return apply(_O["rsub"], [input, other], attrs)
    dt = _dtype.result_type([input, other, alpha])
    if dt is not input.dtype:
        input = input.to(dt)
    return apply(_O["rsub_number"], [input], {"other": other, **(attrs or {})})


# ---- fmod, remainder ---------------------------------------------------------------------------------
def _zero_divisor(input, other):
    """Integer modulo by zero is PyTorch's error (a float one gives NaN)."""
    if _dtype.result_type([input, other]).is_floating_point:
        return
    if bool(E.any(E.eq(other, 0)).item()) if isinstance(other, Tensor) else other == 0:
        raise RuntimeError("ZeroDivisionError")


def _modulo(name, input, other, inplace=None):
    other = _number(name, other)
    E._broadcast_check(input, other)
    if inplace is not None:
        _cast_check(input, other)
    _zero_divisor(input, other)
    if isinstance(other, Tensor):
        return apply(_O[name], [input, other], inplace=inplace)
    if inplace is None:
        dt = _dtype.result_type([input, other])
        input = input if dt is input.dtype else input.to(dt)
    return apply(_O[name + "_number"], [input], {"other": other}, inplace=inplace)


def fmod(input, other):
    """C's modulo: the result takes the sign of ``input``. FmodBackward1 (a tensor ``other``, keeping both
    for its gradient ``-trunc(input / other)``) or FmodBackward0 (a number: nothing kept)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fmod() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    return _modulo("fmod", input, other)


def remainder(input, other):
    """Python's modulo (``%``): the result takes the sign of ``other``. RemainderBackward1 (a tensor
    ``other``, keeping both for its gradient ``-floor(input / other)``) or RemainderBackward0 (a number).
    A number ``input`` is composed as ``input - floor(input / other) * other``."""
    if not isinstance(input, Tensor):
        return E.sub(input, E.mul(E.div(input, other, rounding_mode="floor"), other))
    return _modulo("remainder", input, other)


# ---- angle, frexp and the complex-number API on real tensors ---------------------------------------------
def angle(input):
    """The argument of each (real) number: pi below zero, 0 at or above (and at -0.0), NaN kept; integers
    give the default float dtype. AngleBackward0 keeps the input; its gradient is 0 for real inputs."""
    _need_tensor("angle", input)
    return apply(_O["angle"], [input])


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``, as
    ``torch.return_types.frexp``. The exponent is int64 (glassgrad's only integer dtype; PyTorch's is int32).
    FrexpBackward0 keeps the exponent: the mantissa's gradient is ``grad / 2**exponent``."""
    _need_tensor("frexp", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, aux = apply(_O["frexp"], [input], return_aux=True)
    return _FrexpResult(mantissa, aux["exponent"])


def _frexp_result():
    from . import return_types
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


# ---- integer only: gcd, lcm, bitwise (NOTE [ Integer-only kernels ] in engine/ops/elementwise_more.py) --
_KERNEL = {"gcd": "gcd_cpu", "lcm": "lcm_cpu", "bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
           "bitwise_xor": "bitwise_xor_cpu", "bitwise_not": "bitwise_not_cpu", "bitwise_left_shift": "lshift_cpu",
           "bitwise_right_shift": "rshift_cpu"}


def _int_only(name, dt, bool_ok):
    if dt.is_floating_point or (dt is _dtype.bool_ and not bool_ok):
        raise NotImplementedError(f"\"{_KERNEL[name]}\" not implemented for '{_short(dt)}'")


def _integer_binary(name, bool_ok, numbers_ok=True):
    def f(input, other):
        if not numbers_ok:
            _two_tensors(name, input, other)
        elif not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(other).__name__})")
        input, other = _number(name, input, "self", 1), _number(name, other)
        _int_only(name, _dtype.result_type([input, other]), bool_ok)
        E._broadcast_check(input, other)
        return apply(_O[name], [input, other])
    f.__name__ = name
    return f


gcd = _integer_binary("gcd", False, numbers_ok=False)
gcd.__doc__ = "The greatest common divisor of each pair, never negative (0 for two zeros); integers only."
lcm = _integer_binary("lcm", False, numbers_ok=False)
lcm.__doc__ = "The least common multiple of each pair, never negative (0 when either is 0); integers only."
bitwise_and = _integer_binary("bitwise_and", True)
bitwise_and.__doc__ = "Bitwise AND of integer or bool tensors (``&``); logical AND on bools."
bitwise_or = _integer_binary("bitwise_or", True)
bitwise_or.__doc__ = "Bitwise OR of integer or bool tensors (``|``)."
bitwise_xor = _integer_binary("bitwise_xor", True)
bitwise_xor.__doc__ = "Bitwise XOR of integer or bool tensors (``^``)."
bitwise_left_shift = _integer_binary("bitwise_left_shift", False)
bitwise_left_shift.__doc__ = ("``input << other`` on integers; a shift of 64 or more, or a negative one, gives 0 "
                              "(NOTE [ Integer-only kernels ]).")
bitwise_right_shift = _integer_binary("bitwise_right_shift", False)
bitwise_right_shift.__doc__ = ("``input >> other`` on integers (arithmetic: the sign fills in); a shift of 64 or "
                               "more, or a negative one, gives 0 or -1.")


def bitwise_not(input):
    """Bitwise NOT of an integer tensor (``~``); logical NOT on bools."""
    _need_tensor("bitwise_not", input)
    _int_only("bitwise_not", input.dtype, True)
    return apply(_O["bitwise_not"], [input])


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


__all__ = ["pi", "e", "inf", "nan", "newaxis", "fmod", "remainder", "angle", "frexp", "conj", "conj_physical",
           "resolve_conj", "resolve_neg", "real", "imag", "is_conj", "is_neg", "tan", "positive", "absolute", "fmax",
           "fmin", "copysign", "float_power", "logaddexp2", "ldexp", "nextafter", "rsub", "gcd", "lcm", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift"]


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
        E.neg(self)    # negation's bool error


def _square_(self):
    """``pow_(2)``, as PyTorch: PowBackward0 keeping the input as it was."""
    return apply(_O["pow_scalar"], [self], {"exponent": 2}, inplace=self)


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        E._broadcast_check(self, exponent)
        return apply(_O["pow_tensor"], [self, exponent], inplace=self)
    return apply(_O["pow_scalar"], [self], {"exponent": E._scalar_ok(exponent, "pow_")}, inplace=self)


def _cast_check(self, other):
    """An in-place op writes into ``self``: a result of a higher kind is PyTorch's error."""
    dt = _dtype.result_type([self, other])
    if dt is not self.dtype and (dt.is_floating_point or self.dtype is _dtype.bool_) and \
            not self.dtype.is_floating_point:
        raise RuntimeError(f"result type {_short(dt)} can't be cast to the desired output type {_short(self.dtype)}")
    return dt


def _mul_(self, other):
    E._broadcast_check(self, other)
    return apply(_O["mul"], [self, E._scalar_ok(other, "mul_")], inplace=self)


def _sub_(self, other, *, alpha=1):
    if E._is_bool(self) or E._is_bool(other):
        E.sub(self, other)        # subtraction's bool errors
    E._broadcast_check(self, other)
    return apply(_O["sub"], [self, E._scalar_ok(other, "sub_")], {"alpha": alpha} if alpha != 1 else None,
                 inplace=self)


def _div_(self, other, *, rounding_mode=None):
    other = E._scalar_ok(other, "div_")
    E._broadcast_check(self, other)
    if rounding_mode is None:
        return apply(_O["div"], [self, other], inplace=self)
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    if self.dtype.is_floating_point:      # DivBackward2: a zero gradient
        return apply(_O["div_rounding"], [self, other], {"rounding_mode": rounding_mode}, inplace=self)
    _cast_check(self, other)
    with grad_mode.no_grad():           # integers: floor_divide's ZeroDivisionError, no history to keep
        out = E.div(self, other, rounding_mode=rounding_mode)
    return apply(_O["copy"], [self, out], inplace=self)


def _cmp_(name):
    def f(self, other):
        if isinstance(other, Tensor):
            E._broadcast_check(self, other)
            return apply(_O[name + "_"], [self, other], inplace=self)
        return apply(_O[name + "_number_"], [self], {"other": E._scalar_ok(other, name + "_")}, inplace=self)
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
        E._broadcast_check(self, other)
        return apply(_O["copysign"], [self, other], inplace=self)
    return apply(_O["copysign_number"], [self], {"other": builtins.float(other)}, inplace=self)


def _float_power_(self, exponent):
    if self.dtype is not _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_short(self.dtype)} but the operation's "
                           "result requires dtype Double")
    if isinstance(exponent, Tensor):
        E._broadcast_check(self, exponent)
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
        E._broadcast_check(self, other)
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


def bind_methods(cls):
    """Bind the functions above, the aliases and the in-place ``_`` forms as Tensor methods and operators."""
    for name in ("tan", "positive", "absolute", "fmax", "fmin", "copysign", "float_power", "logaddexp2", "ldexp",
                 "nextafter", "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                 "bitwise_left_shift", "bitwise_right_shift"):
        setattr(cls, name, globals()[name])
    # aliases PyTorch has as methods
    cls.greater, cls.greater_equal, cls.less, cls.less_equal, cls.not_equal = E.gt, E.ge, E.lt, E.le, E.ne
    cls.logical_xor = E.logical_xor
    cls.isfinite = E.isfinite
    # in-place arithmetic under every name PyTorch gives it
    cls.mul_ = cls.multiply_ = cls.__imul__ = _mul_
    cls.sub_ = cls.subtract_ = _sub_
    cls.__isub__ = lambda self, other: _sub_(self, other)
    cls.div_ = cls.divide_ = cls.true_divide_ = _div_
    cls.__itruediv__ = lambda self, other: _div_(self, other)
    cls.pow_ = cls.__ipow__ = _pow_
    cls.square_ = _square_
    cls.neg_ = cls.negative_ = _unary_("neg", _neg_check)
    cls.abs_ = cls.absolute_ = _unary_("abs", _abs_check)
    cls.clip_ = cls.clamp_
    for row in ("tan", "exp2", "expm1", "log1p", "rsqrt", "reciprocal", "sign", "erf", "erfc", "i0"):
        setattr(cls, row + "_", _unary_(row))
    # comparisons and logical ops in place
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(cls, name + "_", _cmp_(name))
    cls.greater_, cls.greater_equal_, cls.less_, cls.less_equal_, cls.not_equal_ = (
        cls.gt_, cls.ge_, cls.lt_, cls.le_, cls.ne_)
    for name in ("logical_and", "logical_or", "logical_xor", "logical_not"):
        setattr(cls, name + "_", _logical_(name))
    # the new binary ops in place
    cls.copysign_ = _copysign_
    cls.float_power_ = _float_power_
    cls.ldexp_ = _ldexp_
    cls.nextafter_ = _nextafter_
    for name, bool_ok in (("gcd", False), ("lcm", False), ("bitwise_and", True), ("bitwise_or", True),
                          ("bitwise_xor", True), ("bitwise_left_shift", False), ("bitwise_right_shift", False)):
        setattr(cls, name + "_", _integer_(name, bool_ok))
    cls.bitwise_not_ = _bitwise_not_
    cls.fmod, cls.remainder = fmod, remainder
    cls.angle, cls.frexp = angle, frexp
    for name in ("conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg"):
        setattr(cls, name, globals()[name])
    cls.conj_physical_ = conj
    cls.real = property(conj)
    cls.imag = property(imag)
    cls.fmod_ = _modulo_("fmod")
    cls.remainder_ = cls.__imod__ = _modulo_("remainder")
    cls.__ifloordiv__ = lambda self, other: self.floor_divide_(other)
    # ``//`` is floor_divide, as in PyTorch (a NotImplemented node); div(rounding_mode=) is DivBackward2
    from ._math_fns import floor_divide
    cls.__floordiv__ = floor_divide
    cls.__rfloordiv__ = _reflected(floor_divide)
    # operators: & | ^ ~ << >> are bitwise (logical on bool tensors), as in PyTorch
    cls.__pos__ = positive
    cls.__and__ = cls.__rand__ = bitwise_and
    cls.__or__ = cls.__ror__ = bitwise_or
    cls.__xor__ = cls.__rxor__ = bitwise_xor
    cls.__invert__ = _invert
    cls.__lshift__ = bitwise_left_shift
    cls.__rshift__ = bitwise_right_shift
    cls.__rlshift__ = _reflected(bitwise_left_shift)
    cls.__rrshift__ = _reflected(bitwise_right_shift)
    cls.__iand__ = cls.bitwise_and_
    cls.__ior__ = cls.bitwise_or_
    cls.__ixor__ = cls.bitwise_xor_
    cls.__ilshift__ = cls.bitwise_left_shift_
    cls.__irshift__ = cls.bitwise_right_shift_


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
__all__ += list(_TORCH_INPLACE)
