"""``engine.nn.functional``: the neural-network functions, as torch.nn.functional."""
from __future__ import annotations

import numpy as np

from ..backend import gaps as _backend, dtypes as _dtype
from .. import functional as E
from ..core.dispatch import apply
from ..core.tensor import Tensor, _wrap_dim
from ..derivatives import OPS
from ..random import generator_for

_np_min, _np_max = np.minimum.reduce, np.maximum.reduce   # ndarray.min/max without their wrappers

tanh = E.tanh
sigmoid = E.sigmoid
gelu = E.gelu


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``; 2-D input with bias is one addmm, as in PyTorch."""
    if input._data.shape[-1:] != weight._data.shape[-1:]:
        lead = 1
        for s in input.shape[:-1]:
            lead *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({lead}x{input.shape[-1]} and "
                           f"{weight.shape[-1]}x{weight.shape[0]})")
    if bias is None:
        return E.matmul(input, E.t(weight))
    nd = len(input._data.shape)
    if nd == 2:
        return E.addmm(bias, input, E.t(weight))
    if nd > 2:
        lead = tuple(input.shape[:-1])
        out = E.addmm(bias, E.reshape(input, -1, input.shape[-1]), E.t(weight))
        return E.view(out, lead + (weight.shape[0],))
    return E.add(E.matmul(input, E.t(weight)), bias)


def softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return apply(OPS["softmax"], [input], {"dim": _wrap_dim(dim, input.ndim)})


def log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return apply(OPS["log_softmax"], [input], {"dim": _wrap_dim(dim, input.ndim)})


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[-k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    return apply(OPS["layer_norm"], [input, weight, bias], {"normalized_shape": normalized_shape, "eps": eps})


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p).

    On the CPU this is ``input * mask`` with a float mask (MulBackward0 keeps the mask, as
    PyTorch's CPU kernel does); on CUDA a fused op keeps a bool mask (NativeDropoutBackward0).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    gen = generator_for(input.device)
    keep = gen.uniform(tuple(input.shape), "float64") >= p
    xp = input._storage.xp
    from ..backend.gaps import from_numpy
    if input.device.type == "cuda":
        mask = from_numpy(xp, keep)
        return apply(OPS["native_dropout"], [input, Tensor._wrap(mask)], {"p": p})
    scale = 1.0 / (1.0 - p)
    mask = Tensor._wrap(from_numpy(xp, (keep * scale).astype(_np(input.dtype))))
    if inplace:
        return input.mul_(mask)
    return E.mul(input, mask)


def _np(dt):
    return "float64" if dt is _dtype.float64 else "float32"


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if input.dtype is not _dtype.int64:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if input.numel():
        lo, hi = int(E.min(input).item()), int(E.max(input).item())
        if lo < 0 or hi >= weight.shape[0]:
            raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return apply(OPS["embedding"], [input, weight], {"padding_idx": padding_idx})


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of the target classes; ``weight`` scales each class (the mean
    then divides by the summed weights of the counted targets, as PyTorch)."""
    if size_average is not None or reduce is not None or reduction not in _REDUCTIONS:
        reduction = _reduction(size_average, reduce, reduction)
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.type().split('.')[-1][:-6]}")
    if input.ndim > 2:
        return _nll_loss_nd(input, target, weight, ignore_index, reduction)
    if input.ndim == 2 and target.ndim == 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    c = input.shape[-1]
    _check_targets(target, c, ignore_index)
    if weight is not None:
        _class_weight_check(weight, input, c)
        return apply(OPS["nll_loss_weighted"], [input, target, weight],
                     {"reduction": reduction, "ignore_index": ignore_index})
    return apply(OPS["nll_loss"], [input, target], {"reduction": reduction, "ignore_index": ignore_index})


def _check_targets(target, c, ignore_index):
    if target.numel():
        host = _backend.to_numpy(target._storage.xp, target._data)
        if _np_min(host, axis=None) < 0 or _np_max(host, axis=None) >= c:     # only then look for a bad one (ignore_index may be negative)
            bad = host[(host != ignore_index) & ((host < 0) | (host >= c))]
            if bad.size:
                raise IndexError(f"Target {int(bad[0])} is out of bounds.")


