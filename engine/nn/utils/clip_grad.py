"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_`` (PyTorch's CPU path).

NOTE [ Gradient clipping ]
1. ``clip_grad_norm_`` computes one norm per gradient, stacks them and takes the
   norm of that vector (PyTorch's per-tensor path, which it uses on CPU); then every
   gradient is multiplied in place by ``clamp(max_norm / (total + 1e-6), max=1)``,
   so gradients under the limit are multiplied by exactly 1.
2. Everything runs as ordinary engine ops under ``no_grad``: a recording shows the
   norms, the stack and the in-place ``mul_`` on each ``.grad`` (a version bump).
3. ``foreach`` is accepted and ignored: glassgrad has one implementation.
"""
from __future__ import annotations

import math
import types
import warnings

from ... import functional as E
from ...core.tensor import Tensor
from ...core.grad_mode import no_grad


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(x, p: float):
    """``torch.linalg.vector_norm(x, p)`` composed from engine ops."""
    if p == 2.0:
        return E.norm(x)
    a = x.abs()
    if p == math.inf:
        return E.amax(a)
    if p == -math.inf:
        return E.amin(a)
    if p == 0.0:
        return (a != 0).to(x.dtype).sum()
    if p == 1.0:
        return a.sum()
    return a.pow(p).sum().pow(1.0 / p)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated into one vector."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    with no_grad():
        if not tensors:
            return E.tensor(0.0)
        first = tensors[0].device
        norms = [_vector_norm(t, norm_type).to(first) for t in tensors]
        total = _vector_norm(E.stack(norms), norm_type)
    if error_if_nonfinite and not bool(E.isfinite(total).item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale every ``.grad`` in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        coef = E.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Clip the gradients' total norm to ``max_norm`` in place; returns the total norm before clipping
    (NOTE [ Gradient clipping ])."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (a FutureWarning, as in PyTorch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every ``.grad`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
