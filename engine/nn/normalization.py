"""``LayerNorm``, ``RMSNorm`` (+ ``F.rms_norm``) and ``LocalResponseNorm`` (+ ``F.local_response_norm``)."""
from __future__ import annotations

import numpy as np

from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from . import functional as F
from .module import Module
from .parameter import Parameter


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
        from . import init
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps)`` over the last ``len(normalized_shape)`` dims, times ``weight``;
    composed as PyTorch composes it (pow, mean, add, rsqrt, mul). ``eps`` defaults to the dtype's
    machine epsilon."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    if eps is None:
        eps = float(np.finfo(np.dtype(input.dtype.name)).eps)
    dims = tuple(range(input.ndim - 1, input.ndim - 1 - k, -1))
    ms = E.mean(E.pow(input, 2), dims, keepdim=True)
    out = E.mul(input, E.rsqrt(apply(OPS["add_number"], [ms], {"other": eps})))
    return E.mul(out, weight) if weight is not None else out


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
        from . import init
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``input / (k + alpha * mean of input**2 over the ``size`` neighbouring channels) ** beta``, the
    channel window zero-padded, composed as PyTorch composes it (avg_pool2d over the channels of 3-D
    input, avg_pool3d over a (N, 1, C, H, rest) view of larger input)."""
    from .padding import pad
    from .pool3d import avg_pool3d
    from .pooling import avg_pool2d
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = E.mul(input, input)
    if dim == 3:
        div = E.unsqueeze(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = E.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = E.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1).view(sizes)
    div = E.pow(E.add(E.mul(div, alpha), k), beta)
    return E.div(input, div)


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
