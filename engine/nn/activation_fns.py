"""``F.silu``, ``F.leaky_relu``, ``F.elu``, ``F.selu``, ``F.softplus``, ``F.mish``, ``F.hardtanh``,
``F.relu6`` and their in-place forms (rows in engine/ops/activation.py)."""
from __future__ import annotations

from .._dispatch import apply
from ..derivatives import OPS

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_only(input, kernel):
    if not input.dtype.is_floating_point:
        short = {"int64": "Long", "bool": "Bool"}[input.dtype.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{short}'")


def _run(name, input, attrs, inplace):
    if inplace:
        return apply(OPS[name], [input], attrs, inplace=input)
    return apply(OPS[name], [input], attrs)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (SiluBackward0 keeps the input; in place it keeps a copy of it, as PyTorch)."""
    _float_only(input, "silu_cpu")
    return _run("silu", input, None, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where positive, ``negative_slope * x`` elsewhere; in place the node keeps the result
    (LeakyReluBackward1), whose backward refuses a negative slope as PyTorch's does."""
    _float_only(input, "leaky_relu_cpu")
    if inplace:
        return apply(OPS["leaky_relu_result"], [input], {"negative_slope": negative_slope}, inplace=input)
    return apply(OPS["leaky_relu"], [input], {"negative_slope": negative_slope})


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def elu(input, alpha=1.0, inplace=False):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere (in place: EluBackward1, keeping the result)."""
    _float_only(input, "elu_cpu")
    attrs = {"alpha": alpha, "scale": 1, "input_scale": 1}
    if inplace:
        return apply(OPS["elu_result"], [input], attrs, inplace=input)
    return apply(OPS["elu"], [input], attrs)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with SELU's constants: one EluBackward0 (or EluBackward1 in place)."""
    _float_only(input, "elu_cpu")
    attrs = {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1}
    if inplace:
        return apply(OPS["elu_result"], [input], attrs, inplace=input)
    return apply(OPS["elu"], [input], attrs)


def softplus(input, beta=1, threshold=20):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    _float_only(input, "softplus_cpu")
    return apply(OPS["softplus"], [input], {"beta": beta, "threshold": threshold})


def mish(input, inplace=False):
    """``x * tanh(softplus(x))`` (MishBackward0 keeps the input)."""
    _float_only(input, "mish_cpu")
    return _run("mish", input, None, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``x`` clamped to ``[min_val, max_val]``; the gradient passes strictly inside the interval."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run("hardtanh", input, {"min_val": min_val, "max_val": max_val}, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """``hardtanh(x, 0, 6)`` (HardtanhBackward0 with min_val 0 and max_val 6, as PyTorch)."""
    return hardtanh(input, 0, 6, inplace)


__all__ = ["silu", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "softplus", "mish", "hardtanh", "hardtanh_",
           "relu6"]
