"""torch.*'s integer-only elementwise functions (rows in engine/ops/elementwise/integer.py, NOTE [ Integer-only
kernels ]): gcd, lcm and the bitwise operations, which the ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``
operators run (logical on bool tensors), as in PyTorch.
"""
from __future__ import annotations

from ...backend import dtypes as _dtype
from ...core.operators import _broadcast_check
from ...core.dispatch import apply
from ...core.table import OPS as _O
from ...core.tensor import Tensor
from .binary import _number, _two_tensors
from ...backend.dtypes import short_name as _short
from ..args import need_tensor as _need_tensor


# ---- integer only: gcd, lcm, bitwise (NOTE [ Integer-only kernels ] in engine/ops/elementwise/integer.py)
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
        _broadcast_check(input, other)      # PyTorch checks the shapes first
        _int_only(name, _dtype.result_type([input, other]), bool_ok)
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


__all__ = ["gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift"]
