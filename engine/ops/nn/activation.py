"""softmax, log_softmax and the activations for the op table: silu, leaky_relu, elu (selu, celu),
softplus, mish, hardtanh, threshold, hardsigmoid, hardswish, log_sigmoid, hardshrink, softshrink, glu, prelu,
rrelu, and the clamp_min / clamp_max / tensor-bound clamp nodes.

Each keeps what PyTorch's node keeps: its input ``self``, or, for the in-place forms whose
PyTorch node is the ``...Backward1`` variant (leaky_relu_, elu_, celu_, rrelu_), its ``result``.

NOTE [ Activation gradients at NaN ]
1. A backward formula follows PyTorch's scalar kernel (the CUDA kernel, and the CPU kernel on
   the elements its vector loop leaves over): a test on ``x`` that is False for NaN decides
   which branch a NaN takes. So hardtanh and relu6 cut only where ``x <= min_val`` or
   ``x >= max_val`` and pass the gradient at NaN; elu, selu and celu take the positive branch
   (``x <= 0`` is False); threshold, hardswish, hardshrink and softshrink pass it; clamp,
   clamp_min, clamp_max and hardsigmoid (whose tests are ``x >= min`` and ``-3 < x < 3``) give 0.
2. PyTorch's CPU vector loop (whole chunks of 8 to 32 elements, by kernel and dtype) writes
   some of these comparisons the other way round, so in a larger CPU tensor a NaN may get 0
   (hardtanh, hardshrink, softshrink) or NaN (elu, hardswish) instead. glassgrad keeps rule 1
   everywhere: one formula, the scalar kernels' (PyTorch's CUDA kernels are written the same way).
3. Forward values propagate NaN as PyTorch's do (``where`` on a comparison keeps the input).
"""
from __future__ import annotations

import numpy as np

from ...backend import gaps as _backend
from ...core.fns import array_fns
from ...core.table import op
from ..grad_rows import grad_of
from .sleef_exp import expf_u10

_ndarray = np.ndarray


def _softmax_fwd(xp, a, dim):
    e = xp.exp(a - (xp.max(a, axis=dim, keepdims=True) if 0 not in a.shape else a))   # empty: nothing to shift
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_fwd(xp, a, dim):
    if 0 in a.shape:    # empty: nothing to normalise
        return xp.asarray(a, copy=True)
    if type(a) is _ndarray:       # the same values, two temporaries and the wrappers fewer
        sh = a - np.maximum.reduce(a, axis=dim, keepdims=True)
        lse = np.add.reduce(np.exp(sh), axis=dim, keepdims=True)
        np.log(lse, out=lse)
        sh -= lse
        return sh
    sh = a - xp.max(a, axis=dim, keepdims=True)
    return sh - xp.log(xp.sum(xp.exp(sh), axis=dim, keepdims=True))


op("softmax", "SoftmaxBackward0", ("self",), _softmax_fwd,
   lambda F, g, s: (s.result * (g - F.sum(g * s.result, axis=s.dim, keepdims=True)),),
   save={"result": ()}, float_op=True)


def _log_softmax_bwd(F, g, s):
    """PyTorch's ``grad - exp(output) * sum(grad, dim)``; on NumPy float32 with its kernel's exp,
    bit for bit (NOTE [ The float32 exp of log_softmax's backward ] in sleef_exp.py)."""
    out = s.result
    if type(out) is _ndarray and out.dtype == np.float32 and type(g) is _ndarray and g.dtype == np.float32:
        last = out.ndim == 0 or s.dim % out.ndim == out.ndim - 1     # NOTE rule 5: the kernel by dim
        e = expf_u10(out) if last else np.exp(out.astype(np.float64)).astype(np.float32)
        total = np.sum(g, axis=s.dim, keepdims=True)
        return ((g.astype(np.float64) - e.astype(np.float64) * total).astype(np.float32),)   # one rounding: a fused multiply-add
    return (g - F.exp(out) * F.sum(g, axis=s.dim, keepdims=True),)


op("log_softmax", "LogSoftmaxBackward0", ("self",), _log_softmax_fwd, _log_softmax_bwd,
   save={"result": ()}, float_op=True)


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


