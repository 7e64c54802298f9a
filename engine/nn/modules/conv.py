"""The convolution modules: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d`` and what they share."""
from __future__ import annotations

import math

from ... import functional as E
from .. import init
from ..functional import conv as CF
from ..functional.padding import pad
from ..parameter import Parameter
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What the convolution modules share: arguments and their checks, parameters, PyTorch's init
    (kaiming uniform, a=sqrt(5)), repr. A ``padding_mode`` other than ``"zeros"`` pads with ``F.pad``
    first and convolves without padding, as PyTorch."""

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        stride = self._tuple(stride)
        if isinstance(padding, str) and not self._transposed:
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError("padding_mode must be one of {'replicate', 'circular', 'zeros', 'reflect'}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = self._tuple(kernel_size)
        self.stride = stride
        self.padding = padding if isinstance(padding, str) else self._tuple(padding)
        self.dilation = self._tuple(dilation)
        self.transposed = self._transposed
        self.output_padding = self._tuple(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            rev = [0, 0] * self._dims
            if self.padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(self._dims - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i], rev[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(E.empty(*shape, device=device, dtype=dtype))
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

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return self._conv(pad(input, tuple(self._reversed_padding_repeated_twice), mode=self.padding_mode),
                              weight, bias, self.stride, (0,) * self._dims, self.dilation, self.groups)
        return self._conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


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


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) input."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    @staticmethod
    def _conv(*args):
        return CF.conv2d(*args)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) input."""

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    @staticmethod
    def _conv(*args):
        return CF.conv3d(*args)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: ``output_padding`` and ``output_size``."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding=output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that gives ``output_size`` (PyTorch's rule: within one stride of the smallest)."""
        if output_size is None:
            return self.output_padding
        nd = self._dims
        lead = 2 if input.ndim == nd + 2 else 1
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
                             f"{lead + nd} elements (got {len(output_size)})")
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        hi = [lo[d] + self.stride[d] - 1 for d in range(nd)]
        for size, a, b in zip(output_size, lo, hi):
            if size < a or size > b:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {lo} "
                                 f"to {hi} (for an input of {input.shape[lead:]!r})")
        return tuple(s - a for s, a in zip(output_size, lo))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                          self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution (the adjoint of Conv1d) over (N, C, L) input."""

    _dims = 1

    @staticmethod
    def _conv(*args):
        return CF.conv_transpose1d(*args)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution (the adjoint of Conv2d) over (N, C, H, W) input."""

    _dims = 2

    @staticmethod
    def _conv(*args):
        return CF.conv_transpose2d(*args)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution (the adjoint of Conv3d) over (N, C, D, H, W) input."""

    _dims = 3

    @staticmethod
    def _conv(*args):
        return CF.conv_transpose3d(*args)
