"""The activation functions of ``torch.nn.functional`` (rows in engine/ops/nn/activation.py): ``softmax``,
``log_softmax`` and ``tanh``, ``sigmoid``, ``gelu`` (engine.functional's), relu, relu6, hardtanh,
threshold, elu, selu, celu, leaky_relu, rrelu, prelu, silu, mish, softplus, hardsigmoid, hardswish,
softsign, logsigmoid, tanhshrink, hardshrink, softshrink, glu, softmin, their in-place forms, and
``gumbel_softmax``.

Where PyTorch has them, ``torch.*`` functions and Tensor methods are bound at the end of this file.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import functional as E
from ...backend.dtypes import SHORT_NAMES as _SHORT
from ...backend.gaps import from_numpy
from ...core.dispatch import apply
from ...core.tensor import Tensor
from ...functions.dims import wrap_dim as _wrap_dim
from ...core.table import OPS
from ...random import generator_for
from ...functions import reductions as _reductions

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_only(input, kernel):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_SHORT[input.dtype.name]}'")


def _no_bool(input, kernel):
    if input.dtype.name == "bool":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _run(name, input, attrs, inplace):
    if inplace:
        return apply(OPS[name], [input], attrs, inplace=input)
    return apply(OPS[name], [input], attrs)


tanh = E.tanh
sigmoid = E.sigmoid
gelu = E.gelu


def softmax(input, dim=None, dtype=None):
    """``torch.softmax``, with PyTorch's legacy default dim (engine/functions/reductions.py)."""
    return _reductions.softmax(input, dim, dtype)


def log_softmax(input, dim=None, dtype=None):
    """``torch.log_softmax``, with PyTorch's legacy default dim (engine/functions/reductions.py)."""
    return _reductions.log_softmax(input, dim, dtype)


# ---- relu family -------------------------------------------------------------------------------------
def relu(input, inplace=False):
    """``max(x, 0)``; ReluBackward0 keeps the result (in place too, as PyTorch)."""
    return E._inplace("relu", input) if inplace else E.relu(input)


