"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy properties, and the
special functions lgamma/digamma (the engine's ops) with host kernels for the Gamma family's series."""
from __future__ import annotations

import numpy as np

from .. import functional as E
from ..core.tensor import Tensor, _numpy_ns
from ..ops.special.gamma import digamma_f64, lgamma_f64

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


# ---- special functions: the engine's LgammaBackward0 / DigammaBackward0 ops; host float64 kernels ---------
def _host(t):
    return t.detach().numpy(force=True).astype(np.float64)


def _back(host, like):
    return E.tensor(np.asarray(host), dtype=like.dtype, device=like.device)


def _lgamma_host(x):
    """log|Gamma(x)| of host float64 values (NOTE [ Gamma-family kernels ])."""
    return lgamma_f64(_numpy_ns(), np.asarray(x, dtype=np.float64))


def digamma_host(x):
    """psi(x) of host float64 values (NOTE [ Gamma-family kernels ])."""
    return digamma_f64(_numpy_ns(), np.asarray(x, dtype=np.float64))


lgamma = E.lgamma
digamma = E.digamma


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
