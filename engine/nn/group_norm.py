"""``F.group_norm`` and ``GroupNorm`` (NOTE [ Group norm ] in engine/ops/norm.py)."""
from __future__ import annotations

from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from .module import Module
from .parameter import Parameter


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over groups of ``C / num_groups`` channels (and all spatial positions),
    then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    if any(t is not None and t.dtype is not input.dtype for t in (weight, bias)):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    hxw = input.numel() // (n * c) if n * c else 0
    attrs = {"N": n, "C": c, "HxW": hxw, "group": num_groups, "eps": eps}
    return apply(OPS["group_norm"], [input, weight, bias], attrs)


class GroupNorm(Module):
    """Group normalisation over (N, C, *) input; ``weight`` ones and ``bias`` zeros when ``affine``."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(E.empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(E.empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        from . import init
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


__all__ = ["group_norm", "GroupNorm"]
