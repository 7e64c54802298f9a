"""Pooling in 3-D: ``F.max_pool3d``, ``F.avg_pool3d``, ``F.lp_pool3d``, ``F.adaptive_max_pool3d`` and
``F.adaptive_avg_pool3d`` (NOTE [ 3-D pooling ] in engine/ops/pool3d.py, NOTE [ 3-D adaptive pooling ]
in engine/ops/pool_more.py)."""
from __future__ import annotations

import math

import numpy as np

from ... import functional as E
from ...backend import dtypes as _dtype
from ...core.dispatch import apply
from ...core.table import OPS
from ...ops.nn.pool import _avg_matrix, out_size
from ...ops.nn.pool3d import Pool3d
from .pooling import _lp_finish, _tuple


def _triple(v, name, fn):
    if isinstance(v, int):
        return (v, v, v)
    v = tuple(v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise RuntimeError(f"{fn}: {name} must either be a single int, or a tuple of three ints")
    return v


def _default_stride(stride):
    return stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0)


def _geometry(fn, input, kernel_size, stride, padding, dilation, ceil_mode):
    k = _triple(kernel_size, "kernel_size", fn)
    s = k if _default_stride(stride) else _triple(stride, "stride", fn)
    p = _triple(padding, "padding", fn)
    d = _triple(dilation, "dilation", fn)
    if min(s) == 0:
        raise RuntimeError("stride should not be zero")
    if min(p) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    if input.ndim not in (4, 5) or input.numel() == 0:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for pp, kk, dd in zip(p, k, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    c, size = input.shape[-4], tuple(input.shape[-3:])
    out = tuple(out_size(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(size, k, s, p, d))
    return k, s, p, d, c, size, out


def _saved_stride(stride):
    return () if _default_stride(stride) else _triple(stride, "stride", "")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each 3-D window; with ``return_indices`` its int64 position in the D*H*W volume."""
    k, s, p, d, c, size, out = _geometry("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode)
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, size))}). Calculated output size: "
                           f"({c}x{'x'.join(str(max(o, 0)) for o in out)}). Output size is too small")
    geom = Pool3d(*size, *k, *s, *p, *d, *out)
    res, aux = apply(OPS["max_pool3d"], [input],
                     {"geom": geom, "kernel_size": k, "stride": _saved_stride(stride), "padding": p, "dilation": d,
                      "ceil_mode": bool(ceil_mode)}, return_aux=True)
    return (res, aux["result1"]) if return_indices else res


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool3d's values and int64 indices, always both (as PyTorch's ``*_with_indices``)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each 3-D window (zero padding counted unless ``count_include_pad=False``); an int64
    input gives int64 means, truncated toward zero, as PyTorch's CPU kernel (no other integer dtype)."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, d, c, size, out = _geometry("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode)
    if any(n + 2 * pp < kk for n, pp, kk in zip(size, p, k)):
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, size))}). Calculated output size: "
                           f"({c}x{'x'.join(str(max(o, 0)) for o in out)}). Output size is too small")
    if input.dtype is _dtype.int64:
        return _int_avg_pool3d(input, size, k, s, p, out, count_include_pad, divisor_override)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"avg_pool3d_out_frame\" not implemented for '{_dtype.short_name(input.dtype)}'")
    geom = Pool3d(*size, *k, *s, *p, 1, 1, 1, *out)
    return apply(OPS["avg_pool3d"], [input],
                 {"geom": geom, "kernel_size": k, "stride": _saved_stride(stride), "padding": p,
                  "ceil_mode": bool(ceil_mode), "count_include_pad": bool(count_include_pad),
                  "divisor_override": divisor_override})


def _int_avg_pool3d(input, size, k, s, p, out, count_include_pad, divisor_override):
    """avg_pool3d of an int64 input: each window's sum (formed in float64, exact for integers) over
    its count, truncated toward zero (no graph: an integer tensor never requires grad)."""
    x = input.detach().numpy(force=True).astype(np.float64)
    div = np.ones(())
    for j in range(3):
        axis = x.ndim - 3 + j
        member = _avg_matrix(size[j], k[j], s[j], p[j], out[j], True, 1)       # 0/1: which inputs a window sums
        x = np.moveaxis(np.tensordot(x, member, axes=([axis], [1])), -1, axis)
        mean = _avg_matrix(size[j], k[j], s[j], p[j], out[j], count_include_pad, None)
        div = np.multiply.outer(div, np.rint(1.0 / mean.max(axis=1)))          # each window's count along dim j
    if divisor_override:
        div = np.full(tuple(out), float(divisor_override))
    return E.tensor(np.trunc(x / div).astype(np.int64), device=input.device)


# ---- power-average pooling (lp_pool1d in pooling.py) -------------------------------------------------
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling (see :func:`lp_pool1d`)."""
    kd, kw, kh = _tuple(kernel_size, 3)
    if norm_type == math.inf:
        return max_pool3d(E.abs(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return E.neg(max_pool3d(E.neg(E.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg_pool3d(E.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, kd * kw * kh, norm_type)


# ---- adaptive pooling in 3-D ------------------------------------------------------------------------
def _adaptive3d_size(input, output_size):
    size = tuple(int(n) for n in input.shape[-3:])
    out = _tuple(output_size, 3)
    return size, tuple(n if o is None else int(o) for n, o in zip(size, out))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """The maximum over PyTorch's 3-D adaptive bins and its int64 position in the D*H*W volume."""
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool3d_cpu\" not implemented for '{_short(input.dtype)}'")
    _check_nonempty("adaptive_max_pool3d", input)
    size, out = _adaptive3d_size(input, output_size)
    res, aux = apply(OPS["adaptive_max_pool3d"], [input], {"size": size, "out": out}, return_aux=True)
    return res, aux["result1"]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` (None keeps a dim)."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_avg_pool3d(input, output_size):
    """Average over PyTorch's 3-D adaptive bins; an output of (1, 1, 1) is a mean (MeanBackward1)."""
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    size, out = _adaptive3d_size(input, output_size)
    if out == (1, 1, 1):
        return E.mean(input, (-1, -2, -3), keepdim=True)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool3d_cpu\" not implemented for '{_short(input.dtype)}'")
    _check_nonempty("adaptive_avg_pool3d", input)
    return apply(OPS["adaptive_avg_pool3d"], [input], {"size": size, "out": out})


def _check_nonempty(fn, input):
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {list(input.shape)} with dimension {i} being empty")


def _short(dt):
    return {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int8": "Char",
            "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}.get(dt.name, dt.name)
