"""The losses of classification and regression: ``F.nll_loss``, ``F.cross_entropy``, ``F.mse_loss``,
``F.binary_cross_entropy(_with_logits)``, ``F.l1_loss``, ``F.smooth_l1_loss``, ``F.huber_loss``, and the
reduction helpers every loss shares (``reduction``, PyTorch's legacy ``size_average``/``reduce``).
Rows in engine/ops/nn/loss.py; the rest composed from ops as PyTorch composes
them (so the graph shows PyTorch's nodes)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ...backend import dtypes as _dtype
from ...backend import gaps as _backend
from ...backend.low_precision import autocast_slot
from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS
from ...ops.nn.loss import REDUCTION_ENUM
from .activation import log_softmax

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(size_average, reduce, reduction):
    """PyTorch's legacy ``size_average``/``reduce`` pair, else ``reduction`` (checked)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _no_grad_arg(t, fn, name):
    if t is not None and t.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                           "This input cannot have requires_grad True.")


def _type_name(dt):
    return _dtype.SHORT_NAMES[dt.name]


_np_min, _np_max = np.minimum.reduce, np.maximum.reduce   # ndarray.min/max without their wrappers


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of the target classes; ``weight`` scales each class (the mean
    then divides by the summed weights of the counted targets, as PyTorch)."""
    if size_average is not None or reduce is not None or reduction not in _REDUCTIONS:
        reduction = _reduction(size_average, reduce, reduction)
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.type().split('.')[-1][:-6]}")
    if input.ndim > 2:
        return _nll_loss_nd(input, target, weight, ignore_index, reduction)
    if input.ndim == 2 and (target.ndim == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim == 1 and target.ndim == 1:
        if target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
        target = E.reshape(target, ())
    c = input.shape[-1]
    _check_targets(target, c, ignore_index)
    if weight is not None:
        _class_weight_check(weight, input, c)
        return apply(OPS["nll_loss_weighted"], [input, target, weight],
                     {"reduction": reduction, "ignore_index": ignore_index})
    return apply(OPS["nll_loss"], [input, target], {"reduction": reduction, "ignore_index": ignore_index})


def _check_targets(target, c, ignore_index):
    if target.numel():
        host = _backend.to_numpy(target._storage.xp, target._data)
        if _np_min(host, axis=None) < 0 or _np_max(host, axis=None) >= c:     # only then look for a bad one (ignore_index may be negative)
            bad = host[(host != ignore_index) & ((host < 0) | (host >= c))]
            if bad.size:
                raise IndexError(f"Target {int(bad[0])} is out of bounds.")


def _nll_loss_nd(input, target, weight, ignore_index, reduction):
    """(N, C, d...) input with (N, d...) targets, as PyTorch: one NllLoss2DBackward0 over (N, C, H, W);
    other k-d input is viewed as (N, C, 1, d1*d2*...) first and ``reduction="none"`` losses are
    viewed back to (N, d...)."""
    want = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != want:
        raise RuntimeError(f"Expected target size {list(want)}, got {list(target.shape)}".replace(",", ", ")
                           .replace(",  ", ", "))
    n, c = input.shape[0], input.shape[1]
    _check_targets(target, c, ignore_index)
    if input.ndim != 4:
        rest = 1
        for k in input.shape[2:]:
            rest *= k                          # not -1: an empty batch leaves -1 undetermined
        input, target = E.reshape(input, n, c, 1, rest), E.reshape(target, n, 1, rest)
    attrs = {"reduction": reduction, "ignore_index": ignore_index}
    if weight is not None:
        _class_weight_check(weight, input, c)
        out = apply(OPS["nll_loss2d_weighted"], [input, target, weight], attrs)
    else:
        out = apply(OPS["nll_loss2d"], [input, target], attrs)
    return E.reshape(out, want) if reduction == "none" and tuple(out.shape) != want else out


def _class_weight_check(weight, input, c, prefix=""):
    if weight.ndim != 1 or weight.shape[0] != c:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {c} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}".replace(",", ", ").replace(",  ", ", "))
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found {_type_name(weight.dtype)}")
    _no_grad_arg(weight, "nll_loss_forward", "weight")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax then nll_loss (so, as in PyTorch, the log-probabilities are what is kept).

    ``target`` holds class indices, or class probabilities shaped like ``input``.
    ``label_smoothing`` mixes each target with the uniform distribution over the classes.
    """
    if size_average is not None or reduce is not None or reduction not in _REDUCTIONS:
        reduction = _reduction(size_average, reduce, reduction)
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp)
        input, target, weight = autocast_slot.cast("cross_entropy", [input, target, weight])
    if tuple(input.shape) == tuple(target.shape) and not target.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class probabilities, got "
                           f"{_type_name(target.dtype)}")
    if weight is not None or label_smoothing or target.dtype.is_floating_point:
        return _cross_entropy_general(input, target, weight, ignore_index, reduction, label_smoothing)
    return nll_loss(log_softmax(input, 1 if input.ndim >= 2 else 0), target, None, None, ignore_index, None, reduction)


