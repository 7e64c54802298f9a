"""torch.* for the core's elementwise rows (engine/core/primitives.py: binary and unary): div, pow,
the comparisons, exp/log/..., relu/gelu, clamp, floor/ceil/round and the dtype cast.

add, sub and mul themselves are in engine/core/operators.py (the first op a reader follows)."""
from __future__ import annotations

import builtins

from ..backend import dtypes as _dtype
from ..core.dispatch import apply
from ..core.operators import _binary, _broadcast_check, _scalar_ok, mul, sub
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .factories import full
from ..backend.dtypes import short_name as _short
from .args import need_tensor


subtract = sub


multiply = mul


def div(input, other, *, rounding_mode=None):
    if rounding_mode is not None and not _dtype.result_type([_scalar_ok(input, "div"), _scalar_ok(other, "div")]) \
            .is_floating_point:
        return _int_div(input, other, rounding_mode)
    if rounding_mode is not None:   # DivBackward2, a zero gradient (engine/ops/elementwise/binary.py)
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                             f"'{rounding_mode}'")
        return _binary("div_rounding", input, other, rounding_mode=rounding_mode)
    return _binary("div", input, other)


divide = true_divide = div


def _int_div(input, other, rounding_mode):
    """Integer division rounded down or toward zero stays integer (PyTorch's ``//`` on int64 and int32)."""
    ref = input if isinstance(input, Tensor) else other
    xp = ref._storage.xp
    dt = _dtype.result_type([input, other])
    if dt is _dtype.bool_:
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    _broadcast_check(input, other)
    a, b = (x.to(dt)._data if isinstance(x, Tensor) else int(x) for x in (input, other))
    if builtins.bool(xp.any(xp.asarray(b) == 0)):
        raise RuntimeError("ZeroDivisionError")
    q = xp.floor_divide(a, b)
    if rounding_mode == "trunc":
        q = xp.where(xp.logical_and(q < 0, q * b != a), q + 1, q)
    q = q if hasattr(q, "shape") else xp.asarray(q, dtype=_dtype.to_array_dtype(xp, dt))
    return Tensor._wrap(q if q.dtype == _dtype.to_array_dtype(xp, dt) else xp.astype(q, _dtype.to_array_dtype(xp, dt)))


def _nondiff(t, fn):
    xp = t._storage.xp
    return Tensor._wrap(fn(xp, t._data))


def _int_pow(base, exponent):
    """Integer ``base ** exponent`` with negative exponents, as PyTorch's integer kernel: 1 and -1 keep
    their powers, every other base gives 0 (``1 // base ** -e`` rounded toward zero)."""
    xp = exponent._storage.xp
    a = base.to(_dtype.int64)._data if isinstance(base, Tensor) else xp.asarray(int(base), dtype=xp.int64)
    e = exponent.to(_dtype.int64)._data
    neg = e < 0
    powered = a ** xp.where(neg, xp.zeros_like(e), e)
    one = xp.ones_like(powered)
    small = xp.where(a == 1, one, xp.where(a == -1, xp.where(e % 2 == 0, one, -one), xp.zeros_like(powered)))
    dt = _dtype.to_array_dtype(xp, _dtype.result_type([base, exponent]))   # int8 ** int8 stays int8
    return Tensor._wrap(xp.astype(xp.where(neg, small, powered), dt))


def pow(input, exponent):
    """``input ** exponent``; either may be a number (not both)."""
    if isinstance(input, Tensor) and isinstance(exponent, Tensor) and input.dtype is exponent.dtype is _dtype.bool_:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if isinstance(exponent, Tensor) and not isinstance(input, (builtins.float, builtins.complex)) and \
            not (exponent.dtype.is_floating_point or exponent.dtype.is_complex) and not (isinstance(input, Tensor) and (
                input.dtype.is_floating_point or input.dtype.is_complex)) and exponent.numel() and builtins.bool(exponent._storage.xp.any(exponent._data < 0)):
        _broadcast_check(input, exponent)
        return _int_pow(input, exponent)
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):   # number ** tensor: one edge
        input = _scalar_ok(input, "pow")
        dt = _dtype.result_type([input, exponent])
        return apply(_O["pow_number_base"], [exponent if exponent.dtype is dt else exponent.to(dt)], {"self": input})
    if isinstance(exponent, Tensor) or not isinstance(input, Tensor):
        _broadcast_check(input, exponent)
        return apply(_O["pow_tensor"], [_scalar_ok(input, "pow"), exponent],
                     node_name=None if isinstance(input, Tensor) else "PowBackward2")  # number ** tensor
    exponent = _scalar_ok(exponent, "pow")
    if type(exponent) in (builtins.float, builtins.complex) and not (input.dtype.is_floating_point or
                                                                     input.dtype.is_complex):
        input = input.to(_dtype.get_default_dtype())  # int ** float is a float tensor, as in PyTorch
    elif input.dtype is _dtype.bool_ and type(exponent) is builtins.int:
        input = input.to(_dtype.int64)   # bool ** 2 is int64 in PyTorch (NumPy's is int8)
    return apply(_O["pow_scalar"], [input], {"exponent": exponent})


