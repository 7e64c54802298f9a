"""``F.l1_loss``, ``F.smooth_l1_loss`` and ``F.huber_loss`` (rows in engine/ops/loss.py)."""
from __future__ import annotations

import warnings

from .. import functional as E
from .._dispatch import apply
from ..derivatives import OPS
from ..ops.loss import REDUCTION_ENUM


def _shapes(input, target):
    """PyTorch's warning for mismatched sizes, then both broadcast to one shape (ExpandBackward0 where
    a tensor really grows, as torch.broadcast_tensors)."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)
        E._broadcast_check(input, target)
        import numpy as np
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
        if tuple(input.shape) != shape:
            input = E.expand(input, shape)
        if tuple(target.shape) != shape:
            target = E.expand(target, shape)
    return input, target


def _reduction(size_average, reduce, reduction):
    from .functional import _reduction as legacy
    return legacy(size_average, reduce, reduction)


def _weighted(loss, weight, input, reduction, mean_by_weight):
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = E.mul(loss, weight)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return E.sum(loss)
    if reduction == "mean":
        return E.div(E.sum(loss), E.sum(weight)) if mean_by_weight else E.mean(loss)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) absolute error, composed as PyTorch composes it: sub, abs, then mean or sum.
    With ``weight`` the mean divides by the summed weights."""
    if size_average is not None or reduce is not None or weight is None:
        reduction = _reduction(size_average, reduce, reduction)   # (with weight: checked by _weighted)
    input, target = _shapes(input, target)
    err = E.abs(E.sub(input, target))
    if weight is not None:
        return _weighted(err, weight, input, reduction, True)
    if reduction == "none":
        return err
    return E.sum(err) if reduction == "sum" else E.mean(err)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (beta 0 is l1_loss)."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _shapes(input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return apply(OPS["smooth_l1_loss"], [input, target], {"reduction": REDUCTION_ENUM[reduction], "beta": beta})


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``; ``weight`` scales each element."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    input, target = _shapes(input, target)
    if weight is None:
        reduction = _reduction(None, None, reduction)
        return apply(OPS["huber_loss"], [input, target], {"reduction": REDUCTION_ENUM[reduction], "delta": delta})
    loss = apply(OPS["huber_loss"], [input, target], {"reduction": 0, "delta": delta})
    return _weighted(loss, weight, input, reduction, False)


__all__ = ["l1_loss", "smooth_l1_loss", "huber_loss"]
