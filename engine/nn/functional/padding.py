"""``F.pad``: constant, reflect, replicate and circular padding (NOTE [ Padding ] in engine/ops/nn/pad.py)."""
from __future__ import annotations

from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS

_NONCONSTANT = ("Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims; ``pad`` is (left, right, top, bottom, ...) from the last dim
    backwards. ``mode`` is ``"constant"`` (with ``value``, default 0), ``"reflect"``, ``"replicate"`` or
    ``"circular"``."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        shape = list(input.shape)
        for i in range(len(pad) // 2):
            d = input.ndim - 1 - i
            if shape[d] + pad[2 * i] + pad[2 * i + 1] < 0 or min(pad[2 * i], pad[2 * i + 1]) < -shape[d]:
                raise RuntimeError("narrow(): length must be non-negative.")
        return apply(OPS["constant_pad_nd"], [input], {"pad": pad, "value": 0.0 if value is None else value})
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                                  + _NONCONSTANT)
    if mode == "circular":
        return _pad_circular(input, pad)
    if mode == "reflect":
        for i in range(k):
            d = input.ndim - 1 - i
            if pad[2 * i] >= input.shape[d] or pad[2 * i + 1] >= input.shape[d]:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension,"
                                   f" but got: padding ({pad[2 * i]}, {pad[2 * i + 1]}) at dimension {d} of input "
                                   f"{list(input.shape)}")
    return apply(OPS[f"{mode}_pad{k}d"], [input], {"padding": pad, "mode": mode})


def _pad_circular(input, pad):
    """Circular padding composed as PyTorch composes it (NOTE [ Padding ] 3): copy the (cropped) input
    into the middle of a new tensor, then, last dim first, fill each side from the other end of that
    tensor; the graph is CopySlices nodes over slices."""
    nd, k = input.ndim, len(pad) // 2
    shape, src, dst = list(input.shape), [slice(None)] * nd, [slice(None)] * nd
    for i in range(k):
        d, (lo, hi) = nd - 1 - i, pad[2 * i:2 * i + 2]
        n = input.shape[d]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[d] = n + lo + hi
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), shape[d] - max(hi, 0))
    out = E.empty(*shape, dtype=input.dtype, device=input.device)
    inner = input
    for i in range(k):                     # PyTorch narrows every padded dim, last dim first
        d = nd - 1 - i
        inner = E.narrow(inner, d, src[d].start, src[d].stop - src[d].start)
    out[tuple(dst)] = inner
    for i in range(k):
        d, (lo, hi) = nd - 1 - i, pad[2 * i:2 * i + 2]
        m = shape[d]
        at = (slice(None),) * d
        if lo > 0:
            end = m - max(hi, 0)
            out[at + (slice(0, lo),)] = out[at + (slice(end - lo, end),)]
        if hi > 0:
            start = max(lo, 0)
            out[at + (slice(m - hi, m),)] = out[at + (slice(start, start + hi),)]
    return out