def square(input):
    return pow(input, 2)


def maximum(input, other):
    """The larger of each pair (NaN wins); both arguments must be tensors, as in PyTorch."""
    need_tensor("maximum", input)
    need_tensor("maximum", other, "other", 2)
    _broadcast_check(input, other)
    return apply(_O["maximum"], [input, other])


def minimum(input, other):
    """The smaller of each pair (NaN wins); both arguments must be tensors, as in PyTorch."""
    need_tensor("minimum", input)
    need_tensor("minimum", other, "other", 2)
    _broadcast_check(input, other)
    return apply(_O["minimum"], [input, other])


def _cmp(name):
    def f(input, other):
        return _binary(name, input, other)
    f.__name__ = name
    return f


eq, ne, lt, le, gt, ge = (_cmp(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(name):
    def f(input, other):
        need_tensor(name, input)              # PyTorch takes no number here (its words, not NumPy's)
        need_tensor(name, other, "other", 2)
        return _binary(name, input, other)
    f.__name__ = name
    return f


logical_and, logical_or, logical_xor = (_logical(n) for n in ("logical_and", "logical_or", "logical_xor"))


def logical_not(input):
    return apply(_O["logical_not"], [input])


def _unary(name):
    def f(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return apply(_O[name], [input])
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as torch.{name}."
    return f


_neg = _unary("neg")


def neg(input):
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                           "a mask, use the `~` or `logical_not()` operator instead.")
    return _neg(input)


negative = neg


exp = _unary("exp")


log = _unary("log")


sqrt = _unary("sqrt")


rsqrt = _unary("rsqrt")


reciprocal = _unary("reciprocal")


_abs = _unary("abs")


def abs(input):  # noqa: A001
    """Elementwise abs, as torch.abs (a bool tensor is refused, as PyTorch refuses it)."""
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return _abs(input)


_sign = _unary("sign")


def sign(input):
    """-1, 0 or 1 by the sign of each element (NaN stays NaN); a bool tensor is its own sign, as in PyTorch."""
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        return input.clone()
    return _sign(input)


sin = _unary("sin")


cos = _unary("cos")


tanh = _unary("tanh")


sigmoid = _unary("sigmoid")


_relu = _unary("relu")


def relu(input):
    """Elementwise max(x, 0), as torch.relu (a bool tensor is refused, as PyTorch refuses it)."""
    if isinstance(input, Tensor) and input.dtype is _dtype.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _relu(input)


erf = _unary("erf")


log1p = _unary("log1p")


expm1 = _unary("expm1")


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{_short(input.dtype)}'")
    return apply(_O["gelu"], [input], {"approximate": approximate})


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):   # ClampBackward0 (rows in engine/ops/nn/activation.py)
        ref = min if isinstance(min, Tensor) else max
        lo, hi = (b if b is None or isinstance(b, Tensor) else full((), b, dtype=ref.dtype, device=ref.device)
                  for b in (min, max))
        for b in (lo, hi):
            if b is not None:
                _broadcast_check(input, b)
        dt = _dtype.result_type([t for t in (input, lo, hi) if t is not None])
        input, lo, hi = (t if t is None or t.dtype is dt else t.to(dt) for t in (input, lo, hi))
        return apply(_O["clamp_tensor"], [input, lo, hi])
    input = _bound_promote(input, min, max)
    return apply(_O["clamp"], [input], {"min": min, "max": max})


def _inplace_bound_check(input, *bounds):
    """clamp_/clamp_min_/clamp_max_ write into ``input``: a bound of a higher kind is PyTorch's error
    (a Python number is named by its C++ type, as PyTorch names it)."""
    if input.dtype.is_floating_point:
        return
    for b in bounds:
        if b is None:
            continue
        dt = _dtype.result_type([input, b])
        if dt is not input.dtype:
            cpp = {"int64": "long int", "int32": "int", "bool": "bool"}
            want = _short(input.dtype) if isinstance(b, Tensor) else cpp[input.dtype.name]
            raise RuntimeError(f"result type {_short(dt)} can't be cast to the desired output type {want}")


def _bound_promote(input, *bounds):
    """An integer (or bool) tensor clamped to a float bound is a float tensor, as in PyTorch."""
    if input.dtype.is_floating_point:
        return input
    dt = _dtype.result_type([input, *(b for b in bounds if b is not None)])
    return input if dt is input.dtype else input.to(dt)


clip = clamp


def _rounding(name, input, kernel, attrs=None):
    if input.dtype is _dtype.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return apply(_O[name], [input], attrs)


def floor(input):
    """Round down; a zero gradient (FloorBackward0), integers unchanged."""
    return _rounding("floor", input, "floor_vml_cpu")


def ceil(input):
    """Round up; a zero gradient (CeilBackward0), integers unchanged."""
    return _rounding("ceil", input, "ceil_vml_cpu")


def round(input, *, decimals=None):
    """Round half to even (to ``decimals`` places, when given: RoundBackward1); a zero gradient."""
    if decimals is not None:
        if not input.dtype.is_floating_point:
            kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_short(input.dtype)}'")
        return _rounding("round_decimals", input, "round_cpu", {"decimals": decimals})
    return _rounding("round", input, "round_vml_cpu")


