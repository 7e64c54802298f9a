"""``F.l1_loss``, ``F.smooth_l1_loss``, ``F.huber_loss`` and the embedding, ranking, margin and
likelihood losses (``kl_div`` ... ``gaussian_nll_loss``); rows in engine/ops/loss.py, the rest composed
from ops as PyTorch composes them (so the graph shows PyTorch's nodes)."""
from __future__ import annotations

import math
import warnings

from ..backend import dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..core import grad_mode
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


def _no_grad_arg(t, fn, name):
    from .functional import _no_grad_arg as check
    check(t, fn, name)


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




# ---- kl_div, margin/embedding/triplet losses, poisson/gaussian NLL, margin classification losses -----------
_KL_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the support size."
                    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


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
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log target - input)`` (input holds log-probabilities; ``log_target``: so does target).
    'batchmean' divides the sum by the batch size; 'mean' (by every element) warns, as in PyTorch."""
    if size_average is not None or reduce is not None:
        red = _reduction(size_average, reduce, "mean")
    else:
        if reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, UserWarning, stacklevel=2)
        red = "sum" if reduction == "batchmean" else _reduction(None, None, reduction)
    E._broadcast_check(target, input)
    if log_target:
        out = E.mul(E.exp(target), E.sub(target, input))
    else:       # xlogy(target, target): 0 where target is 0
        zero = E.eq(target, 0)
        tlogt = E.where(zero, 0.0, E.mul(target, E.log(E.where(zero, 1.0, target))))
        out = E.sub(tlogt, E.mul(target, input))
    out = _reduce(out, red)
    if reduction == "batchmean" and input.ndim != 0:
        out = E.div(out, input.shape[0])
    return out


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: target 1 wants input1 ranked higher, -1 lower."""
    red = _reduction(size_average, reduce, reduction)
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
    from .distance import pairwise_distance
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
        from .distance import pairwise_distance as distance_function
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = E.minimum(d_neg, distance_function(positive, negative))
    return _reduce(_clamp_min0(E.sub(E.add(d_pos, margin), d_neg)), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """``exp(input) - target * input`` (``log_input``), else ``input - target * log(input + eps)``;
    ``full`` adds Stirling's term where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = E.sub(E.exp(input), E.mul(target, input))
    else:
        loss = E.sub(input, E.mul(target, E.log(_add_number(input, eps))))
    if full:
        stirling = E.add(E.sub(E.mul(target, E.log(target)), target),
                         E.mul(E.log(E.mul(target, 2 * math.pi)), 0.5))
        loss = E.add(loss, E.masked_fill(stirling, E.le(target, 1), 0.0))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 (log var + (input - target)^2 / var)``, var clamped below at ``eps`` (outside the graph);
    ``var`` is one per element, one per row (last dim 1 or missing), or a float."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = E.mul(E.ones_like(input), float(var))
    elif bool(E.any(E.lt(var, 0)).item()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = E.unsqueeze(var, -1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass    # one variance for the dimension of size 1 (heteroscedastic)
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = E.clone(var)
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    diff = E.sub(input, target)
    loss = E.mul(E.add(E.log(var), E.div(E.pow(diff, 2), var)), 0.5)
    if full:
        loss = E.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


def _logsigmoid(x):
    if "log_sigmoid" in OPS:
        return apply(OPS["log_sigmoid"], [x])
    from .activation_fns import softplus
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
    from ..backend import gaps as _backend
    return _backend.to_numpy(t._storage.xp, t._data)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge: ``sum_{j != y} max(0, margin - x[y] + x[j])^p / C`` per sample (``weight[y]``
    scales it). NOTE [ Margin losses ] in engine/ops/loss.py."""
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
    one, ``sum max(0, 1 - x[t] + x[j]) / C`` per sample. NOTE [ Margin losses ] in engine/ops/loss.py."""
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
        import numpy as np
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
        import numpy as np
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
        input = E.expand(input, shape) if tuple(input.shape) != shape else input
        target = E.expand(target, shape) if tuple(target.shape) != shape else target
    return apply(OPS["soft_margin_loss"], [input, target], {"reduction": _enum_of(red)})


__all__ = ["l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
           "soft_margin_loss"]
