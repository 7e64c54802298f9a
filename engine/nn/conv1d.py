"""``F.conv1d`` and ``Conv1d``: conv2d's im2col kernel on a height-1 image, one ConvolutionBackward0
keeping the 3-D input and weight (as PyTorch)."""
from __future__ import annotations

from .._dispatch import apply
from ..derivatives import OPS
from ..ops.conv import Geom
from .conv import _ConvNd


def _single(v):
    return (v,) if isinstance(v, int) else tuple(v)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over (N, C, L) or unbatched (C, L) input."""
    if groups != 1:
        raise NotImplementedError("glassgrad's conv1d supports groups=1 only")
    if input.ndim == 2:
        return conv1d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    if input.ndim != 3:
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                           f"{list(input.shape)}")
    if weight.ndim != 3 or weight.shape[1] != input.shape[1]:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
                           f"to have {weight.shape[1]} channels, but got {input.shape[1]} channels instead")
    (s,), (d,) = _single(stride), _single(dilation)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        p = 0 if padding == "valid" else (weight.shape[2] - 1) * d // 2
        if padding == "same" and (weight.shape[2] - 1) * d % 2:   # odd total: one more on the right, as PyTorch
            from .padding import pad
            input = pad(input, (0, 1))
    else:
        (p,) = _single(padding)
    n, c, length = input.shape
    geom = Geom(n, c, 1, length, 1, weight.shape[2], 1, s, 0, p, 1, d)
    k = d * (weight.shape[2] - 1) + 1
    if geom.wp < k:
        raise RuntimeError(f"Calculated padded input size per channel: ({geom.wp}). Kernel size: ({k}). Kernel size "
                           f"can't be greater than actual input size")
    return apply(OPS["conv1d"], [input, weight, bias], {"geom": geom})


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) input (see ``_ConvNd`` for what differs from PyTorch)."""

    _dims = 1

    @staticmethod
    def _conv(*args):
        return conv1d(*args)