def _nll_loss_nd(input, target, weight, ignore_index, reduction):
    """(N, C, d...) input with (N, d...) targets, as PyTorch: one NllLoss2DBackward0 over (N, C, H, W);
    other k-d input is viewed as (N, C, 1, d1*d2*...) first and ``reduction="none"`` losses are
    viewed back to (N, d...)."""
    want = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != want:
        raise RuntimeError(f"Expected target size {list(want)}, got {list(target.shape)}".replace(",", ", ")
                           .replace(",  ", ", "))
    n, c = input.shape[0], input.shape[1]
    _check_targets(target, c, ignore_index)
    if input.ndim != 4:
        input, target = E.reshape(input, n, c, 1, -1), E.reshape(target, n, 1, -1)
    attrs = {"reduction": reduction, "ignore_index": ignore_index}
    if weight is not None:
        _class_weight_check(weight, input, c)
        out = apply(OPS["nll_loss2d_weighted"], [input, target, weight], attrs)
    else:
        out = apply(OPS["nll_loss2d"], [input, target], attrs)
    return E.reshape(out, want) if reduction == "none" and tuple(out.shape) != want else out


def _class_weight_check(weight, input, c, prefix=""):
    if weight.ndim != 1 or weight.shape[0] != c:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {c} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}".replace(",", ", ").replace(",  ", ", "))
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found {_type_name(weight.dtype)}")
    _no_grad_arg(weight, "nll_loss_forward", "weight")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax then nll_loss (so, as in PyTorch, the log-probabilities are what is kept).

    ``target`` holds class indices, or class probabilities shaped like ``input``.
    ``label_smoothing`` mixes each target with the uniform distribution over the classes.
    """
    if size_average is not None or reduce is not None or reduction not in _REDUCTIONS:
        reduction = _reduction(size_average, reduce, reduction)
    if weight is not None or label_smoothing or target.dtype.is_floating_point:
        return _cross_entropy_general(input, target, weight, ignore_index, reduction, label_smoothing)
    return nll_loss(log_softmax(input, 1 if input.ndim >= 2 else 0), target, None, None, ignore_index, None, reduction)


def _cross_entropy_general(input, target, weight, ignore_index, reduction, ls):
    """PyTorch's cross_entropy for class weights, label smoothing and probability targets,
    composed from the same ops as PyTorch's (so the graph shows the same nodes)."""
    if ls > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls:g}")
    class_dim = 0 if input.ndim == 1 else 1
    n = input.shape[class_dim]
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, ls, class_dim, n)
    if target.dtype.is_floating_point and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    logp = log_softmax(input, class_dim)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if ls <= 0:
        return nll
    ignore = E.eq(target, ignore_index)
    if weight is not None:
        smooth = E.neg(E.sum(E.mul(logp, _class_view(weight, input.ndim, class_dim)), class_dim))
    else:
        smooth = E.neg(E.sum(logp, class_dim))
    smooth = apply(OPS["masked_fill"], [smooth, ignore], {"value": 0.0})
    if reduction == "mean":
        kept = E.logical_not(ignore)
        if weight is not None:   # the summed weights of the counted targets, as nll_loss's total_weight
            picked = weight[E.mul(target, kept.to(_dtype.int64))]       # (an ignored target reads class 0)
            denom = E.sum(E.mul(picked, kept.to(weight.dtype)))
        else:   # PyTorch divides by the int64 count; a float count keeps the backward on one dtype
            denom = E.sum(kept).to(smooth.dtype)   # (the array API divides no float by an integer array)
        ret = E.div(E.sum(smooth), denom)
    elif reduction == "sum":
        ret = E.sum(smooth)
    else:
        ret = smooth
    return E.add(_mul_number(nll, 1.0 - ls), _mul_number(ret, ls / n))


def _mul_number(t, k):
    """``t * k`` for a Python number, as PyTorch's C++ code calls it (MulBackward1, ``other`` a number)."""
    return apply(OPS["mul_number"], [t], {"other": k})


