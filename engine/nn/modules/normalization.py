"""``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm`` and the legacy ``CrossMapLRN2d`` (as PyTorch's
own ``autograd.Function``, node CrossMapLRN2dBackward; NOTE [ CrossMapLRN2d ])."""
from __future__ import annotations

from ... import functional as E
from ...autograd.function import Function
from .. import functional as F
from .. import init
from ..functional.normalization import group_norm, local_response_norm, rms_norm
from ..parameter import Parameter
from .module import Module


class LayerNorm(Module):
    """Normalises over the last ``len(normalized_shape)`` dimensions, then scales and shifts."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(E.ones(*self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(E.zeros(*self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


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
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dims (no centring)."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(E.ones(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Local response normalisation across channels (AlexNet's)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# NOTE [ CrossMapLRN2d ]
# 1. ``out = x * (k + alpha / size * S) ** -beta`` where ``S[c]`` is a running sum of squares over
#    channels, built as PyTorch's (Lua-era) kernel builds it: ``S[0]`` sums the first ``p = (size - 1) // 2
#    + 1`` channels, and each next channel adds the square ``p - 1`` ahead and, past channel ``p``, drops
#    the one ``p`` behind. For most channels that is the centred window of ``size`` channels, but not at
#    the start (channel 0 is never dropped): it is not ``F.local_response_norm``, and glassgrad keeps it
#    exactly as PyTorch computes it.
# 2. The backward is PyTorch's formula for this layer, run on Tensors: ``g * scale ** -beta`` minus
#    ``2 alpha beta / size * x[c]`` times the sum of ``g * out / scale`` over a window of ``size`` channels.

class CrossMapLRN2d(Function):      # the Function: its node is CrossMapLRN2dBackward, as PyTorch's
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        channels = input.shape[1]
        sq = input * input
        pre = int((size - 1) / 2 + 1)
        running = sq[:, 0]
        for c in range(1, min(pre, channels)):
            running = running + sq[:, c]
        sums = [running]
        for c in range(1, channels):
            if c < channels - pre + 1:
                running = running + sq[:, c + pre - 1]
            if c > pre:
                running = running - sq[:, c - pre]
            sums.append(running)
        scale = E.stack(sums, 1) * (alpha / size) + k
        ctx.scale = scale
        output = scale ** -beta * input
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size, scale = ctx.size, ctx.scale
        n, channels, h, w = input.shape
        grad_input = scale ** -ctx.beta * grad_output
        lead = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        zeros = E.zeros(n, 1, h, w, dtype=input.dtype, device=input.device)
        padded = E.cat([zeros] * lead + [ratio] + [zeros] * max(size - 1 - lead, 0), 1)   # (N, C + size - 1, H, W)
        accum = E.sum(padded[:, :size - 1], 1)
        cache = 2 * ctx.alpha * ctx.beta / size
        parts = []
        for c in range(channels):
            accum = accum + padded[:, c + size - 1]
            parts.append(grad_input[:, c] - cache * input[:, c] * accum)
            accum = accum - padded[:, c]
        return E.stack(parts, 1), None, None, None, None


_CrossMapLRN2d = CrossMapLRN2d
del CrossMapLRN2d


class CrossMapLRN2d(Module):
    """Legacy response normalisation across channels of (N, C, H, W) input (NOTE [ CrossMapLRN2d ])."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
