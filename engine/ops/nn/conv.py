"""im2col / col2im: conv2d as one matrix product over gathered patches; the convolution rows
(conv1d/2d/3d and their transposes, ConvolutionBackward0), unfold and fold, and the im2col/col2im rows."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...backend import gaps as _backend
from ...core import fns
from ...core.table import op


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

    @property
    def L(self) -> int:
        """Output positions per image."""
        return self.oh * self.ow

    @property
    def K(self) -> int:
        """Kernel positions."""
        return self.kh * self.kw

    def out_spatial(self, nd: int) -> tuple:
        return (self.oh, self.ow) if nd == 2 else (self.ow,)


@dataclass(frozen=True)
class Geom3:
    """Shapes of one conv3d: input (n, c, d, h, w), kernel (kd, kh, kw); the same interface as Geom."""
    n: int
    c: int
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

    @staticmethod
    def _out(size, k, s, p, d):
        return (size + 2 * p - d * (k - 1) - 1) // s + 1

    @property
    def od(self) -> int:
        return self._out(self.d, self.kd, self.sd, self.pd, self.dd)

    @property
    def oh(self) -> int:
        return self._out(self.h, self.kh, self.sh, self.ph, self.dh)

    @property
    def ow(self) -> int:
        return self._out(self.w, self.kw, self.sw, self.pw, self.dw)

    @property
    def padded(self) -> tuple:
        return (self.d + 2 * self.pd, self.h + 2 * self.ph, self.w + 2 * self.pw)

    @property
    def L(self) -> int:
        return self.od * self.oh * self.ow

    @property
    def K(self) -> int:
        return self.kd * self.kh * self.kw

    def out_spatial(self, nd: int) -> tuple:
        return (self.od, self.oh, self.ow)


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


def _flat_index3(xp, g: Geom3):
    dp, hp, wp = g.padded
    key = (xp.__name__, "3d", g.kd, g.kh, g.kw, g.sd, g.sh, g.sw, g.dd, g.dh, g.dw, g.od, g.oh, g.ow, hp, wp)
    idx = _INDEX_CACHE.get(key)
    if idx is None:
        def axis(n, at):        # 0..n-1 laid along axis ``at`` of a 6-d (kd, kh, kw, od, oh, ow) grid
            shape = [1] * 6
            shape[at] = n
            return np.arange(n).reshape(shape)
        a = axis(g.kd, 0) * g.dd + axis(g.od, 3) * g.sd
        b = axis(g.kh, 1) * g.dh + axis(g.oh, 4) * g.sh
        c = axis(g.kw, 2) * g.dw + axis(g.ow, 5) * g.sw
        lin = ((a * hp + b) * wp + c).reshape(-1).astype(np.int64)     # (kd*kh*kw*od*oh*ow,)
        idx = _INDEX_CACHE[key] = _backend.from_numpy(xp, lin)
    return idx


def _im2col3(xp, x, g: Geom3):
    dp, hp, wp = g.padded
    if (dp, hp, wp) != (g.d, g.h, g.w):
        xpad = xp.zeros((g.n, g.c, dp, hp, wp), dtype=x.dtype)
        xpad[:, :, g.pd:g.pd + g.d, g.ph:g.ph + g.h, g.pw:g.pw + g.w] = x
        x = xpad
    cols = xp.take(xp.reshape(x, (g.n, g.c, dp * hp * wp)), _flat_index3(xp, g), axis=2)
    return xp.reshape(cols, (g.n, g.c * g.K, g.L))


def _col2im3(xp, cols, g: Geom3):
    dp, hp, wp = g.padded
    c3 = xp.reshape(cols, (g.n, g.c, g.K * g.L))
    out = xp.zeros((g.n, g.c, dp * hp * wp), dtype=cols.dtype)
    out = _backend.index_put_add(xp, out, (slice(None), slice(None), _flat_index3(xp, g)), c3)
    out = xp.reshape(out, (g.n, g.c, dp, hp, wp))
    if (dp, hp, wp) != (g.d, g.h, g.w):
        out = out[:, :, g.pd:g.pd + g.d, g.ph:g.ph + g.h, g.pw:g.pw + g.w]
    return out


def _pad(xp, x, g: Geom):
    if g.ph == 0 and g.pw == 0:
        return x
    out = xp.zeros((g.n, g.c, g.hp, g.wp), dtype=x.dtype)
    out[:, :, g.ph:g.ph + g.h, g.pw:g.pw + g.w] = x
    return out


def im2col_array(xp, x, g: Geom):
    """(n, c, h, w) -> (n, c*kh*kw, oh*ow) patches (and (n, c, d, h, w) for a Geom3)."""
    if type(g) is Geom3:
        return _im2col3(xp, x, g)
    xpad = _pad(xp, x, g)
    flat = xp.reshape(xpad, (g.n, g.c, g.hp * g.wp))
    cols = xp.take(flat, _flat_index(xp, g), axis=2)      # (n, c, kh*kw*oh*ow)
    return xp.reshape(cols, (g.n, g.c * g.kh * g.kw, g.oh * g.ow))


def col2im_array(xp, cols, g: Geom):
    """Adjoint of im2col: (n, c*kh*kw, oh*ow) -> (n, c, h, w), overlaps summed."""
    if type(g) is Geom3:
        return _col2im3(xp, cols, g)
    c3 = xp.reshape(cols, (g.n, g.c, g.kh * g.kw * g.oh * g.ow))
    out = xp.zeros((g.n, g.c, g.hp * g.wp), dtype=cols.dtype)
    out = _backend.index_put_add(xp, out, (slice(None), slice(None), _flat_index(xp, g)), c3)
    out = xp.reshape(out, (g.n, g.c, g.hp, g.wp))
    if g.ph or g.pw:
        out = out[:, :, g.ph:g.ph + g.h, g.pw:g.pw + g.w]
    return out


# ---- the op-table rows: convolution and its adjoint (ConvolutionBackward0) -------------------------------
# NOTE [ Convolution ]
# 1. 1-D input (N, C, L) runs as 2-D: seen as (N, C, 1, L) with a height-1 kernel, so one Geom (above)
#    and one im2col/col2im pair serve conv1d, conv2d and their transposes; conv3d gathers its patches
#    the same way from the flattened volume (Geom3).
# 2. ``groups`` G splits the channels into G independent convolutions. im2col orders its rows channel
#    major (c * K + k), so the patches of group j are a contiguous block of rows: (N, C*K, L) viewed as
#    (N, G, C/G*K, L) against a weight viewed as (G, O/G, C/G*K) is one batched matrix product.
# 3. The transposed convolution is the adjoint of the convolution from its output back to its input:
#    forward is col2im(W^T @ x) (what conv's input gradient does) and its backward is a convolution of the
#    gradient (im2col then W @ cols) for the input and a patch product for the weight. ``geom`` describes
#    that forward convolution (from the transposed conv's output to its input).
# 4. When ``output_padding`` is not smaller than the stride (allowed while it is smaller than the
#    dilation), that convolution gives more positions than the input has; the input is zero-extended at
#    the end of each spatial dim to match, and the gradient cut back.
# 5. As PyTorch's ConvolutionBackward0 the node keeps ``input`` and ``weight`` (whichever input needs a
#    gradient, bias included) and shows stride, padding, dilation, transposed, output_padding, groups.


def _as4(xp, a):
    """(N, C, L) as (N, C, 1, L) (NOTE [ Convolution ] 1); 4-D and 5-D arrays unchanged."""
    s = tuple(a.shape)
    return a if len(s) != 3 else xp.reshape(a, s[:2] + (1,) + s[2:])


def _shape4(shape):
    shape = tuple(shape)
    return shape if len(shape) != 3 else shape[:2] + (1,) + shape[2:]


def _bias_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _conv_fwd(xp, x, w, b, geom, groups=1, **_):
    n, o, G = x.shape[0], w.shape[0], groups
    L = geom.L
    cols = im2col_array(xp, _as4(xp, x), geom)                      # (N, C*K, L)
    if G == 1:
        out = xp.matmul(xp.reshape(w, (o, -1)), cols)               # (N, O, L)
    else:
        cols = xp.reshape(cols, (n, G, cols.shape[1] // G, L))
        out = xp.matmul(xp.reshape(w, (G, o // G, -1)), cols)       # (N, G, O/G, L)
    out = xp.reshape(out, (n, o) + geom.out_spatial(len(x.shape) - 2))
    if b is not None:
        out = out + xp.reshape(b, (1, o) + (1,) * (len(x.shape) - 2))
    return out


def _conv_bwd(F, g, s):
    x, w, G, geom = s.input, s.weight, s.groups, s.geom
    xs, ws = tuple(s.shapes[0]), tuple(s.shapes[1])
    n, o = xs[0], ws[0]
    L, kk = geom.L, geom.K
    g4 = F.reshape(g, (n, G, o // G, L))
    gx = gw = gb = None
    if s.needs[0]:
        cols = F.matmul(F.mT(F.reshape(w, (G, o // G, ws[1] * kk))), g4)   # (N, G, C/G*K, L)
        gx = F.reshape(F.col2im(F.reshape(cols, (n, xs[1] * kk, L)), geom), xs)
    if s.needs[1]:
        cols = F.reshape(F.im2col(F.reshape(x, _shape4(xs)), geom), (n, G, ws[1] * kk, L))
        gw = F.reshape(F.sum(F.matmul(g4, F.mT(cols)), axis=0), ws)
    if s.needs[2]:
        gb = F.sum(g, axis=_bias_axes(len(xs)))
    return gx, gw, gb


def _out_of(geom):
    """The positions the convolution described by ``geom`` produces, per spatial dim."""
    return geom.out_spatial(3) if type(geom) is Geom3 else (geom.oh, geom.ow)


def _extend(xp, x, geom):
    """Zero-extend (N, C, *sp) at the end of each spatial dim to the convolution's output positions
    (NOTE [ Convolution ] 4)."""
    sp, full = tuple(x.shape[2:]), _out_of(geom)
    if sp == full:
        return x
    out = xp.zeros(tuple(x.shape[:2]) + full, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(0, k) for k in sp)] = x
    return out


def _conv_t_fwd(xp, x, w, b, geom, groups=1, **_):
    n, ci, G = x.shape[0], x.shape[1], groups
    co = w.shape[1] * G
    L = geom.L
    x3 = xp.reshape(_extend(xp, _as4(xp, x), geom), (n, G, ci // G, L))
    cols = xp.matmul(xp.permute_dims(xp.reshape(w, (G, ci // G, -1)), (0, 2, 1)), x3)   # (N, G, CO/G*K, L)
    out = col2im_array(xp, xp.reshape(cols, (n, co * geom.K, L)), geom)
    if len(x.shape) == 3:
        out = xp.reshape(out, (n, co, geom.w))
    if b is not None:
        out = out + xp.reshape(b, (1, co) + (1,) * (len(x.shape) - 2))
    return out


def _conv_t_bwd(F, g, s):
    x, w, G, geom = s.input, s.weight, s.groups, s.geom
    xs, ws = tuple(s.shapes[0]), tuple(s.shapes[1])
    n, ci = xs[0], xs[1]
    L, kk = geom.L, geom.K
    sp = _shape4(xs)[2:]                      # the input's spatial sizes (1-D seen as height 1)
    full = _out_of(geom)
    extended = sp != full
    keep = (slice(None), slice(None)) + tuple(slice(0, k) for k in sp)
    g_full = (n, geom.c) + ((geom.d, geom.h, geom.w) if type(geom) is Geom3 else (geom.h, geom.w))
    cols = F.reshape(F.im2col(F.reshape(g, g_full), geom), (n, G, ws[1] * kk, L))
    gx = gw = gb = None
    if s.needs[0]:
        gx = F.reshape(F.matmul(F.reshape(w, (G, ci // G, ws[1] * kk)), cols), (n, ci) + full)
        if extended:
            gx = F.index(gx, keep)
        gx = F.reshape(gx, xs)
    if s.needs[1]:
        xe = F.reshape(x, (n, ci) + sp)
        if extended:
            xe = F.scatter_add((n, ci) + full, keep, xe, xe)
        x3 = F.reshape(xe, (n, G, ci // G, L))
        gw = F.reshape(F.sum(F.matmul(x3, F.mT(cols)), axis=0), ws)
    if s.needs[2]:
        gb = F.sum(g, axis=_bias_axes(len(xs)))
    return gx, gw, gb


# ---- F.unfold / F.fold: im2col and col2im as ops of their own (Im2ColBackward0, Col2ImBackward0) --------
def _unfold_fwd(xp, x, geom, **_):
    out = im2col_array(xp, x if len(x.shape) == 4 else xp.reshape(x, (1,) + tuple(x.shape)), geom)
    return out if len(x.shape) == 4 else xp.reshape(out, tuple(out.shape[1:]))


def _unfold_bwd(F, g, s):
    geom = s.geom
    g3 = F.reshape(g, (geom.n, geom.c * geom.kh * geom.kw, geom.oh * geom.ow))
    return (F.reshape(F.col2im(g3, geom), tuple(s.shapes[0])),)


def _fold_fwd(xp, x, geom, **_):
    out = col2im_array(xp, x if len(x.shape) == 3 else xp.reshape(x, (1,) + tuple(x.shape)), geom)
    return out if len(x.shape) == 3 else xp.reshape(out, tuple(out.shape[1:]))


def _fold_bwd(F, g, s):
    geom = s.geom
    g4 = F.reshape(g, (geom.n, geom.c, geom.h, geom.w))
    return (F.reshape(F.im2col(g4, geom), tuple(s.shapes[0])),)


def _register():
    for name in ("conv1d", "conv2d", "conv3d"):
        op(name, "ConvolutionBackward0", ("input", "weight", "bias"), _conv_fwd, _conv_bwd,
           save={"input": (), "weight": ()}, promote=False)    # PyTorch keeps both whichever needs grad
    for name in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        op(name, "ConvolutionBackward0", ("input", "weight", "bias"), _conv_t_fwd, _conv_t_bwd,
           save={"input": (), "weight": ()}, promote=False)
    op("unfold", "Im2ColBackward0", ("self",), _unfold_fwd, _unfold_bwd, promote=False)
    op("fold", "Col2ImBackward0", ("self",), _fold_fwd, _fold_bwd, promote=False)


_register()


fns.register("im2col", array=im2col_array)   # F.im2col, F.col2im (NOTE [ One formula, two currencies ] 5)
fns.register("col2im", array=col2im_array)


def _im2col_op_fwd(xp, x, geom):
    return im2col_array(xp, x, geom)


def _col2im_op_fwd(xp, c, geom):
    return col2im_array(xp, c, geom)


op("im2col", "Im2ColBackward0", ("self",), _im2col_op_fwd, lambda F, g, s: (F.col2im(g, s.geom),),
   promote=False)
op("col2im", "Col2ImBackward0", ("self",), _col2im_op_fwd, lambda F, g, s: (F.im2col(g, s.geom),),
   promote=False)