# ---- elu family: elu, selu (scale), celu (input_scale = 1 / alpha) ----------------------------------------
def _elu_fwd(xp, a, alpha=1.0, scale=1, input_scale=1):
    # x <= 0: alpha * scale * expm1(x * input_scale); else x * scale. The negative branch sees only
    # x <= 0 (no overflow); -0.0 stays -0.0 and NaN takes the positive branch, as in PyTorch. A float32
    # expm1 goes through float64, so it rounds as PyTorch's does (NumPy's float32 expm1 is an ulp off).
    neg = xp.where(a > 0, xp.zeros((), dtype=a.dtype), a) * input_scale
    if a.dtype == xp.float32:   # then times alpha * scale, a float32 product, as PyTorch's kernel
        coef = xp.asarray(alpha, dtype=xp.float32) * xp.asarray(scale, dtype=xp.float32)
        neg = xp.astype(xp.expm1(xp.astype(neg, xp.float64)), xp.float32) * coef
    else:
        neg = xp.expm1(neg) * (alpha * scale)
    return xp.where(a <= 0, neg, a * scale)


def _elu_bwd(F, g, s):   # NOTE [ Activation gradients at NaN ] 1: x <= 0 is False at NaN
    x = s.self
    neg = g * (s.alpha * s.scale * s.input_scale) * F.exp(F.where(F.gt(x, 0.0), 0.0, x) * s.input_scale)
    return (F.where(F.le(x, 0.0), neg, g * s.scale),)


def _elu_result_bwd(F, g, s):
    # from the result: where it is <= 0 the slope is input_scale * (result + alpha * scale)
    r = s.result
    return (F.where(F.le(r, 0.0), g * s.input_scale * (r + s.alpha * s.scale), g * s.scale),)


op("elu", "EluBackward0", ("self",), _elu_fwd, _elu_bwd, save={"self": ()}, promote=False)
op("elu_result", "EluBackward1", ("self",), _elu_fwd, _elu_result_bwd, save={"result": ()}, promote=False)


def _celu_fwd(xp, a, alpha=1.0):
    return _elu_fwd(xp, a, alpha, 1, 1.0 / alpha)


class _CeluAttrs:
    """celu's saved attrs read as elu's (scale 1, input_scale 1/alpha)."""
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s

    def __getattr__(self, name):
        if name == "scale":
            return 1
        if name == "input_scale":
            return 1.0 / self.s.alpha
        return getattr(self.s, name)


op("celu", "CeluBackward0", ("self",), _celu_fwd, lambda F, g, s: _elu_bwd(F, g, _CeluAttrs(s)),
   save={"self": ()}, promote=False)
