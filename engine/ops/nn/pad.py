"""Padding for the op table: constant (ConstantPadNdBackward0), reflect and replicate
(ReflectionPad{1,2,3}DBackward0, ReplicationPad{1,2,3}DBackward0).

NOTE [ Padding ]
1. ``pad`` lists (left, right) pairs from the last dim backwards, as ``F.pad`` takes them.
   A negative amount crops. Constant padding keeps nothing (PyTorch saves only ``pad``).
2. Reflect and replicate padding read each output position from one input position along
   each padded dim: the kernel gathers along those dims with a precomputed index, and the
   gradient scatter-adds back through the same indices (repeats add up). PyTorch's node
   keeps ``self`` and ``padding``; glassgrad's does too.
3. Circular padding has no row: as in PyTorch it is composed (engine/nn/functional/padding.py) from a
   copy into a new tensor and slice assignments, so its graph is CopySlices over SliceBackward0 nodes.
"""
from __future__ import annotations

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op


def _pairs(ndim, pad):
    """{dim: (left, right)} for the dims ``pad`` names."""
    out = {}
    for i in range(len(pad) // 2):
        out[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return out


def _windows(shape, pad):
    """Per dim: the input slice that is kept and the output slice it lands in."""
    src, dst, out_shape = [], [], []
    pairs = _pairs(len(shape), pad)
    for d, n in enumerate(shape):
        lo, hi = pairs.get(d, (0, 0))
        m = n + lo + hi
        a, b = max(-lo, 0), n - max(-hi, 0)
        src.append(slice(a, b))
        dst.append(slice(max(lo, 0), max(lo, 0) + (b - a)))
        out_shape.append(m)
    return tuple(src), tuple(dst), tuple(out_shape)


def _constant_fwd(xp, a, pad, value=0.0):
    src, dst, shape = _windows(tuple(a.shape), pad)
    out = xp.full(shape, value, dtype=a.dtype)
    out[dst] = a[src]
    return out


def _constant_bwd(F, g, s):
    shape = s.shapes[0]
    src, dst, _ = _windows(shape, s.pad)
    part = F.index(g, dst)
    if all(sl.start == 0 and sl.stop == n for sl, n in zip(src, shape)):
        return (part,)
    return (F.scatter_add(shape, src, part, part),)


op("constant_pad_nd", "ConstantPadNdBackward0", ("self",), _constant_fwd, _constant_bwd, promote=False)


def pad_index(n, lo, hi, mode):
    """Where each of the ``n + lo + hi`` outputs along one dim reads from (reflect or replicate)."""
    j = np.arange(-lo, n + hi)
    if mode == "replicate":
        return np.clip(j, 0, n - 1).astype(np.int64)
    period = 2 * (n - 1)
    j = np.abs(j) % period if period else np.zeros_like(j)
    return np.where(j > n - 1, period - j, j).astype(np.int64)


def _index_fwd(xp, a, padding, mode):
    out = a
    for d, (lo, hi) in _pairs(len(a.shape), padding).items():
        idx = _backend.from_numpy(xp, pad_index(a.shape[d], lo, hi, mode))
        out = xp.take(out, idx, axis=d)
    return out


def _const_index(F, arr, like):
    if F.differentiable:
        E = F.E   # the torch.* namespace (core/fns.py rule 5)
        return E.tensor(arr, device=like.device)
    return _backend.from_numpy(F.xp, arr)


def _index_bwd(F, g, s):
    shape = list(s.shapes[0])
    for d, (lo, hi) in sorted(_pairs(len(shape), s.padding).items()):
        idx = _const_index(F, pad_index(shape[d], lo, hi, s.mode), g)
        target = tuple(shape[:d]) + (shape[d],) + tuple(F.shape(g)[d + 1:])
        g = F.scatter_add(target, (slice(None),) * d + (idx,), g, g)
    return (g,)


for _mode, _name in (("reflect", "ReflectionPad"), ("replicate", "ReplicationPad")):
    for _k in (1, 2, 3):
        op(f"{_mode}_pad{_k}d", f"{_name}{_k}DBackward0", ("self",), _index_fwd, _index_bwd, save={"self": ()},
           promote=False)
