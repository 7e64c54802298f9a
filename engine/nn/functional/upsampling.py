"""``F.interpolate``: nearest, linear, bilinear, bicubic ... resizing (NOTE [ Interpolation matrices ] in
engine/ops/nn/upsample.py)."""
from __future__ import annotations

import math

from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS

_MODES = {("nearest", 1): "upsample_nearest1d", ("nearest", 2): "upsample_nearest2d",
          ("nearest-exact", 1): "upsample_nearest_exact1d", ("nearest-exact", 2): "upsample_nearest_exact2d",
          ("linear", 1): "upsample_linear1d", ("bilinear", 2): "upsample_bilinear2d",
          ("bicubic", 2): "upsample_bicubic2d"}
_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


# the kernel PyTorch's CPU interpolate names when it refuses an integer or bool input
_INT_KERNELS = {"nearest": "compute_indices_weights_nearest", "nearest-exact": "compute_indices_weights_nearest",
                "linear": "compute_indices_weights_linear", "bicubic": "compute_indices_weights_cubic",
                "bilinear": "upsample_bilinear2d_channels_last"}


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
    key = _MODES.get((mode, dims))
    if key is None or antialias:
        raise NotImplementedError(f"glassgrad's interpolate has modes nearest, nearest-exact, linear (3-D input) "
                                  f"and bilinear or bicubic (4-D input) without antialias; got mode={mode!r} on "
                                  f"{input.ndim}-D input")
    if not input.dtype.is_floating_point:
        if input.dtype.name == "uint8" and mode != "linear":
            raise NotImplementedError(f"glassgrad's interpolate takes floating point input (PyTorch's mode={mode!r} "
                                      "also resizes uint8 images)")
        kernel = "upsample_nearest2d_channels_last" if dims == 2 and mode.startswith("nearest") else _INT_KERNELS[mode]
        raise NotImplementedError(f'"{kernel}" not implemented for \'{E._short(input.dtype)}\'')
    geom = {"in": spatial, "out": out, "scales": scales, "mode": mode, "align_corners": bool(align_corners)}
    return apply(OPS[key], [input], {"geom": geom})
