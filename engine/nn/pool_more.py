"""More pooling: max unpooling, power-average (LP) pooling, 1-D and 3-D adaptive max pooling, 3-D adaptive
average pooling, and their modules (NOTE [ Max unpooling ] and NOTE [ 3-D adaptive pooling ] in
engine/ops/pool_more.py)."""
from __future__ import annotations

import math

from ..backend import dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from .module import Module
from .pool3d import avg_pool3d, max_pool3d
from .pooling import adaptive_max_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d


def _tuple(v, n):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


# ---- max unpooling ------------------------------------------------------------------------------------
def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """PyTorch's default output size ``(in - 1) * stride + kernel - 2 * padding``, or ``output_size``
    (its last len(kernel) entries) after checking it lies within one stride of that."""
    k = len(kernel_size)
    default = [(input.shape[-k + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(k)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(k):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _unpool(input, indices, out, k):
    """The max_unpool2d/3d op after PyTorch's checks of ``indices`` against ``input`` and the output."""
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_short(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d Tensor, but got a tensor "
                           f"with {input.ndim} dimensions.")
    n = math.prod(out)
    if indices.numel():
        lo, hi = int(E.min(indices).item()), int(E.max(indices).item())
        bad = lo if lo < 0 else hi if hi >= n else None
        if bad is not None:
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, out))})")
    return apply(OPS[f"max_unpool{k}d"], [input, indices], {"output_size": tuple(int(o) for o in out)})


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Writes each value of ``input`` at its position ``indices`` (from ``max_pool1d(return_indices=True)``)
    in a zero signal: max_unpool2d over (..., L, 1), as PyTorch composes it."""
    k = _tuple(kernel_size, 1)
    s = k if stride is None else _tuple(stride, 1)
    out = _unpool_output_size(input, k, s, _tuple(padding, 1), output_size)
    res = _unpool(E.unsqueeze(input, -1), E.unsqueeze(indices, -1), list(out) + [1], 2)
    return E.squeeze(res, -1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Writes each value of ``input`` at its position ``indices`` (from ``max_pool2d(return_indices=True)``)
    in a zero plane (MaxUnpool2DBackward0 keeps ``indices``)."""
    k = _tuple(kernel_size, 2)
    s = k if stride is None else _tuple(stride, 2)
    out = _unpool_output_size(input, k, s, _tuple(padding, 2), output_size)
    return _unpool(input, indices, out, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Writes each value of ``input`` at its position ``indices`` (from ``max_pool3d(return_indices=True)``)
    in a zero volume (MaxUnpool3DBackward0 keeps ``indices``)."""
    k = _tuple(kernel_size, 3)
    s = k if stride is None else _tuple(stride, 3)
    out = _unpool_output_size(input, k, s, _tuple(padding, 3), output_size)
    return _unpool(input, indices, out, 3)


# ---- power-average pooling: composed as PyTorch composes it ------------------------------------------
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


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling (see :func:`lp_pool1d`)."""
    kd, kw, kh = _tuple(kernel_size, 3)
    if norm_type == math.inf:
        return max_pool3d(E.abs(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return E.neg(max_pool3d(E.neg(E.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg_pool3d(E.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, kd * kw * kh, norm_type)


# ---- adaptive max pooling in 1-D and 3-D, adaptive average pooling in 3-D -----------------------------
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


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool1d's values and int64 indices, always both (as PyTorch's ``*_with_indices``)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max pooling over pseudo-random windows (NOTE [ Fractional max pooling ] in engine/ops/pool_more.py):
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


def _check_nonempty(fn, input):
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {list(input.shape)} with dimension {i} being empty")


def _short(dt):
    return {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int8": "Char",
            "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}.get(dt.name, dt.name)


# ---- modules ------------------------------------------------------------------------------------------
class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._n)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _tuple(padding, self._n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: ``forward(input, indices, output_size=None)``."""
    _n = 1

    def forward(self, input, indices, output_size=None):
        return max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: ``forward(input, indices, output_size=None)``."""
    _n = 2

    def forward(self, input, indices, output_size=None):
        return max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: ``forward(input, indices, output_size=None)``."""
    _n = 3

    def forward(self, input, indices, output_size=None):
        return max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over (N, C, L) or (C, L) input."""

    def forward(self, input):
        return lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        return lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input):
        return lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output length, whatever the input's L."""

    def forward(self, input):
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size, whatever the input's D, H and W."""

    def forward(self, input):
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)


class AdaptiveAvgPool3d(Module):
    """Average pooling to a fixed output size, whatever the input's D, H and W."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class FractionalMaxPool2d(Module):
    """Max pooling over pseudo-random windows (Graham's fractional max pooling) to ``output_size`` or to
    ``output_ratio`` of the input size."""

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 2)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, 2) if output_size is not None else None
        self.output_ratio = (None if output_ratio is None else
                             (output_ratio, output_ratio) if isinstance(output_ratio, (int, float))
                             else tuple(output_ratio))
        if output_size is None and output_ratio is None:
            raise ValueError("FractionalMaxPool2d requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not (0 < self.output_ratio[0] < 1 and 0 < self.output_ratio[1] < 1):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                     self.return_indices, _random_samples=self._random_samples)


__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "adaptive_avg_pool3d", "max_pool1d_with_indices", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "FractionalMaxPool2d"]
