"""``F.gumbel_softmax``: a differentiable sample from a categorical distribution given by logits."""
from __future__ import annotations

import warnings

import numpy as np

from .. import functional as E
from ..backend.gaps import from_numpy
from ..core.tensor import Tensor
from ..random import generator_for


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g`` drawn from the device's generator.

    ``hard=True`` returns the one-hot of the argmax in the forward pass while the gradient is the soft
    sample's (straight-through: ``y_hard - y_soft.detach() + y_soft``).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    u = generator_for(logits.device).uniform(tuple(logits.shape), "float64")
    noise = -np.log(-np.log1p(-u))                      # -log(Exp(1)) ~ Gumbel(0, 1)
    npdt = "float64" if logits.dtype is E.float64 else "float32"
    gumbels = Tensor._wrap(from_numpy(logits._storage.xp, noise.astype(npdt)))
    from .functional import softmax
    y_soft = softmax(E.div(E.add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    index = E.max(y_soft, dim, keepdim=True)[1]
    y_hard = E.zeros_like(logits).scatter_(dim, index, 1.0)
    return E.add(E.sub(y_hard, y_soft.detach()), y_soft)


__all__ = ["gumbel_softmax"]
