"""The losses for the op table: nll_loss (with class weights, 2-d targets), mse_loss, binary
cross-entropy (with logits), smooth_l1_loss, huber_loss, soft_margin_loss, multi_margin_loss and
multilabel_margin_loss (NllLossBackward0, MseLossBackward0, SmoothL1LossBackward0, ...).

The smooth and margin losses keep ``self`` and ``target`` and, as PyTorch's nodes show it, ``reduction``
as its enum: 0 none, 1 mean, 2 sum. Input and target arrive with one shape (F.* broadcasts them first).
"""
from __future__ import annotations

import numpy as np

from ...core.primitives import _inverse_count
from ...core.table import op
from ..grad_rows import grad_of
from .nll_sum import cascade_sum

_ndarray = np.ndarray


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
        if reduction != "none":    # PyTorch's order of summation (NOTE [ nll_loss's cascaded sum ])
            out = cascade_sum(-picked, target != ignore_index)
            return (out if reduction == "sum" else out / total), {"total_weight": total}
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


def _broadcast_shape(sa, sb) -> tuple:
    """The shape two broadcast shapes make, aligned from the right (``(4, 1)`` and ``(4,)`` give ``(4, 4)``)."""
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    return tuple(max(a, b) for a, b in zip(pa, pb))


def _mse_bwd(F, g, s):
    d = s.self - s.target
    scale = 2.0 * _inverse_count(_broadcast_shape(s.shapes[0], s.shapes[1]), None) if s.reduction == "mean" else 2.0
    gi = g * d * scale
    return (gi if s.needs[0] else None, -gi if s.needs[1] else None)


op("mse_loss", "MseLossBackward0", ("self", "target"), _mse_fwd, _mse_bwd, save={"self": (), "target": ()})


def _mse_scale(reduction, sa, sb):
    return 2.0 * _inverse_count(_broadcast_shape(sa, sb), None) if reduction == "mean" else 2.0


def _mse_bwd_fwd(xp, g, a, b, reduction="mean"):
    """mse_loss_backward(g, self, target): the gradient of ``self`` (of ``target`` with the two swapped)."""
    return g * (a - b) * _mse_scale(reduction, tuple(a.shape), tuple(b.shape))


def _mse_bwd_bwd(F, gg, s):
    scale = _mse_scale(s.reduction, s.shapes[1], s.shapes[2])
    both = gg * s.grad_output * scale if s.needs[1] or s.needs[2] else None
    return (gg * (s.self - s.target) * scale if s.needs[0] else None,
            both if s.needs[1] else None, -both if s.needs[2] else None)


# NOTE [ Backward rows ] in ops/grad_rows.py; PyTorch's target gradient is mse_loss_backward with the two swapped
op("mse_loss_backward", "MseLossBackwardBackward0", ("grad_output", "self", "target"), _mse_bwd_fwd, _mse_bwd_bwd,
   save={"grad_output": ("self", "target"), "self": ("grad_output",), "target": ("grad_output",)})
grad_of("mse_loss_backward", [("mse_loss", "self", ("self", "target")), ("mse_loss", "target", ("target", "self"))])


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
        shape = _broadcast_shape(s.shapes[0], s.shapes[1])
        g = g * _inverse_count(shape, None)
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
        g = g * _inverse_count(s.shapes[0], None)
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
    if type(x) is _ndarray and x.ndim == 2 and axis == -1:     # NOTE [ nll_loss's cascaded sum ]
        total, out = cascade_sum(w_t, valid), cascade_sum(-picked, valid)
    else:
        total, out = xp.sum(w_t), -xp.sum(picked)
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


REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _reduced(xp, loss, reduction):
    if reduction == 0:
        return loss
    return xp.sum(loss) if reduction == 2 else xp.mean(loss)


def _smooth_l1_fwd(xp, a, b, reduction=1, beta=1.0):
    d = a - b
    ad = xp.abs(d)
    return _reduced(xp, xp.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta), reduction)


def _huber_fwd(xp, a, b, reduction=1, delta=1.0, refusal=None):
    d = a - b
    ad = xp.abs(d)
    return _reduced(xp, xp.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta), reduction)


def _piecewise_bwd(F, g, s, edge, inner, outer):
    """d loss / d self: ``inner * d`` inside ``|d| < edge``, ``outer * sign(d)`` outside."""
    d = s.self - s.target
    if s.reduction == 1:
        g = g * _inverse_count(s.shapes[0], None)
    gi = F.where(F.lt(d, -edge), -outer * g, F.where(F.gt(d, edge), outer * g, g * d * inner))
    return (gi if s.needs[0] else None, -gi if s.needs[1] else None)


