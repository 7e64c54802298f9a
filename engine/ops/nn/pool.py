"""2-D pooling: the op-table rows behind ``F.max_pool2d``, ``F.avg_pool2d`` and ``F.adaptive_avg_pool2d``,
and fractional max pooling (NOTE [ Fractional max pooling ] below).

NOTE [ Pooling ]
1. Every dim before the last two is a batch of independent planes; the kernels see
   ``(P, H, W)``, so 3-D (unbatched) and 4-D input take one path.
2. Max pooling gathers each window from a ``-inf``-padded copy (the im2col index idea of
   engine/ops/nn/conv.py), takes the first maximum of each window (PyTorch's CPU order) and
   returns ``result1``: the int64 position of that maximum in its unpadded ``H * W`` plane,
   as PyTorch's indices. The node keeps ``self`` and ``result1``; backward scatter-adds the
   gradient at ``result1``.
3. Average pooling is separable: ``out = A_h @ x @ A_w.T`` where row i of ``A_h`` holds
   ``1 / d_i`` over window i's rows (``d_i`` the window's height as PyTorch counts it:
   with or without padding). Adaptive pooling is the same with PyTorch's adaptive bins
   ``[floor(i H / oh), ceil((i + 1) H / oh))``. Backward is ``A_h.T @ g @ A_w``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op


@dataclass(frozen=True)
class Pool2d:
    """One pooling's plane geometry: input (h, w), window (kh, kw), stride, padding, dilation, output."""
    h: int
    w: int
    kh: int
    kw: int
    sh: int
    sw: int
    ph: int
    pw: int
    dh: int
    dw: int
    oh: int
    ow: int


def out_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _planes(x):
    lead = tuple(x.shape[:-2])
    p = 1
    for s in lead:
        p *= s
    return lead, p


_CACHE: dict = {}


def _cached(key, make):
    v = _CACHE.get(key)
    if v is None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        v = _CACHE[key] = make()
    return v


# ---- max pooling (NOTE [ Pooling ] 2) -------------------------------------------------------------
def _max_tables(g: Pool2d):
    """Padded sizes, each window element's padded flat index (K*L,), and its unpadded index."""
    hp = max(g.h + 2 * g.ph, (g.oh - 1) * g.sh + g.dh * (g.kh - 1) + 1)
    wp = max(g.w + 2 * g.pw, (g.ow - 1) * g.sw + g.dw * (g.kw - 1) + 1)
    i = np.arange(g.kh)[:, None, None, None] * g.dh + np.arange(g.oh)[None, None, :, None] * g.sh
    j = np.arange(g.kw)[None, :, None, None] * g.dw + np.arange(g.ow)[None, None, None, :] * g.sw
    i, j = np.broadcast_arrays(i, j)
    lin = (i * wp + j).reshape(-1).astype(np.int64)
    src = ((i - g.ph) * g.w + (j - g.pw)).reshape(-1).astype(np.int64)
    return hp, wp, lin, src


def _max_fwd(xp, x, geom, kernel_size=(), stride=(), padding=(), dilation=(), ceil_mode=False):
    g = geom
    lead, p = _planes(x)
    hp, wp, lin, src = _cached(("max", g), lambda: _max_tables(g))
    dev = getattr(x, "device", None)
    lin_x = _cached(("lin", xp.__name__, str(dev), g), lambda: _backend.from_numpy(xp, lin))
    src_x = _cached(("src", xp.__name__, str(dev), g), lambda: _backend.from_numpy(xp, src))
    low = -math.inf if xp.isdtype(x.dtype, "real floating") else xp.iinfo(x.dtype).min
    pad = xp.full((p, hp, wp), low, dtype=x.dtype)
    pad[:, g.ph:g.ph + g.h, g.pw:g.pw + g.w] = xp.reshape(x, (p, g.h, g.w))
    k, n = g.kh * g.kw, g.oh * g.ow
    cols = xp.reshape(xp.take(xp.reshape(pad, (p, hp * wp)), lin_x, axis=1), (p, k, n))
    which = xp.argmax(cols, axis=1)                                   # the first maximum of each window
    out = xp.max(cols, axis=1)
    flat = xp.reshape(which * n + xp.reshape(xp.arange(n, dtype=xp.int64), (1, n)), (-1,))
    idx = xp.reshape(xp.take(src_x, flat), lead + (g.oh, g.ow))
    return xp.reshape(out, lead + (g.oh, g.ow)), {"result1": idx}


def _max_bwd(F, g, s):
    shape = s.shapes[0]
    geo = s.geom
    p = 1
    for d in shape[:-2]:
        p *= d
    n = geo.oh * geo.ow
    g2 = F.reshape(g, (p, n))
    idx = F.reshape(s.result1, (p, n))
    gx = F.scatter_add((p, geo.h * geo.w), (F.iota(p, 0, 2, g2), idx), g2, g2)
    return (F.reshape(gx, shape),)


