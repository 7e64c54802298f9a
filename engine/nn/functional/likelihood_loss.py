"""The losses of a distribution or a likelihood: ``F.kl_div``, ``F.poisson_nll_loss``,
``F.gaussian_nll_loss`` and ``F.ctc_loss``, the connectionist temporal classification loss
(NOTE [ CTC loss ] in engine/ops/nn/ctc.py)."""
from __future__ import annotations

import math
import warnings

from ...backend import dtypes as _dtype
from ...backend.low_precision import autocast_slot
from ... import functional as E
from ...core import grad_mode
from ...core.dispatch import apply
from ...core.table import OPS
from .loss import _add_number, _reduce, _reduction

_KL_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the support size."
                    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log target - input)`` (input holds log-probabilities; ``log_target``: so does target).
    'batchmean' divides the sum by the batch size; 'mean' (by every element) warns, as in PyTorch."""
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp)
        input, target = autocast_slot.cast("kl_div", [input, target])
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


# ---- ctc_loss: the connectionist temporal classification loss -----------------------------------------
_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _ints(v):
    if isinstance(v, E.Tensor):
        return [int(x) for x in v.reshape(-1).tolist()]
    if isinstance(v, int):
        return [v]
    return [int(x) for x in v]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The negative log-likelihood of each target sequence under all its alignments to ``log_probs``
    ((T, N, C) log-softmax outputs, or (T, C) for one sample). ``targets`` is (N, S) padded or the targets
    concatenated; ``reduction="mean"`` divides each loss by its target length, then averages."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = E.unsqueeze(log_probs, 1)
        targets = E.unsqueeze(targets, 0) if targets.ndim == 1 else targets
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss expects log_probs of 2 or 3 dimensions (T, N, C), got {log_probs.ndim}")
    t_max, n, c = log_probs.shape
    ins, tgs = _ints(input_lengths), _ints(target_lengths)
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(ins) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tgs) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.dtype.is_floating_point:
        targets = targets.to(_dtype.int64)
    if targets.ndim == 1:
        if targets.shape[0] != sum(tgs):
            raise RuntimeError(f"Expected tensor to have size {sum(tgs)} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' {_WHERE}")
    elif tgs and targets.shape[1] < max(tgs):
        raise RuntimeError(f"Expected tensor to have size at least {max(tgs)} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets' {_WHERE}")
    for v in ins:
        if v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {v} {_WHERE}")
    if not log_probs.dtype.is_floating_point:
        raise RuntimeError(f"ctc_loss takes floating point log_probs, not {log_probs.dtype}")
    res = apply(OPS["ctc_loss"], [log_probs, targets],
                {"input_lengths": tuple(ins), "target_lengths": tuple(tgs), "blank": int(blank),
                 "zero_infinity": bool(zero_infinity)})
    if zero_infinity:
        res = E.where(res == math.inf, E.zeros((), dtype=res.dtype, device=res.device), res)
    if reduction == "mean":
        lengths = E.clamp_min(E.tensor(tgs, dtype=res.dtype, device=res.device), 1)
        return E.mean(res / lengths)
    if reduction == "sum":
        return E.sum(res)
    return E.squeeze(res, 0) if unbatched else res
