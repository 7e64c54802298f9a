"""``F.conv1d/2d/3d`` and ``F.conv_transpose1d/2d/3d``: arguments checked as PyTorch checks them, in
PyTorch's words, then one ConvolutionBackward0 row each (NOTE [ Convolution ] in engine/ops/nn/conv.py)."""
from __future__ import annotations

from ...backend.dtypes import SHORT_NAMES as _SCALAR
from ...core.dispatch import apply
from ...core.table import OPS
from ...ops.nn.conv import Geom, Geom3
from .padding import pad

_NAMES = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "bool": "bool"}


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _tuple(v, nd, what, weight_dims):
    if isinstance(v, int):
        return (int(v),) * nd
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(f"expected {what} to be a single integer value or a list of {weight_dims} values to "
                           f"match the convolution dimensions, but got {what}={list(v)}")
    return v


def _check_common(fname, input, weight, bias, groups, nd, transposed):
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"expected stride to be a single integer value or a list of {weight.ndim - 2} values "
                           f"to match the convolution dimensions, but got stride={[1] * nd}")
    if weight.shape[0] == 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but got weight "
                           f"of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    c = input.shape[1]
    if transposed:
        if weight.shape[0] != c:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                               f"input{list(input.shape)} to have {weight.shape[0]} channels, but got {c} channels "
                               f"instead")
        out_c = weight.shape[1] * groups
    else:
        if weight.shape[1] * groups != c:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                               f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c} "
                               f"channels instead")
        out_c = weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_c):
        head = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{head} of size {list(weight.shape)}, expected bias to be 1-dimensional with {out_c} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR[input.dtype.name]} but found {_SCALAR[weight.dtype.name]}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_NAMES[input.dtype.name]}) and bias type ({_NAMES[bias.dtype.name]}) "
                           f"should be the same")


def _check_positive(stride, padding, dilation):
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")


def _geom(n, c, size, kernel, stride, padding, dilation):
    """A 2-D Geom (1-D sizes become height 1, NOTE [ Convolution ] 1) or a Geom3."""
    if len(size) == 3:
        return Geom3(n, c, *size, *kernel, *stride, *padding, *dilation)
    if len(size) == 1:
        return Geom(n, c, 1, size[0], 1, kernel[0], 1, stride[0], 0, padding[0], 1, dilation[0])
    return Geom(n, c, size[0], size[1], kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1],
                dilation[0], dilation[1])


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    fname = f"conv{nd}d"
    if input.ndim == nd + 1:          # unbatched (C, *spatial), as PyTorch
        return _conv(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, nd).squeeze(0)
    if input.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got input "
                           f"of size: {list(input.shape)}")
    _check_common(fname, input, weight, bias, groups, nd, False)
    stride, dilation = _tuple(stride, nd, "stride", nd), _tuple(dilation, nd, "dilation", nd)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) if padding == "same" else 0 for k, d in zip(kernel, dilation)]
        padding = tuple(t // 2 for t in totals)
        if any(t % 2 for t in totals):     # odd total: the extra one on the right/bottom, as PyTorch
            extra = []
            for t in reversed(totals):
                extra += [0, t % 2]
            input = pad(input, tuple(extra))
    else:
        padding = _tuple(padding, nd, "padding", nd)
    _check_positive(stride, padding, dilation)
    geom = _geom(input.shape[0], input.shape[1], tuple(input.shape[2:]), kernel, stride, padding, dilation)
    ksz = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    padded = list(geom.padded) if nd == 3 else [geom.hp, geom.wp][2 - nd:]
    if any(p < k for p, k in zip(padded, ksz)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, ksz))}). Kernel size can't be greater than actual input "
                           f"size")
    if min(geom.out_spatial(nd)) <= 0:
        raise RuntimeError(f"Calculated output size: ({'x'.join(map(str, geom.out_spatial(nd)))}). Output "
                           f"size is too small")
    attrs = {"geom": geom, "stride": stride, "padding": padding, "dilation": dilation, "transposed": False,
             "output_padding": (0,) * nd, "groups": groups}
    return apply(OPS[fname], [input, weight, bias], attrs)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over (N, C, L) or unbatched (C, L) input."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over (N, C, H, W) or unbatched (C, H, W) input, by im2col and
    one (per-group) matrix product."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over (N, C, D, H, W) or unbatched (C, D, H, W) input."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    fname = f"conv_transpose{nd}d"
    if isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    if input.ndim == nd + 1:
        return _conv_transpose(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation,
                               nd).squeeze(0)
    if input.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got input "
                           f"of size: {list(input.shape)}")
    _check_common(fname, input, weight, bias, groups, nd, True)
    stride, dilation = _tuple(stride, nd, "stride", nd), _tuple(dilation, nd, "dilation", nd)
    padding, output_padding = _tuple(padding, nd, "padding", nd), _tuple(output_padding, nd, "output_padding", nd)
    _check_positive(stride, padding, dilation)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width") if nd == 3 else ("height", "width")
        k = len(names) - nd
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, (0,) * k + output_padding)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, (1,) * k + stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, (1,) * k + dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           + " ".join(parts))
    kernel = tuple(weight.shape[2:])
    size = tuple(input.shape[2:])
    out = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                for i, s, p, d, k, op in zip(size, stride, padding, dilation, kernel, output_padding))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, size))}). Calculated output size "
                           f"per channel: ({' x '.join(map(str, out))}). Output size is too small")
    geom = _geom(input.shape[0], weight.shape[1] * groups, out, kernel, stride, padding, dilation)
    attrs = {"geom": geom, "stride": stride, "padding": padding, "dilation": dilation, "transposed": True,
             "output_padding": output_padding, "groups": groups}
    return apply(OPS[fname], [input, weight, bias], attrs)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv1d (a "deconvolution"): (N, C_in, L) -> (N, C_out, L_out); ``weight`` is
    (C_in, C_out / groups, k)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv2d: (N, C_in, H, W) -> (N, C_out, H_out, W_out); ``weight`` is
    (C_in, C_out / groups, kh, kw)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv3d: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out); ``weight`` is
    (C_in, C_out / groups, kd, kh, kw)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)
