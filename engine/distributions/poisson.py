"""Poisson(rate): counts 0, 1, 2, ..."""
from __future__ import annotations

from .. import functional as E
from ..backend.size import Size
from . import constraints
from .distribution import Distribution
from .utils import _back, _host, broadcast_all, host_generator, lgamma

__all__ = ["Poisson"]


class Poisson(Distribution):
    """P(k) = rate**k exp(-rate) / k!; draws are float counts, as PyTorch's (no rsample)."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        rate = self.rate.detach().expand(shape)
        return _back(host_generator(rate.device).poisson(_host(rate)).astype("float64"), rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return E.xlogy(value, self.rate) - self.rate - lgamma(value + 1)
