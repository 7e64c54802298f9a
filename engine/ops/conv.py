"""im2col / col2im: conv2d as one matrix product over gathered patches."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _backend


@dataclass(frozen=True)
class Geom:
    """Shapes of one conv2d: input (n, c, h, w), kernel (kh, kw), output (oh, ow)."""
    n: int
    c: int
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

    @property
    def oh(self) -> int:
        return (self.h + 2 * self.ph - self.dh * (self.kh - 1) - 1) // self.sh + 1

    @property
    def ow(self) -> int:
        return (self.w + 2 * self.pw - self.dw * (self.kw - 1) - 1) // self.sw + 1

    @property
    def hp(self) -> int:
        return self.h + 2 * self.ph

    @property
    def wp(self) -> int:
        return self.w + 2 * self.pw


_INDEX_CACHE: dict = {}


def _flat_index(xp, g: Geom):
    key = (xp.__name__, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.oh, g.ow, g.wp)
    idx = _INDEX_CACHE.get(key)
    if idx is None:
        i = np.arange(g.kh)[:, None, None, None] * g.dh + np.arange(g.oh)[None, None, :, None] * g.sh
        j = np.arange(g.kw)[None, :, None, None] * g.dw + np.arange(g.ow)[None, None, None, :] * g.sw
        lin = (i * g.wp + j).reshape(-1).astype(np.int64)   # (kh*kw*oh*ow,)
        idx = _INDEX_CACHE[key] = _backend.from_numpy(xp, lin)
    return idx


def _pad(xp, x, g: Geom):
    if g.ph == 0 and g.pw == 0:
        return x
    out = xp.zeros((g.n, g.c, g.hp, g.wp), dtype=x.dtype)
    out[:, :, g.ph:g.ph + g.h, g.pw:g.pw + g.w] = x
    return out


def im2col_array(xp, x, g: Geom):
    """(n, c, h, w) -> (n, c*kh*kw, oh*ow) patches."""
    xpad = _pad(xp, x, g)
    flat = xp.reshape(xpad, (g.n, g.c, g.hp * g.wp))
    cols = xp.take(flat, _flat_index(xp, g), axis=2)      # (n, c, kh*kw*oh*ow)
    return xp.reshape(cols, (g.n, g.c * g.kh * g.kw, g.oh * g.ow))


def col2im_array(xp, cols, g: Geom):
    """Adjoint of im2col: (n, c*kh*kw, oh*ow) -> (n, c, h, w), overlaps summed."""
    c3 = xp.reshape(cols, (g.n, g.c, g.kh * g.kw * g.oh * g.ow))
    out = xp.zeros((g.n, g.c, g.hp * g.wp), dtype=cols.dtype)
    out = _backend.index_put_add(xp, out, (slice(None), slice(None), _flat_index(xp, g)), c3)
    out = xp.reshape(out, (g.n, g.c, g.hp, g.wp))
    if g.ph or g.pw:
        out = out[:, :, g.ph:g.ph + g.h, g.pw:g.pw + g.w]
    return out
