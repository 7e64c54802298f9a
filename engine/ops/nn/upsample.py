"""Upsampling (F.interpolate) as one matrix per spatial axis.

NOTE [ Interpolation matrices ]
1. Every mode glassgrad has (nearest, nearest-exact, linear, bilinear) maps each output
   position of an axis to at most two input positions with fixed weights, so an axis is a
   matrix A (out x in) and the output is A_h @ x @ A_w.T (or x @ A_w.T for 1-D input).
2. The backward is the transpose, A_h.T @ g @ A_w: scatter-adding each output's gradient
   into the inputs it came from. Nothing is saved but sizes and scales, as PyTorch's
   UpsampleNearest2DBackward0 / UpsampleBilinear2DBackward0 keep nothing else.
3. The source positions are PyTorch's: nearest takes floor(dst * scale) in float32 (the
   same index when sizes are equal); nearest-exact floor((dst + 0.5) * scale); linear
   (dst + 0.5) * scale - 0.5 clamped at 0, or dst * (in - 1) / (out - 1) with
   align_corners. scale is in / out, or 1 / scale_factor when a scale factor was given.
4. Bicubic is a matrix too, with four taps per output (rule 1's "two" becomes four):
   the source position as linear's but not clamped at 0, taps floor(src) - 1 .. floor(src) + 2
   clamped to the axis, weighted by Keys' cubic kernel with a = -0.75 (PyTorch's). Its node is
   UpsampleBicubic2DBackward0, which also keeps nothing but sizes and scales.
"""
from __future__ import annotations

import functools

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op


@functools.lru_cache(maxsize=256)
def axis_matrix(n_in: int, n_out: int, mode: str, align_corners: bool, scale, dtype: str) -> np.ndarray:
    """Rule 3's matrix (n_out x n_in) for one axis, in ``dtype``."""
    if mode == "bicubic":
        return cubic_matrix(n_in, n_out, align_corners, scale).astype(dtype)
    a = np.zeros((n_out, n_in), dtype=np.float64)
    dst = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
        if mode == "nearest":
            src = dst if n_in == n_out else np.floor(dst.astype(np.float32) * s).astype(np.int64)
        else:
            src = np.floor((dst.astype(np.float32) + np.float32(0.5)) * s).astype(np.int64)
        a[dst, np.minimum(src, n_in - 1)] = 1.0
        return a.astype(dtype)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = s * dst
    else:
        s = 1.0 / scale if scale else n_in / n_out
        src = np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = src - i0
    np.add.at(a, (dst, i0), 1.0 - l1)
    np.add.at(a, (dst, i1), l1)
    return a.astype(dtype)


_A = -0.75   # PyTorch's cubic convolution coefficient


def cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale) -> np.ndarray:
    """Rule 4's (n_out x n_in) float64 matrix of PyTorch's bicubic resize along one axis."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = (1.0 / scale if scale else n_in / n_out) * (dst + 0.5) - 0.5
    base = np.floor(src)
    t = src - base

    def near(x):      # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):       # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    a = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for k, w in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        np.add.at(a, (rows, np.clip(base.astype(np.int64) - 1 + k, 0, n_in - 1)), w)
    return a


def _mats(xp, like, geom):
    """The per-axis matrices of ``geom`` as arrays of ``xp`` in ``like``'s dtype."""
    dt = "float64" if like.dtype == xp.float64 else "float32"
    return [_backend.from_numpy(xp, axis_matrix(n_in, n_out, geom["mode"], geom["align_corners"], s, dt))
            for n_in, n_out, s in zip(geom["in"], geom["out"], geom["scales"])]


def _upsample_fwd(xp, a, geom):
    mats = _mats(xp, a, geom)
    out = xp.matmul(a, xp.matrix_transpose(mats[-1]))        # last axis: x @ A_w.T
    if len(mats) == 2:
        out = xp.matmul(mats[0], out)                         # height: A_h @ (.)
    return out


def _upsample_bwd(F, g, s):
    geom = s.geom
    mats = _mats(F.xp, g, geom) if not F.differentiable else None
    if F.differentiable:
        E = F.E   # the torch.* namespace (core/fns.py rule 5)
        dt = "float64" if g.dtype is E.float64 else "float32"
        mats = [E.tensor(axis_matrix(i, o, geom["mode"], geom["align_corners"], sc, dt))
                for i, o, sc in zip(geom["in"], geom["out"], geom["scales"])]
    out = F.matmul(g, mats[-1])                               # NOTE 2: g @ A_w
    if len(mats) == 2:
        out = F.matmul(F.mT(mats[0]), out)                    # A_h.T @ (.)
    return (out,)


for _name, _node in (("upsample_nearest1d", "UpsampleNearest1DBackward0"),
                     ("upsample_nearest2d", "UpsampleNearest2DBackward0"),
                     ("upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0"),
                     ("upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0"),
                     ("upsample_linear1d", "UpsampleLinear1DBackward0"),
                     ("upsample_bilinear2d", "UpsampleBilinear2DBackward0"),
                     ("upsample_bicubic2d", "UpsampleBicubic2DBackward0")):
    op(_name, _node, ("self",), _upsample_fwd, _upsample_bwd, promote=False, float_op=True)
