"""``F.interpolate``: nearest, linear, bilinear, bicubic ... resizing (NOTE [ Interpolation matrices ] in
engine/ops/nn/upsample.py)."""
from __future__ import annotations

import math

import numpy as np

from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS

_MODES = {("nearest", 1): "upsample_nearest1d", ("nearest", 2): "upsample_nearest2d",
          ("nearest-exact", 1): "upsample_nearest_exact1d", ("nearest-exact", 2): "upsample_nearest_exact2d",
          ("linear", 1): "upsample_linear1d", ("bilinear", 2): "upsample_bilinear2d"}
_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, L) or (N, C, H, W) input: nearest, nearest-exact, linear (3-D), bilinear or bicubic (4-D)."""
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode in _NEEDS and input.ndim != _NEEDS[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_NEEDS[mode]}D input")
    spatial = tuple(input.shape[2:])
    dims = len(spatial)
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None:
        out = (size,) * dims if isinstance(size, int) else tuple(size)
        if len(out) != dims:
            raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(spatial)} and output size of {size}. Please provide "
                             "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        scales = (None,) * dims
    else:
        sf = (float(scale_factor),) * dims if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        if len(sf) != dims:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {list(spatial)} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "scale_factor in (s1, s2, ...,sK) format.")
        out = tuple(int(math.floor(n * s)) for n, s in zip(spatial, sf))
        scales = (None,) * dims if recompute_scale_factor else tuple(float(s) for s in sf)
    if mode == "bicubic" and dims == 2 and not antialias:
        return _bicubic(input, out, scales, bool(align_corners))
    key = _MODES.get((mode, dims))
    if key is None or antialias:
        raise NotImplementedError(f"glassgrad's interpolate has modes nearest, nearest-exact, linear (3-D input) "
                                  f"and bilinear (4-D input) without antialias; got mode={mode!r} on "
                                  f"{input.ndim}-D input")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"{key}_out_frame" not implemented for \'Long\'')
    geom = {"in": spatial, "out": out, "scales": scales, "mode": mode, "align_corners": bool(align_corners)}
    return apply(OPS[key], [input], {"geom": geom})


_A = -0.75   # PyTorch's cubic convolution coefficient


def cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale) -> np.ndarray:
    """The (n_out x n_in) float64 matrix of PyTorch's bicubic resize along one axis (NOTE [ Interpolation
    matrices ] 1, with four taps): the source position as bilinear's but not clamped at 0, taps
    floor(src) - 1 .. floor(src) + 2 clamped to the axis, weighted by Keys' kernel with a = -0.75."""
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


def _bicubic(input, out, scales, align_corners):
    """Bicubic resize of (N, C, H, W) input: ``A_h @ x @ A_w.T`` with constant matrices, so the gradient
    is ``A_h.T @ g @ A_w`` (PyTorch's UpsampleBicubic2DBackward0 computes the same sums)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"upsample_bicubic2d_out_frame\" not implemented for '{E._short(input.dtype)}'")
    (h, w), (oh, ow) = tuple(input.shape[2:]), out
    ah = E.tensor(cubic_matrix(h, oh, align_corners, scales[0]), dtype=input.dtype, device=input.device)
    aw = E.tensor(cubic_matrix(w, ow, align_corners, scales[1]), dtype=input.dtype, device=input.device)
    return E.matmul(ah, E.matmul(input, aw.t()))
