"""Batch normalisation: ``F.batch_norm``, ``BatchNorm1d`` and ``BatchNorm2d`` (NOTE [ Batch norm ]
in engine/ops/norm.py)."""
from __future__ import annotations

from ..backend import dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from .module import Module
from .parameter import Parameter


def _check_len(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) by batch statistics (``training``) or the running ones.

    In training the running statistics, when given, are updated in place:
    ``(1 - momentum) * old + momentum * batch`` with the unbiased batch variance.
    """
    if training:
        size = input.shape
        n = 1
        for i, s in enumerate(size):
            if i != 1:
                n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size!r}")
    elif running_mean is None or running_var is None:
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    c = input.shape[1] if input.ndim >= 2 else 0     # (PyTorch reads a 1-D input as having 0 channels)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_len(name, t, c)
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input with a channel dim (N, C, ...), got {input.ndim}D input")
    out, aux = apply(OPS["batch_norm"], [input, weight, bias, running_mean, running_var],
                     {"training": bool(training), "eps": eps}, return_aux=True)
    if training and running_mean is not None:
        _update_running(input, running_mean, running_var, aux["result1"], aux["result2"], momentum, eps)
    return out


def _update_running(input, running_mean, running_var, mean, invstd, momentum, eps):
    """NOTE [ Batch norm ] 4: in place, no version bump (the kernel's own write in PyTorch)."""
    xp = input._storage.xp
    n = input.numel() // input.shape[1]
    m = momentum
    batch_mean = xp.astype(mean._data, running_mean._data.dtype)
    var = 1.0 / (xp.astype(invstd._data, xp.float64) ** 2) - eps        # the biased batch variance
    unbiased = xp.astype(var * (n / (n - 1)), running_var._data.dtype)
    running_mean._data[...] = running_mean._data * (1.0 - m) + batch_mean * m
    if running_var is not None:
        running_var._data[...] = running_var._data * (1.0 - m) + unbiased * m


class _NormBase(Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(E.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(E.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", E.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", E.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", E.tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            from . import init
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                          self.weight, self.bias, bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input: per-channel batch statistics in training,
    running statistics (buffers ``running_mean``, ``running_var``, ``num_batches_tracked``) in eval."""

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) input, statistics per channel over N, H and W."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) input, statistics per channel over N, D, H and W."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


__all__ = ["batch_norm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