op("celu_result", "CeluBackward1", ("self",), _celu_fwd, lambda F, g, s: _elu_result_bwd(F, g, _CeluAttrs(s)),
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
    t = F.tanh(F.where(F.gt(x, 20.0), x, F.log1p(F.exp(F.where(F.gt(x, 20.0), 0.0, x)))))
    return (g * (t + x * _sig(F, x) * (1.0 - t * t)),)


op("mish", "MishBackward0", ("self",), _mish_fwd, _mish_bwd, save={"self": ()}, float_op=True)


def _hardtanh_fwd(xp, a, min_val=-1.0, max_val=1.0):
    a = xp.where(a < min_val, xp.asarray(min_val, dtype=a.dtype), a)
    return xp.where(a > max_val, xp.asarray(max_val, dtype=a.dtype), a)


def _hardtanh_bwd(F, g, s):   # NOTE [ Activation gradients at NaN ] 1: cut where x <= min or x >= max
    x = s.self
    return (F.where(F.le(x, s.min_val), 0.0, F.where(F.ge(x, s.max_val), 0.0, g)),)


op("hardtanh", "HardtanhBackward0", ("self",), _hardtanh_fwd, _hardtanh_bwd, save={"self": ()}, promote=False)


# ---- threshold, hardsigmoid, hardswish, log_sigmoid, hardshrink, softshrink ---------------------------------
def _threshold_fwd(xp, a, threshold, value):
    return xp.where(a <= threshold, xp.asarray(value, dtype=a.dtype), a)


def _threshold_bwd(F, g, s):
    return (F.threshold_backward(g, s.self, s.threshold),)


op("threshold", "ThresholdBackward0", ("self",), _threshold_fwd, _threshold_bwd, save={"self": ()}, promote=False)
# in place PyTorch's node is ThresholdBackward1, still keeping (a copy of) the input
op("threshold_", "ThresholdBackward1", ("self",), _threshold_fwd, _threshold_bwd, save={"self": ()},
   promote=False)


def _relu6_of_shifted(xp, a):   # min(max(x + 3, 0), 6)
    return xp.minimum(xp.maximum(a + 3.0, xp.zeros((), dtype=a.dtype)), xp.asarray(6.0, dtype=a.dtype))


_ONE_SIXTH_F32 = 0.16666667163372040   # PyTorch's backward multiplies by the float 1.0f / 6.0f, even in double


op("hardsigmoid", "HardsigmoidBackward0", ("self",), lambda xp, a: _relu6_of_shifted(xp, a) / 6.0,
   lambda F, g, s: (F.where(F.logical_and(F.gt(s.self, -3.0), F.lt(s.self, 3.0)), g * _ONE_SIXTH_F32, 0.0),),
   save={"self": ()}, promote=False)


def _hardswish_fwd(xp, a):
    return a * _relu6_of_shifted(xp, a) / 6.0   # PyTorch's order of operations


def _hardswish_bwd(F, g, s):   # x <= -3: 0; x < 3: x / 3 + 1/2; else (NaN too) 1
    x = s.self
    return (F.where(F.le(x, -3.0), 0.0, F.where(F.lt(x, 3.0), g * (x * (1.0 / 3.0) + 0.5), g)),)


op("hardswish", "HardswishBackward0", ("self",), _hardswish_fwd, _hardswish_bwd, save={"self": ()},
   promote=False)


def _log_sigmoid_fwd(xp, a):
    """min(x, 0) - log1p(exp(-|x|)). On the CPU the kernel also returns ``buffer = exp(-|x|)``,
    which the node keeps beside the input; on CUDA the buffer is empty (0 elements), as PyTorch's."""
    z = xp.exp(-xp.abs(a))
    out = xp.minimum(a, xp.zeros((), dtype=a.dtype)) - xp.log1p(z)
    return out, {"buffer": xp.zeros((0,), dtype=a.dtype) if _on_cuda(xp) else z}


def _on_cuda(xp):
    return _backend._is_cupy(xp)


def _log_sigmoid_bwd(F, g, s):
    x = s.self
    # NOTE [ One formula, two currencies ] 4; an empty (CUDA) buffer is recomputed too
    full = F.shape(s.buffer) == F.shape(x)
    z = s.buffer if full and not F.differentiable else F.exp(-F.abs(x))
    q = z / (1.0 + z)
    return (F.where(F.lt(x, 0.0), g * (1.0 - q), g * q),)


op("log_sigmoid", "LogSigmoidBackward0", ("self",), _log_sigmoid_fwd, _log_sigmoid_bwd,
   save={"self": (), "buffer": ()}, aux=("buffer",), promote=False)


def _hardshrink_fwd(xp, a, lambd=0.5):
    inside = xp.logical_and(a >= -lambd, a <= lambd)
    return xp.where(inside, xp.zeros((), dtype=a.dtype), a)


def _shrink_bwd(F, g, s):   # 0 on [-lambd, lambd]; the gradient passes elsewhere (NaN too)
    x = s.self
    return (F.where(F.ge(x, -s.lambd), F.where(F.le(x, s.lambd), 0.0, g), g),)


op("hardshrink", "HardshrinkBackward0", ("self",), _hardshrink_fwd, _shrink_bwd, save={"self": ()},
   promote=False)


def _softshrink_fwd(xp, a, lambd=0.5):
    return xp.where(a > lambd, a - lambd, xp.where(a < -lambd, a + lambd, a * 0.0))


op("softshrink", "SoftshrinkBackward0", ("self",), _softshrink_fwd, _shrink_bwd, save={"self": ()},
   promote=False)


# ---- glu: first half times sigmoid of the second half, along dim -------------------------------------------
def _halves(n, dim, ndim):
    h = n // 2
    lead = (slice(None),) * dim
    return lead + (slice(0, h),), lead + (slice(h, n),)


def _glu_fwd(xp, a, dim):
    first, second = _halves(a.shape[dim], dim, a.ndim)
    return a[first] / (1.0 + xp.exp(-a[second]))


def _glu_bwd(F, g, s):
    x = s.self
    first, second = _halves(F.shape(x)[s.dim], s.dim, len(F.shape(x)))
    a, b = F.index(x, first), F.index(x, second)
    sb = _sig(F, b)
    ga = g * sb
    return (F.concat([ga, ga * a * (1.0 - sb)], s.dim),)


op("glu", "GluBackward0", ("self",), _glu_fwd, _glu_bwd, save={"self": ()}, promote=False)


# ---- prelu (a learnable slope per channel) and rrelu (random slopes in training) ---------------------------
op("prelu", "PreluKernelBackward0", ("self", "weight"), lambda xp, a, w: xp.where(a > 0, a, w * a),
   lambda F, g, s: (F.where(F.gt(s.self, 0.0), g, g * s.weight) if s.needs[0] else None,
                    F.where(F.gt(s.self, 0.0), 0.0, g * s.self) if s.needs[1] else None),
   save={"self": (), "weight": ()}, promote=False)


def _rrelu_fwd(xp, a, noise, lower, upper, training):
    if training:
        return a * noise
    return xp.where(a > 0, a, a * ((lower + upper) / 2))


def _rrelu_bwd(F, g, s, x):
    if s.training and s.upper - s.lower > 1e-6:
        return (g * s.noise, None)
    return (F.where(F.gt(x, 0.0), g, g * ((s.lower + s.upper) / 2)), None)


op("rrelu", "RreluWithNoiseBackward0", ("self", "noise"), _rrelu_fwd,
   lambda F, g, s: _rrelu_bwd(F, g, s, s.self), save={"self": (), "noise": ()}, promote=False,
   nondiff=("noise",))
op("rrelu_result", "RreluWithNoiseBackward1", ("self", "noise"), _rrelu_fwd,
   lambda F, g, s: _rrelu_bwd(F, g, s, s.result), save={"noise": (), "result": ()}, promote=False,
   nondiff=("noise",))


# ---- clamp_min / clamp_max (a number bound) and clamp with tensor bounds -----------------------------------
def _bound(xp, v, a):
    return v if hasattr(v, "shape") else xp.asarray(v, dtype=a.dtype)


def _clamp_min_fwd(xp, a, min):
    return _backend.clamp_low(xp, _bound(xp, min, a), a)   # NaN (either side) propagates; a tie keeps a


def _clamp_max_fwd(xp, a, max):
    return _backend.clamp_high(xp, _bound(xp, max, a), a)


op("clamp_min", "ClampMinBackward0", ("self",), _clamp_min_fwd,
   lambda F, g, s: (F.where(F.ge(s.self, s.min), g, 0.0),), save={"self": ()}, promote=False)
op("clamp_max", "ClampMaxBackward0", ("self",), _clamp_max_fwd,
   lambda F, g, s: (F.where(F.le(s.self, s.max), g, 0.0),), save={"self": ()}, promote=False)
op("clamp_min_tensor", "ClampMinBackward1", ("self", "min"), _clamp_min_fwd,
   lambda F, g, s: (F.where(F.ge(s.self, s.min), g, 0.0) if s.needs[0] else None,
                    F.where(F.lt(s.self, s.min), g, 0.0) if s.needs[1] else None),
   save={"min": (), "self": ()})
op("clamp_max_tensor", "ClampMaxBackward1", ("self", "max"), _clamp_max_fwd,
   lambda F, g, s: (F.where(F.le(s.self, s.max), g, 0.0) if s.needs[0] else None,
                    F.where(F.gt(s.self, s.max), g, 0.0) if s.needs[1] else None),
   save={"max": (), "self": ()})


def _clamp_tensor_fwd(xp, a, min, max):
    out = _backend.clamp_low(xp, min, a) if min is not None else a
    return _backend.clamp_high(xp, max, out) if max is not None else out


def _clamp_tensor_bwd(F, g, s):
    """PyTorch's clamp_backward_min_max: where min > max the result is max, and min gets nothing."""
    x, lo, hi = s.self, s.min, s.max
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if s.needs[0]:
            gx = F.where(F.logical_and(F.ge(x, lo), F.le(x, hi)), g, 0.0)
        if s.needs[1]:
            glo = F.where(F.logical_and(F.lt(x, lo), F.lt(lo, hi)), g, 0.0)
        if s.needs[2]:
            ghi = F.where(F.logical_or(F.gt(x, hi), F.lt(hi, lo)), g, 0.0)
    elif lo is not None:
        gx = F.where(F.ge(x, lo), g, 0.0) if s.needs[0] else None
        glo = F.where(F.lt(x, lo), g, 0.0) if s.needs[1] else None
    else:
        gx = F.where(F.le(x, hi), g, 0.0) if s.needs[0] else None
        ghi = F.where(F.gt(x, hi), g, 0.0) if s.needs[2] else None
    return gx, glo, ghi


op("clamp_tensor", "ClampBackward0", ("self", "min", "max"), _clamp_tensor_fwd, _clamp_tensor_bwd,
   save={"max": (), "min": (), "self": ()}, promote=False)   # engine.clamp brings the dtypes together


# ---- backward rows (NOTE [ Backward rows ] in ops/grad_rows.py) -----------------------------------
# Each computes what its forward row's formula computes, as an op of its own, so a create_graph
# backward shows PyTorch's one node (GeluBackwardBackward0, ...); its own formula is the second derivative.
_SQRT1_2 = 0.7071067811865476
_SQRT_2_PI = 0.7978845608028654      # sqrt(2 / pi)
_INV_SQRT_2PI = 0.3989422804014327   # 1 / sqrt(2 pi)


def _gelu_slope(F, x, approximate):
    """gelu'(x), in the order of operations of the core's gelu formula."""
    if approximate == "tanh":
        t = F.tanh(_SQRT_2_PI * (x + 0.044715 * x * x * x))
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_PI * (1.0 + 3 * 0.044715 * x * x)
    cdf = 0.5 * (1.0 + F.erf(x * _SQRT1_2))
    pdf = F.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return cdf + x * pdf


def _gelu_curve(F, x, approximate):
    """gelu''(x)."""
    if approximate == "tanh":
        du = _SQRT_2_PI * (1.0 + 3 * 0.044715 * x * x)
        t = F.tanh(_SQRT_2_PI * (x + 0.044715 * x * x * x))
        return (1.0 - t * t) * (du - x * t * du * du + 0.5 * x * (6 * 0.044715 * _SQRT_2_PI) * x)
    return F.exp(-0.5 * x * x) * _INV_SQRT_2PI * (2.0 - x * x)


def _gelu_bwd_bwd(F, gg, s):
    x = s.self
    return (gg * _gelu_slope(F, x, s.approximate) if s.needs[0] else None,
            gg * s.grad_output * _gelu_curve(F, x, s.approximate) if s.needs[1] else None)


op("gelu_backward", "GeluBackwardBackward0", ("grad_output", "self"),
   lambda xp, g, x, approximate="none": g * _gelu_slope(_array_fns(xp), x, approximate), _gelu_bwd_bwd,
   save={"grad_output": ("self",), "self": ()})
grad_of("gelu_backward", [("gelu", "self", ("self",))])


def _softplus_bwd_bwd(F, gg, s):
    z = s.self * s.beta
    sg = _sig(F, z)
    return (F.where(F.gt(z, s.threshold), gg, gg * sg) if s.needs[0] else None,
            F.where(F.gt(z, s.threshold), 0.0, gg * s.grad_output * s.beta * sg * (1.0 - sg)) if s.needs[1] else None)


op("softplus_backward", "SoftplusBackwardBackward0", ("grad_output", "self"),
   lambda xp, g, x, beta=1, threshold=20: _softplus_bwd(_array_fns(xp), g, _Attrs({"self": x, "beta": beta,
                                                                                    "threshold": threshold}))[0],
   _softplus_bwd_bwd, save={"grad_output": ("self",), "self": ()})
grad_of("softplus_backward", [("softplus", "self", ("self",))])


def _elu_bwd_bwd(F, gg, s):
    x = s.self
    gx = None
    if s.needs[1]:   # PyTorch's elu_double_backward: the negative branch only where x < 0 (0 at the kink)
        gx = _elu_bwd(F, gg * s.grad_output * s.input_scale, s)[0]
        gx = F.where(F.lt(x, 0.0), gx, 0.0)
    return (_elu_bwd(F, gg, s)[0] if s.needs[0] else None, gx)


op("elu_backward", "EluBackwardBackward0", ("grad_output", "self"),
   lambda xp, g, x, alpha=1.0, scale=1, input_scale=1: _elu_bwd(
       _array_fns(xp), g, _Attrs({"self": x, "alpha": alpha, "scale": scale, "input_scale": input_scale}))[0],
   _elu_bwd_bwd, save={"grad_output": ("self",), "self": ()})
grad_of("elu_backward", [("elu", "self", ("self",))])


def _log_sigmoid_bwd_bwd(F, gg, s):
    x = s.self
    gx = None
    if s.needs[1]:   # d/dx of sigmoid(-x) is -sigmoid(x) sigmoid(-x), on both sides of 0
        z = F.exp(-F.abs(x))
        q = z / (1.0 + z)
        gx = -(gg * s.grad_output) * q * (1.0 - q)
    return (_log_sigmoid_bwd(F, gg, s)[0] if s.needs[0] else None, gx, None)


op("log_sigmoid_backward", "LogSigmoidBackwardBackward0", ("grad_output", "self", "buffer"),
   lambda xp, g, x, buffer: _log_sigmoid_bwd(_array_fns(xp), g, _Attrs({"self": x, "buffer": buffer}))[0],
   _log_sigmoid_bwd_bwd, save={"grad_output": ("self",), "self": (), "buffer": ()}, nondiff=("buffer",))
grad_of("log_sigmoid_backward", [("log_sigmoid", "self", ("self", "buffer"))])


def _softmax_bwd_data(F, g, y, dim):
    return y * (g - F.sum(g * y, axis=dim, keepdims=True))


def _softmax_bwd_bwd(F, gg, s):
    y, g, d = s.output, s.grad_output, s.dim
    return (_softmax_bwd_data(F, gg, y, d) if s.needs[0] else None,
            gg * (g - F.sum(g * y, axis=d, keepdims=True)) - g * F.sum(gg * y, axis=d, keepdims=True)
            if s.needs[1] else None)


op("softmax_backward_data", "SoftmaxBackwardDataBackward0", ("grad_output", "output"),
   lambda xp, g, y, dim: _softmax_bwd_data(_array_fns(xp), g, y, dim), _softmax_bwd_bwd,
   save={"grad_output": ("output",), "output": ()})
grad_of("softmax_backward_data", [("softmax", "self", ("result",))])


def _log_softmax_bwd_bwd(F, gg, s):
    y, d = s.output, s.dim
    return (gg - F.sum(gg * F.exp(y), axis=d, keepdims=True) if s.needs[0] else None,
            -gg * F.exp(y) * F.sum(s.grad_output, axis=d, keepdims=True) if s.needs[1] else None)


op("log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", ("grad_output", "output"),
   lambda xp, g, y, dim: g - xp.exp(y) * xp.sum(g, axis=dim, keepdims=True), _log_softmax_bwd_bwd,
   save={"grad_output": ("output",), "output": ()})
grad_of("log_softmax_backward_data", [("log_softmax", "self", ("result",))])


class _Attrs:
    """Saved values by name, for calling a forward row's formula from a backward row's kernel."""

    def __init__(self, kw):
        self.__dict__.update(kw)
        self.needs = (True,)


def _array_fns(xp):
    return array_fns(xp)


op("celu_backward", "EluBackwardBackward0", ("grad_output", "self"),   # celu is elu with input_scale 1 / alpha
   lambda xp, g, x, alpha=1.0: _elu_bwd(
       _array_fns(xp), g, _Attrs({"self": x, "alpha": alpha, "scale": 1, "input_scale": 1.0 / alpha}))[0],
   lambda F, gg, s: _elu_bwd_bwd(F, gg, _CeluAttrs(s)), save={"grad_output": ("self",), "self": ()})
grad_of("celu_backward", [("celu", "self", ("self",))])
