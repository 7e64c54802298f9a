"""``Conv1d`` (``F.conv1d`` is in conv_fns.py: conv2d's kernel on a height-1 image)."""
from __future__ import annotations

from . import conv_fns as CF
from .conv import _ConvNd
from .conv_fns import conv1d  # noqa: F401  (kept importable from here)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) input."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    @staticmethod
    def _conv(*args):
        return CF.conv1d(*args)
