"""Gamma(concentration, rate), with implicitly reparameterized samples.

NOTE [ Implicit reparameterization of Gamma ]
  1. A Gamma(a, 1) draw x is made by NumPy (rejection sampling), so there is no formula x = g(a, noise) to
     differentiate. Instead hold the draw's quantile u = P(a, x) fixed (P: the regularized lower incomplete
     gamma function, the cdf): then dx/da = -(dP/da) / (dP/dx), and dP/dx is the density.
  2. dP/da comes from the series P(a, x) = sum_n exp((a+n) log x - x - lgamma(a+n+1)), differentiated term by
     term: each term times (log x - digamma(a+n+1)). The series runs until its terms stop mattering.
  3. ``rsample`` returns ``StandardGamma(a) / rate``: the division is an engine op, so the rate's gradient
     is the usual one; the concentration's comes from rule 1.
"""
from __future__ import annotations

import numpy as np

from .. import functional as E
from ..backend.size import Size
from ..autograd import Function
from . import constraints
from .distribution import Distribution
from .utils import _back, _host, _lgamma_host, broadcast_all, digamma, digamma_host, host_generator, lgamma, tiny

__all__ = ["Gamma"]


def _gammainc_series(a, x):
    """P(a, x) and dP/da by the series of NOTE [ Implicit reparameterization of Gamma ] rule 2 (float64)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    zero = x <= 0
    x = np.where(zero, 1.0, x)
    logx = np.log(x)
    total, dtotal = np.zeros_like(x), np.zeros_like(x)
    top = float(np.max(x)) if x.size else 0.0
    for n in range(int(top + 12 * np.sqrt(top + 1)) + 60):
        term = np.exp((a + n) * logx - x - _lgamma_host(a + n + 1))
        total = total + term
        dtotal = dtotal + term * (logx - digamma_host(a + n + 1))
        if n > top and np.all(term <= 1e-17 * np.maximum(total, 1e-300)):
            break
    return np.where(zero, 0.0, np.minimum(total, 1.0)), np.where(zero, 0.0, dtotal)


def standard_gamma_grad_host(a, x):
    """dx/da for x ~ Gamma(a, 1) at a fixed quantile (NOTE [ Implicit reparameterization of Gamma ])."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    _, dP_da = _gammainc_series(a, x)
    log_pdf = (a - 1) * np.log(x) - x - _lgamma_host(a)
    return -dP_da / np.exp(log_pdf)


class Igamma(Function):
    """The regularized lower incomplete gamma function P(a, x), differentiable in both arguments."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return _back(_gammainc_series(_host(a), _host(x))[0], x)

    @staticmethod
    def backward(ctx, g):
        a_t, x_t = ctx.saved_tensors
        a, x = np.broadcast_arrays(_host(a_t), _host(x_t))
        _, dP_da = _gammainc_series(a, x)
        pdf = np.where(x > 0, np.exp((a - 1) * np.log(np.where(x > 0, x, 1.0)) - x - _lgamma_host(a)), 0.0)
        ga = _reduce_to(g * _back(dP_da, g), tuple(a_t.shape)) if ctx.needs_input_grad[0] else None
        gx = _reduce_to(g * _back(pdf, g), tuple(x_t.shape)) if ctx.needs_input_grad[1] else None
        return ga, gx


def _reduce_to(g, shape):
    """Sum a broadcast gradient back to an input's shape."""
    while g.dim() > len(shape):
        g = g.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdim=True)
    return g


class StandardGamma(Function):
    """A Gamma(concentration, 1) draw whose gradient to concentration is the implicit one; it keeps the
    concentration and the draw, as PyTorch's StandardGammaBackward0."""

    @staticmethod
    def forward(ctx, concentration):
        a = _host(concentration)
        x = host_generator(concentration.device).standard_gamma(a)
        x = np.maximum(x, tiny(concentration.dtype))   # PyTorch clamps draws to the smallest normal number
        out = _back(x, concentration)
        ctx.save_for_backward(concentration, out)
        return out

    @staticmethod
    def backward(ctx, g):
        concentration, out = ctx.saved_tensors
        return g * _back(standard_gamma_grad_host(_host(concentration), _host(out)), g)


def standard_gamma(concentration):
    return StandardGamma.apply(concentration)


class Gamma(Distribution):
    """Density ``rate**c x**(c-1) exp(-rate x) / Gamma(c)`` on x >= 0; ``rsample`` is differentiable in
    both parameters (NOTE [ Implicit reparameterization of Gamma ])."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration, new.rate = self.concentration.expand(batch_shape), self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return E.xlogy(c, r) + E.xlogy(c - 1, value) - r * value - lgamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, x = broadcast_all(self.concentration, self.rate * value)
        return Igamma.apply(a, x)

    def entropy(self):
        c = self.concentration
        return c - E.log(self.rate) + lgamma(c) + (1.0 - c) * digamma(c)
