"""More pooling for the op table: max unpooling (``F.max_unpool2d``/``3d``), 3-D adaptive max and
average pooling, fractional max pooling (NOTE [ Fractional max pooling ] below).

NOTE [ Max unpooling ]
1. ``max_unpool`` is max pooling's partial inverse: every dim before the last two (three) is a
   batch of planes (volumes), seen as ``(P, n)``; the output is zeros of ``(P, prod(output_size))``
   with ``input[p, i]`` written at ``indices[p, i]`` (the positions ``max_pool*(return_indices=True)``
   hands back). Two inputs aimed at one position: the later one stays, as PyTorch's CPU loop.
2. The node keeps only ``indices``: backward gathers the gradient at them, so an input's gradient
   is the output gradient at the position it was written to (and a lost duplicate still reads it).
3. The frontend checks every index against the output plane first, with PyTorch's message.

NOTE [ 3-D adaptive pooling ]
1. As NOTE [ Pooling ] (engine/ops/pool.py) one dim up: output cell ``(i, j, k)`` covers PyTorch's
   adaptive bins ``[floor(i D / od), ceil((i + 1) D / od))`` along each dim.
2. Max: each cell's input positions are listed in a table, padded to the largest cell by repeating
   the cell's first position; ``result1`` is the int64 position of the first maximum in the D*H*W
   volume. The node keeps ``self`` and ``result1``; backward scatter-adds at ``result1``.
3. Average: separable, one adaptive averaging matrix per dim; backward applies the transposes.
"""
from __future__ import annotations

import numpy as np

from ..backend import gaps as _backend
from ..derivatives import op
from .pool import _adaptive_bins, _adaptive_matrix, _cached, _const


def _lead(shape, k):
    lead = tuple(shape[:-k]) if k < len(shape) else ()
    p = 1
    for s in lead:
        p *= s
    return lead, p


# ---- max unpooling (NOTE [ Max unpooling ]) -------------------------------------------------------------
def _unpool_fwd(k):
    def fwd(xp, x, indices, output_size):
        lead, p = _lead(tuple(x.shape), k)
        n = 1
        for s in output_size:
            n *= s
        m = 1
        for s in x.shape[len(lead):]:
            m *= s
        out = xp.zeros((p, n), dtype=x.dtype)
        rows = xp.reshape(xp.arange(p, dtype=xp.int64), (p, 1)) * xp.ones((1, m), dtype=xp.int64)
        out = _backend.index_fill(xp, out, (xp.reshape(rows, (-1,)), xp.reshape(indices, (-1,))),
                                  xp.reshape(x, (-1,)))
        return xp.reshape(out, lead + tuple(output_size))
    return fwd


def _unpool_bwd(k):
    def bwd(F, g, s):
        shape = tuple(s.shapes[0])
        _, p = _lead(shape, k)
        g2 = F.reshape(g, (p, -1))
        idx = F.reshape(s.indices, (p, -1))
        return F.reshape(F.index(g2, (F.iota(p, 0, 2, g2), idx)), shape), None
    return bwd


op("max_unpool2d", "MaxUnpool2DBackward0", ("self", "indices"), _unpool_fwd(2), _unpool_bwd(2),
   save={"indices": ()}, promote=False, nondiff=("indices",))
op("max_unpool3d", "MaxUnpool3DBackward0", ("self", "indices"), _unpool_fwd(3), _unpool_bwd(3),
   save={"indices": ()}, promote=False, nondiff=("indices",))


# ---- 3-D adaptive max pooling (NOTE [ 3-D adaptive pooling ] 2) -----------------------------------------
def _adaptive_max3d_table(size, out):
    (d, h, w), (od, oh, ow) = size, out
    bins = [_adaptive_bins(d, od), _adaptive_bins(h, oh), _adaptive_bins(w, ow)]
    k = 1
    for b in bins:
        k *= max(e - s for s, e in b)
    table = np.empty((k, od * oh * ow), dtype=np.int64)
    col = 0
    for z0, z1 in bins[0]:
        for y0, y1 in bins[1]:
            for x0, x1 in bins[2]:
                pos = [(z * h + y) * w + x for z in range(z0, z1) for y in range(y0, y1) for x in range(x0, x1)]
                table[:, col] = pos + [pos[0]] * (k - len(pos))
                col += 1
    return k, table.reshape(-1)


