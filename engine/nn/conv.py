"""``Conv2d``."""
from __future__ import annotations

import math

from .. import functional as E
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    """What Conv1d and Conv2d share: arguments, parameters, PyTorch's init (kaiming uniform, a=sqrt(5)), repr.

    Differs from PyTorch: ``groups`` must be 1 and ``padding_mode`` must be ``"zeros"``.
    """

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if groups != 1:
            raise NotImplementedError(f"glassgrad's {name} supports groups=1 only")
        if padding_mode != "zeros":
            raise NotImplementedError(f"glassgrad's {name} supports padding_mode='zeros' only")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = self._tuple(kernel_size)
        self.stride = self._tuple(stride)
        self.padding = padding if isinstance(padding, str) else self._tuple(padding)
        self.dilation = self._tuple(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(E.empty(out_channels, in_channels, *self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    @classmethod
    def _tuple(cls, v) -> tuple:
        return (v,) * cls._dims if isinstance(v, int) else tuple(v)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) input (see ``_ConvNd`` for what differs from PyTorch)."""

    _dims = 2

    @staticmethod
    def _conv(*args):
        return F.conv2d(*args)
