"""``F.bilinear`` and ``Bilinear``: ``y = x1^T W x2 + b`` per output feature (NOTE [ Bilinear ] in
engine/ops/bilinear.py)."""
from __future__ import annotations

import math

from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from . import init
from .module import Module
from .parameter import Parameter


def bilinear(input1, input2, weight, bias=None):
    """(*, in1) and (*, in2) with ``weight`` (out, in1, in2) -> (*, out)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional (out, in1, in2), but got {weight.ndim} "
                           f"dimensions")
    for name, t, j in (("input1", input1, 1), ("input2", input2, 2)):
        if t.shape[-1] != weight.shape[j]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {t.shape[-1]} but expected "
                               f"{weight.shape[j]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0] if bias.ndim else 1}"
                           f" but expected {weight.shape[0]}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    attrs = {"expand1": (1, 3), "expand2": (0,), "expand3": (1, 2), "sumdim": (2, 3)}
    out = apply(OPS["trilinear"], [x1, weight, x2], attrs)
    out = out.view(*lead, weight.shape[0])
    return E.add(out, bias) if bias is not None else out


class Bilinear(Module):
    """``y = x1^T A x2 + b``: weight (out_features, in1_features, in2_features), both weight and bias
    uniform in +-1/sqrt(in1_features), as PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(E.empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["bilinear", "Bilinear"]
