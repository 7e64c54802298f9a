"""``roll``, ``unique``, ``scatter``/``scatter_``, ``std_mean``, ``var_mean`` and the draws ``normal``,
``bernoulli``, ``multinomial`` (rows in engine/ops/tensor_ops.py)."""
from __future__ import annotations

import builtins

import numpy as np

from .backend import dtypes as _dtype
from .core.dispatch import apply
from .core.tensor import Tensor, _wrap_dim
from .derivatives import OPS
from .random import generator_for


def roll(input, shifts, dims=None):
    """Shift elements along ``dims`` (wrapping round); without ``dims`` the flattened tensor is rolled."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        dims = ()
    else:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    return apply(OPS["roll"], [input], {"shifts": shifts, "dims": dims})


# NOTE [ Scatter ]
# 1. ``out[..., index[i], ...] = src[i]`` along ``dim``: element i of ``index`` (any position,
#    same rank as self) names where along ``dim`` the value at i goes; the other coordinates
#    are i's own. ``index`` may be smaller than self and src off ``dim``.
# 2. Backward: self's gradient is zero where something was written (ScatterBackward0/1 keep
#    ``index``); src's is the gradient read back at those places (a gather).
# 3. Repeated targets: the last write wins on NumPy; PyTorch leaves the order unspecified.
def _scatter_checks(self, dim, index, src):
    d = _wrap_dim(dim, self.ndim)
    if index.dtype is not _dtype.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    if index.ndim != self.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    ishape, sshape = list(index.shape), list(self.shape)
    bad = any(ishape[k] > sshape[k] for k in range(self.ndim) if k != d)
    if src is not None and (bad or any(ishape[k] > src.shape[k] for k in range(self.ndim))):
        raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} apart from dimension {d} and "
                           f"to be no larger size than src {list(src.shape)}")
    if bad:
        raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} apart from dimension {d}")
    if index.numel():
        host = index.detach().numpy(force=True)
        out = host[(host < 0) | (host >= self.shape[d])]
        if out.size:
            raise RuntimeError(f"index {int(out.flat[0])} is out of bounds for dimension {d} with size {self.shape[d]}")
    return d


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """Write ``src`` (a tensor) or ``value`` (a number) into a copy of ``input`` at ``index`` along
    ``dim`` (NOTE [ Scatter ])."""
    return _scatter(input, dim, index, src, value, reduce, False)


def _scatter(input, dim, index, src, value, reduce, inplace):
    if reduce is not None:
        raise NotImplementedError("glassgrad's scatter does not support reduce; use scatter_add or index_put")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    d = _scatter_checks(input, dim, index, src)
    target = input if inplace else None
    if src is not None:
        return apply(OPS["scatter"], [input, index, src], {"dim": d}, inplace=target)
    return apply(OPS["scatter_value"], [input, index], {"dim": d, "value": value}, inplace=target)


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    return _scatter(self, dim, index, src, value, reduce, True)


def _mean(input, dim, keepdim):
    from .functional import mean
    return mean(input, dim, keepdim) if dim is not None else (mean(input) if not keepdim else
                                                               mean(input, tuple(range(input.ndim)), True))


def _moments(name, input, dim, unbiased, keepdim, correction):
    from .derivatives import OPS
    from .functional import _spread_attrs
    from .core.dispatch import apply_multi
    from .ops.moments import OUTPUTS
    return apply_multi(OPS[name], [input], _spread_attrs(name[:3], input, dim, unbiased, keepdim, correction,
                                                         stacklevel=4), OUTPUTS)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``: one StdMeanBackward0 node for both, as PyTorch."""
    return _moments("std_mean", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``: one VarMeanBackward0 node for both, as PyTorch."""
    return _moments("var_mean", input, dim, unbiased, keepdim, correction)


# ---- draws on glassgrad's generator (engine/random.py) ---------------------------------------------
def _host(t):
    return t.detach().numpy(force=True)


def _wrap(host, like_device, dtype):
    from ._factories import tensor
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
        from ._factories import randn
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
        from .functional import _broadcast_check
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
    return apply(OPS[name], inputs)


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
        return apply(OPS["bernoulli"], [input, sample])
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
    from ._factories import tensor
    return tensor(out.reshape(tuple(input.shape[:-1]) + (num_samples,)), dtype=_dtype.int64, device=input.device)


__all__ = ["roll", "scatter", "std_mean", "var_mean", "normal", "bernoulli", "multinomial"]


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values (rows along ``dim``) in ascending order; optionally each element's index into them
    and how often each occurs. Always sorted, as PyTorch's CPU kernel is; Unique2Backward0 refuses backward."""
    if dim is not None:
        dim = _wrap_dim(dim, input.ndim)
    vals, aux = apply(OPS["unique"], [input], {"dim": dim}, return_aux=True)
    out = (vals,) + ((aux["inverse"],) if return_inverse else ()) + ((aux["counts"],) if return_counts else ())
    return out[0] if len(out) == 1 else out
