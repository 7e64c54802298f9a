"""Dirichlet(concentration): points on the probability simplex."""
from __future__ import annotations

from .. import functional as E
from ..backend.size import Size
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma
from .utils import digamma, lgamma, tiny

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """A probability vector of length K (``event_shape == (K,)``); ``rsample`` normalises K Gamma draws,
    differentiable through their implicit gradients (NOTE [ Implicit reparameterization of Gamma ])."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        g = standard_gamma(self.concentration.expand(shape))
        x = g / g.sum(-1, keepdim=True)
        e = tiny(x.dtype)
        return x.clamp(min=e, max=1 - e)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return E.xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c_m1 = (self.concentration - 1).clamp(min=0.0)
        mode = c_m1 / c_m1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1).unsqueeze(-1)
        one_hot = F.one_hot(self.concentration.argmax(-1), self.concentration.shape[-1]).to(mode.dtype)
        return E.where(mask, one_hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)
