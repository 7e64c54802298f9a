"""Normalisation for the op table: batch norm (NativeBatchNormBackward0, NOTE [ Batch norm ]), group norm
(NOTE [ Group norm ]) and layer norm (NativeLayerNormBackward0).

NOTE [ Batch norm ]
1. Statistics are per channel (dim 1) over every other dim: ``(N, C)``, ``(N, C, L)`` and
   ``(N, C, H, W)`` all reduce over all dims but 1.
2. Training: normalise with the batch mean and the biased variance; ``result1`` is that
   mean and ``result2`` is ``1 / sqrt(var + eps)`` (PyTorch's save_mean and save_invstd).
   Evaluation: normalise with the running statistics; ``result1``/``result2`` are empty
   (PyTorch's CPU kernel saves 0-element tensors then).
3. As PyTorch's CPU kernel, the node keeps ``input``, ``weight``, ``running_mean``,
   ``running_var``, ``result1`` and ``result2`` (not ``bias``), whichever inputs need grad;
   the running statistics get no gradient edge.
4. The running statistics are updated by ``F.batch_norm`` after the kernel, in place and
   without a version bump (as PyTorch's kernel writes them): ``new = (1 - momentum) * old +
   momentum * batch``, with the unbiased variance ``var * n / (n - 1)``. The kernel itself
   stays a pure function of its arrays.
"""
from __future__ import annotations

from ...core.fns import array_fns
from ...core.primitives import _count
from ...core.table import op
from ..grad_rows import grad_of


def _axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _chan(v, ndim):
    """A per-channel vector shaped to broadcast against (N, C, ...)."""
    return (1, -1) + (1,) * (ndim - 2)


def _bn_fwd(xp, x, weight, bias, running_mean, running_var, training=True, eps=1e-5):
    nd = len(x.shape)
    axes, shape = _axes(nd), _chan(None, nd)
    if training:
        mean = xp.mean(x, axis=axes)
        d = x - xp.reshape(mean, shape)
        var = xp.mean(d * d, axis=axes)
        invstd = 1.0 / xp.sqrt(var + eps)
        out = d * xp.reshape(invstd, shape)
        r1, r2 = mean, invstd
    else:
        invstd = 1.0 / xp.sqrt(running_var + eps)
        out = (x - xp.reshape(running_mean, shape)) * xp.reshape(invstd, shape)
        r1 = r2 = xp.zeros((0,), dtype=x.dtype)
    if weight is not None:
        out = out * xp.reshape(weight, shape)
    if bias is not None:
        out = out + xp.reshape(bias, shape)
    return out, {"result1": r1, "result2": r2}


def _bn_bwd(F, g, s):
    x, w = s.input, s.weight
    shape = s.shapes[0]
    nd = len(shape)
    axes, cshape = _axes(nd), _chan(None, nd)
    n = 1
    for a in axes:
        n *= shape[a]
    if s.training:
        mean, invstd = s.result1, s.result2
        if F.differentiable:  # create_graph: mean and invstd depend on x (NOTE [ One formula, two currencies ] 4)
            mean = F.sum(x, axis=axes) * (1.0 / max(n, 1))
            d = x - F.reshape(mean, cshape)
            invstd = 1.0 / F.sqrt(F.sum(d * d, axis=axes) * (1.0 / max(n, 1)) + s.eps)
    else:
        mean, invstd = s.running_mean, 1.0 / F.sqrt(s.running_var + s.eps)
    xhat = (x - F.reshape(mean, cshape)) * F.reshape(invstd, cshape)
    gx = gw = gb = None
    if s.needs[0]:
        gxhat = g * F.reshape(w, cshape) if w is not None else g
        if s.training:
            m1 = F.sum(gxhat, axis=axes, keepdims=True) * (1.0 / max(n, 1))
            m2 = F.sum(gxhat * xhat, axis=axes, keepdims=True) * (1.0 / max(n, 1))
            gx = F.reshape(invstd, cshape) * (gxhat - m1 - xhat * m2)
        else:
            gx = gxhat * F.reshape(invstd, cshape)
    if s.needs[1]:
        gw = F.sum(g * xhat, axis=axes)
    if s.needs[2]:
        gb = F.sum(g, axis=axes)
    return gx, gw, gb, None, None


