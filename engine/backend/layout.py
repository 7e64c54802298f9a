"""Output layout (strides) of copies and elementwise ops, as PyTorch lays them out.

NOTE [ Output layout ]
1. ``clone()`` and ``to(dtype)`` (memory_format=preserve_format) keep the strides of an input whose
   elements are dense and do not overlap (a transposed or permuted contiguous tensor); another input
   (a strided slice, an expanded tensor) gets dense strides in the order of its own strides
   (PyTorch's ``infer_dense_strides``: a stride of 0 leaves the order as a contiguous tensor's).
2. An elementwise op (PyTorch's TensorIterator) gives its output:
   a. when its tensor operands all have the output's shape and no Python number takes part:
      contiguous strides if every operand is contiguous, channels-last ones if every 4-D operand
      is channels-last, else the operands' strides if they are all the same and dense;
   b. otherwise the dims sorted by the operands' strides, innermost first, the first operand
      deciding and the next one only where the ones before are ambiguous (a broadcast dim or
      equal strides: then the smaller dim goes first); dense strides in that order.
   So ``a.t() + b`` is laid out as ``a.t()`` and ``b + a.t()`` as ``b``; an expanded operand has
   no say, and ``softmax`` (not elementwise) gives a contiguous result.
3. A row names its rule (``OpDef.layout``, set in engine/ops/layout.py); ``dispatch.apply`` and
   ``dispatch.direct`` run it on a kernel's NumPy result of two or more dims. NumPy's ufuncs
   (order 'K') already give rule 2's answer when every operand is C-contiguous, so then the rule
   changes nothing: contiguous inputs keep their bytes and events, and a 1-D op pays one test.
4. Only NumPy results are laid out this way; a CuPy or other namespace's result stays as its kernel made it.
"""
from __future__ import annotations

import numpy as np


def contiguous_strides(shape) -> tuple:
    """Row-major element strides of ``shape`` (a dim of size 0 or 1 counts as 1)."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


def is_contiguous(shape, strides) -> bool:
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != expected:
            return 0 in shape
        expected *= n
    return True


def _is_channels_last(shape, strides) -> bool:
    if len(shape) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _channels_last_strides(shape) -> tuple:
    _, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def is_dense(shape, strides) -> bool:
    """PyTorch's is_non_overlapping_and_dense."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    perm = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2 else 0))
    required = 1
    for d in perm:
        if shape[d] < 2:
            return True
        if strides[d] != required:
            return False
        required *= shape[d]
    return True


def _sorted_dims(shape, operands, dense_sizes: bool) -> tuple:
    """NOTE 2b (and 1): the dims, innermost first, by insertion sort over ambiguous comparisons."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                if dense_sizes:
                    return 0
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return tuple(perm)


def preserved_strides(shape, strides) -> tuple:
    """NOTE 1: the strides ``clone()`` gives a copy of a tensor with ``shape`` and ``strides``."""
    shape, strides = tuple(shape), tuple(strides)
    if is_dense(shape, strides):
        return strides
    out, acc = [0] * len(shape), 1
    for d in _sorted_dims(shape, [strides], True):
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def iterator_strides(shape, operands, same_shape: bool) -> tuple:
    """NOTE 2: the output strides of an elementwise op of output ``shape`` over ``operands``
    ((shape, strides) of each tensor operand, in order); ``same_shape`` as in rule 2a."""
    shape = tuple(shape)
    if same_shape and operands:
        if all(is_contiguous(s, st) for s, st in operands):
            return contiguous_strides(shape)
        if all(_is_channels_last(s, st) for s, st in operands):
            return _channels_last_strides(shape)
        if all(is_dense(s, st) for s, st in operands) and len({tuple(st) for _, st in operands}) == 1:
            return tuple(operands[0][1])
    ndim = len(shape)
    broadcast = []
    for s, st in operands:
        off = ndim - len(s)
        broadcast.append((0,) * off + tuple(0 if n == 1 and shape[off + i] != 1 else x
                                            for i, (n, x) in enumerate(zip(s, st))))
    perm = _sorted_dims(shape, broadcast, False)
    if perm == tuple(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    out, acc = [0] * ndim, 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def element_strides(a) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def with_strides(a: np.ndarray, strides) -> np.ndarray:
    """``a``'s values in a new NumPy array with element ``strides`` (``a`` itself when it has them)."""
    strides = tuple(strides)
    if element_strides(a) == strides:
        return a
    span = 1 + sum((n - 1) * s for n, s in zip(a.shape, strides)) if a.size else 0
    buf = np.empty(max(span, 1), dtype=a.dtype)
    out = np.lib.stride_tricks.as_strided(buf, a.shape, tuple(s * a.itemsize for s in strides))
    out[...] = a
    return out


class memory_format:
    """``torch.memory_format``: how a copy lays out its elements (``torch.contiguous_format`` ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
