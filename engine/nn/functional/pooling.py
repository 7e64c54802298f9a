"""Pooling in 1-D and 2-D: ``F.max_pool1d/2d``, ``F.avg_pool1d/2d``, ``F.adaptive_avg_pool1d/2d``,
``F.adaptive_max_pool1d/2d``, power-average ``F.lp_pool1d/2d`` and ``F.fractional_max_pool2d``
(NOTE [ Pooling ] and NOTE [ Fractional max pooling ] in engine/ops/nn/pool.py).
1-D pooling is the 2-D op on a height-1 image, as PyTorch composes it."""
from __future__ import annotations

import math

import numpy as np

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS
from ...ops.nn.pool import Pool2d, _avg_matrix, out_size
from ...backend.dtypes import short_name as _short


def _pair(v, name="", fn="max_pool2d"):
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise RuntimeError(f"{fn}: {name} must either be a single int, or a tuple of two ints")
    return v


def _geometry(fn, input, kernel_size, stride, padding, dilation, ceil_mode):
    kh, kw = _pair(kernel_size, "kernel_size", fn)
    if stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0):
        sh, sw = kh, kw
    else:
        sh, sw = _pair(stride, "stride", fn)
    ph, pw = _pair(padding, "padding", fn)
    dh, dw = _pair(dilation, "dilation", fn)
    if sh == 0 or sw == 0:
        raise RuntimeError("stride should not be zero")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {ph if ph < 0 else pw}")
    if input.ndim not in (3, 4) or input.numel() == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    for p, k, d in ((pw, kw, dw), (ph, kh, dh)):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    c, h, w = input.shape[-3:]
    oh = out_size(h, kh, sh, ph, dh, ceil_mode)
    ow = out_size(w, kw, sw, pw, dw, ceil_mode)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). "
                           f"Output size is too small")
    return Pool2d(h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)


def _saved_stride(stride):
    """What PyTorch's node shows as ``_saved_stride``: () when the stride was left to default."""
    if stride is None:
        return ()
    return () if not isinstance(stride, int) and len(tuple(stride)) == 0 else _pair(stride)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each window; with ``return_indices`` also its int64 position in the H*W plane."""
    geom = _geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    if input.dtype is _dtype.bool_:
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
    out, aux = apply(OPS["max_pool2d"], [input],
                     {"geom": geom, "kernel_size": (geom.kh, geom.kw), "stride": _saved_stride(stride),
                      "padding": (geom.ph, geom.pw), "dilation": (geom.dh, geom.dw), "ceil_mode": bool(ceil_mode)},
                     return_aux=True)
    return (out, aux["result1"]) if return_indices else out


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool2d's values and int64 indices, always both (as PyTorch's ``*_with_indices``)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each window (zero padding counted unless ``count_include_pad=False``)."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geom = _geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if not (input.dtype.is_floating_point or input.dtype is _dtype.int64):    # PyTorch's CPU kernel: floats and int64
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{_short(input.dtype)}'")
    if not input.dtype.is_floating_point:
        return _int_avg_pool2d(input, geom, count_include_pad, divisor_override)
    return apply(OPS["avg_pool2d"], [input],
                 {"geom": geom, "kernel_size": (geom.kh, geom.kw), "stride": _saved_stride(stride),
                  "padding": (geom.ph, geom.pw), "ceil_mode": bool(ceil_mode),
                  "count_include_pad": bool(count_include_pad), "divisor_override": divisor_override})


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The maximum over PyTorch's adaptive bins (AdaptiveMaxPool2DBackward0 keeps self and the
    int64 indices, as max_pool2d); ``None`` in ``output_size`` keeps that dim."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    oh, ow = tuple(output_size)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool2d\" not implemented for '{_short(input.dtype)}'")
    h, w = input.shape[-2:]
    oh = h if oh is None else oh
    ow = w if ow is None else ow
    geom = Pool2d(h, w, 0, 0, 0, 0, 0, 0, 1, 1, oh, ow)
    out, aux = apply(OPS["adaptive_max_pool2d"], [input], {"geom": geom}, return_aux=True)
    return (out, aux["result1"]) if return_indices else out


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d's values and int64 indices, always both."""
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def _int_avg_pool2d(input, geom, count_include_pad, divisor_override):
    """Integer average pooling as PyTorch's CPU kernel: the window's sum divided by its count,
    truncated toward zero (exact: the sums are formed in float64 from integers)."""
    g = geom
    x = input.detach().numpy(force=True).astype(np.float64)
    ah = _avg_matrix(g.h, g.kh, g.sh, g.ph, g.oh, True, 1)      # 0/1 window membership
    aw = _avg_matrix(g.w, g.kw, g.sw, g.pw, g.ow, True, 1)
    sums = ah @ x @ aw.T
    if divisor_override:
        div = np.full((g.oh, g.ow), float(divisor_override))
    else:
        dh = 1.0 / _avg_matrix(g.h, g.kh, g.sh, g.ph, g.oh, count_include_pad, None).max(axis=1)
        dw = 1.0 / _avg_matrix(g.w, g.kw, g.sw, g.pw, g.ow, count_include_pad, None).max(axis=1)
        div = np.outer(np.rint(dh), np.rint(dw))
    return E.tensor(np.trunc(sums / div).astype(np.int64), device=input.device)