op("max_pool2d", "MaxPool2DWithIndicesBackward0", ("self",), _max_fwd, _max_bwd,
   save={"self": (), "result1": ()}, aux=("result1",), promote=False)


def _adaptive_bins(size, out):
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _adaptive_max_tables(g: Pool2d):
    """Each output bin's input positions (flat, in the unpadded plane), padded to the largest bin by
    repeating the bin's first position (a repeat changes neither the maximum nor the first argmax)."""
    rows, cols = _adaptive_bins(g.h, g.oh), _adaptive_bins(g.w, g.ow)
    k = max(b - a for a, b in rows) * max(b - a for a, b in cols)
    table = np.empty((k, g.oh * g.ow), dtype=np.int64)
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            pos = [r * g.w + c for r in range(r0, r1) for c in range(c0, c1)]
            table[:, i * g.ow + j] = pos + [pos[0]] * (k - len(pos))
    return k, table.reshape(-1)


def _adaptive_max_fwd(xp, x, geom):
    g = geom
    lead, p = _planes(x)
    k, table = _cached(("amax", g), lambda: _adaptive_max_tables(g))
    dev = getattr(x, "device", None)
    idx_x = _cached(("amax_idx", xp.__name__, str(dev), g), lambda: _backend.from_numpy(xp, table))
    n = g.oh * g.ow
    cols = xp.reshape(xp.take(xp.reshape(x, (p, g.h * g.w)), idx_x, axis=1), (p, k, n))
    which = xp.argmax(cols, axis=1)
    out = xp.max(cols, axis=1)
    flat = xp.reshape(which * n + xp.reshape(xp.arange(n, dtype=xp.int64), (1, n)), (-1,))
    idx = xp.reshape(xp.take(idx_x, flat), lead + (g.oh, g.ow))
    return xp.reshape(out, lead + (g.oh, g.ow)), {"result1": idx}


op("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", ("self",), _adaptive_max_fwd, _max_bwd,
   save={"self": (), "result1": ()}, aux=("result1",), promote=False)


# ---- average and adaptive average pooling (NOTE [ Pooling ] 3) -------------------------------------
def _avg_matrix(size, k, s, p, out, count_include_pad, divisor_override):
    a = np.zeros((out, size))
    for i in range(out):
        start = i * s - p
        end = min(start + k, size + p)
        whole = end - start
        start, end = max(start, 0), min(end, size)
        if divisor_override:
            a[i, start:end] = 1.0
        else:
            a[i, start:end] = 1.0 / (whole if count_include_pad else end - start)
    return a


def _adaptive_matrix(size, out):
    a = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        a[i, start:end] = 1.0 / (end - start)
    return a


def _matrices(geom, count_include_pad, divisor_override, adaptive):
    g = geom
    if adaptive:
        return _adaptive_matrix(g.h, g.oh), _adaptive_matrix(g.w, g.ow)
    return (_avg_matrix(g.h, g.kh, g.sh, g.ph, g.oh, count_include_pad, divisor_override),
            _avg_matrix(g.w, g.kw, g.sw, g.pw, g.ow, count_include_pad, divisor_override))


def _scale(divisor_override, adaptive):
    return 1.0 / divisor_override if (divisor_override and not adaptive) else 1.0


def _separable_fwd(adaptive):
    def fwd(xp, x, geom, kernel_size=(), stride=(), padding=(), ceil_mode=False, count_include_pad=True,
            divisor_override=None):
        key = (xp.__name__, str(getattr(x, "device", None)), str(x.dtype), geom, count_include_pad,
               divisor_override, adaptive)

        def make():
            ah, aw = _matrices(geom, count_include_pad, divisor_override, adaptive)
            dt = np.float64 if "64" in str(x.dtype) else np.float32
            return _backend.from_numpy(xp, ah.astype(dt)), _backend.from_numpy(xp, aw.T.astype(dt).copy())
        ah, awt = _cached(key, make)
        out = xp.matmul(xp.matmul(ah, x), awt)
        k = _scale(divisor_override, adaptive)
        return out * k if k != 1.0 else out
    return fwd


def _const(F, arr, like):
    """A constant array in F's currency (a Tensor when the backward is recorded)."""
    if F.differentiable:
        E = F.E   # the torch.* namespace (core/fns.py rule 5)
        return E.tensor(arr, dtype=like.dtype, device=like.device)
    xp = F.xp
    return _backend.from_numpy(xp, arr.astype(np.float64 if "64" in str(like.dtype) else np.float32))


