"""The op-table rows behind ``F.grid_sample`` (GridSampler2DBackward0, GridSampler3DBackward0 for volumes)
and ``F.affine_grid`` (AffineGridGeneratorBackward0).

NOTE [ Grid sampling ]
1. ``grid[n, i, j] = (x, y)`` names a point of image ``n`` in coordinates from -1 to 1: with
   ``align_corners`` -1 and 1 are the centres of the corner pixels (``ix = (x + 1) / 2 * (W - 1)``),
   without it they are the outer edges of the corner pixels (``ix = ((x + 1) * W - 1) / 2``).
2. ``padding_mode`` says what lies outside the image: ``zeros``, ``border`` (the coordinate is clipped
   to [0, W - 1]) or ``reflection`` (the coordinate is mirrored at the edges, then clipped). Clipping
   passes no gradient to the grid at or past an edge; a mirror flips its sign.
3. ``bilinear`` mixes the four pixels around the point with weights ``(1 - tx)(1 - ty)``, ``tx (1 - ty)``,
   ``(1 - tx) ty``, ``tx ty`` (``tx = ix - floor(ix)``); a neighbour outside the image adds nothing.
   ``nearest`` takes the pixel at ``ix`` and ``iy`` rounded half to even; its grid gradient is zero.
   Volumes (5-D input, grid (x, y, z)) are the same one dim up: eight neighbours, weights the products
   of one factor per dim (trilinear), though PyTorch still calls the mode ``bilinear``.
4. Backward: the input's gradient scatter-adds each output gradient into the pixels it read, with their
   weights; the grid's gradient is ``sum_c g * d out / d ix`` times ``d ix / d x`` (the scale of rule 1
   and the signs of rule 2). Everything is written once against ``F`` (NOTE [ One formula, two
   currencies ]), so the forward runs the same code on arrays and ``create_graph=True`` works.
5. The node keeps ``input`` and ``grid``, as PyTorch's.

NOTE [ Affine grids ]
1. ``affine_grid(theta, (N, C, H, W))`` is ``base @ theta[n].T`` for the (H*W, 3) base grid of points
   ``(x_j, y_i, 1)``, the x_j and y_i evenly spaced in [-1, 1] (shrunk by (W - 1) / W without
   ``align_corners``, so they are pixel centres); 3-D is the same with (x, y, z, 1).
2. The node keeps no tensor (only ``size`` and ``align_corners``): the gradient is
   ``g[n].T @ base``, and ``base`` is rebuilt from the size.
"""
from __future__ import annotations

import itertools

import numpy as np

from ...backend import dtypes as _dtype
from ...core.fns import array_fns
from ...core.table import op
from .pool import _cached, _const


BILINEAR, NEAREST = 0, 1
ZEROS, BORDER, REFLECTION = 0, 1, 2


# ---- coordinates (NOTE [ Grid sampling ] 1-2) ------------------------------------------------------------
def _ones_like(F, x):
    return F.zeros(F.shape(x), x) + 1.0


def _clip(F, x, size):
    """Clamp to [0, size - 1]; the gradient factor is 0 at or past either edge."""
    hi = float(size - 1)
    low, high = F.le(x, 0.0), F.ge(x, hi)
    y = F.where(low, 0.0, F.where(high, hi, x))
    d = F.where(F.logical_or(low, high), 0.0, _ones_like(F, x))
    return y, d


def _reflect(F, x, twice_low, twice_high):
    """Mirror into [twice_low / 2, twice_high / 2]; the gradient factor is +1 or -1."""
    if twice_low == twice_high:
        zero = F.zeros(F.shape(x), x)
        return zero, zero
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    x = x - low
    sign = 1.0 - 2.0 * F.astype(F.lt(x, 0.0), F.dtype(x))
    x = F.abs(x)
    flips = F.floor(x / span)
    extra = x - flips * span
    odd = F.eq(flips - 2.0 * F.floor(flips / 2.0), 1.0)
    return F.where(odd, span - extra + low, extra + low), F.where(odd, -sign, sign)