def _cross_entropy_general(input, target, weight, ignore_index, reduction, ls):
    """PyTorch's cross_entropy for class weights, label smoothing and probability targets,
    composed from the same ops as PyTorch's (so the graph shows the same nodes)."""
    if ls > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls:g}")
    class_dim = 0 if input.ndim == 1 else 1
    n = input.shape[class_dim]
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, ls, class_dim, n)
    if target.dtype.is_floating_point and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    logp = log_softmax(input, class_dim)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if ls <= 0:
        return nll
    ignore = E.eq(target, ignore_index)
    if weight is not None:
        smooth = E.neg(E.sum(E.mul(logp, _class_view(weight, input.ndim, class_dim)), class_dim))
    else:
        smooth = E.neg(E.sum(logp, class_dim))
    smooth = apply(OPS["masked_fill"], [smooth, ignore], {"value": 0.0})
    if reduction == "mean":
        kept = E.logical_not(ignore)
        if weight is not None:   # the summed weights of the counted targets, as nll_loss's total_weight
            picked = weight[E.mul(target, kept.to(_dtype.int64))]       # (an ignored target reads class 0)
            denom = E.sum(E.mul(picked, kept.to(weight.dtype)))
        else:   # PyTorch divides by the int64 count; a float count keeps the backward on one dtype
            denom = E.sum(kept).to(smooth.dtype)   # (the array API divides no float by an integer array)
        ret = E.div(E.sum(smooth), denom)
    elif reduction == "sum":
        ret = E.sum(smooth)
    else:
        ret = smooth
    return E.add(_mul_number(nll, 1.0 - ls), _mul_number(ret, ls / n))


def _mul_number(t, k):
    """``t * k`` for a Python number, as PyTorch's C++ code calls it (MulBackward1, ``other`` a number)."""
    return apply(OPS["mul_number"], [t], {"other": k})