def adaptive_avg_pool2d(input, output_size):
    """Average over PyTorch's adaptive bins so the output is ``output_size`` (None keeps a dim).

    An output of (1, 1) is a mean over the last two dims (MeanBackward1), as in PyTorch.
    """
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    oh, ow = tuple(output_size)
    h, w = input.shape[-2:] if input.ndim >= 2 else (None, None)
    oh = h if oh is None else oh
    ow = w if ow is None else ow
    if oh == 1 and ow == 1 and input.ndim >= 2:
        return E.mean(input, (-1, -2), keepdim=True)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{_short(input.dtype)}'")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being empty")
    geom = Pool2d(h, w, 0, 0, 0, 0, 0, 0, 1, 1, oh, ow)
    return apply(OPS["adaptive_avg_pool2d"], [input], {"geom": geom})


# ---- 1-D pooling: the 2-D op on a height-1 image, between UnsqueezeBackward0 and SqueezeBackward1 --------
def _one(v):
    return v if isinstance(v, int) else tuple(v)[0]


def _pool1d_input(fn, input):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{fn}() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    return E.unsqueeze(input, -2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """max_pool2d over (N, C, 1, L) with window (1, k), as PyTorch composes it."""
    k = _one(kernel_size)
    s = k if stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0) else _one(stride)
    x = _pool1d_input("max_pool1d", input)
    if not return_indices:
        _max_pool1d_checks(input, k, s, _one(padding), _one(dilation), ceil_mode)
        if not input.dtype.is_floating_point:      # PyTorch's max_pool1d_impl takes floats only
            raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{_short(input.dtype)}'")
    out = max_pool2d(x, (1, k), (1, s), (0, _one(padding)), (1, _one(dilation)), ceil_mode, return_indices)
    if return_indices:
        return E.squeeze(out[0], -2), E.squeeze(out[1], -2)
    return E.squeeze(out, -2)


