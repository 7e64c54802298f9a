"""Laplace(loc, scale)."""
from __future__ import annotations

from .. import functional as E
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, eps

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Density ``exp(-|x - loc| / scale) / (2 scale)``; ``rsample`` inverts the cdf."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        e = eps(self.loc.dtype)
        u = E.rand(*shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - e) + (e - 1)   # in (-1, 1)
        return self.loc - self.scale * u.sign() * E.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -E.log(2 * self.scale) - E.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * E.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * E.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + E.log(2 * self.scale)