def _class_view(weight, ndim, class_dim):
    """``weight`` viewed to broadcast along the class dim (PyTorch's weight_broadcast_shape)."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return E.view(weight, tuple(shape))


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, ls, class_dim, n):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n):
        _class_weight_check(weight, input, n, prefix="cross_entropy: ")
    logp = log_softmax(input, class_dim)
    if ls > 0:
        target = E.add(_mul_number(target, 1.0 - ls), ls / n)
    prod = E.mul(logp, target)
    if weight is not None:
        prod = E.mul(prod, _class_view(weight, input.ndim, class_dim))
    if reduction == "none":
        return E.neg(E.sum(prod, class_dim))
    if reduction == "mean" and not input.numel():   # PyTorch's -(sum().fill_(nan)): an empty gradient
        return E.neg(E.sum(prod).fill_(math.nan))
    total = E.neg(E.sum(prod))
    if reduction == "sum":
        return total
    return apply(OPS["div_number"], [total], {"other": input.numel() // n})


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have "
                      "the same size.", UserWarning, stacklevel=2)
    if input.dtype is not target.dtype:   # PyTorch broadcasts first, so a 0-d operand promotes as a dimensioned one
        dt = _dtype.promote_types(input.dtype, target.dtype)
        input, target = input.to(dt), target.to(dt)
    return apply(OPS["mse_loss"], [input, target], {"reduction": reduction})


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of probabilities ``input`` in [0, 1] (BinaryCrossEntropyBackward0).

    Each log is clamped at -100, as in PyTorch, so a probability of exactly 0 or 1 gives a
    finite loss. ``weight`` broadcasts to the input and is kept expanded (a view, no copy).
    """
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{_type_name(input.dtype)}\'')
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target.dtype)} but expected {_type_name(input.dtype)}")
    _no_grad_arg(weight, "binary_cross_entropy", "weight")
    if weight is not None:
        shape = tuple(input.shape)
        if _broadcast_shape(tuple(weight.shape), shape) != shape:
            raise RuntimeError(_infer_size_error(tuple(weight.shape), shape))
        weight = E.expand(weight.to(input.dtype), shape)
    xp = input._storage.xp
    if input.numel():
        x, t = input._data, target._data
        if bool(xp.any(xp.logical_or(x < 0, x > 1))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        if bool(xp.any(xp.logical_or(t < 0, t > 1))):
            raise RuntimeError("all elements of target should be between 0 and 1")
    return apply(OPS["binary_cross_entropy"], [input, target, weight], {"reduction": reduction})


def _broadcast_shape(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _infer_size_error(a, b):
    """PyTorch's _infer_size message for ``a`` that does not broadcast to ``b``."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i in reversed(range(n)):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return (f"Attempting to broadcast a dimension of length {pa[i]} at {i - n}! Mismatching argument at "
                    f"index 1 had torch.Size([{', '.join(map(str, a))}]); but expected shape should be "
                    f"broadcastable to [{', '.join(map(str, b))}]")
    return f"shape {list(a)} does not broadcast to {list(b)}"


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Sigmoid and binary cross-entropy in one stable step (BinaryCrossEntropyWithLogitsBackward0).

    ``pos_weight`` scales the positive term (one value per class, broadcast over the last
    dim); ``weight`` scales each element's loss. Neither gets a gradient.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    _no_grad_arg(weight, "binary_cross_entropy_with_logits", "weight")
    _no_grad_arg(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    dt = _dtype.result_type([input, target])
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {_type_name(dt)} can't be cast to the desired output type "
                           f"{_type_name(target.dtype)}")
    for extra, first in ((pos_weight, True), (weight, False)):
        if extra is not None:
            E._broadcast_check(*((extra, input) if first else (input, extra)))
            out = _broadcast_shape(tuple(extra.shape), tuple(input.shape))
            if out != tuple(input.shape):
                raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                                   f"{list(out)}".replace(",", ", ").replace(",  ", ", "))
    input, target = input.to(dt), target.to(dt)
    weight = weight.to(dt) if weight is not None else None
    pos_weight = pos_weight.to(dt) if pos_weight is not None else None
    return apply(OPS["binary_cross_entropy_with_logits"], [input, target, weight, pos_weight],
                 {"reduction": reduction})


# ---- l1_loss, smooth_l1_loss, huber_loss -------------------------------------------------------------
def _shapes(input, target):
    """PyTorch's warning for mismatched sizes, then both broadcast to one shape (ExpandBackward0 where
    a tensor really grows, as torch.broadcast_tensors)."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)
        E._broadcast_check(input, target)
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
        if tuple(input.shape) != shape:
            input = E.expand(input, shape)
        if tuple(target.shape) != shape:
            target = E.expand(target, shape)
    return input, target


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
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp)
        input, target = autocast_slot.cast("l1_loss", [input, target])
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
    attrs = {"delta": delta}
    if target.dtype is not input.dtype and input.dtype.is_floating_point:
        # PyTorch writes the loss in the input's dtype, and its backward kernel refuses the pair
        attrs["refusal"] = f"Found dtype {_type_name(target.dtype)} but expected {_type_name(input.dtype)}"
        target = target.to(input.dtype)
    input, target = _shapes(input, target)
    if weight is None:
        reduction = _reduction(None, None, reduction)
        return apply(OPS["huber_loss"], [input, target], {"reduction": REDUCTION_ENUM[reduction], **attrs})
    loss = apply(OPS["huber_loss"], [input, target], {"reduction": 0, **attrs})
    return _weighted(loss, weight, input, reduction, False)


# ---- what margin_loss.py and likelihood_loss.py compose their losses from ---------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return E.mean(loss)
    return E.sum(loss) if reduction == "sum" else loss


def _add_number(t, k):
    """``t + k`` for a Python number, as PyTorch's C++ code adds a scalar (AddBackward1, one edge)."""
    return apply(OPS["add_number"], [t], {"other": float(k)})


def _sub_number(t, k):
    """``t - k`` for a Python number (SubBackward1, one edge)."""
    return apply(OPS["sub_number"], [t], {"other": float(k)})


def _clamp_min0(t):
    """``clamp_min(t, 0)`` (ClampMinBackward0)."""
    return apply(OPS["clamp"], [t], {"min": 0.0, "max": None}, node_name="ClampMinBackward0")


def _enum_of(reduction):
    return REDUCTION_ENUM[reduction]


def _long_name(dt):
    return _dtype.SHORT_NAMES[dt.name]
