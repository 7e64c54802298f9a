"""``F.ctc_loss`` and ``CTCLoss``: the connectionist temporal classification loss (NOTE [ CTC loss ] in
engine/ops/ctc.py)."""
from __future__ import annotations

import math

from ..backend import dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..derivatives import OPS
from .loss import _Loss

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


class CTCLoss(_Loss):
    """The CTC loss of (T, N, C) log-probabilities against unaligned target sequences."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)


__all__ = ["ctc_loss", "CTCLoss"]
