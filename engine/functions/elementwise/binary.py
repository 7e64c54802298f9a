"""torch.*'s binary elementwise functions (rows in engine/ops/elementwise/binary.py): atan2/arctan2,
hypot, logaddexp, xlogy, floor_divide, heaviside, lerp, addcmul, addcdiv, fmax, fmin, copysign,
float_power, logaddexp2, ldexp, nextafter, rsub, fmod and remainder.

Where PyTorch composes a function from other ops (float_power: a cast to float64, then pow) glassgrad
composes the same ops, so the graph shows the same nodes.
"""
from __future__ import annotations

import builtins

import numpy as np

from ...backend import dtypes as _dtype
from ...core.operators import _broadcast_check, _is_bool, _scalar_ok, sub
from ..arithmetic import eq
from .. import arithmetic
from ..factories import full
from .. import reductions
from ...core.dispatch import apply
from ...core.table import OPS as _O
from ...core.tensor import Tensor
from ...backend.dtypes import short_name as _short
from ..args import invalid_combination, need_tensor as _need_tensor, host as _host


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}[dt.name]


def _float_only(kernel, *xs):
    for x in xs:
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(x.dtype)}'")


def _float_result(kernel, *xs):
    """PyTorch promotes first and refuses an integer or bool result dtype (hypot, logaddexp)."""
    dt = _dtype.result_type(list(xs))
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_short(dt)}'")


def _number(fn, x, arg="other", pos=2):
    if isinstance(x, Tensor):
        return x
    try:
        return _scalar_ok(x, fn)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor or Number, not "
                        f"{type(x).__name__}") from None


def _cast_check(self, other):
    """An in-place op writes into ``self``: a result of a higher kind is PyTorch's error."""
    dt = _dtype.result_type([self, other])
    if dt is not self.dtype and (dt.is_floating_point or self.dtype is _dtype.bool_) and \
            not self.dtype.is_floating_point:
        raise RuntimeError(f"result type {_short(dt)} can't be cast to the desired output type {_short(self.dtype)}")
    return dt


# ---- elementwise binary ----------------------------------------------------------------------------
def atan2(input, other):
    """The angle of the point (other, input), in (-pi, pi]. Atan2Backward0 keeps both inputs."""
    _need_tensor("atan2", input)
    _need_tensor("atan2", other, "other", 2)
    _broadcast_check(input, other)
    return apply(_O["atan2"], [input, other])


arctan2 = atan2


def hypot(input, other):
    """``sqrt(input**2 + other**2)``, floating inputs only. HypotBackward0 keeps both and the result."""
    _need_tensor("hypot", input)
    _need_tensor("hypot", other, "other", 2)
    _float_result("hypot_cpu", input, other)
    _broadcast_check(input, other)
    return apply(_O["hypot"], [input, other])


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow. LogaddexpBackward0 keeps both inputs."""
    _need_tensor("logaddexp", input)
    _need_tensor("logaddexp", other, "other", 2)
    _float_result("logaddexp_cpu", input, other)
    _broadcast_check(input, other)
    return apply(_O["logaddexp"], [input, other])


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN). Either may be a number:
    XlogyBackward1 (``input`` a number) or XlogyBackward2 (``other`` a number) keep the tensor one."""
    a, b = isinstance(input, Tensor), isinstance(other, Tensor)
    if not a and not b:
        raise TypeError(f"xlogy() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n * (Tensor input, Tensor other, *, Tensor "
                        "out = None)\n * (Number self, Tensor other, *, Tensor out = None)\n * (Tensor input, Number "
                        "other, *, Tensor out = None)\n")
    _broadcast_check(input, other)
    if not b:
        return apply(_O["xlogy_number_other"], [input], {"other": _scalar_ok(other, "xlogy")})
    if not a:
        return apply(_O["xlogy_number_self"], [other], {"self": _scalar_ok(input, "xlogy")})
    return apply(_O["xlogy"], [input, other])


def floor_divide(input, other):
    """``floor(input / other)``; integers stay integers. As PyTorch, a node that raises on backward
    (NotImplemented) when ``input`` requires grad."""
    if not isinstance(input, Tensor):
        input = full((), input, dtype=_dtype.result_type([input]), device=other.device)
    other = _scalar_ok(other, "floor_divide")
    _no_bool("div_floor", input, other)
    _broadcast_check(input, other)
    if not _dtype.result_type([input, other]).is_floating_point:
        divisor = _host(other) if isinstance(other, Tensor) else np.asarray(other)
        if (divisor == 0).any():
            raise RuntimeError("ZeroDivisionError")
    if not isinstance(other, Tensor):
        if isinstance(other, builtins.float) and not input.dtype.is_floating_point:
            input = input.to(_dtype.get_default_dtype())
        return apply(_O["floor_divide_number"], [input], {"b": other})
    return apply(_O["floor_divide"], [input, other])


