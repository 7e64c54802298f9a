"""smooth_l1_loss and huber_loss for the op table (SmoothL1LossBackward0, HuberLossBackward0).

Both keep ``self`` and ``target`` and, as PyTorch's nodes show it, ``reduction`` as its enum:
0 none, 1 mean, 2 sum. Input and target arrive with one shape (F.* broadcasts them first).
"""
from __future__ import annotations

from ..derivatives import op

REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _reduced(xp, loss, reduction):
    if reduction == 0:
        return loss
    return xp.sum(loss) if reduction == 2 else xp.mean(loss)


def _smooth_l1_fwd(xp, a, b, reduction=1, beta=1.0):
    d = a - b
    ad = xp.abs(d)
    return _reduced(xp, xp.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta), reduction)


def _huber_fwd(xp, a, b, reduction=1, delta=1.0):
    d = a - b
    ad = xp.abs(d)
    return _reduced(xp, xp.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta), reduction)


def _piecewise_bwd(F, g, s, edge, inner, outer):
    """d loss / d self: ``inner * d`` inside ``|d| < edge``, ``outer * sign(d)`` outside."""
    d = s.self - s.target
    if s.reduction == 1:
        n = 1
        for k in s.shapes[0]:
            n *= k
        g = g * (1.0 / n)
    gi = F.where(F.lt(d, -edge), -outer * g, F.where(F.gt(d, edge), outer * g, g * d * inner))
    return (gi if s.needs[0] else None, -gi if s.needs[1] else None)


op("smooth_l1_loss", "SmoothL1LossBackward0", ("self", "target"), _smooth_l1_fwd,
   lambda F, g, s: _piecewise_bwd(F, g, s, s.beta, 1.0 / s.beta, 1.0), save={"self": (), "target": ()})
op("huber_loss", "HuberLossBackward0", ("self", "target"), _huber_fwd,
   lambda F, g, s: _piecewise_bwd(F, g, s, s.delta, 1.0, s.delta), save={"self": (), "target": ()})
