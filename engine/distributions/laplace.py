"""Laplace(loc, scale)."""
from __future__ import annotations

from .. import functional as E
from ..backend.size import Size
from .loc_scale import LocScale
from .utils import eps

__all__ = ["Laplace"]


class Laplace(LocScale):
    """Density ``exp(-|x - loc| / scale) / (2 scale)``; ``rsample`` inverts the cdf."""

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