def source_index(F, coord, size, padding_mode, align_corners):
    """Pixel coordinate of each grid coordinate and d(pixel)/d(grid coordinate)."""
    if align_corners:
        x, d = (coord + 1.0) / 2.0 * float(size - 1), float(size - 1) / 2.0
    else:
        x, d = ((coord + 1.0) * float(size) - 1.0) / 2.0, float(size) / 2.0
    d = _ones_like(F, coord) * d
    if padding_mode == BORDER:
        x, dc = _clip(F, x, size)
        d = d * dc
    elif padding_mode == REFLECTION:
        x, dr = _reflect(F, x, 0, 2 * (size - 1)) if align_corners else _reflect(F, x, -1, 2 * size - 1)
        x, dc = _clip(F, x, size)
        d = d * dr * dc
    return x, d


def _round_half_even(F, x):
    r = F.floor(x + 0.5)
    tie = F.eq(r - x, 0.5)
    odd = F.eq(r - 2.0 * F.floor(r / 2.0), 1.0)
    return F.where(F.logical_and(tie, odd), r - 1.0, r)


# ---- the pixels each output reads (NOTE [ Grid sampling ] 3) ---------------------------------------------
def _taps(F, grid, sizes, mode, padding_mode, align_corners):
    """The pixels each output reads, for ``sizes`` the spatial sizes ((H, W) or (D, H, W)): a list of
    (valid, flat index (N, P) int64, weight (N, P), [d weight / d coordinate, per grid component]) and
    [d coordinate / d grid component]. Grid component 0 is x (the last dim), 1 is y, 2 is z."""
    n, k = F.shape(grid)[0], len(sizes)
    dim_size = [sizes[k - 1 - c] for c in range(k)]                      # component c indexes this size
    coords, dcoords = [], []
    for c in range(k):
        u, du = source_index(F, F.reshape(F.index(grid, (Ellipsis, c)), (n, -1)), dim_size[c], padding_mode,
                             align_corners)
        coords.append(u)
        dcoords.append(du)
    if mode == NEAREST:
        corners = [([_round_half_even(F, u) for u in coords], None, None)]
    else:
        low = [F.floor(u) for u in coords]
        frac = [u - lo for u, lo in zip(coords, low)]
        corners = []
        for bits in itertools.product((0, 1), repeat=k):
            pos = [lo + 1.0 if b else lo for lo, b in zip(low, bits)]
            factors = [t if b else 1.0 - t for t, b in zip(frac, bits)]
            weight = factors[0]
            for f in factors[1:]:
                weight = weight * f
            dws = []
            for c in range(k):
                dw = None
                for e in range(k):
                    if e != c:
                        dw = factors[e] if dw is None else dw * factors[e]
                dw = _ones_like(F, frac[c]) if dw is None else dw
                dws.append(dw if bits[c] else -dw)
            corners.append((pos, weight, dws))
    taps = []
    for pos, wt, dws in corners:
        valid, flat, stride = None, None, 1
        for c in range(k):
            inside = F.logical_and(F.ge(pos[c], 0.0), F.le(pos[c], float(dim_size[c] - 1)))
            valid = inside if valid is None else F.logical_and(valid, inside)
            flat = pos[c] * float(stride) if flat is None else flat + pos[c] * float(stride)
            stride *= dim_size[c]
        flat = F.astype(F.where(valid, flat, 0.0), _dtype.int64)
        wt = _ones_like(F, pos[0]) if wt is None else wt
        taps.append((valid, flat, F.where(valid, wt, 0.0), dws))
    return taps, dcoords


def _gather(F, x3, flat):
    """x3 (N, C, S) read at flat (N, P): (N, C, P)."""
    n, c = F.shape(x3)[:2]
    return F.index(x3, (F.iota(n, 0, 3, flat), F.iota(c, 1, 3, flat), F.expand_dims(flat, axis=1)))


