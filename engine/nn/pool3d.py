"""3-D pooling: ``F.max_pool3d``, ``F.avg_pool3d``, ``MaxPool3d``, ``AvgPool3d`` (NOTE [ 3-D pooling ]
in engine/ops/pool3d.py)."""
from __future__ import annotations

from ..core.dispatch import apply
from ..derivatives import OPS
from ..ops.pool import out_size
from ..ops.pool3d import Pool3d
from .pooling import _AvgPoolNd, _MaxPoolNd


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
    """The mean of each 3-D window (zero padding counted unless ``count_include_pad=False``).

    Differs from PyTorch: floating point input only (PyTorch also averages integer tensors)."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, d, c, size, out = _geometry("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode)
    if any(n + 2 * pp < kk for n, pp, kk in zip(size, p, k)):
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, size))}). Calculated output size: "
                           f"({c}x{'x'.join(str(max(o, 0)) for o in out)}). Output size is too small")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"glassgrad's avg_pool3d takes floating point input, not {input.dtype}")
    geom = Pool3d(*size, *k, *s, *p, 1, 1, 1, *out)
    return apply(OPS["avg_pool3d"], [input],
                 {"geom": geom, "kernel_size": k, "stride": _saved_stride(stride), "padding": p,
                  "ceil_mode": bool(ceil_mode), "count_include_pad": bool(count_include_pad),
                  "divisor_override": divisor_override})


class MaxPool3d(_MaxPoolNd):
    """The maximum over each window of an (N, C, D, H, W) or (C, D, H, W) input; stride defaults to the
    window."""

    def forward(self, input):
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolNd):
    """The mean over each 3-D window; stride defaults to the window."""

    def forward(self, input):
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


__all__ = ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "MaxPool3d", "AvgPool3d"]