def heaviside(input, values):
    """The step function: 0 below zero, 1 above, ``values`` at zero. No gradient (NotImplemented)."""
    _need_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    _broadcast_check(input, values)
    return apply(_O["heaviside"], [input, values])


_LERP_SIGNATURES = ("Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
                    "Tensor input, Tensor end, Number weight, *, Tensor out = None")


def _lerp_check(input, end, weight):
    if not (isinstance(input, Tensor) and isinstance(end, Tensor) and isinstance(weight, (Tensor, int, float))):
        raise invalid_combination("lerp", (input, end, weight), _LERP_SIGNATURES)
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_cname(input.dtype)} for `end` but got dtype {_cname(end.dtype)}")
    if isinstance(weight, Tensor) and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_cname(input.dtype)} for `weight` but got dtype {_cname(weight.dtype)}")
    _float_only("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", input)


def lerp(input, end, weight):
    """``input + weight * (end - input)``. A number weight: LerpBackward0 (nothing saved); a tensor:
    LerpBackward1, keeping all three."""
    _lerp_check(input, end, weight)
    if isinstance(weight, Tensor):
        _broadcast_check(input, end)
        _broadcast_check(input, weight)
        return apply(_O["lerp_tensor"], [input, end, weight])
    _broadcast_check(input, end)
    return apply(_O["lerp"], [input, end], {"weight": weight})


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``. AddcmulBackward0 keeps tensor1 and tensor2."""
    for a, b in ((input, tensor1), (input, tensor2), (tensor1, tensor2)):
        _broadcast_check(a, b)
    return apply(_O["addcmul"], [input, tensor1, tensor2], {"value": value} if value != 1 else None)


_ADDCDIV_INT = ("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
                "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
                "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
                "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
                "(input + value * tensor1 / tensor2), for all dtypes.")


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``. AddcdivBackward0 keeps tensor1 and tensor2."""
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError(_ADDCDIV_INT)
    for a, b in ((input, tensor1), (input, tensor2), (tensor1, tensor2)):
        _broadcast_check(a, b)
    return apply(_O["addcdiv"], [input, tensor1, tensor2], {"value": value} if value != 1 else None)


# ---- binary with gradients --------------------------------------------------------------------------
def _two_tensors(fn, input, other):
    _need_tensor(fn, input)
    _need_tensor(fn, other, "other", 2)
    _broadcast_check(input, other)


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
    if not isinstance(input, Tensor):
        raise invalid_combination("copysign", (input, other), ("Tensor input, Tensor other, *, Tensor out = None",
                                                              "Tensor input, Number other, *, Tensor out = None"))
    other = _number("copysign", other)
    if isinstance(other, Tensor):
        _broadcast_check(input, other)
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
        return arithmetic.pow(input.to(f64), builtins.float(_number("float_power", exponent, "exponent")))
    if not a:
        return arithmetic.pow(builtins.float(_number("float_power", input, "self", 1)), exponent.to(f64))
    _broadcast_check(input, exponent)
    return arithmetic.pow(input.to(f64), exponent.to(f64))


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
    if _is_bool(input) or _is_bool(other):
        sub(other, input)            # subtraction's bool errors
    attrs = {"alpha": alpha} if alpha != 1 else None
    if isinstance(other, Tensor):
        _broadcast_check(input, other)
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
    if bool(reductions.any(eq(other, 0)).item()) if isinstance(other, Tensor) else other == 0:
        raise RuntimeError("ZeroDivisionError")


def _no_bool(kernel, input, other):
    """PyTorch's CPU kernels for floor division and modulo have no bool loop."""
    if _dtype.result_type([input, other]) is _dtype.bool_:
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'Bool\'')


def _modulo(name, input, other, inplace=None):
    other = _number(name, other)
    _no_bool(name, input, other)
    _broadcast_check(input, other)
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
    A number ``input`` has no derivative in PyTorch: a NotImplemented node whose backward raises."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(f"remainder() received an invalid combination of arguments - got ({type(input).__name__}, "
                            f"{type(other).__name__}), but expected one of:\n"
                            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                            " * (Number self, Tensor other)\n"
                            "      didn't match because some of the arguments have invalid types: "
                            f"(!{type(input).__name__}!, !{type(other).__name__}!)\n"
                            " * (Tensor input, Number other, *, Tensor out = None)\n")
        if isinstance(input, builtins.bool):   # True % t is 1 % t, as in PyTorch
            input = int(input)
        _zero_divisor(input, other)
        dt = _dtype.result_type([input, other])
        return apply(_O["remainder_number_self"], [other if dt is other.dtype else other.to(dt)], {"self": input})
    return _modulo("remainder", input, other)


__all__ = ["atan2", "arctan2", "hypot", "logaddexp", "xlogy", "floor_divide", "heaviside", "lerp", "addcmul",
           "addcdiv", "fmax", "fmin", "copysign", "float_power", "logaddexp2", "ldexp", "nextafter", "rsub", "fmod",
           "remainder"]