def _class_view(weight, ndim, class_dim):
    """``weight`` viewed to broadcast along the class dim (PyTorch's weight_broadcast_shape)."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return E.view(weight, tuple(shape))


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, ls, class_dim, n):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n):
        _class_weight_check(weight, input, n, prefix="cross_entropy: ")
    logp = log_softmax(input, class_dim)
    if ls > 0:
        target = E.add(_mul_number(target, 1.0 - ls), ls / n)
    prod = E.mul(logp, target)
    if weight is not None:
        prod = E.mul(prod, _class_view(weight, input.ndim, class_dim))
    if reduction == "none":
        return E.neg(E.sum(prod, class_dim))
    total = E.neg(E.sum(prod))
    if reduction == "sum":
        return total
    return apply(OPS["div_number"], [total], {"other": input.numel() // n})


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have "
                      "the same size.", UserWarning, stacklevel=2)
    return apply(OPS["mse_loss"], [input, target], {"reduction": reduction})


_REDUCTIONS = ("mean", "sum", "none")


def _reduction(size_average, reduce, reduction):
    """PyTorch's legacy ``size_average``/``reduce`` pair, else ``reduction`` (checked)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _no_grad_arg(t, fn, name):
    if t is not None and t.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                           "This input cannot have requires_grad True.")


def _type_name(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of probabilities ``input`` in [0, 1] (BinaryCrossEntropyBackward0).

    Each log is clamped at -100, as in PyTorch, so a probability of exactly 0 or 1 gives a
    finite loss. ``weight`` broadcasts to the input and is kept expanded (a view, no copy).
    """
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{_type_name(input.dtype)}\'')
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target.dtype)} but expected {_type_name(input.dtype)}")
    _no_grad_arg(weight, "binary_cross_entropy", "weight")
    if weight is not None:
        shape = tuple(input.shape)
        if _broadcast_shape(tuple(weight.shape), shape) != shape:
            raise RuntimeError(_infer_size_error(tuple(weight.shape), shape))
        weight = E.expand(weight.to(input.dtype), shape)
    xp = input._storage.xp
    if input.numel():
        x, t = input._data, target._data
        if bool(xp.any(xp.logical_or(x < 0, x > 1))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        if bool(xp.any(xp.logical_or(t < 0, t > 1))):
            raise RuntimeError("all elements of target should be between 0 and 1")
    return apply(OPS["binary_cross_entropy"], [input, target, weight], {"reduction": reduction})


def _broadcast_shape(a, b):
    import numpy as np
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _infer_size_error(a, b):
    """PyTorch's _infer_size message for ``a`` that does not broadcast to ``b``."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i in reversed(range(n)):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return (f"Attempting to broadcast a dimension of length {pa[i]} at {i - n}! Mismatching argument at "
                    f"index 1 had torch.Size([{', '.join(map(str, a))}]); but expected shape should be "
                    f"broadcastable to [{', '.join(map(str, b))}]")
    return f"shape {list(a)} does not broadcast to {list(b)}"


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Sigmoid and binary cross-entropy in one stable step (BinaryCrossEntropyWithLogitsBackward0).

    ``pos_weight`` scales the positive term (one value per class, broadcast over the last
    dim); ``weight`` scales each element's loss. Neither gets a gradient.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    _no_grad_arg(weight, "binary_cross_entropy_with_logits", "weight")
    _no_grad_arg(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    dt = _dtype.result_type([input, target])
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {_type_name(dt)} can't be cast to the desired output type "
                           f"{_type_name(target.dtype)}")
    for extra, first in ((pos_weight, True), (weight, False)):
        if extra is not None:
            E._broadcast_check(*((extra, input) if first else (input, extra)))
            out = _broadcast_shape(tuple(extra.shape), tuple(input.shape))
            if out != tuple(input.shape):
                raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                                   f"{list(out)}".replace(",", ", ").replace(",  ", ", "))
    input, target = input.to(dt), target.to(dt)
    weight = weight.to(dt) if weight is not None else None
    pos_weight = pos_weight.to(dt) if pos_weight is not None else None
    return apply(OPS["binary_cross_entropy_with_logits"], [input, target, weight, pos_weight],
                 {"reduction": reduction})


