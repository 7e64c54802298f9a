"""3-D pooling for the op table: ``F.max_pool3d`` (MaxPool3DWithIndicesBackward0), ``F.avg_pool3d``
(AvgPool3DBackward0) and 3-D adaptive max and average pooling.

NOTE [ 3-D pooling ]
1. As NOTE [ Pooling ] (engine/ops/nn/pool.py) one dim up: every dim before the last three is a batch of
   independent volumes, seen as (P, D, H, W).
2. Max pooling gathers each window from a ``-inf``-padded copy; ``result1`` is the int64 position of
   the window's maximum in its unpadded D*H*W volume. Ties go to the first maximum; a window holding
   NaN gives NaN and the position of its last NaN, as PyTorch's CPU kernel (which replaces the
   running maximum on ``val > max || isnan(val)``). The node keeps ``self`` and ``result1``.
3. Average pooling is separable, one averaging matrix per dim (pool.py's ``_avg_matrix``): the window
   sizes PyTorch divides by are products of per-dim sizes, with or without padding, so
   ``out = A_d . A_h . A_w`` applied along each dim; backward applies the transposes.

NOTE [ 3-D adaptive pooling ]
1. As NOTE [ Pooling ] (engine/ops/nn/pool.py) one dim up: output cell ``(i, j, k)`` covers PyTorch's
   adaptive bins ``[floor(i D / od), ceil((i + 1) D / od))`` along each dim.
2. Max: each cell's input positions are listed in a table, padded to the largest cell by repeating
   the cell's first position; ``result1`` is the int64 position of the first maximum in the D*H*W
   volume. The node keeps ``self`` and ``result1``; backward scatter-adds at ``result1``.
3. Average: separable, one adaptive averaging matrix per dim; backward applies the transposes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op
from .pool import _adaptive_bins, _adaptive_matrix, _avg_matrix, _cached, _const, _lead


@dataclass(frozen=True)
class Pool3d:
    """One 3-D pooling's volume geometry: input (d, h, w), window, stride, padding, dilation, output."""
    d: int
    h: int
    w: int
    kd: int
    kh: int
    kw: int
    sd: int
    sh: int
    sw: int
    pd: int
    ph: int
    pw: int
    dd: int
    dh: int
    dw: int
    od: int
    oh: int
    ow: int


def _volumes(shape):
    lead = tuple(shape[:-3])
    p = 1
    for s in lead:
        p *= s
    return lead, p


def _max_tables(g: Pool3d):
    dims = [(g.d, g.kd, g.sd, g.pd, g.dd, g.od), (g.h, g.kh, g.sh, g.ph, g.dh, g.oh),
            (g.w, g.kw, g.sw, g.pw, g.dw, g.ow)]
    padded = [max(n + 2 * p, (o - 1) * s + dl * (k - 1) + 1) for n, k, s, p, dl, o in dims]
    pos = []
    for axis, (n, k, s, p, dl, o) in enumerate(dims):     # window offset along axes 0-2, output along 3-5
        a = np.arange(k).reshape([k if i == axis else 1 for i in range(6)]) * dl
        b = np.arange(o).reshape([o if i == axis + 3 else 1 for i in range(6)]) * s
        pos.append(a + b)
    pos = np.broadcast_arrays(*pos)
    lin = ((pos[0] * padded[1] + pos[1]) * padded[2] + pos[2]).reshape(-1).astype(np.int64)
    src = (((pos[0] - g.pd) * g.h + (pos[1] - g.ph)) * g.w + (pos[2] - g.pw)).reshape(-1).astype(np.int64)
    return padded, lin, src


