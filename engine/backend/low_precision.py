"""What every op needs for float16 and bfloat16, kept out of the core's line budget: PyTorch's way of
computing them, and the slot through which autocast casts an op's inputs.

NOTE [ Low-precision results ]
1. PyTorch's CPU kernels compute float16 and bfloat16 in float32 and round the result once. An op
   whose compute dtype is one of them does the same: its low-precision input arrays are widened
   to float32 before the kernel (``widen``), and every float32 array it gives back (the output,
   and aux outputs such as layer_norm's mean and rstd) is rounded to the compute dtype
   (``round_low``). So a bfloat16 ``sum`` accumulates in float32, as PyTorch's does, instead of in
   bfloat16, and ``bf16 * 2.5`` stays bfloat16 although ml_dtypes would give float32.
2. Views, aliases and in-place ops are not widened: their kernels must see the storage's own
   array. An op given an explicit ``dtype`` keeps the kernel's result dtype.
3. While an autocast region is on, ``autocast_slot.cast(name, inputs)`` (set by engine/amp) hands
   back the inputs an op runs on: for an op on autocast's lists, its floating inputs cast by real
   ``to`` ops (ToCopyBackward0 nodes whose copies cost memory). Off, an op pays one attribute read.
4. Backward formulas sum the same way: ``F.sum`` and ``F.sum_to`` (a bias's gradient, any
   broadcast gradient) accumulate float16/bfloat16 arrays in float32 and round once, where
   NumPy would accumulate in the low dtype (2048 gradients of 0.01 sum to 20.5, not to 4).
"""
from __future__ import annotations

import threading

import numpy as np

from . import dtypes as _dtype

LOW = frozenset((_dtype.float16, _dtype.bfloat16))
_F32 = np.dtype(np.float32)


def is_low(a) -> bool:
    """Whether array ``a`` holds float16 or bfloat16 (NumPy's, CuPy's or another array API's)."""
    dt = getattr(a, "dtype", None)
    return dt is not None and getattr(dt, "itemsize", 0) == 2 and (dt.kind == "f" or dt.name == "bfloat16")


def widen(xp, arrays, op, inplace):
    """The kernel's arrays with float16/bfloat16 ones in float32 (rules 1-2)."""
    if op.view or op.alias or inplace is not None:
        return arrays
    return [xp.astype(a, xp.float32) if is_low(a) else a for a in arrays]


def round_low(xp, out, low, attrs, has_aux=False):
    """``out`` (and its aux arrays) rounded to ``low`` where the kernel gave float32 (rule 1)."""
    if "dtype" in attrs:
        return out
    to = _dtype.to_array_dtype(xp, low)
    if has_aux and isinstance(out, tuple):
        main, aux = out
        return (round_low(xp, main, low, attrs), {k: round_low(xp, v, low, attrs) for k, v in aux.items()})
    if getattr(out, "dtype", None) == _F32:
        return xp.astype(out, to)
    return out


def sum_low(xp, x, axis, keepdims):
    """``xp.sum``, a float16/bfloat16 array accumulated in float32 and rounded once (rule 4)."""
    if not is_low(x):
        return xp.sum(x, axis=axis, keepdims=keepdims)
    return xp.astype(xp.sum(xp.astype(x, xp.float32), axis=axis, keepdims=keepdims), x.dtype)


class _AutocastSlot(threading.local):
    cast = None      # rule 3


autocast_slot = _AutocastSlot()