def relu_(input):
    return E._inplace("relu", input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``x`` clamped to ``[min_val, max_val]``; the gradient is cut where ``x <= min_val`` or
    ``x >= max_val`` (NOTE [ Activation gradients at NaN ] in engine/ops/nn/activation.py)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.name == "bool":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype.name.startswith("uint") and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _run("hardtanh", input, {"min_val": min_val, "max_val": max_val}, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """``hardtanh(x, 0, 6)`` (HardtanhBackward0 with min_val 0 and max_val 6, as PyTorch)."""
    return hardtanh(input, 0, 6, inplace)


def threshold(input, threshold, value, inplace=False):
    """``value`` where ``x <= threshold``, else ``x`` (ThresholdBackward0; in place ThresholdBackward1,
    both keeping the input)."""
    _no_bool(input, "threshold_cpu")
    attrs = {"threshold": threshold, "value": value}
    if inplace:
        return apply(OPS["threshold_"], [input], attrs, inplace=input)
    return apply(OPS["threshold"], [input], attrs)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, True)


_threshold = threshold   # the name ``threshold`` is also the argument's


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where positive, ``negative_slope * x`` elsewhere; in place the node keeps the result
    (LeakyReluBackward1), whose backward refuses a negative slope as PyTorch's does."""
    _float_only(input, "leaky_relu_cpu")
    if inplace:
        return apply(OPS["leaky_relu_result"], [input], {"negative_slope": negative_slope}, inplace=input)
    return apply(OPS["leaky_relu"], [input], {"negative_slope": negative_slope})


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU. In training each non-positive element gets its own slope drawn
    uniformly from ``[lower, upper]`` (the device's generator); the node keeps those slopes as
    ``noise`` (1 where ``x > 0``). In eval the slope is ``(lower + upper) / 2`` and ``noise`` is
    a same-sized tensor the node keeps unused (PyTorch's is uninitialized; glassgrad's is zeros).
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _float_only(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    xp = input._storage.xp
    if training:
        u = generator_for(input.device).uniform(tuple(input.shape), "float64")
        slopes = from_numpy(xp, (lower + (upper - lower) * u).astype(np.dtype(input.dtype.name)))
        noise = xp.where(input._data <= 0, slopes, xp.ones((), dtype=input._data.dtype))   # NaN: 1, as PyTorch
    else:
        noise = xp.zeros(tuple(input.shape), dtype=input._data.dtype)
    attrs = {"lower": lower, "upper": upper, "training": bool(training)}
    noise = Tensor._wrap(noise)
    if inplace:
        return apply(OPS["rrelu_result"], [input, noise], attrs, inplace=input)
    return apply(OPS["rrelu"], [input, noise], attrs)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def prelu(input, weight):
    """``x`` where positive, ``weight * x`` elsewhere, with one learnable slope per channel (dim 1)
    or one for all. The weight is viewed as ``(1, C, 1, ...)`` first (a ViewBackward0, as
    PyTorch); PreluKernelBackward0 keeps the input and that view."""
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{n} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_SHORT[input.dtype.name]} and "
                           f"{_SHORT[weight.dtype.name]}")
    _float_only(input, "prelu_cpu")
    if input.ndim >= 2:
        shape = [1] * input.ndim
        shape[1] = n
        weight = E.reshape(weight, tuple(shape))
    elif input.ndim == 0 and weight.ndim == 1:
        weight = E.reshape(weight, ())
    return apply(OPS["prelu"], [input, weight])


# ---- elu family --------------------------------------------------------------------------------------
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


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (CeluBackward0 keeps the input; in place
    CeluBackward1 keeps the result)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _float_only(input, "elu_cpu")
    if inplace:
        return apply(OPS["celu_result"], [input], {"alpha": alpha}, inplace=input)
    return apply(OPS["celu"], [input], {"alpha": alpha})


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


# ---- smooth activations ------------------------------------------------------------------------------
def silu(input, inplace=False):
    """``x * sigmoid(x)`` (SiluBackward0 keeps the input; in place it keeps a copy of it, as PyTorch)."""
    _float_only(input, "silu_cpu")
    return _run("silu", input, None, inplace)


def softplus(input, beta=1, threshold=20):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    _float_only(input, "softplus_cpu")
    return apply(OPS["softplus"], [input], {"beta": beta, "threshold": threshold})


def mish(input, inplace=False):
    """``x * tanh(softplus(x))`` (MishBackward0 keeps the input)."""
    _float_only(input, "mish_cpu")
    return _run("mish", input, None, inplace)


def hardsigmoid(input, inplace=False):
    """``clamp(x + 3, 0, 6) / 6``; HardsigmoidBackward0 keeps the input (in place, a copy of it)."""
    _float_only(input, "hardsigmoid_cpu")
    return _run("hardsigmoid", input, None, inplace)


def hardswish(input, inplace=False):
    """``x * hardsigmoid(x)``; HardswishBackward0 keeps the input (in place, a copy of it)."""
    _float_only(input, "hardswish_cpu")
    return _run("hardswish", input, None, inplace)


def logsigmoid(input):
    """``log(sigmoid(x))`` computed as ``min(x, 0) - log1p(exp(-|x|))``. LogSigmoidBackward0 keeps the
    input and the ``buffer`` ``exp(-|x|)`` on the CPU, an empty one on CUDA, as PyTorch's node does."""
    _float_only(input, "log_sigmoid_cpu")
    return apply(OPS["log_sigmoid"], [input])


def softsign(input):
    """``x / (1 + |x|)``, composed as PyTorch composes it (a DivBackward0 over AbsBackward0 and AddBackward0)."""
    return input / (E.abs(input) + 1)


def tanhshrink(input):
    """``x - tanh(x)``, composed (SubBackward0 over TanhBackward0)."""
    return input - E.tanh(input)


def hardshrink(input, lambd=0.5):
    """``x`` outside ``[-lambd, lambd]``, 0 inside (HardshrinkBackward0 keeps the input)."""
    _float_only(input, "hardshrink_cpu")
    return apply(OPS["hardshrink"], [input], {"lambd": lambd})


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between (SoftshrinkBackward0)."""
    _float_only(input, "softshrink_check")
    top = float(np.finfo(input.dtype.name).max)
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {_SHORT[input.dtype.name]}, "
                           f"but found {lambd:g}")
    return apply(OPS["softshrink"], [input], {"lambd": lambd})


def glu(input, dim=-1):
    """Gated linear unit: split ``input`` in two halves along ``dim``, ``a * sigmoid(b)``
    (GluBackward0 keeps the input)."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    _float_only(input, "glu_cpu")
    return apply(OPS["glu"], [input], {"dim": dim})


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x, dim)`` (a SoftmaxBackward0 over NegBackward0, as PyTorch)."""
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the call to include "
                      "dim=X as an argument.", UserWarning, stacklevel=_stacklevel)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if input.dtype.name == "bool":       # PyTorch negates first
        return softmax(E.neg(input), dim, dtype=dtype)
    if dtype is None and not input.dtype.is_floating_point and input.numel():
        last = _wrap_dim(dim, input.ndim) == max(input.ndim, 1) - 1
        raise NotImplementedError(f"\"softmax_{'lastdim_' if last else ''}kernel_impl\" not implemented for "
                                  f"'{_SHORT[input.dtype.name]}'")
    return softmax(-input, dim, dtype=dtype)


# ---- gumbel_softmax: a differentiable sample of a categorical distribution -------------------------
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g`` drawn from the device's generator.

    ``hard=True`` returns the one-hot of the argmax in the forward pass while the gradient is the soft
    sample's (straight-through: ``y_hard - y_soft.detach() + y_soft``).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    u = generator_for(logits.device).uniform(tuple(logits.shape), "float64")
    noise = -np.log(-np.log1p(-u))                      # -log(Exp(1)) ~ Gumbel(0, 1)
    npdt = "float64" if logits.dtype is E.float64 else "float32"
    gumbels = Tensor._wrap(from_numpy(logits._storage.xp, noise.astype(npdt)))
    y_soft = softmax(E.div(E.add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    index = E.max(y_soft, dim, keepdim=True)[1]
    y_hard = E.zeros_like(logits).scatter_(dim, index, 1.0)
    return E.add(E.sub(y_hard, y_soft.detach()), y_soft)


# ---- torch.clamp_min_ / clamp_max_, and the Tensor methods PyTorch has for these functions -------------
# (engine/__init__.py re-exports relu_, selu, selu_, celu, celu_, rrelu, rrelu_, threshold, threshold_,
# hardshrink, prelu, clamp_min_ and clamp_max_ as torch.* functions)


def clamp_min_(input, min):
    E._inplace_bound_check(input, min)
    if isinstance(min, Tensor):
        return E._inplace("clamp_min_tensor", input, min)
    return E._inplace("clamp_min", input, min=min)


def clamp_max_(input, max):
    E._inplace_bound_check(input, max)
    if isinstance(max, Tensor):
        return E._inplace("clamp_max_tensor", input, max)
    return E._inplace("clamp_max", input, max=max)


Tensor.hardshrink = hardshrink
Tensor.prelu = prelu
Tensor.clamp_min_ = clamp_min_
Tensor.clamp_max_ = clamp_max_