op("smooth_l1_loss", "SmoothL1LossBackward0", ("self", "target"), _smooth_l1_fwd,
   lambda F, g, s: _piecewise_bwd(F, g, s, s.beta, 1.0 / s.beta, 1.0), save={"self": (), "target": ()})
def _huber_bwd(F, g, s):
    if s.refusal:   # a target of another dtype: PyTorch's backward kernel refuses it (its forward casts it)
        raise RuntimeError(s.refusal)
    return _piecewise_bwd(F, g, s, s.delta, 1.0, s.delta)


op("huber_loss", "HuberLossBackward0", ("self", "target"), _huber_fwd, _huber_bwd, save={"self": (), "target": ()})


# ---- soft_margin_loss, multi_margin_loss, multilabel_margin_loss ---------------------------------------
def _soft_margin_fwd(xp, x, y, reduction=1):
    return _reduced(xp, xp.log1p(xp.exp(-y * x)), reduction)


def _n_scale(s, g, reduction):
    return g * _inverse_count(s.shapes[0], None) if reduction == 1 else g


def _soft_margin_bwd(F, g, s):
    """``-y sigmoid(-y x)``, from ``exp(-|y x|)`` so a large margin gives 0, not nan."""
    x, y = s.self, s.target
    yx = y * x
    pos = F.gt(yx, 0.0)
    e = F.exp(F.where(pos, -yx, yx))
    sig = F.where(pos, e / (1.0 + e), 1.0 / (1.0 + e))
    return (-y * sig * _n_scale(s, g, s.reduction), None)


op("soft_margin_loss", "SoftMarginLossBackward0", ("self", "target"), _soft_margin_fwd, _soft_margin_bwd,
   save={"self": (), "target": ()}, nondiff=("target",), promote=False)


# NOTE [ Margin losses ]
# 1. multi_margin_loss: per sample i with class y, ``sum_{j != y} max(0, margin - x[y] + x[j])^p * w[y] / C``
#    (p is 1 or 2). The class picks are one-hot masks (``iota == y``), so kernel and formula stay in
#    the array API and broadcast over the batch.
# 2. multilabel_margin_loss: the target row lists class indices up to the first -1; each listed class
#    t (repeats count again, as PyTorch's loop) meets every class j not listed:
#    ``sum max(0, 1 - x[t] + x[j]) / C``. ``is_target`` (1.0 where j is listed, the input's dtype) is
#    kept as PyTorch keeps it.
# 3. A hinge with z exactly 0 passes no gradient (PyTorch's ``z > 0``).
def _onehot(xp_or_F, y, c, like, F=None):
    """bool (N, C): column == y."""
    if F is not None:
        return F.eq(F.expand_dims(y, -1), F.iota(c, 1, 2, like))
    return xp_or_F.expand_dims(y, axis=-1) == xp_or_F.reshape(xp_or_F.arange(c, dtype=y.dtype), (1, c))


def _mm_parts_xp(xp, x, y, weight, margin):
    c = x.shape[-1]
    hot = _onehot(xp, y, c, x)
    zero = xp.zeros((), dtype=x.dtype)
    xy = xp.sum(xp.where(hot, x, zero), axis=-1, keepdims=True)
    z = xp.where(hot, zero, margin - xy + x)
    wy = None if weight is None else xp.sum(xp.where(hot, xp.reshape(weight, (1, c)), zero), axis=-1)
    return z, wy


def _as_batch(F_or_xp, x, y, c, y_cols):
    """The 0-d/1-D input case viewed as a batch of one (the node still sees the caller's shapes)."""
    if len(x.shape) == 2:
        return x, y
    return F_or_xp.reshape(x, (1, c)), F_or_xp.reshape(y, (1, c) if y_cols else (1,))


def _multi_margin_fwd(xp, x, y, weight, p=1, margin=1.0, reduction=1):
    """x is (N, C) with y (N,) int64, or (C,) with a 0-d/1-element y."""
    c = x.shape[-1] if x.ndim else 1
    batched = x.ndim == 2
    x, y = _as_batch(xp, x, y, c, False)
    z, wy = _mm_parts_xp(xp, x, y, weight, margin)
    h = xp.where(z > 0, z, xp.zeros((), dtype=x.dtype))
    loss = xp.sum(h * h if p == 2 else h, axis=-1) / c
    if wy is not None:
        loss = loss * wy
    if reduction == 0 and not batched:
        return xp.reshape(loss, ())
    return _reduced(xp, loss, reduction)


