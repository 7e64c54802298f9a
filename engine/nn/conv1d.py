"""``F.conv1d`` and ``Conv1d``: conv2d's im2col kernel on a height-1 image, one ConvolutionBackward0
keeping the 3-D input and weight (as PyTorch)."""
from __future__ import annotations

import math

from .. import functional as E
from .._dispatch import apply
from ..derivatives import OPS
from ..ops.conv import Geom
from . import init
from .module import Module
from .parameter import Parameter


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


class Conv1d(Module):
    """1-D convolution over (N, C, L) input; PyTorch's init (kaiming uniform, a=sqrt(5)).

    Differs from PyTorch: ``groups`` must be 1 and ``padding_mode`` must be ``"zeros"``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        if groups != 1:
            raise NotImplementedError("glassgrad's Conv1d supports groups=1 only")
        if padding_mode != "zeros":
            raise NotImplementedError("glassgrad's Conv1d supports padding_mode='zeros' only")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride)
        self.padding = padding if isinstance(padding, str) else _single(padding)
        self.dilation = _single(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(E.empty(out_channels, in_channels, *self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,):
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1,):
            s += f", dilation={self.dilation}"
        if self.bias is None:
            s += ", bias=False"
        return s


__all__ = ["conv1d", "Conv1d"]