def _type_short(d) -> str:
    return _dtype.SHORT_NAMES[d.name]


def isnan(input):
    return _nondiff(input, lambda xp, a: xp.isnan(a))


def isfinite(input):
    return _nondiff(input, lambda xp, a: xp.isfinite(a))


def _to_dtype(input, dtype):
    if input.dtype is dtype:
        return input
    xp = input._storage.xp
    return apply(_O["to_dtype"], [input], {"dtype": _dtype.to_array_dtype(xp, dtype)})


def _bound_type(fn, name, value):
    if not isinstance(value, (Tensor, builtins.int, builtins.float)):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (Tensor, {type(value).__name__}), "
                        f"but expected one of:\n * (Tensor input, Tensor {name}, *, Tensor out = None)\n"
                        f" * (Tensor input, Number {name}, *, Tensor out = None)\n")


def clamp_min(input, min):
    """ClampMinBackward0 for a number bound, ClampMinBackward1 for a tensor (engine/ops/nn/activation.py)."""
    _bound_type("clamp_min", "min", min)
    if isinstance(min, Tensor):
        _broadcast_check(input, min)
        return apply(_O["clamp_min_tensor"], [input, min])
    return apply(_O["clamp_min"], [_bound_promote(input, min)], {"min": min})


def clamp_max(input, max):
    _bound_type("clamp_max", "max", max)
    if isinstance(max, Tensor):
        _broadcast_check(input, max)
        return apply(_O["clamp_max_tensor"], [input, max])
    return apply(_O["clamp_max"], [_bound_promote(input, max)], {"max": max})


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (no gradient)."""
    a = input.detach()
    b = other.detach() if isinstance(other, Tensor) else other
    scale = abs(b) if isinstance(b, Tensor) else builtins.abs(b)
    close = le(abs(a - b), atol + rtol * scale)
    if equal_nan and isinstance(b, Tensor):
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def _inplace(name, target, *args, **attrs):
    return apply(_O[name], [target, *args], attrs or None, inplace=target)


__all__ = ["subtract", "multiply", "div", "divide", "true_divide", "pow", "square", "maximum", "minimum", "eq",
           "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
           "logical_and", "logical_or", "logical_xor", "logical_not", "neg", "negative", "exp", "log", "sqrt",
           "rsqrt", "reciprocal", "abs", "sign", "sin", "cos", "tanh", "sigmoid", "relu", "erf", "log1p",
           "expm1", "gelu", "clamp", "clip", "floor", "ceil", "round", "isnan", "isfinite", "clamp_min",
           "clamp_max", "isclose"]
