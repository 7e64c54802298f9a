"""The ranking, embedding and margin losses: ``F.margin_ranking_loss``, ``F.hinge_embedding_loss``,
``F.cosine_embedding_loss``, ``F.triplet_margin_loss`` (and ``_with_distance_loss``),
``F.multilabel_soft_margin_loss``, ``F.multi_margin_loss``, ``F.multilabel_margin_loss``,
``F.soft_margin_loss`` (NOTE [ Margin losses ] in engine/ops/nn/loss.py)."""
from __future__ import annotations

import numpy as np

from ...backend import dtypes as _dtype
from ...backend.low_precision import autocast_slot
from ...backend import gaps as _backend
from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS
from .activation import softplus
from .distance import pairwise_distance
from .loss import _add_number, _clamp_min0, _enum_of, _long_name, _no_grad_arg, _reduce, _reduction, _sub_number


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: target 1 wants input1 ranked higher, -1 lower."""
    red = _reduction(size_average, reduce, reduction)
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp)
        input1, input2, target = autocast_slot.cast("margin_ranking_loss", [input1, input2, target])
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape!r}, input2: {input2.shape!r}, target: {target.shape!r} ")
    E._broadcast_check(input1, input2)
    return _reduce(_clamp_min0(_add_number(E.mul(E.neg(target), E.sub(input1, input2)), margin)), red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where target is 1, ``max(0, margin - input)`` where it is -1."""
    red = _reduction(size_average, reduce, reduction)
    E._broadcast_check(target, input)
    zeros = E.zeros_like(input)
    margin_clamp = _clamp_min0(E.sub(float(margin), input))
    out = E.add(E.where(E.ne(target, 1), margin_clamp, zeros), E.where(E.ne(target, -1), input, zeros))
    return _reduce(out, red)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1 (rows of x1, x2)."""
    red = _reduction(size_average, reduce, reduction)
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod_sum = E.sum(E.mul(input1, input2), td)
    mag1 = _add_number(E.sum(E.mul(input1, input1), td), eps)
    mag2 = _add_number(E.sum(E.mul(input2, input2), td), eps)
    cos = E.div(prod_sum, E.sqrt(E.mul(mag1, mag2)))
    zeros = E.zeros_like(cos)
    pos = E.sub(1.0, cos)
    neg = _clamp_min0(_sub_number(cos, margin))
    out = E.add(E.where(E.eq(target, 1), pos, zeros), E.where(E.eq(target, -1), neg, zeros))
    return _reduce(out, red)


def _triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the pairwise p-norm distance (``swap``: the
    negative's distance is the smaller of d(a, n) and d(p, n))."""
    red = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = E.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_clamp_min0(E.sub(_add_number(d_pos, margin), d_neg)), red)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """triplet_margin_loss with any ``distance_function(x1, x2)`` (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = E.minimum(d_neg, distance_function(positive, negative))
    return _reduce(_clamp_min0(E.sub(E.add(d_pos, margin), d_neg)), reduction)


def _logsigmoid(x):
    if "log_sigmoid" in OPS:
        return apply(OPS["log_sigmoid"], [x])
    return E.neg(softplus(E.neg(x)))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of sigmoid(input) against 0/1 targets, averaged over the classes (last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = E.neg(E.add(E.mul(target, _logsigmoid(input)), E.mul(E.sub(1, target), _logsigmoid(E.neg(input)))))
    if weight is not None:
        loss = E.mul(loss, weight)
    class_dim = input.ndim - 1
    loss = E.div(E.sum(loss, class_dim), input.shape[class_dim])
    if reduction == "none":
        return loss
    if reduction == "mean":
        return E.mean(loss)
    if reduction == "sum":
        return E.sum(loss)
    raise ValueError(reduction + " is not valid")


def _margin_input_check(input):
    nd = input.ndim
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")


def _host_ints(t):
    return _backend.to_numpy(t._storage.xp, t._data)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge: ``sum_{j != y} max(0, margin - x[y] + x[j])^p / C`` per sample (``weight[y]``
    scales it). NOTE [ Margin losses ] in engine/ops/nn/loss.py."""
    red = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _margin_input_check(input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"multi_margin_loss_cpu_kernel" not implemented for \'{_long_name(input.dtype)}\'')
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_long_name(target.dtype)}")
    nframe = input.shape[0] if input.ndim == 2 else 1
    c = input.shape[-1] if input.ndim else 1
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if target.numel():
        h = _host_ints(target)
        if h.min() < 0 or h.max() >= c:
            raise RuntimeError("target out of range")
    if weight is not None:
        _no_grad_arg(weight, "multi_margin_loss", "weight")
        weight = weight.to(input.dtype)
    return apply(OPS["multi_margin_loss"], [input, target, weight], {"p": int(p), "margin": float(margin),
                                                                     "reduction": _enum_of(red)})


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge: each listed class (the target row up to its first -1) against every unlisted
    one, ``sum max(0, 1 - x[t] + x[j]) / C`` per sample. NOTE [ Margin losses ] in engine/ops/nn/loss.py."""
    red = _reduction(size_average, reduce, reduction)
    _margin_input_check(input)
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_long_name(target.dtype)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"multilabel_margin_loss_forward_out_frame" not implemented for '
                                  f'\'{_long_name(input.dtype)}\'')
    c = input.shape[-1] if input.ndim else 1
    shape2 = (input.shape[0] if input.ndim == 2 else 1, c)
    if target.numel():
        h = _host_ints(target).reshape(shape2)
        listed = np.cumsum(h < 0, axis=-1) == 0
        if (listed & (h >= c)).any():
            raise RuntimeError("argument #2 'target' is out of range")
    return apply(OPS["multilabel_margin_loss"], [input, target], {"reduction": _enum_of(red)})


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))`` (targets are 1 or -1)."""
    red = _reduction(size_average, reduce, reduction)
    E._broadcast_check(input, target)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_long_name(input.dtype)}")
    if target.dtype is not input.dtype:
        target = target.to(input.dtype)
    if tuple(target.shape) != tuple(input.shape):
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
        if shape != tuple(input.shape):   # the loss is written into a tensor shaped like the input
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        target = E.expand(target, shape)
    return apply(OPS["soft_margin_loss"], [input, target], {"reduction": _enum_of(red)})
