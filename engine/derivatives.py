"""The op table: each op's forward kernel, what it saves, and its backward formula.

In the spirit of PyTorch's derivatives.yaml: one entry per differentiable op, naming
the grad_fn PyTorch would show, the tensors it saves (and for which input gradients),
and ``bwd(F, grad, saved)`` returning one gradient per argument. Kernels call only
``xp.*`` (the array API); formulas call only ``F.*`` (NOTE [ One formula, two
currencies ] in core/fns.py). Everything not in this table is composed from it.
"""
from __future__ import annotations

import math

import numpy as np

from .backend import gaps as _backend
from .core.table import OPS, SLOT as _SLOT, op  # noqa: F401
from .core.primitives import *  # noqa: F401,F403
from .core.primitives import (_clone_fwd, _count, _dof_inverse, _inverse, _inverse_count,  # noqa: F401
                              _keep, _mean_fwd, _rebuild_index, _var_fwd)

_ndarray = np.ndarray

# ---- neural-network ops --------------------------------------------------------------------
def _softmax_fwd(xp, a, dim):
    e = xp.exp(a - xp.max(a, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_fwd(xp, a, dim):
    if type(a) is _ndarray:       # the same values, two temporaries and the wrappers fewer
        sh = a - np.maximum.reduce(a, axis=dim, keepdims=True)
        lse = np.add.reduce(np.exp(sh), axis=dim, keepdims=True)
        np.log(lse, out=lse)
        sh -= lse
        return sh
    sh = a - xp.max(a, axis=dim, keepdims=True)
    return sh - xp.log(xp.sum(xp.exp(sh), axis=dim, keepdims=True))


op("softmax", "SoftmaxBackward0", ("self",), _softmax_fwd,
   lambda F, g, s: (s.result * (g - F.sum(g * s.result, axis=s.dim, keepdims=True)),),
   save={"result": ()}, float_op=True)
op("log_softmax", "LogSoftmaxBackward0", ("self",), _log_softmax_fwd,
   lambda F, g, s: (g - F.exp(s.result) * F.sum(g, axis=s.dim, keepdims=True),),
   save={"result": ()}, float_op=True)


def _ln_fwd(xp, x, weight, bias, normalized_shape, eps):
    axes = tuple(range(len(x.shape) - len(normalized_shape), len(x.shape)))
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    rstd = 1.0 / xp.sqrt(var + eps)
    out = d * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, {"result1": mean, "result2": rstd}  # PyTorch's names for mean and rstd


def _ln_bwd(F, g, s):
    x, w = s.input, s.weight
    k = len(s.normalized_shape)
    shape = s.shapes[0]
    axes = tuple(range(len(shape) - k, len(shape)))
    n = _count(shape, axes)
    mean, rstd = s.result1, s.result2
    if F.differentiable:  # create_graph: mean and rstd depend on x, so rebuild them from it
        mean = F.sum(x, axis=axes, keepdims=True) * (1.0 / n)
        rstd = 1.0 / F.sqrt(F.sum((x - mean) * (x - mean), axis=axes, keepdims=True) * (1.0 / n) + s.eps)
    xhat = (x - mean) * rstd
    gx = None
    if s.needs[0]:
        gxhat = g * w if w is not None else g
        m1 = F.sum(gxhat, axis=axes, keepdims=True) * (1.0 / n)
        m2 = F.sum(gxhat * xhat, axis=axes, keepdims=True) * (1.0 / n)
        gx = rstd * (gxhat - m1 - xhat * m2)
    gw = g * xhat if s.needs[1] else None
    gb = g if s.needs[2] else None
    return gx, gw, gb


op("layer_norm", "NativeLayerNormBackward0", ("input", "weight", "bias"), _ln_fwd, _ln_bwd,
   save={"bias": (), "input": (), "weight": (), "result1": (), "result2": ()}, aux=("result1", "result2"),
   promote=False)


def _native_dropout_fwd(xp, a, mask, p):
    return a * xp.astype(mask, a.dtype) * (1.0 / (1.0 - p)), {"mask": mask}


op("native_dropout", "NativeDropoutBackward0", ("self", "mask_in"), _native_dropout_fwd,
   lambda F, g, s: (g * F.astype(s.mask, F.dtype(g)) * (1.0 / (1.0 - s.p)), None),
   save={"mask": ()}, aux=("mask",), promote=False, nondiff=("mask_in",))


def _embedding_fwd(xp, indices, weight, padding_idx=None):
    flat = xp.reshape(indices, (-1,))
    out = xp.take(weight, flat, axis=0)
    return xp.reshape(out, tuple(indices.shape) + (weight.shape[1],))


def _embedding_bwd(F, g, s):
    num, dim = s.shapes[1]
    flat_idx = F.reshape(s.indices, (-1,))
    gflat = F.reshape(g, (-1, dim))
    if s.padding_idx is not None:
        gflat = F.where(F.expand_dims(F.eq(flat_idx, s.padding_idx), axis=1), 0.0, gflat)
    return None, F.scatter_add((num, dim), (flat_idx,), gflat, gflat)


op("embedding", "EmbeddingBackward0", ("indices", "weight"), _embedding_fwd, _embedding_bwd,
   save={"indices": ()}, promote=False, nondiff=("indices",))


def _nll_pick(xp, x, target, ignore_index, axis=-1):
    """(x at each target along the class ``axis``, 0 where the target is ignored; which targets count;
    the targets with ignored ones set to class 0): one gather, O(N), where a one-hot mask would be
    O(N * C)."""
    valid = target != ignore_index
    safe = xp.where(valid, target, xp.zeros_like(target))
    first = (Ellipsis, 0) if axis == -1 else (slice(None),) * axis + (0, Ellipsis)   # drop the gathered axis
    picked = xp.take_along_axis(x, xp.expand_dims(safe, axis=axis), axis=axis)[first]
    return xp.where(valid, picked, xp.zeros_like(picked)), valid, safe


def _nll_fwd(xp, x, target, reduction="mean", ignore_index=-100, axis=-1):
    if type(x) is _ndarray and x.ndim == 2 and axis == -1:
        picked, total = _np_nll_pick(x, target, ignore_index)
    else:
        picked, valid, _ = _nll_pick(xp, x, target, ignore_index, axis)
        total = xp.sum(xp.astype(valid, x.dtype))
    if reduction == "none":
        out = -picked
    elif reduction == "sum":
        out = -xp.sum(picked)
    else:
        out = -xp.sum(picked) / total
    return out, {"total_weight": total}


def _np_nll_pick(x, target, ignore_index):
    """``_nll_pick`` and the count of counted targets for a 2-D NumPy ``x``: one fancy index
    when no target is ignored (the usual case), the same values as the general form."""
    rows = np.arange(x.shape[0])
    valid = target != ignore_index
    if valid.all():
        return x[rows, target], np.asarray(x.shape[0], dtype=x.dtype)
    picked = np.zeros(x.shape[0], dtype=x.dtype)
    picked[valid] = x[rows[valid], target[valid]]
    return picked, np.sum(valid, dtype=x.dtype)


def _np_nll_bwd(g, s):
    """``_nll_bwd`` for 2-D NumPy input: ``-g`` (scaled as the reduction says) written at each
    counted target of zeros, instead of a one-hot mask; the same values."""
    shape, target = s.shapes[0], s.target
    if s.reduction == "mean":
        g = g / s.total_weight
    v = -g
    out = np.zeros(shape, dtype=v.dtype)
    rows = np.arange(shape[0])
    valid = target != s.ignore_index
    if valid.all():
        out[rows, target] = v
    else:
        out[rows[valid], target[valid]] = v[valid] if v.ndim else v
    return out


def _nll_grad_parts(F, g, s, axis=-1):
    """(the one-hot mask of counted targets along the class ``axis``, the incoming gradient spread
    per sample and scaled)."""
    shape = s.shapes[0]
    nd = len(shape)
    axis = axis % nd
    target = s.target
    hit = F.logical_and(F.eq(F.iota(shape[axis], axis, nd, g), F.expand_dims(target, axis=axis)),
                        F.expand_dims(F.logical_not(F.eq(target, s.ignore_index)), axis=axis))
    if s.reduction == "none":
        g = F.expand_dims(g, axis=axis)
    elif s.reduction == "mean":
        g = g / s.total_weight
    return hit, g


def _nll_bwd(F, g, s):
    if type(g) is _ndarray and not F.differentiable and len(s.shapes[0]) == 2:
        return _np_nll_bwd(g, s), None
    hit, g = _nll_grad_parts(F, g, s)
    return F.where(hit, -g, 0.0), None


op("nll_loss", "NllLossBackward0", ("self", "target"), _nll_fwd, _nll_bwd,
   save={"self": (), "target": (), "total_weight": ()}, aux=("total_weight",), promote=False, nondiff=("target",))
# (N, C, H, W) input, (N, H, W) targets: the class dim is 1 (F.nll_loss views other k-d input to this)
op("nll_loss2d", "NllLoss2DBackward0", ("self", "target"),
   lambda xp, x, target, reduction="mean", ignore_index=-100: _nll_fwd(xp, x, target, reduction, ignore_index, 1),
   lambda F, g, s: (lambda hit, g: (F.where(hit, -g, 0.0), None))(*_nll_grad_parts(F, g, s, 1)),
   save={"self": (), "target": (), "total_weight": ()}, aux=("total_weight",), promote=False, nondiff=("target",))


def _mse_fwd(xp, a, b, reduction="mean"):
    d = a - b
    sq = d * d
    if reduction == "none":
        return sq
    return xp.sum(sq) if reduction == "sum" else xp.mean(sq)


def _mse_bwd(F, g, s):
    d = s.self - s.target
    scale = 2.0 / _count(tuple(max(a, b) for a, b in zip(s.shapes[0], s.shapes[1])), None) \
        if s.reduction == "mean" else 2.0
    gi = g * d * scale
    return (gi if s.needs[0] else None, -gi if s.needs[1] else None)


op("mse_loss", "MseLossBackward0", ("self", "target"), _mse_fwd, _mse_bwd, save={"self": (), "target": ()})


def _reduce(xp, loss, reduction):
    if reduction == "none":
        return loss
    return xp.sum(loss) if reduction == "sum" else xp.mean(loss)


def _bce_logits_fwd(xp, x, t, weight=None, pos_weight=None, reduction="mean"):
    if pos_weight is None:
        # max(x, 0) - x t + log(1 + exp(-|x|)): stable for large |x|
        loss = xp.maximum(x, xp.zeros_like(x)) - x * t + xp.log1p(xp.exp(-xp.abs(x)))
    else:
        # PyTorch's form: (1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x)
        log_sig = xp.minimum(x, xp.zeros_like(x)) - xp.log1p(xp.exp(-xp.abs(x)))
        loss = (1.0 - t) * x - ((pos_weight - 1.0) * t + 1.0) * log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(xp, loss, reduction)


def _log_sigmoid(F, x):
    return F.where(F.lt(x, 0.0), x, 0.0) - F.log(1.0 + F.exp(-F.abs(x)))


def _bce_logits_bwd(F, g, s):
    x, t, w, pw = s.self, s.target, s.weight, s.pos_weight
    if s.reduction == "mean":
        shape = tuple(max(a, b) for a, b in zip(s.shapes[0], s.shapes[1]))
        g = g * (1.0 / _count(shape, None))
    if w is not None:
        g = g * w
    gx = gt = None
    if s.needs[0]:
        sig = 1.0 / (1.0 + F.exp(-x))
        if pw is None:
            gx = g * (sig - t)
        else:
            pt = pw * t
            gx = g * ((pt + 1.0 - t) * sig - pt)
    if s.needs[1]:
        gt = -g * x if pw is None else g * (_log_sigmoid(F, -x) - pw * _log_sigmoid(F, x))
    return gx, gt, None, None


op("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
   ("self", "target", "weight", "pos_weight"), _bce_logits_fwd, _bce_logits_bwd,
   save={"self": (), "target": (), "weight": (), "pos_weight": ()}, promote=False,
   nondiff=("weight", "pos_weight"))


def _bce_fwd(xp, x, t, weight=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 (PyTorch's, so 0 log 0 is 0)."""
    floor = xp.asarray(-100.0, dtype=x.dtype)
    loss = -(t * xp.maximum(xp.log(x), floor) + (1.0 - t) * xp.maximum(xp.log(1.0 - x), floor))
    if weight is not None:
        loss = loss * weight
    return _reduce(xp, loss, reduction)


_BCE_EPS = 9.999999960041972e-13   # PyTorch's EPSILON: 1e-12 as a float32


def _bce_bwd(F, g, s):
    """PyTorch's binary_cross_entropy_backward: (x - t) / max(x (1 - x), EPSILON); the target's
    gradient is -logit(x) = log(1 - x) - log(x)."""
    x, t, w = s.self, s.target, s.weight
    if s.reduction == "mean":
        g = g * (1.0 / _count(s.shapes[0], None))
    if w is not None:
        g = g * w
    gx = gt = None
    if s.needs[0]:
        d = x * (1.0 - x)
        gx = g * (x - t) / F.where(F.gt(d, _BCE_EPS), d, _BCE_EPS)
    if s.needs[1]:
        gt = g * (F.log(1.0 - x) - F.log(x))
    return gx, gt, None


op("binary_cross_entropy", "BinaryCrossEntropyBackward0", ("self", "target", "weight"), _bce_fwd, _bce_bwd,
   save={"self": (), "target": (), "weight": ()}, promote=False, nondiff=("weight",))


# conv1d, conv2d and their transposes: engine/ops/conv.py (NOTE [ Convolution ])


def _im2col_op_fwd(xp, x, geom):
    from .ops.conv import im2col_array
    return im2col_array(xp, x, geom)


def _col2im_op_fwd(xp, c, geom):
    from .ops.conv import col2im_array
    return col2im_array(xp, c, geom)


op("im2col", "Im2ColBackward0", ("self",), _im2col_op_fwd, lambda F, g, s: (F.col2im(g, s.geom),),
   promote=False)
op("col2im", "Col2ImBackward0", ("self",), _col2im_op_fwd, lambda F, g, s: (F.im2col(g, s.geom),),
   promote=False)


def _index_put_add_fwd(xp, values, *index_arrays, template, shape):
    from .core.fns import ArrayFns
    return ArrayFns(xp).scatter_add(shape, _rebuild_index(template, index_arrays), values, values)


op("index_put_add", "IndexPutBackward0", ("values", "*indices"), _index_put_add_fwd,
   lambda F, g, s: (F.index(g, _rebuild_index(s.template, s.indices)),) + (None,) * len(s.indices),
   save={"indices": ()}, promote=False, nondiff=("indices",))


def _fill_index_fwd(xp, a, *index_arrays, template, value):
    from .core.fns import ArrayFns
    return ArrayFns(xp).fill_index(a, _rebuild_index(template, index_arrays), value)


op("fill_index", "IndexFillBackward0", ("self", "*indices"), _fill_index_fwd,
   lambda F, g, s: (F.fill_index(g, _rebuild_index(s.template, s.indices), 0.0),) + (None,) * len(s.indices),
   save={"indices": ()}, promote=False, nondiff=("indices",))

# ---- more functions PyTorch programs reach for ------------------------------------------------
op("log1p", "Log1PBackward0", ("self",), lambda xp, a: xp.log1p(a), lambda F, g, s: (g / (s.self + 1.0),),
   save={"self": ()}, float_op=True)
op("expm1", "Expm1Backward0", ("self",), lambda xp, a: xp.expm1(a), lambda F, g, s: (g * (s.result + 1.0),),
   save={"result": ()}, float_op=True)


def _cumsum_fwd(xp, a, dim):
    if a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)
    return xp.cumulative_sum(a, axis=dim)


# the gradient of a running sum is the running sum from the other end: total - cumsum + g
op("cumsum", "CumsumBackward0", ("self",), _cumsum_fwd,
   lambda F, g, s: (F.sum(g, axis=s.dim, keepdims=True) - F.cumsum(g, s.dim) + g,), promote=False)


def _norm_bwd(F, g, s):
    """x / |x| times the incoming gradient; 0 where the norm is 0 (as PyTorch, not 0/0)."""
    res, g = _keep(F, s.result, s, s.shapes[0]), _keep(F, g, s, s.shapes[0])
    zero = F.eq(res, 0.0)
    return (F.where(zero, 0.0, g * s.self / F.where(zero, 1.0, res)),)


op("norm", "LinalgVectorNormBackward0", ("self",), lambda xp, a, dim=None, keepdim=False:
   xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim)), _norm_bwd, save={"self": (), "result": ()}, promote=False)


def _tri_fwd(lower):
    def fwd(xp, a, diagonal=0):
        n, m = a.shape[-2], a.shape[-1]
        d = xp.reshape(xp.arange(m, dtype=xp.int64), (1, m)) - xp.reshape(xp.arange(n, dtype=xp.int64), (n, 1))
        return xp.where(d <= diagonal if lower else d >= diagonal, a, xp.zeros_like(a))
    return fwd


def _tri_bwd(lower):
    def bwd(F, g, s):
        nd = len(s.shapes[0])
        d = F.iota(s.shapes[0][-1], nd - 1, nd, g) - F.iota(s.shapes[0][-2], nd - 2, nd, g)
        return (F.where(F.le(d, s.diagonal) if lower else F.ge(d, s.diagonal), g, 0.0),)
    return bwd


op("tril", "TrilBackward0", ("self",), _tri_fwd(True), _tri_bwd(True), promote=False)
op("triu", "TriuBackward0", ("self",), _tri_fwd(False), _tri_bwd(False), promote=False)


def _gather_fwd(xp, a, index, dim):
    part = tuple(slice(None) if k == dim else slice(0, index.shape[k]) for k in range(len(a.shape)))
    return xp.take_along_axis(a[part], index, axis=dim)   # PyTorch lets index be smaller off ``dim``


def _scatter_back(F, g, shape, idx, dim):
    """Scatter-add the gradient back where each element was read from (repeats add up)."""
    nd, ishape = len(shape), F.shape(idx)
    where = tuple(idx if k == dim else F.iota(ishape[k], k, nd, g) for k in range(nd))
    return F.scatter_add(shape, where, g, g)


# PyTorch's GatherBackward0 keeps self too (for its sparse-gradient option), so glassgrad does
op("gather", "GatherBackward0", ("self", "index"), _gather_fwd,
   lambda F, g, s: (_scatter_back(F, g, s.shapes[0], s.index, s.dim), None),
   save={"self": (), "index": ()}, promote=False, nondiff=("index",))
# sort and topk read their values the same way but keep only the indices (SortBackward0, TopkBackward0)
op("take_sorted", "SortBackward0", ("self", "indices"), _gather_fwd,
   lambda F, g, s: (_scatter_back(F, g, s.shapes[0], s.indices, s.dim), None),
   save={"indices": ()}, promote=False, nondiff=("indices",))


def _repeat_fwd(xp, a, repeats):
    a = xp.reshape(a, (1,) * (len(repeats) - len(a.shape)) + tuple(a.shape))
    return xp.tile(a, tuple(repeats))


def _repeat_bwd(F, g, s):
    shape, reps = s.shapes[0], s.repeats
    padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
    split = tuple(v for r, n in zip(reps, padded) for v in (r, n))   # each dim as (copies, size)
    g = F.sum(F.reshape(g, split), axis=tuple(range(0, 2 * len(reps), 2)))
    return (F.reshape(g, shape),)


op("repeat", "RepeatBackward0", ("self",), _repeat_fwd, _repeat_bwd, promote=False)


# in-place helpers that carry no gradient to their input
op("fill", "FillBackward0", ("self",), lambda xp, a, value: xp.full(a.shape, value, dtype=a.dtype),
   lambda F, g, s: (g * 0.0,), promote=False)  # a zero gradient, not none: the input still gets a .grad
op("copy", "CopyBackwards", ("self", "src"), lambda xp, a, b: xp.astype(xp.broadcast_to(b, a.shape), a.dtype),
   lambda F, g, s: (None, g), promote=False)


# ---- prod ------------------------------------------------------------------------------------
def _any_zero(F, x) -> bool:
    """Whether ``x`` holds a zero: one host-side answer (a device sync on CUDA, as PyTorch's
    prod backward makes too). A formula traced for a compiled graph cannot branch on values,
    so there the answer is yes: the zero-safe form is right either way (NOTE [ Product of the others ])."""
    from .core.fns import ArrayFns
    if F.differentiable:
        return bool((x == 0.0).any().item())
    if isinstance(F, ArrayFns):
        return bool(F.xp.any(x == 0.0))
    return True


def _exclusive(F, c, d, n, nd):
    """``c`` (a running product along ``d``) shifted one step: 1 first, then c[0] .. c[n-2]."""
    head = F.index(c, (slice(None),) * d + (slice(0, n - 1),))
    shifted = F.scatter_add(F.shape(c), (slice(None),) * d + (slice(1, n),), head, head)
    return F.where(F.eq(F.iota(n, d, nd, c), 0), 1.0, shifted)


def _prod_others(F, x, d):
    """NOTE [ Product of the others ]
    1. ``prod``'s gradient at element i is the product of every other element of its slice.
       Without zeros that is ``result / x_i`` (what PyTorch computes then too); with a zero
       the division is 0/0, so the product is formed without dividing.
    2. As PyTorch's prod_safe_zeros_backward: an exclusive running product from the front
       times one from the back, ``(x_0 ... x_{i-1}) * (x_{i+1} ... x_{n-1})``.
    3. On arrays the running products are cumprods (``F.cumprod``), the one from the back on
       the reversed slice. For ``create_graph`` they are built slice by slice from mul and
       cat, so the second derivative is right at the zeros too (its formula is that of mul).
    """
    n, nd = F.shape(x)[d], len(F.shape(x))
    if F.differentiable:
        E = F.E
        parts = [E.narrow(x, d, i, 1) for i in range(n)]
        left, right = [None] * n, [None] * n
        left[0] = right[n - 1] = E.ones_like(parts[0])
        for i in range(1, n):
            left[i] = left[i - 1] * parts[i - 1]
        for i in range(n - 2, -1, -1):
            right[i] = right[i + 1] * parts[i + 1]
        return E.cat([lf * r for lf, r in zip(left, right)], d)
    rev = (slice(None),) * d + (slice(None, None, -1),)
    left = _exclusive(F, F.cumprod(x, d), d, n, nd)
    right = F.index(_exclusive(F, F.cumprod(F.index(x, rev), d), d, n, nd), rev)
    return left * right


def _prod_fwd(xp, a, dim=None, keepdim=False, dtype=None):
    if not a.shape:
        dim = None          # a 0-d input has one element whatever the dim (0 or -1) says
    if dtype is not None:
        a = xp.astype(a, dtype)
    elif a.dtype == xp.bool:
        a = xp.astype(a, xp.int64)   # as sum: a product of bools counts in int64
    kw = {"dtype": xp.int64} if a.dtype == xp.int64 else {}
    return xp.prod(a, axis=dim, keepdims=keepdim, **kw)


def _prod_all_bwd(F, g, s):
    """PyTorch's prod_backward: ``g * result / self`` without zeros, NOTE [ Product of the others ] with."""
    x, shape = s.self, s.shapes[0]
    if not shape:
        return (g,)
    if not _any_zero(F, x):
        return (g * (s.result / x),)
    n = _count(shape, None)
    return (F.reshape(g * _prod_others(F, F.reshape(x, (n,)), 0), shape),)


def _prod_dim_bwd(F, g, s):
    x, shape = s.self, s.shapes[0]
    if not shape:
        return (g,)
    res = s.result
    if not s.keepdim:
        g, res = F.expand_dims(g, axis=s.dim), F.expand_dims(res, axis=s.dim)
    if not _any_zero(F, x):
        return (g * (res / x),)
    return (g * _prod_others(F, x, s.dim),)


op("prod", "ProdBackward0", ("self",), lambda xp, a, dtype=None: _prod_fwd(xp, a, None, False, dtype),
   _prod_all_bwd, save={"self": (), "result": ()}, promote=False)
op("prod_dim", "ProdBackward1", ("self",), _prod_fwd, _prod_dim_bwd, save={"self": (), "result": ()},
   promote=False)


# ---- class weights and label smoothing for the classification losses --------------------------
def _nll_weighted_fwd(xp, x, target, weight, reduction="mean", ignore_index=-100, axis=-1):
    """nll_loss with class weights: each picked -log p is scaled by its class's weight, and the
    mean divides by the summed weights of the counted targets (``total_weight``), as PyTorch."""
    x_t, valid, safe = _nll_pick(xp, x, target, ignore_index, axis)
    w_t = xp.reshape(xp.take(weight, xp.reshape(safe, (-1,))), safe.shape)   # take wants 1-d indices
    w_t = xp.where(valid, w_t, xp.zeros_like(x_t))   # each counted target's class weight
    picked = x_t * w_t
    if reduction == "none":
        return -picked, {"total_weight": xp.zeros((), dtype=x.dtype)}   # PyTorch leaves it 0 here
    total = xp.sum(w_t)
    out = -xp.sum(picked)
    return (out if reduction == "sum" else out / total), {"total_weight": total}


def _nll_weighted_bwd(F, g, s, axis=-1):
    hit, g = _nll_grad_parts(F, g, s, axis)
    shape = s.shapes[0]
    wshape = [1] * len(shape)
    wshape[axis] = shape[axis]
    return F.where(hit, -g * F.reshape(s.weight, tuple(wshape)), 0.0), None, None


op("nll_loss_weighted", "NllLossBackward0", ("self", "target", "weight"), _nll_weighted_fwd, _nll_weighted_bwd,
   save={"self": (), "target": (), "weight": (), "total_weight": ()}, aux=("total_weight",), promote=False,
   nondiff=("target", "weight"))
op("nll_loss2d_weighted", "NllLoss2DBackward0", ("self", "target", "weight"),
   lambda xp, x, target, weight, reduction="mean", ignore_index=-100:
       _nll_weighted_fwd(xp, x, target, weight, reduction, ignore_index, 1),
   lambda F, g, s: _nll_weighted_bwd(F, g, s, 1),
   save={"self": (), "target": (), "weight": (), "total_weight": ()}, aux=("total_weight",), promote=False,
   nondiff=("target", "weight"))
op("masked_fill", "MaskedFillBackward0", ("self", "mask"),
   lambda xp, a, mask, value: xp.where(mask, xp.asarray(value, dtype=a.dtype), a),
   lambda F, g, s: (F.where(s.mask, 0.0, g), None), save={"mask": ()}, promote=False, nondiff=("mask",))
# ``tensor * number`` and ``tensor / number`` as PyTorch's C++ code calls them (the Scalar overloads):
# MulBackward1 / DivBackward1, one edge, ``other`` the number (composite losses use them)
op("mul_number", "MulBackward1", ("self",), lambda xp, a, other: a * other, lambda F, g, s: (g * s.other,),
   promote=False)
op("div_number", "DivBackward1", ("self",), lambda xp, a, other: a / other, lambda F, g, s: (g * (1.0 / s.other),),
   promote=False)


# ---- einsum ----------------------------------------------------------------------------------
def _full(F, x, term, sizes):
    """``x`` broadcast from its own shape (size-1 dims) to its labels' sizes."""
    shape = tuple(sizes[c] for c in term)
    return x if F.shape(x) == shape else F.broadcast_to(x, shape)


def _einsum_fwd(xp, *arrays, terms, out, sizes):
    from .backend.gaps import einsum
    sizes = dict(sizes)
    arrays = [a if tuple(a.shape) == tuple(sizes[c] for c in t) else xp.broadcast_to(a, tuple(sizes[c] for c in t))
              for a, t in zip(arrays, terms)]
    return einsum(xp, ",".join(terms) + "->" + out, *arrays)


def _einsum_bwd(F, g, s):
    """NOTE [ einsum's gradient ]
    1. The gradient for operand k is itself an einsum: the incoming gradient (labelled as
       the output) contracted with every other operand, onto operand k's labels.
    2. A label of operand k that appears nowhere else was summed away in the forward, so
       its gradient is the same along it: the einsum leaves it out and the result is
       broadcast along it.
    3. A label repeated within operand k (a diagonal, as in ``ii->i``) gets the gradient on
       the diagonal only: the result is laid out over the full shape and masked to where
       the repeated indices are equal.
    4. Size-1 dims broadcast against other operands (and ``...``) come back summed, by the
       dispatcher, as for any broadcasting op.
    5. So each operand's gradient reads every other operand: with two, ``self`` is kept
       only when ``other`` needs a gradient and the reverse (as mm keeps its operands);
       with three or more, all of them are kept; one operand keeps nothing.
    """
    terms, out, sizes = s.terms, s.out, dict(s.sizes)
    if len(terms) > 2:
        ops = s.operands
        operand = ops.__getitem__
    else:   # two operands keep each other only as needed (rule 5); one keeps nothing
        operand = lambda j: getattr(s, ("self", "other")[j])  # noqa: E731
    grads = []
    for k, term in enumerate(terms):
        if not s.needs[k]:
            grads.append(None)
            continue
        others = [(out, g)] + [(t, _full(F, operand(j), t, sizes)) for j, t in enumerate(terms) if j != k]
        seen = "".join(t for t, _ in others)
        unique = "".join(dict.fromkeys(term))
        kept = "".join(c for c in unique if c in seen)
        gk = F.einsum(",".join(t for t, _ in others) + "->" + kept, *(x for _, x in others))
        if kept != unique:                                            # rule 2
            gk = F.reshape(gk, tuple(sizes[c] if c in kept else 1 for c in unique))
            gk = F.broadcast_to(gk, tuple(sizes[c] for c in unique))
        if unique != term:                                            # rule 3
            first = {}
            for p, c in enumerate(term):
                first.setdefault(c, p)
            nd = len(term)
            gk = F.reshape(gk, tuple(sizes[c] if first[c] == p else 1 for p, c in enumerate(term)))
            gk = F.broadcast_to(gk, tuple(sizes[c] for c in term))
            mask = None
            for p, c in enumerate(term):
                if first[c] != p:
                    m = F.eq(F.iota(sizes[c], first[c], nd, g), F.iota(sizes[c], p, nd, g))
                    mask = m if mask is None else F.logical_and(mask, m)
            gk = F.where(mask, gk, 0.0)
        grads.append(gk)
    return tuple(grads)


op("einsum", "EinsumBackward0", ("*operands",), _einsum_fwd, _einsum_bwd, save={"operands": ()}, promote=False)
op("einsum_two", "EinsumBackward0", ("self", "other"), _einsum_fwd, _einsum_bwd,
   save={"other": ("self",), "self": ("other",)}, promote=False)
# one operand (a diagonal or a broadcast ``...``): the gradient needs no operand values, so none are kept
op("einsum_one", "EinsumBackward0", ("self",), _einsum_fwd, _einsum_bwd, promote=False)


# ---- layers CNN/MLP tutorials use: batch norm, pooling, more activations and losses ----------------
# (their rows live beside their kernels in engine/ops/; importing them registers them here)
from .ops import norm as _norm_rows  # noqa: E402,F401
from .ops import pool as _pool_rows  # noqa: E402,F401
from .ops import activation as _activation_rows  # noqa: E402,F401
from .ops import loss as _loss_rows  # noqa: E402,F401
from .ops import pad as _pad_rows  # noqa: E402,F401
from .ops import tensor_ops as _tensor_op_rows  # noqa: E402,F401
from .ops import upsample as _upsample_rows  # noqa: E402,F401
from .ops import rounding as _rounding_rows  # noqa: E402,F401
from .ops import linalg as _linalg_rows  # noqa: E402,F401
from .ops import conv as _conv_rows  # noqa: E402,F401
from .ops import math_ops as _math_op_rows  # noqa: E402,F401
from .ops import shuffle as _shuffle_rows  # noqa: E402,F401
from .ops import bilinear as _bilinear_rows  # noqa: E402,F401
from .ops import pool3d as _pool3d_rows  # noqa: E402,F401
from .ops import index_ops as _index_op_rows  # noqa: E402,F401
from .ops import erfinv as _erfinv_rows  # noqa: E402,F401
from .ops import gamma_ops as _gamma_op_rows  # noqa: E402,F401
from .ops import special_ops as _special_op_rows  # noqa: E402,F401
from .ops import elementwise_more as _elementwise_more_rows  # noqa: E402,F401
from .ops import moments as _moment_rows  # noqa: E402,F401
from .ops import pool_more as _pool_more_rows  # noqa: E402,F401
from .ops import shape_more as _shape_more_rows  # noqa: E402,F401
from .ops import split_views as _split_view_rows  # noqa: E402,F401
from .ops import embedding_bag as _embedding_bag_rows  # noqa: E402,F401
from .ops import stats_ops as _stats_op_rows  # noqa: E402,F401
from .ops import weight_norm as _weight_norm_rows  # noqa: E402,F401
from .ops import sampling as _sampling_rows  # noqa: E402,F401
from .ops import pdist as _pdist_rows  # noqa: E402,F401
from .ops import ctc as _ctc_rows  # noqa: E402,F401
