"""2-D pooling: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d`` and their modules
(NOTE [ Pooling ] in engine/ops/pool.py)."""
from __future__ import annotations

from ..backend import dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from ..ops.pool import Pool2d, out_size
from .module import Module


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
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{max(oh, 0)}x"
                           f"{max(ow, 0)}). Output size is too small")
    return Pool2d(h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)


def _saved_stride(stride):
    """What PyTorch's node shows as ``_saved_stride``: () when the stride was left to default."""
    if stride is None:
        return ()
    return () if not isinstance(stride, int) and len(tuple(stride)) == 0 else _pair(stride)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each window; with ``return_indices`` also its int64 position in the H*W plane."""
    geom = _geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
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
    if input.dtype is _dtype.bool_:
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
    import numpy as np
    from ..ops.pool import _avg_matrix
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
    out = max_pool2d(_pool1d_input("max_pool1d", input), (1, k), (1, s), (0, _one(padding)), (1, _one(dilation)),
                     ceil_mode, return_indices)
    if return_indices:
        return E.squeeze(out[0], -2), E.squeeze(out[1], -2)
    return E.squeeze(out, -2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """avg_pool2d over (N, C, 1, L) with window (1, k), as PyTorch composes it."""
    k = _one(kernel_size)
    s = k if stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0) else _one(stride)
    return E.squeeze(avg_pool2d(_pool1d_input("avg_pool1d", input), (1, k), (1, s), (0, _one(padding)), ceil_mode,
                                count_include_pad), -2)


def adaptive_avg_pool1d(input, output_size):
    """adaptive_avg_pool2d over (N, C, 1, L) to (1, output_size)."""
    return E.squeeze(adaptive_avg_pool2d(_pool1d_input("adaptive_avg_pool1d", input), (1, _one(output_size))), -2)


def _short(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """The maximum over each window of an (N, C, H, W) or (C, H, W) input; stride defaults to the window."""

    def forward(self, input):
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """AvgPool2d's and AvgPool3d's shared settings; stride defaults to the window."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """The mean over each window; stride defaults to the window."""

    def forward(self, input):
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size, whatever the input's H and W."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(_MaxPoolNd):
    """The maximum over each window of an (N, C, L) or (C, L) input; stride defaults to the window."""

    def forward(self, input):
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """The mean over each window of an (N, C, L) or (C, L) input; stride defaults to the window."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = (_one(kernel_size),)
        self.stride = (_one(stride if stride is not None else kernel_size),)
        self.padding = (_one(padding),)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    def forward(self, input):
        return adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size, whatever the input's H and W."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


__all__ = ["adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "AdaptiveMaxPool2d", "max_pool2d",
           "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "MaxPool1d", "AvgPool1d",
           "AdaptiveAvgPool1d"]
