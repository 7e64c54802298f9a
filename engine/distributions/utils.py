"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy properties, and the
special functions lgamma/digamma (with gradients) that the Gamma family needs."""
from __future__ import annotations

import math

import numpy as np

from .. import functional as E
from .._tensor import Tensor
from ..autograd import Function

_EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}
_TINY = {"float32": float(np.finfo(np.float32).tiny), "float64": float(np.finfo(np.float64).tiny)}
_MIN = {"float32": float(np.finfo(np.float32).min), "float64": float(np.finfo(np.float64).min)}


def eps(dtype) -> float:
    return _EPS[dtype.name]


def tiny(dtype) -> float:
    return _TINY[dtype.name]


def finfo_min(dtype) -> float:
    return _MIN[dtype.name]


def broadcast_all(*values):
    """Numbers become tensors (of the tensors' dtype and device, or the default dtype); all are expanded to
    one broadcast shape."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, int, float)):
            raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    like = tensors[0] if tensors else None
    out = [v if isinstance(v, Tensor) else
           E.tensor(float(v), dtype=like.dtype if like is not None and like.dtype.is_floating_point else None,
                    device=like.device if like is not None else None) for v in values]
    shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in out)))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in out)


def sum_rightmost(value, dim: int):
    """Sum over the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def clamp_probs(probs):
    e = eps(probs.dtype)
    return probs.clamp(min=e, max=1 - e)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    return E.log(ps) - E.log1p(-ps) if is_binary else E.log(ps)


def logits_to_probs(logits, is_binary=False):
    return E.sigmoid(logits) if is_binary else E.softmax(logits, dim=-1)


class lazy_property:
    """Computed on first access and cached in the instance (so ``repr`` and ``expand`` see only what was
    given or already computed, as PyTorch's)."""

    def __init__(self, fn):
        self.wrapped = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        from ..autograd import enable_grad
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


# ---- special functions (host kernels in float64, gradients through engine ops) -------------------------
_lgamma_host = np.vectorize(lambda x: math.inf if (x <= 0 and x == math.floor(x)) else math.lgamma(x),
                            otypes=[np.float64])


def _host(t):
    return t.detach().numpy(force=True).astype(np.float64)


def _back(host, like):
    return E.tensor(np.asarray(host), dtype=like.dtype, device=like.device)


def digamma_host(x):
    """psi(x) in float64: reflection below 0, recurrence up to 10, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    neg = x < 0.5
    refl = np.where(neg, np.pi / np.tan(np.pi * x), 0.0)
    y = np.where(neg, 1.0 - x, x)
    acc = np.zeros_like(y)
    while True:
        small = y < 10
        if not small.any():
            break
        acc = acc - np.where(small, 1.0 / np.where(small, y, 1.0), 0.0)
        y = np.where(small, y + 1, y)
    r = 1.0 / (y * y)
    series = np.log(y) - 0.5 / y - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (
        1 / 132 - r * 691 / 32760)))))
    out = acc + series - refl
    out = np.where((x <= 0) & (x == np.floor(x)), np.nan, out)
    return np.where(np.isposinf(x), np.inf, out)


def trigamma_host(x):
    """psi'(x) in float64, for x > 0 (reflection below)."""
    x = np.asarray(x, dtype=np.float64)
    neg = x < 0.5
    y = np.where(neg, 1.0 - x, x)
    acc = np.zeros_like(y)
    while True:
        small = y < 10
        if not small.any():
            break
        acc = acc + np.where(small, 1.0 / np.where(small, y, 1.0) ** 2, 0.0)
        y = np.where(small, y + 1, y)
    r = 1.0 / (y * y)
    series = 1 / y + r / 2 + r / y * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * 5 / 66))))
    out = acc + series
    return np.where(neg, -out + (np.pi / np.sin(np.pi * x)) ** 2, out)


class Lgamma(Function):
    """log|Gamma(x)|; its gradient is digamma(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _back(_lgamma_host(_host(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * digamma(x)


class Digamma(Function):
    """psi(x) = d/dx log Gamma(x); its gradient is trigamma(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _back(digamma_host(_host(x)), x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _back(trigamma_host(_host(x)), x)


def lgamma(x):
    return Lgamma.apply(x)


def digamma(x):
    return Digamma.apply(x)


def broadcast_pair(a, b):
    """``a`` and ``b`` (a tensor or number) expanded to their broadcast shape."""
    if not isinstance(b, Tensor):
        b = E.tensor(b, dtype=a.dtype, device=a.device)
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return (a if tuple(a.shape) == shape else a.expand(shape)), (b if tuple(b.shape) == shape else b.expand(shape))


def host_generator(device):
    """NumPy's Generator behind the engine's generator for ``device`` (``engine.manual_seed`` seeds it)."""
    from ..random import generator_for
    return generator_for(device)._np