def _adaptive_max3d_fwd(xp, x, size, out):
    lead, p = _lead(tuple(x.shape), 3)
    k, table = _cached(("amax3d", size, out), lambda: _adaptive_max3d_table(size, out))
    dev = getattr(x, "device", None)
    idx_x = _cached(("amax3d_idx", xp.__name__, str(dev), size, out), lambda: _backend.from_numpy(xp, table))
    n = out[0] * out[1] * out[2]
    vol = size[0] * size[1] * size[2]
    cols = xp.reshape(xp.take(xp.reshape(x, (p, vol)), idx_x, axis=1), (p, k, n))
    which = xp.argmax(cols, axis=1)                                   # the first maximum of each cell
    res = xp.max(cols, axis=1)
    flat = xp.reshape(which * n + xp.reshape(xp.arange(n, dtype=xp.int64), (1, n)), (-1,))
    idx = xp.reshape(xp.take(idx_x, flat), lead + tuple(out))
    return xp.reshape(res, lead + tuple(out)), {"result1": idx}


def _adaptive_max3d_bwd(F, g, s):
    shape = tuple(s.shapes[0])
    _, p = _lead(shape, 3)
    g2 = F.reshape(g, (p, -1))
    idx = F.reshape(s.result1, (p, -1))
    vol = s.size[0] * s.size[1] * s.size[2]
    gx = F.scatter_add((p, vol), (F.iota(p, 0, 2, g2), idx), g2, g2)
    return (F.reshape(gx, shape),)


op("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", ("self",), _adaptive_max3d_fwd, _adaptive_max3d_bwd,
   save={"self": (), "result1": ()}, aux=("result1",), promote=False)


# ---- 3-D adaptive average pooling (NOTE [ 3-D adaptive pooling ] 3) -------------------------------------
def _adaptive_avg3d_fwd(xp, x, size, out):
    lead, p = _lead(tuple(x.shape), 3)
    (d, h, w), (od, oh, ow) = size, out
    key = ("aavg3d", xp.__name__, str(getattr(x, "device", None)), str(x.dtype), size, out)

    def make():
        dt = np.float64 if "64" in str(x.dtype) else np.float32
        mats = (_adaptive_matrix(d, od), _adaptive_matrix(h, oh), _adaptive_matrix(w, ow).T)
        return tuple(_backend.from_numpy(xp, a.astype(dt).copy()) for a in mats)
    ad, ah, awt = _cached(key, make)
    y = xp.matmul(ad, xp.reshape(x, (p, d, h * w)))                              # (p, od, h*w)
    y = xp.matmul(xp.matmul(ah, xp.reshape(y, (p * od, h, w))), awt)            # (p*od, oh, ow)
    return xp.reshape(y, lead + (od, oh, ow))


def _adaptive_avg3d_bwd(F, g, s):
    shape = tuple(s.shapes[0])
    _, p = _lead(shape, 3)
    (d, h, w), (od, oh, ow) = s.size, s.out
    ad, ah, aw = _adaptive_matrix(d, od), _adaptive_matrix(h, oh), _adaptive_matrix(w, ow)
    y = F.reshape(g, (p * od, oh, ow))
    y = F.matmul(F.matmul(_const(F, ah.T.copy(), g), y), _const(F, aw, g))      # (p*od, h, w)
    y = F.matmul(_const(F, ad.T.copy(), g), F.reshape(y, (p, od, h * w)))      # (p, d, h*w)
    return (F.reshape(y, shape),)


op("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", ("self",), _adaptive_avg3d_fwd, _adaptive_avg3d_bwd,
   save={"self": ()}, promote=False)


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
