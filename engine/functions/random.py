"""torch.*'s random draws on glassgrad's generator (engine/random.py): ``normal``, ``bernoulli`` and
``poisson`` (rows in engine/ops/random.py: a zero gradient, as PyTorch's), ``multinomial``, ``randint_like``,
and the random in-place fills ``random_``, ``exponential_``, ``geometric_``, ``cauchy_``, ``log_normal_``.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from ..backend import dtypes as _dtype
from ..backend.gaps import from_numpy
from .factories import empty, randn, tensor
from ..core import grad_mode
from ..core.dispatch import apply
from ..core.operators import _broadcast_check
from ..core.inplace import bump_version
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from ..random import generator_for
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor, host as _host


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}[dt.name]


def _num(v) -> str:
    """A number as PyTorch's C++ messages print it (-1, 0.5, 1e+10)."""
    return f"{builtins.float(v):g}"


# ---- draws on glassgrad's generator (engine/random.py) ---------------------------------------------


def _wrap(host, like_device, dtype):
    return tensor(host, dtype=dtype, device=like_device)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Draws from N(mean, std): ``mean`` and/or ``std`` tensors (broadcast together), or two numbers
    and a ``size``. The gradient to ``mean``/``std`` is zero, as PyTorch's."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected (float mean, float std, tuple of ints size)")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        z = randn(*((size,) if isinstance(size, int) else tuple(size)), dtype=dtype, device=device,
                  generator=generator)
        out = z * std + mean
        return out.requires_grad_(requires_grad) if requires_grad else out
    like = mean if mt else std
    if st and std.numel() and float(_host(std).min()) < 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not st and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if mt and st:
        _broadcast_check(mean, std)
    shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in (mean, std) if isinstance(t, Tensor))))
    gen = generator or generator_for(like.device)
    np_dt = "float64" if like.dtype is _dtype.float64 else "float32"
    m = _host(mean) if mt else mean
    s = _host(std) if st else std
    draw = (gen.normal(shape, np_dt) * s + m).astype(np_dt)
    sample = _wrap(draw, like.device, like.dtype)
    name = "normal_both" if (mt and st) else ("normal_mean" if mt else "normal_std")
    inputs = [t for t in (mean, std) if isinstance(t, Tensor)] + [sample]
    return apply(_O[name], inputs)


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``), else 0, per element; the dtype is input's.
    BernoulliBackward0 (a zero gradient) when ``input`` requires grad."""
    probs = _host(input) if p is None else np.full(tuple(input.shape), float(p))
    if probs.size and (probs.min() < 0 or probs.max() > 1 or np.isnan(probs).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    gen = generator or generator_for(input.device)
    draw = gen.uniform(tuple(input.shape), "float64") < probs
    dt = input.dtype
    sample = _wrap(draw.astype("float64" if dt is _dtype.float64 else ("float32" if dt.is_floating_point else
                                                                         "int64")), input.device, dt)
    if p is None and input.requires_grad:
        return apply(_O["bernoulli"], [input, sample])
    return sample


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` int64 class indices per row of (unnormalised) probabilities ``input``."""
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    p = _host(input).astype("float64")
    rows = p.reshape(-1, p.shape[-1])
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(axis=1)
    if (sums <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = generator or generator_for(input.device)
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for r in range(rows.shape[0]):
        w = rows[r] / sums[r]
        if replacement:
            u = gen.uniform((num_samples,), "float64")
            out[r] = np.minimum(np.searchsorted(np.cumsum(w), u, side="right"), len(w) - 1)
        else:   # draw one at a time, removing each class drawn (PyTorch's sampling without replacement)
            w = w.copy()
            for k in range(num_samples):
                u = gen.uniform((1,), "float64")[0] * w.sum()
                c = builtins.min(int(np.searchsorted(np.cumsum(w), u, side="right")), len(w) - 1)
                while w[c] == 0:   # a rounding edge: step back to a class still in the draw
                    c -= 1
                out[r, k] = c
                w[c] = 0.0
    return tensor(out.reshape(tuple(input.shape[:-1]) + (num_samples,)), dtype=_dtype.int64, device=input.device)


# ---- random fills ---------------------------------------------------------------------------------
_MANTISSA = {"float32": 24, "float64": 53}


def _fill(self, host, opname):
    """Write host draws (float64 or int64) into ``self`` in place, as the other random fills do."""
    if grad_mode.is_grad_enabled() and self.is_leaf and self.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    npdt = "bool" if self.dtype is _dtype.bool_ else self.dtype.name
    self._data[...] = from_numpy(self._storage.xp, np.ascontiguousarray(host.astype(npdt)))
    bump_version(self, opname)
    return self


def _gen(self, generator):
    return generator or generator_for(self.device)


def _random_bounds(dt, low, high):
    """PyTorch's checks for random_(from, to) into dtype ``dt``; returns [low, high)."""
    if high is None:
        top = {"bool": 2, "int64": 2 ** 63}.get(dt.name) or 2 ** _MANTISSA[dt.name] + 1
        low, high = (0, top) if low is None else (low, top)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt is _dtype.bool_ and (low < 0 or high - 1 > 1):
        raise RuntimeError(f"{'from' if low < 0 else 'to - 1'} is out of bounds for bool")
    if dt.is_floating_point:
        k = _MANTISSA[dt.name]
        for what, v in (("from", low), ("to - 1", high - 1)):
            if not -(2 ** k) <= v <= 2 ** k:
                warnings.warn(f"{what} is out of bounds [-(2^{k}), 2^{k}]. Due to precision limitations {_cname(dt)} "
                              "can support discrete uniform distribution only within this range. This warning will "
                              "become an error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=3)
    return low, high


def _random_(self, *args, generator=None, **kw):
    """Integers drawn uniformly from [from, to) (``random_(to)``: [0, to); ``random_()``: [0, 2^mantissa]
    for floats, [0, 2^63 - 1] for int64, {0, 1} for bool)."""
    if len(args) == 1 and "to" not in kw:
        from_, to = 0, args[0]          # random_(to)
    else:
        from_, to = (list(args) + [None, None])[:2]
        from_, to = kw.get("from", from_), kw.get("to", to)
        if from_ is None and to is not None:
            from_ = 0
    low, high = _random_bounds(self.dtype, from_, to)
    return _fill(self, _gen(self, generator).integers(low, high, tuple(self.shape)), "random_")


def _continuous_only(self, dist, how):
    if not self.dtype.is_floating_point:
        name = _short(self.dtype) if how == "short" else _cname(self.dtype)
        raise RuntimeError(f"{dist} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {name}")


def _uniform_host(self, generator):
    return _gen(self, generator).uniform(tuple(self.shape), "float64")


def _exponential_(self, lambd=1.0, *, generator=None):
    """Exponential draws with rate ``lambd``: ``-log(1 - u) / lambd``."""
    _continuous_only(self, "Exponential", "short")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _fill(self, -np.log1p(-_uniform_host(self, generator)) / lambd, "exponential_")


def _geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...): ``ceil(log(1 - u) / log(1 - p))``."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    u = _uniform_host(self, generator)
    return _fill(self, np.maximum(np.ceil(np.log1p(-u) / np.log1p(-p)), 1.0), "geometric_")


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Cauchy draws: ``median + sigma tan(pi (u - 1/2))``."""
    _continuous_only(self, "Cauchy", "c")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    return _fill(self, median + sigma * np.tan(np.pi * (_uniform_host(self, generator) - 0.5)), "cauchy_")


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """``exp`` of Normal(mean, std) draws."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{_short(self.dtype)}'")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    z = _gen(self, generator).normal(tuple(self.shape), "float64")
    return _fill(self, np.exp(mean + std * z), "log_normal_")


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """A tensor shaped like ``input`` of integers in [low, high) (``randint_like(input, high)``: [0, high))."""
    _need_tensor("randint_like", input)
    if high is None:
        low, high = 0, low
    out = empty(tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device)
    _random_(out, low, high)
    if requires_grad:
        out.requires_grad_(True)
    return out


def poisson(input, generator=None):
    """Poisson draws with the rates in ``input`` (floats, non-negative). PoissonBackward0 gives a zero
    gradient, as PyTorch."""
    _need_tensor("poisson", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_short(input.dtype)}'")
    rates = input.detach().numpy(force=True).astype(np.float64)
    if np.isnan(rates).any() or (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    finite = np.isfinite(rates)
    draws = np.full(rates.shape, np.inf)
    gen = _gen(input, generator)
    draws[finite] = gen._np.poisson(rates[finite])
    sample = tensor(draws, dtype=input.dtype, device=input.device)
    return apply(_O["poisson"], [input, sample])


__all__ = ["normal", "bernoulli", "multinomial", "randint_like", "poisson"]