def _multi_margin_bwd(F, g, s):
    shape = s.shapes[0]
    c = shape[-1] if shape else 1
    x, y = _as_batch(F, s.self, s.target, c, False)
    if s.reduction == 0:
        g = F.reshape(g, (F.shape(x)[0],))
    hot = _onehot(None, y, c, x, F=F)
    xy = F.sum(F.where(hot, x, 0.0), axis=-1, keepdims=True)
    z = F.where(hot, 0.0, (s.margin - xy) + x)
    g = g * (1.0 / F.shape(x)[0]) if s.reduction == 1 else g      # the mean is over samples
    g = F.expand_dims(g, -1) if s.reduction == 0 else g
    d = F.where(F.gt(z, 0.0), (2.0 * z if s.p == 2 else 1.0) * (1.0 / c) * g, 0.0)
    if s.weight is not None:
        wy = F.sum(F.where(hot, F.reshape(s.weight, (1, c)), 0.0), axis=-1, keepdims=True)
        d = d * wy
    return (F.reshape(d - F.where(hot, F.sum(d, axis=-1, keepdims=True), 0.0), shape), None, None)


op("multi_margin_loss", "MultiMarginLossBackward0", ("self", "target", "weight"), _multi_margin_fwd,
   _multi_margin_bwd, save={"self": (), "target": (), "weight": ()}, nondiff=("target", "weight"), promote=False)


def _listed(xp, y):
    """bool (N, K): entries of each target row before its first -1."""
    return xp.cumulative_sum(xp.astype(y < 0, xp.int64), axis=-1) == 0


def _multilabel_fwd(xp, x, y, reduction=1):
    """x and y (N, C) (y int64), or both (C,). Returns the loss and ``is_target``."""
    c = x.shape[-1] if x.ndim else 1
    batched, shape = x.ndim == 2, x.shape
    x, y = _as_batch(xp, x, y, c, True)
    zero = xp.zeros((), dtype=x.dtype)
    listed = _listed(xp, y)                                                   # (N, K)
    hit = xp.logical_and(xp.expand_dims(y, axis=-1) == xp.reshape(xp.arange(c, dtype=y.dtype), (1, 1, c)),
                         xp.expand_dims(listed, axis=-1))                      # (N, K, C): entry k names class j
    is_target = xp.any(hit, axis=1)                                           # (N, C)
    xt = xp.sum(xp.where(hit, xp.expand_dims(x, axis=1), zero), axis=-1)      # (N, K): x at entry k's class
    z = 1.0 - xp.expand_dims(xt, axis=-1) + xp.expand_dims(x, axis=1)          # (N, K, C)
    keep = xp.logical_and(xp.expand_dims(listed, axis=-1), xp.expand_dims(xp.logical_not(is_target), axis=1))
    h = xp.where(xp.logical_and(keep, z > 0), z, zero)
    loss = xp.sum(xp.sum(h, axis=-1), axis=-1) / c
    is_target = xp.reshape(xp.astype(is_target, x.dtype), shape)
    if reduction == 0 and not batched:
        return xp.reshape(loss, ()), {"is_target": is_target}
    return _reduced(xp, loss, reduction), {"is_target": is_target}


def _multilabel_bwd(F, g, s):
    shape = s.shapes[0]
    c = shape[-1] if shape else 1
    x, y = _as_batch(F, s.self, s.target, c, True)
    if s.reduction == 0:
        g = F.reshape(g, (F.shape(x)[0],))
    listed = F.eq(F.cumsum(F.where(F.lt(y, 0), 1.0, 0.0), 1), 0.0)
    hit = F.logical_and(F.eq(F.expand_dims(y, -1), F.expand_dims(F.iota(c, 1, 2, x), 0)), F.expand_dims(listed, -1))
    not_target = F.eq(F.reshape(s.is_target, F.shape(x)), 0.0)
    xt = F.sum(F.where(hit, F.expand_dims(x, 1), 0.0), axis=-1)
    z = (1.0 - F.expand_dims(xt, -1)) + F.expand_dims(x, 1)
    keep = F.logical_and(F.logical_and(F.expand_dims(listed, -1), F.expand_dims(not_target, 1)), F.gt(z, 0.0))
    g = g * (1.0 / F.shape(x)[0]) if s.reduction == 1 else g
    g = F.expand_dims(g, -1) if s.reduction == 0 else g
    on = F.where(keep, 1.0, 0.0 * z)                                          # (N, K, C)
    per_entry = F.sum(on, axis=-1)                                            # (N, K): how many j each t beat
    gx = F.sum(on, axis=1) - F.sum(F.where(hit, F.expand_dims(per_entry, -1), 0.0), axis=1)
    return (F.reshape(gx * (1.0 / c) * g, shape), None)


op("multilabel_margin_loss", "MultilabelMarginLossBackward0", ("self", "target"), _multilabel_fwd,
   _multilabel_bwd, save={"self": (), "target": (), "is_target": ()}, aux=("is_target",), nondiff=("target",),
   promote=False)
