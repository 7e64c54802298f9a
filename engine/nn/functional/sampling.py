"""``F.grid_sample`` and ``F.affine_grid``: reading an image at arbitrary points, and the points of an
affine transform (NOTE [ Grid sampling ] and NOTE [ Affine grids ] in engine/ops/nn/sampling.py)."""
from __future__ import annotations

import warnings

from ...backend.dtypes import SHORT_NAMES as _SHORT_NAMES
from ...core.dispatch import apply
from ...core.table import OPS
from ...ops.nn.sampling import BILINEAR, BORDER, NEAREST, REFLECTION, ZEROS

_MODES = {"bilinear": BILINEAR, "nearest": NEAREST}
_PADDING = {"zeros": ZEROS, "border": BORDER, "reflection": REFLECTION}
_DEFAULT_CHANGED = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                    "grid_sample for details.")


def _short(dt):
    return _SHORT_NAMES.get(dt.name, dt.name)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``out[n, :, i, j]`` is ``input[n]`` read at the point ``grid[n, i, j] = (x, y)`` (-1 to 1 across
    the image), with ``bilinear`` or ``nearest`` interpolation and ``zeros``, ``border`` or ``reflection``
    outside. 4-D input (N, C, H, W) with grid (N, H_out, W_out, 2), or 5-D input (N, C, D, H, W) with grid
    (N, D_out, H_out, W_out, 3) (trilinear where 4-D is bilinear)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, UserWarning, stacklevel=2)
        align_corners = False
    if input.ndim != grid.ndim or input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {d} being empty")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"grid_sampler_{input.ndim - 2}d_cpu_kernel_impl\" not implemented for "
                                  f"'{_short(input.dtype)}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_short(input.dtype)} but found {_short(grid.dtype)}")
    if mode == "bicubic":
        raise NotImplementedError("glassgrad's grid_sample has modes 'bilinear' and 'nearest', not 'bicubic'")
    return apply(OPS[f"grid_sampler_{input.ndim - 2}d"], [input, grid],
                 {"interpolation_mode": _MODES[mode], "padding_mode": _PADDING[padding_mode],
                  "align_corners": bool(align_corners)})


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` ((N, 2, 3) for a 4-D ``size`` (N, C, H, W), (N, 3, 4)
    for a 5-D one): ``grid[n, i, j] = theta[n] @ (x_j, y_i, 1)``, ready for :func:`grid_sample`."""
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        k = len(size) - 2
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k + 1}] "
                           f"but got: [{theta.shape[0]}, {k + 1}].")
    return apply(OPS["affine_grid_generator"], [theta], {"size": size, "align_corners": bool(align_corners)})
