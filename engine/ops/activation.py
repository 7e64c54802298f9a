"""More activations for the op table: silu, leaky_relu, elu (and selu), softplus, mish, hardtanh.

Each keeps what PyTorch's node keeps: its input ``self``, or, for the in-place forms whose
PyTorch node is the ``...Backward1`` variant (leaky_relu_, elu_), its ``result``.
"""
from __future__ import annotations

from ..derivatives import op


def _sig(F, x):
    return 1.0 / (1.0 + F.exp(-x))


# silu(x) = x * sigmoid(x)
op("silu", "SiluBackward0", ("self",), lambda xp, a: a / (1.0 + xp.exp(-a)),
   lambda F, g, s: (g * _sig(F, s.self) * (1.0 + s.self * (1.0 - _sig(F, s.self))),),
   save={"self": ()}, float_op=True)


def _leaky_fwd(xp, a, negative_slope=0.01):
    return xp.where(a > 0, a, a * negative_slope)


op("leaky_relu", "LeakyReluBackward0", ("self",), _leaky_fwd,
   lambda F, g, s: (F.where(F.gt(s.self, 0.0), g, g * s.negative_slope),), save={"self": ()}, promote=False)
def _leaky_result_bwd(F, g, s):
    if s.negative_slope < 0:   # the sign of the input is lost in the result (PyTorch's error, at backward)
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope")
    return (F.where(F.gt(s.result, 0.0), g, g * s.negative_slope),)


op("leaky_relu_result", "LeakyReluBackward1", ("self",), _leaky_fwd, _leaky_result_bwd, save={"result": ()},
   promote=False)


def _elu_fwd(xp, a, alpha=1.0, scale=1, input_scale=1):
    neg = (xp.exp(xp.minimum(a, xp.zeros_like(a)) * input_scale) - 1.0) * (alpha * scale)
    return xp.where(a > 0, a * scale, neg)


op("elu", "EluBackward0", ("self",), _elu_fwd,
   lambda F, g, s: (F.where(F.gt(s.self, 0.0), g * s.scale,
                            g * (s.alpha * s.scale * s.input_scale) * F.exp(s.self * s.input_scale)),),
   save={"self": ()}, promote=False)
# from the result: where it is <= 0 the slope is input_scale * (result + alpha * scale)
op("elu_result", "EluBackward1", ("self",), _elu_fwd,
   lambda F, g, s: (F.where(F.gt(s.result, 0.0), g * s.scale,
                            g * s.input_scale * (s.result + s.alpha * s.scale)),),
   save={"result": ()}, promote=False)


def _softplus_fwd(xp, a, beta=1, threshold=20):
    z = a * beta
    soft = xp.log1p(xp.exp(xp.minimum(z, xp.asarray(threshold, dtype=a.dtype)))) / beta
    return xp.where(z > threshold, a, soft)


def _softplus_bwd(F, g, s):
    z = s.self * s.beta
    return (F.where(F.gt(z, s.threshold), g, g * _sig(F, z)),)


op("softplus", "SoftplusBackward0", ("self",), _softplus_fwd, _softplus_bwd, save={"self": ()}, float_op=True)


def _mish_fwd(xp, a):
    return a * xp.tanh(_softplus_fwd(xp, a))


def _mish_bwd(F, g, s):
    x = s.self
    t = F.tanh(F.where(F.gt(x, 20.0), x, F.log(1.0 + F.exp(F.where(F.gt(x, 20.0), 0.0, x)))))
    return (g * (t + x * _sig(F, x) * (1.0 - t * t)),)


op("mish", "MishBackward0", ("self",), _mish_fwd, _mish_bwd, save={"self": ()}, float_op=True)


def _hardtanh_fwd(xp, a, min_val=-1.0, max_val=1.0):
    a = xp.where(a < min_val, xp.asarray(min_val, dtype=a.dtype), a)
    return xp.where(a > max_val, xp.asarray(max_val, dtype=a.dtype), a)


op("hardtanh", "HardtanhBackward0", ("self",), _hardtanh_fwd,
   lambda F, g, s: (F.where(F.logical_and(F.gt(s.self, s.min_val), F.lt(s.self, s.max_val)), g, 0.0),),
   save={"self": ()}, promote=False)
