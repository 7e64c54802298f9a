"""``CrossMapLRN2d``: the legacy cross-channel response normalisation, as PyTorch's own
``autograd.Function`` (node CrossMapLRN2dBackward).

NOTE [ CrossMapLRN2d ]
1. ``out = x * (k + alpha / size * S) ** -beta`` where ``S[c]`` is a running sum of squares over
   channels, built as PyTorch's (Lua-era) kernel builds it: ``S[0]`` sums the first ``p = (size - 1) // 2
   + 1`` channels, and each next channel adds the square ``p - 1`` ahead and, past channel ``p``, drops
   the one ``p`` behind. For most channels that is the centred window of ``size`` channels, but not at
   the start (channel 0 is never dropped): it is not ``F.local_response_norm``, and glassgrad keeps it
   exactly as PyTorch computes it.
2. The backward is PyTorch's formula for this layer, run on Tensors: ``g * scale ** -beta`` minus
   ``2 alpha beta / size * x[c]`` times the sum of ``g * out / scale`` over a window of ``size`` channels.
"""
from __future__ import annotations

from .. import functional as E
from ..autograd.function import Function
from .module import Module


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


__all__ = ["CrossMapLRN2d"]