def _grid_fwd(xp, input, grid, interpolation_mode=BILINEAR, padding_mode=ZEROS, align_corners=False):
    F = array_fns(xp)
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])
    x3 = xp.reshape(input, (n, c, -1))
    taps, _ = _taps(F, grid, spatial, interpolation_mode, padding_mode, align_corners)
    out = None
    for _valid, flat, wt, _dws in taps:
        term = xp.reshape(wt, (n, 1, -1)) * _gather(F, x3, flat)
        out = term if out is None else out + term
    return xp.reshape(out, (n, c) + tuple(grid.shape[1:-1]))


def _grid_bwd(F, g, s):
    shape, gshape = tuple(s.shapes[0]), tuple(s.shapes[1])
    n, c, spatial = shape[0], shape[1], shape[2:]
    size = 1
    for d in spatial:
        size *= d
    k = len(spatial)
    g3 = F.reshape(g, (n, c, -1))
    taps, dcoords = _taps(F, s.grid, spatial, s.interpolation_mode, s.padding_mode, s.align_corners)
    gin = ggrid = None
    if s.needs[0]:
        for _valid, flat, wt, _dws in taps:
            vals = g3 * F.expand_dims(wt, axis=1)
            idx = (F.iota(n, 0, 3, flat), F.iota(c, 1, 3, flat), F.expand_dims(flat, axis=1))
            part = F.scatter_add((n, c, size), idx, vals, vals)
            gin = part if gin is None else gin + part
        gin = F.reshape(gin, shape)
    if len(s.needs) > 1 and s.needs[1]:
        if s.interpolation_mode == NEAREST:
            ggrid = F.zeros(gshape, g)
        else:
            x3 = F.reshape(s.input, (n, c, size))
            parts = [None] * k
            for valid, flat, _wt, dws in taps:
                v = F.where(valid, F.sum(g3 * _gather(F, x3, flat), axis=1), 0.0)     # (N, P): g . input here
                for comp in range(k):
                    term = v * dws[comp]
                    parts[comp] = term if parts[comp] is None else parts[comp] + term
            ggrid = F.concat([F.reshape(parts[comp] * dcoords[comp], gshape[:-1] + (1,)) for comp in range(k)],
                             axis=k + 1)
    return gin, ggrid


op("grid_sampler_2d", "GridSampler2DBackward0", ("input", "grid"), _grid_fwd, _grid_bwd,
   save={"input": (), "grid": ()}, promote=False)
op("grid_sampler_3d", "GridSampler3DBackward0", ("input", "grid"), _grid_fwd, _grid_bwd,
   save={"input": (), "grid": ()}, promote=False)


# ---- affine grids (NOTE [ Affine grids ]) ----------------------------------------------------------------
def _steps(n, align_corners):
    if n <= 1:
        return np.zeros(max(n, 0))
    v = np.linspace(-1.0, 1.0, n)
    return v if align_corners else v * (n - 1) / n


def base_grid(size, align_corners):
    """(prod(spatial), k + 1) points (x, y[, z], 1), x varying fastest, as float64 NumPy."""
    spatial = tuple(size[2:])
    axes = [_steps(s, align_corners) for s in spatial]          # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]              # x (W) first, then y, then z
    return np.stack(cols + [np.ones(cols[0].shape)], axis=1)


def _affine_fwd(xp, theta, size, align_corners=False):
    dt = str(theta.dtype)
    key = ("affine", xp.__name__, str(getattr(theta, "device", None)), dt, tuple(size), align_corners)
    from ...backend import gaps as _backend
    base = _cached(key, lambda: _backend.from_numpy(
        xp, base_grid(size, align_corners).astype(np.float64 if "64" in dt else np.float32)))
    out = xp.matmul(xp.reshape(base, (1,) + tuple(base.shape)), array_fns(xp).mT(theta))
    return xp.reshape(out, (size[0],) + tuple(size[2:]) + (len(size) - 2,))


def _affine_bwd(F, g, s):
    size = s.size
    k = len(size) - 2
    base = _const(F, base_grid(size, s.align_corners), g)
    g2 = F.reshape(g, (size[0], -1, k))
    return (F.matmul(F.mT(g2), base),)


op("affine_grid_generator", "AffineGridGeneratorBackward0", ("theta",), _affine_fwd, _affine_bwd, promote=False)