def _max_pool1d_checks(input, k, s, p, d, ceil_mode):
    """PyTorch's own checks of max_pool1d without indices, in its order (with indices it is max_pool2d's)."""
    for ok, what in ((k > 0, f"kernel_size must be greater than zero, but got {k}"),
                     (s > 0, f"stride must be greater than zero, but got {s}"),
                     (p >= 0, f"padding must be non-negative, but got {p}"),
                     (p <= k // 2, (f"padding should be at most half of kernel size, but got padding={p} and "
                                    f"kernel_size={k}")),
                     (d > 0, f"dilation must be greater than zero, but got {d}")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {what}")
    n = out_size(input.shape[-1], k, s, p, d, ceil_mode)
    if n <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {n}")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool1d's values and int64 indices, always both (as PyTorch's ``*_with_indices``)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """avg_pool2d over (N, C, 1, L) with window (1, k), as PyTorch composes it."""
    k = _one(kernel_size)
    s = k if stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0) else _one(stride)
    return E.squeeze(avg_pool2d(_pool1d_input("avg_pool1d", input), (1, k), (1, s), (0, _one(padding)), ceil_mode,
                                count_include_pad), -2)


def adaptive_avg_pool1d(input, output_size):
    """adaptive_avg_pool2d over (N, C, 1, L) to (1, output_size)."""
    return E.squeeze(adaptive_avg_pool2d(_pool1d_input("adaptive_avg_pool1d", input), (1, _one(output_size))), -2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d over (..., 1, L) to (1, output_size); always (values, int64 indices)."""
    size = _tuple(output_size, 1)
    if len(size) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one int (got {len(size)})")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for adaptive_max_pool1d)")
    out, idx = adaptive_max_pool2d(E.unsqueeze(input, -2), (1, size[0]), return_indices=True)
    return E.squeeze(out, -2), E.squeeze(idx, -2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) input to ``output_size`` over PyTorch's adaptive bins."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


# ---- power-average pooling: composed as PyTorch composes it ------------------------------------------
def _tuple(v, n):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


def _lp_finish(out, count, norm_type):
    return E.pow(E.mul(E.mul(E.sign(out), E.relu(E.abs(out))), count), 1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x ** p) ** (1 / p)``: avg_pool1d of ``x ** p`` times the window size;
    ``p = inf`` is max pooling of ``|x|``."""
    if norm_type == math.inf:
        return max_pool1d(E.abs(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return E.neg(max_pool1d(E.neg(E.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg_pool1d(E.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, _tuple(kernel_size, 1)[0], norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling (see :func:`lp_pool1d`)."""
    kw, kh = _tuple(kernel_size, 2)
    if norm_type == math.inf:
        return max_pool2d(E.abs(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return E.neg(max_pool2d(E.neg(E.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg_pool2d(E.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, kw * kh, norm_type)


# ---- fractional max pooling -------------------------------------------------------------------------
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max pooling over pseudo-random windows (NOTE [ Fractional max pooling ] in engine/ops/nn/pool.py):
    always (values, int64 indices). ``_random_samples`` (N, C, 2) fixes the windows; by default they are
    drawn from the input device's generator."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if not isinstance(output_ratio, (int, float)) and len(tuple(output_ratio)) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _tuple(output_ratio, 2) if not isinstance(output_ratio, float) else (output_ratio, output_ratio)
        output_size = [int(input.shape[-2] * ratio[0]), int(input.shape[-1] * ratio[1])]
    kh, kw = _tuple(kernel_size, 2)
    oh, ow = _tuple(output_size, 2)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    if _random_samples is None:
        n_batch = 1 if input.ndim == 3 else input.shape[0]
        _random_samples = E.rand(n_batch, input.shape[-3], 2, dtype=input.dtype, device=input.device)
    h, w = input.shape[-2:]
    if oh + kh - 1 > h:
        raise RuntimeError(f"fractional_max_pool2d(): pool height {kh} too large relative to input height {h}")
    if ow + kw - 1 > w:
        raise RuntimeError(f"fractional_max_pool2d(): pool width {kw} too large relative to input width {w}")
    if _random_samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if input.ndim == 4 and _random_samples.shape[0] < input.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.shape[1] != input.shape[-3] or _random_samples.shape[2] != 2:
        raise RuntimeError(f"Expect _random_samples to have shape (N, {input.shape[-3]}, 2), got "
                           f"{list(_random_samples.shape)}")
    res, aux = apply(OPS["fractional_max_pool2d"], [input, _random_samples],
                     {"kernel_size": (kh, kw), "output_size": (oh, ow)}, return_aux=True)
    return res, aux["result1"]


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max pooling over pseudo-random windows to ``output_size`` (or ``output_ratio`` of the input)."""
    out, idx = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                                  _random_samples=_random_samples)
    return (out, idx) if return_indices else out
