"""Max unpooling: ``F.max_unpool1d/2d/3d`` write each value back at the position its max pooling took it
from (NOTE [ Max unpooling ] in engine/ops/nn/unpool.py)."""
from __future__ import annotations

import math

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS
from .pooling import _tuple
from .pooling3d import _short


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """PyTorch's default output size ``(in - 1) * stride + kernel - 2 * padding``, or ``output_size``
    (its last len(kernel) entries) after checking it lies within one stride of that."""
    k = len(kernel_size)
    default = [(input.shape[-k + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(k)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(k):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _unpool(input, indices, out, k):
    """The max_unpool2d/3d op after PyTorch's checks of ``indices`` against ``input`` and the output."""
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_short(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d Tensor, but got a tensor "
                           f"with {input.ndim} dimensions.")
    n = math.prod(out)
    if indices.numel():
        lo, hi = int(E.min(indices).item()), int(E.max(indices).item())
        bad = lo if lo < 0 else hi if hi >= n else None
        if bad is not None:
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, out))})")
    return apply(OPS[f"max_unpool{k}d"], [input, indices], {"output_size": tuple(int(o) for o in out)})


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Writes each value of ``input`` at its position ``indices`` (from ``max_pool1d(return_indices=True)``)
    in a zero signal: max_unpool2d over (..., L, 1), as PyTorch composes it."""
    k = _tuple(kernel_size, 1)
    s = k if stride is None else _tuple(stride, 1)
    out = _unpool_output_size(input, k, s, _tuple(padding, 1), output_size)
    res = _unpool(E.unsqueeze(input, -1), E.unsqueeze(indices, -1), list(out) + [1], 2)
    return E.squeeze(res, -1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Writes each value of ``input`` at its position ``indices`` (from ``max_pool2d(return_indices=True)``)
    in a zero plane (MaxUnpool2DBackward0 keeps ``indices``)."""
    k = _tuple(kernel_size, 2)
    s = k if stride is None else _tuple(stride, 2)
    out = _unpool_output_size(input, k, s, _tuple(padding, 2), output_size)
    return _unpool(input, indices, out, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Writes each value of ``input`` at its position ``indices`` (from ``max_pool3d(return_indices=True)``)
    in a zero volume (MaxUnpool3DBackward0 keeps ``indices``)."""
    k = _tuple(kernel_size, 3)
    s = k if stride is None else _tuple(stride, 3)
    out = _unpool_output_size(input, k, s, _tuple(padding, 3), output_size)
    return _unpool(input, indices, out, 3)