def _max3d_fwd(xp, x, geom, kernel_size=(), stride=(), padding=(), dilation=(), ceil_mode=False):
    g = geom
    lead, p = _volumes(tuple(x.shape))
    (dp, hp, wp), lin, src = _cached(("max3d", g), lambda: _max_tables(g))
    dev = getattr(x, "device", None)
    lin_x = _cached(("lin3d", xp.__name__, str(dev), g), lambda: _backend.from_numpy(xp, lin))
    src_x = _cached(("src3d", xp.__name__, str(dev), g), lambda: _backend.from_numpy(xp, src))
    pad = xp.full((p, dp, hp, wp), -math.inf, dtype=x.dtype)
    pad[:, g.pd:g.pd + g.d, g.ph:g.ph + g.h, g.pw:g.pw + g.w] = xp.reshape(x, (p, g.d, g.h, g.w))
    k, n = g.kd * g.kh * g.kw, g.od * g.oh * g.ow
    cols = xp.reshape(xp.take(xp.reshape(pad, (p, dp * hp * wp)), lin_x, axis=1), (p, k, n))
    which = xp.argmax(cols, axis=1)                                  # the first maximum of each window
    nan = xp.isnan(cols)
    if bool(xp.any(nan)):                                            # NOTE [ 3-D pooling ] 2
        last = (k - 1) - xp.argmax(xp.flip(xp.astype(nan, xp.int8), axis=1), axis=1)
        which = xp.where(xp.any(nan, axis=1), last, which)
    out = xp.max(cols, axis=1)
    flat = xp.reshape(which * n + xp.reshape(xp.arange(n, dtype=xp.int64), (1, n)), (-1,))
    idx = xp.reshape(xp.take(src_x, flat), lead + (g.od, g.oh, g.ow))
    return xp.reshape(out, lead + (g.od, g.oh, g.ow)), {"result1": idx}


def _max3d_bwd(F, g, s):
    shape = tuple(s.shapes[0])
    geo = s.geom
    _, p = _volumes(shape)
    n = geo.od * geo.oh * geo.ow
    g2 = F.reshape(g, (p, n))
    idx = F.reshape(s.result1, (p, n))
    gx = F.scatter_add((p, geo.d * geo.h * geo.w), (F.iota(p, 0, 2, g2), idx), g2, g2)
    return (F.reshape(gx, shape),)


op("max_pool3d", "MaxPool3DWithIndicesBackward0", ("self",), _max3d_fwd, _max3d_bwd,
   save={"self": (), "result1": ()}, aux=("result1",), promote=False)


def _avg3d_matrices(g: Pool3d, count_include_pad, divisor_override):
    return [_avg_matrix(n, k, s, p, o, count_include_pad, divisor_override)
            for n, k, s, p, o in ((g.d, g.kd, g.sd, g.pd, g.od), (g.h, g.kh, g.sh, g.ph, g.oh),
                                  (g.w, g.kw, g.sw, g.pw, g.ow))]


def _avg3d_fwd(xp, x, geom, kernel_size=(), stride=(), padding=(), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    g = geom
    lead, p = _volumes(tuple(x.shape))
    key = ("avg3d", xp.__name__, str(getattr(x, "device", None)), str(x.dtype), g, count_include_pad,
           divisor_override)

    def make():
        dt = np.float64 if "64" in str(x.dtype) else np.float32
        ad, ah, aw = _avg3d_matrices(g, count_include_pad, divisor_override)
        return tuple(_backend.from_numpy(xp, a.astype(dt).copy()) for a in (ad, ah, aw.T))
    ad, ah, awt = _cached(key, make)
    y = xp.matmul(ad, xp.reshape(x, (p, g.d, g.h * g.w)))                       # (p, od, h*w)
    y = xp.matmul(xp.matmul(ah, xp.reshape(y, (p * g.od, g.h, g.w))), awt)       # (p*od, oh, ow)
    if divisor_override:
        y = y * (1.0 / divisor_override)
    return xp.reshape(y, lead + (g.od, g.oh, g.ow))


def _avg3d_bwd(F, g, s):
    geo = s.geom
    shape = tuple(s.shapes[0])
    _, p = _volumes(shape)
    ad, ah, aw = _avg3d_matrices(geo, s.count_include_pad, s.divisor_override)
    y = F.reshape(g, (p * geo.od, geo.oh, geo.ow))
    y = F.matmul(F.matmul(_const(F, ah.T.copy(), g), y), _const(F, aw, g))      # (p*od, h, w)
    y = F.matmul(_const(F, ad.T.copy(), g), F.reshape(y, (p, geo.od, geo.h * geo.w)))
    if s.divisor_override:
        y = y * (1.0 / s.divisor_override)
    return (F.reshape(y, shape),)


op("avg_pool3d", "AvgPool3DBackward0", ("self",), _avg3d_fwd, _avg3d_bwd, save={"self": ()}, promote=False)


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