def _separable_bwd(adaptive):
    def bwd(F, g, s):
        cip = getattr(s, "count_include_pad", True) if not adaptive else True
        dov = None if adaptive else s.divisor_override
        ah, aw = _matrices(s.geom, cip, dov, adaptive)
        gx = F.matmul(F.matmul(_const(F, ah.T.copy(), g), g), _const(F, aw, g))
        k = _scale(dov, adaptive)
        return (gx * k if k != 1.0 else gx,)
    return bwd


op("avg_pool2d", "AvgPool2DBackward0", ("self",), _separable_fwd(False), _separable_bwd(False),
   save={"self": ()}, promote=False)
op("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", ("self",), _separable_fwd(True), _separable_bwd(True),
   save={"self": ()}, promote=False)


def _lead(shape, k):
    lead = tuple(shape[:-k]) if k < len(shape) else ()
    p = 1
    for s in lead:
        p *= s
    return lead, p


# ---- fractional max pooling (NOTE [ Fractional max pooling ]) --------------------------------------------
# NOTE [ Fractional max pooling ]
# 1. Each plane gets its own windows: along a dim of size n pooled to o outputs with window k, window i
#    starts at trunc((i + u) a) - trunc(u a), a = (n - k) / (o - 1), the last one at n - k, where u is the
#    plane's sample in [0, 1) (``_random_samples[b, c]``: index 0 for the width, 1 for the height). The
#    arithmetic runs in the input's dtype, as PyTorch's kernel, so the same samples give the same windows.
# 2. Within a window the first maximum wins; ``result1`` is its int64 position in the H*W plane. The node
#    keeps ``self`` and ``result1``; backward scatter-adds at ``result1`` (NOTE [ Pooling ] 2).
def fractional_starts(samples, size, out, k, dtype):
    """(P, out) int64 window starts for the (P,) samples (NOTE [ Fractional max pooling ] 1)."""
    u = np.asarray(samples, dtype=dtype)
    seq = np.zeros((u.shape[0], out), dtype=np.int64)
    if out > 1:
        alpha = dtype(size - k) / dtype(out - 1)
        i = np.arange(out, dtype=dtype)[None, :]
        seq = (np.trunc((i + u[:, None]) * alpha).astype(np.int64)
               - np.trunc(u * alpha).astype(np.int64)[:, None])
    if out > 0:
        seq[:, -1] = size - k
    return seq


def _frac_fwd(xp, x, random_samples, kernel_size, output_size):
    (kh, kw), (oh, ow) = kernel_size, output_size
    lead, p = _lead(tuple(x.shape), 2)
    h, w = x.shape[-2:]
    dt = np.float64 if "64" in str(x.dtype) else np.float32
    c = x.shape[-3]
    u = _backend.to_numpy(xp, random_samples)[:max(p // c, 1), :c].reshape(p, 2)
    rows = fractional_starts(u[:, 1], h, oh, kh, dt)[:, :, None] + np.arange(kh)[None, None, :]    # (P, oh, kh)
    cols = fractional_starts(u[:, 0], w, ow, kw, dt)[:, :, None] + np.arange(kw)[None, None, :]    # (P, ow, kw)
    pos = (rows[:, :, None, :, None] * w + cols[:, None, :, None, :]).reshape(p, oh * ow, kh * kw)
    flat = (pos + (np.arange(p) * h * w)[:, None, None]).reshape(-1)
    vals = xp.reshape(xp.take(xp.reshape(x, (-1,)), _backend.from_numpy(xp, flat)), (p, oh * ow, kh * kw))
    which = xp.argmax(vals, axis=2)                                  # the first maximum of each window
    out = xp.max(vals, axis=2)
    at = xp.reshape(xp.reshape(xp.arange(p * oh * ow, dtype=xp.int64), (p, oh * ow)) * (kh * kw) + which, (-1,))
    idx = xp.take(_backend.from_numpy(xp, pos.reshape(-1)), at)
    return xp.reshape(out, lead + (oh, ow)), {"result1": xp.reshape(idx, lead + (oh, ow))}


def _frac_bwd(F, g, s):
    shape = tuple(s.shapes[0])
    _, p = _lead(shape, 2)
    g2 = F.reshape(g, (p, -1))
    idx = F.reshape(s.result1, (p, -1))
    gx = F.scatter_add((p, shape[-2] * shape[-1]), (F.iota(p, 0, 2, g2), idx), g2, g2)
    return F.reshape(gx, shape), None


op("fractional_max_pool2d", "FractionalMaxPool2DBackward0", ("self", "random_samples"), _frac_fwd, _frac_bwd,
   save={"self": (), "result1": ()}, aux=("result1",), promote=False, nondiff=("random_samples",))