op("batch_norm", "NativeBatchNormBackward0", ("input", "weight", "bias", "running_mean", "running_var"),
   _bn_fwd, _bn_bwd,
   save={"input": (), "weight": (), "running_mean": (), "running_var": (), "result1": (), "result2": ()},
   aux=("result1", "result2"), promote=False, nondiff=("running_mean", "running_var"))


# ---- group norm (NativeGroupNormBackward0) ------------------------------------------------------------------
# NOTE [ Group norm ]
# 1. The C channels split into G groups of C/G consecutive channels; each (sample, group) is normalised
#    over its C/G * HxW values with the biased variance: (N, C, *) is viewed as (N, G, C/G * HxW).
# 2. ``result1`` is the (N, G) mean and ``result2`` the (N, G) ``1 / sqrt(var + eps)``; as PyTorch's
#    node, glassgrad's keeps ``input``, ``weight``, ``result1`` and ``result2`` (not ``bias``) and shows
#    N, C, HxW, group and eps.
# 3. The per-channel weight and bias scale and shift after normalising, as in batch norm.


def _gn_view(shape, group):
    n = shape[0]
    m = 1
    for s in shape[1:]:
        m *= s
    return (n, group, m // group)


def _gn_fwd(xp, x, weight, bias, N, C, HxW, group, eps):
    shape, nd = tuple(x.shape), len(x.shape)
    x3 = xp.reshape(x, _gn_view(shape, group))
    mean = xp.mean(x3, axis=2)
    d = x3 - mean[:, :, None]
    rstd = 1.0 / xp.sqrt(xp.mean(d * d, axis=2) + eps)
    out = xp.reshape(d * rstd[:, :, None], shape)
    cshape = _chan(None, nd)
    if weight is not None:
        out = out * xp.reshape(weight, cshape)
    if bias is not None:
        out = out + xp.reshape(bias, cshape)
    return out, {"result1": mean, "result2": rstd}


def _gn_bwd(F, g, s):
    x, w = s.input, s.weight
    shape = tuple(s.shapes[0])
    nd = len(shape)
    v3 = _gn_view(shape, s.group)
    x3 = F.reshape(x, v3)
    m = v3[2]
    mean, rstd = s.result1, s.result2
    if F.differentiable:  # create_graph: the statistics are functions of x (NOTE [ One formula, two currencies ] 4)
        mean = F.sum(x3, axis=2) * (1.0 / m)
        d = x3 - F.reshape(mean, v3[:2] + (1,))
        rstd = 1.0 / F.sqrt(F.sum(d * d, axis=2) * (1.0 / m) + s.eps)
    mean3, rstd3 = F.reshape(mean, v3[:2] + (1,)), F.reshape(rstd, v3[:2] + (1,))
    xhat3 = (x3 - mean3) * rstd3
    cshape = _chan(None, nd)
    axes = _axes(nd)
    gx = gw = gb = None
    if s.needs[0]:
        gxhat = F.reshape(g * F.reshape(w, cshape) if w is not None else g, v3)
        m1 = F.sum(gxhat, axis=2, keepdims=True) * (1.0 / m)
        m2 = F.sum(gxhat * xhat3, axis=2, keepdims=True) * (1.0 / m)
        gx = F.reshape(rstd3 * (gxhat - m1 - xhat3 * m2), shape)
    if s.needs[1]:
        gw = F.sum(g * F.reshape(xhat3, shape), axis=axes)
    if s.needs[2]:
        gb = F.sum(g, axis=axes)
    return gx, gw, gb


op("group_norm", "NativeGroupNormBackward0", ("input", "weight", "bias"), _gn_fwd, _gn_bwd,
   save={"input": (), "weight": (), "result1": (), "result2": ()}, aux=("result1", "result2"), promote=False)


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
        mean = F.sum(x, axis=axes, keepdims=True) * (1.0 / max(n, 1))
        rstd = 1.0 / F.sqrt(F.sum((x - mean) * (x - mean), axis=axes, keepdims=True) * (1.0 / max(n, 1)) + s.eps)
    xhat = (x - mean) * rstd
    gx = None
    if s.needs[0]:
        gxhat = g * w if w is not None else g
        m1 = F.sum(gxhat, axis=axes, keepdims=True) * (1.0 / max(n, 1))
        m2 = F.sum(gxhat * xhat, axis=axes, keepdims=True) * (1.0 / max(n, 1))
        gx = rstd * (gxhat - m1 - xhat * m2)
    gw = g * xhat if s.needs[1] else None
    gb = g if s.needs[2] else None
    return gx, gw, gb


op("layer_norm", "NativeLayerNormBackward0", ("input", "weight", "bias"), _ln_fwd, _ln_bwd,
   save={"bias": (), "input": (), "weight": (), "result1": (), "result2": ()}, aux=("result1", "result2"),
   promote=False)


# ---- layer_norm's backward row (NOTE [ Backward rows ] in ops/grad_rows.py) ----------------------
# The gradient of the input, gx = rstd * (h - mean(h) - xhat * mean(h * xhat)) with h = g * weight, as an op
# of its own: a create_graph backward shows PyTorch's NativeLayerNormBackwardBackward0. Its formula
# differentiates gx by g, the input (through xhat and rstd) and the weight; means run over the
# normalized dims.
class _Saved:
    def __init__(self, kw):
        self.__dict__.update(kw)


def _ln_input_grad(xp, g, x, mean, rstd, weight, normalized_shape, eps):
    s = _Saved({"input": x, "weight": weight, "normalized_shape": normalized_shape, "result1": mean,
                "result2": rstd, "eps": eps, "shapes": [tuple(x.shape)], "needs": (True, False, False)})
    return _ln_bwd(array_fns(xp), g, s)[0]


def _ln_bwd_bwd(F, gg, s):
    x, w, g = s.input, s.weight, s.grad_out
    shape = s.shapes[1]
    axes = tuple(range(len(shape) - len(s.normalized_shape), len(shape)))
    n = _count(shape, axes)

    def mean(t):
        return F.sum(t, axis=axes, keepdims=True) * (1.0 / max(n, 1))

    mu, r = s.result1, s.result2
    if F.differentiable:  # NOTE [ One formula, two currencies ] 4
        mu = mean(x)
        r = 1.0 / F.sqrt(mean((x - mu) * (x - mu)) + s.eps)
    xh = (x - mu) * r
    h = g * w if w is not None else g
    dg = dx = dw = None
    if s.needs[0] or s.needs[4]:
        dh = r * (gg - mean(gg) - xh * mean(gg * xh))
        dg = (dh * w if w is not None else dh) if s.needs[0] else None
        dw = dh * g if s.needs[4] else None
    if s.needs[1]:
        mh, mv, mhx, mvx = mean(h), mean(gg), mean(h * xh), mean(gg * xh)
        dx = r * r * (xh * (3.0 * mhx * mvx - (mean(gg * h) - mh * mv)) - mvx * (h - mh) - mhx * (gg - mv))
    return dg, dx, None, None, dw


op("layer_norm_backward", "NativeLayerNormBackwardBackward0", ("grad_out", "input", "result1", "result2", "weight"),
   _ln_input_grad, _ln_bwd_bwd, save={"grad_out": ("input", "weight"), "input": (), "weight": (), "result1": (),
                                       "result2": ()},
   promote=False, nondiff=("result1", "result2"))
grad_of("layer_norm_backward", [("layer_norm", "input", ("input", "result1", "result2", "weight"))])
