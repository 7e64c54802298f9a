"""``F.unfold`` / ``F.fold``: im2col and its adjoint col2im, as ops of their own (Im2ColBackward0,
Col2ImBackward0)."""
from __future__ import annotations

from ...core.dispatch import apply
from ...core.table import OPS
from ...ops.nn.conv import Geom


def _pair(v, what):
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) != 2:
        raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(v)}")
    return v


def _args(kernel_size, dilation, padding, stride):
    k, d, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"), _pair(padding, "padding"),
                  _pair(stride, "stride"))
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: "
                           f"{k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: "
                           f"{d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, d, p, s


def _attrs(geom, k, d, p, s):
    return {"geom": geom, "kernel_size": k, "dilation": d, "padding": p, "stride": s}


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a batched (N, C, H, W) or unbatched (C, H, W) input as columns:
    (N, C * kh * kw, L), L the number of block positions (im2col)."""
    if input.ndim < 3:
        n = input.ndim
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], but "
                         f"got {n})")
    if input.ndim > 4 or any(sz == 0 for sz in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    k, d, p, s = _args(kernel_size, dilation, padding, stride)
    c, h, w = input.shape[-3:]
    n = input.shape[0] if input.ndim == 4 else 1
    geom = Geom(n, c, h, w, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1])
    if geom.oh < 1 or geom.ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), dilation=("
                           f"{d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of sliding "
                           f"blocks as ({max(geom.oh, 0)}, {max(geom.ow, 0)}), but its components must be at least "
                           f"one.")
    return apply(OPS["unfold"], [input], _attrs(geom, k, d, p, s))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: columns (N, C * kh * kw, L) or (C * kh * kw, L) summed back into an
    (N, C, *output_size) image, overlapping blocks added (col2im)."""
    if input.ndim not in (2, 3) or any(sz == 0 for sz in input.shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    o = _pair(output_size, "output_size")
    k, d, p, s = _args(kernel_size, dilation, padding, stride)
    rows, cols = input.shape[-2:]
    if rows % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={rows} and kernel_size=({k[0]}, {k[1]}).")
    n = input.shape[0] if input.ndim == 3 else 1
    geom = Geom(n, rows // (k[0] * k[1]), o[0], o[1], k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1])
    if geom.oh < 1 or geom.ow < 1 or geom.oh * geom.ow != cols:
        raise RuntimeError(f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {geom.oh} * {geom.ow} = "
                           f"{geom.oh * geom.ow}, but got input.size(2)={cols}.")
    return apply(OPS["fold"], [input], _attrs(geom, k, d, p, s))
