"""Pieces both checkpoint variants share: the error type, region events, the
determinism fingerprint."""
from __future__ import annotations

import contextlib
import math

import numpy as np

from ... import events as _events
from ...core.tensor import Tensor


class CheckpointError(RuntimeError):
    """Raised when a recomputation does not reproduce what the forward saved."""


def fn_name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return name if name else type(fn).__name__


@contextlib.contextmanager
def region_scope(region: int):
    """Stamp op events in the block with ``region`` (restores the outer region after)."""
    old = _events.set_region(region)
    try:
        yield
    finally:
        _events.set_region(old)


@contextlib.contextmanager
def recompute_scope(region: int):
    """Phase "recompute", the region stamped, recompute_begin/end around the block."""
    with _events.phase_scope("recompute"), region_scope(region):
        if _events.active:
            _events.emit("recompute_begin", region=region)
        try:
            yield
        finally:
            if _events.active:
                _events.emit("recompute_end", region=region)


def detach_variable(inputs):
    """Detach every tensor in the tuple, keeping its requires_grad flag (as PyTorch)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


# ---- determinism check -------------------------------------------------------
# NOTE [ Checkpoint determinism check ]
# 1. "metadata" (PyTorch's "default"): every tensor the recompute saves must have the
#    shape, dtype and device its forward counterpart had.
# 2. "default" adds values: at forward the pack hook keeps a fingerprint of each saved
#    tensor -- its sum and its sum of squares, in its own dtype (one reduction and one
#    dot product) -- instead of the tensor; the recomputed tensor's fingerprint must
#    match within a tolerance: relative 1e-4 (float32) or 1e-9 (float64) on the sum of
#    squares, and on the sum against the scale sqrt(numel * sum of squares); integer and
#    bool tensors must match exactly. Tensors whose storage is not an intermediate
#    (parameters, inputs: category other than "other") get no fingerprint: the recompute
#    hands back the same storage, and its version counter guards it.
# 3. "none" checks only that the recompute saved as many tensors as the forward did.
# 4. Errors name the position, the saved name and the node that saved the tensor.
# 5. A fingerprint that is not finite (inf or nan values, or a sum of squares that
#    overflows) matches only the same non-finite fingerprint: inf - inf is nan, which
#    would otherwise fail the tolerance test for identical values.

CHECKS = ("default", "metadata", "none")
_RTOL = {"float32": 1e-4, "float64": 1e-9}


def tensor_meta(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


def fingerprint(x: Tensor) -> tuple:
    """(sum, sum of squares, numel) of the tensor's values (NOTE 2)."""
    xp = x._storage.xp
    a = x._data
    if not x.dtype.is_floating_point:
        a = xp.astype(a, xp.float64)
    flat = xp.reshape(a, (-1,))
    with np.errstate(over="ignore", invalid="ignore"):   # NOTE 5: an overflow is a fingerprint, not a warning
        return float(xp.sum(flat)), float(xp.vecdot(flat, flat)), int(flat.shape[0])


def values_match(fp_fwd: tuple, fp_rec: tuple, dtype) -> bool:
    rtol = _RTOL.get(dtype.name, 0.0)
    (s_f, q_f, n), (s_r, q_r, _) = fp_fwd, fp_rec
    if not all(math.isfinite(v) for v in (s_f, q_f, s_r, q_r)):   # NOTE 5
        return all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in ((s_f, s_r), (q_f, q_r)))
    scale_q = max(q_f, q_r)
    scale_s = (n * scale_q) ** 0.5
    return abs(q_f - q_r) <= rtol * scale_q and abs(s_f - s_r) <= rtol * scale_s