def one_hot(tensor, num_classes=-1):
    if num_classes < 0:
        num_classes = int(E.max(tensor).item()) + 1
    return E.eq(E.unsqueeze(tensor, -1), E.arange(num_classes, device=tensor.device)).long()


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    d = query.shape[-1]
    s = (1.0 / d ** 0.5) if scale is None else scale
    scores = E.matmul(query, E.transpose(key, -2, -1)) * s
    if is_causal:
        L, S = query.shape[-2], key.shape[-2]
        causal = E.ones(L, S, dtype=_dtype.bool_, device=query.device)
        causal = Tensor._wrap(causal._storage.xp.tril(causal._data))
        scores = E.masked_fill(scores, E.logical_not(causal), float("-inf"))
    if attn_mask is not None:
        scores = E.masked_fill(scores, E.logical_not(attn_mask), float("-inf")) if attn_mask.dtype is _dtype.bool_ \
            else scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p:
        attn = dropout(attn, dropout_p)
    return E.matmul(attn, value)


from .batchnorm import batch_norm  # noqa: E402,F401
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d, max_pool2d_with_indices  # noqa: E402,F401
from .activation_fns import (celu, celu_, elu, elu_, glu, hardshrink, hardsigmoid, hardswish,  # noqa: E402,F401
                             hardtanh, hardtanh_, leaky_relu, leaky_relu_, logsigmoid, mish, prelu, relu, relu6,
                             relu_, rrelu, rrelu_, selu, selu_, silu, softmin, softplus, softshrink, softsign,
                             tanhshrink, threshold, threshold_)
from .loss_fns import huber_loss, l1_loss, smooth_l1_loss  # noqa: E402,F401
from .loss_fns import (cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, kl_div,  # noqa: E402,F401
                       margin_ranking_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
                       poisson_nll_loss, soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)
from .gumbel import gumbel_softmax  # noqa: E402,F401
from .padding import pad  # noqa: E402,F401
from .distance import cosine_similarity, normalize, pairwise_distance  # noqa: E402,F401
from .conv_fns import conv1d  # noqa: E402,F401
from .pooling import adaptive_avg_pool1d, avg_pool1d, max_pool1d  # noqa: E402,F401
from .channel_dropout import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout  # noqa: E402,F401
from .pooling import adaptive_max_pool2d, adaptive_max_pool2d_with_indices  # noqa: E402,F401
from .upsample import interpolate  # noqa: E402,F401
from .conv_fns import conv2d, conv_transpose1d, conv_transpose2d  # noqa: E402,F401
from .group_norm import group_norm  # noqa: E402,F401
from .instancenorm import instance_norm  # noqa: E402,F401
from .normalization import local_response_norm, rms_norm  # noqa: E402,F401
from .pixel_shuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle  # noqa: E402,F401
from .fold import fold, unfold  # noqa: E402,F401
from .bilinear import bilinear  # noqa: E402,F401
from .conv_fns import conv3d  # noqa: E402,F401
from .pool3d import avg_pool3d, max_pool3d, max_pool3d_with_indices  # noqa: E402,F401
from .conv_fns import conv_transpose3d  # noqa: E402,F401
from .pool_more import (adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool1d_with_indices,  # noqa: E402,F401
                        adaptive_max_pool3d, adaptive_max_pool3d_with_indices, lp_pool1d, lp_pool2d, lp_pool3d,
                        max_pool1d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d)
from .embedding_bag import embedding_bag  # noqa: E402,F401
from .sampling import affine_grid, grid_sample  # noqa: E402,F401
from .pdist import pdist  # noqa: E402,F401
from .ctc import ctc_loss  # noqa: E402,F401
from .pool_more import fractional_max_pool2d, fractional_max_pool2d_with_indices  # noqa: E402,F401
