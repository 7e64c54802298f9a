"""``F.linear`` (``input @ weight.T + bias``) and ``F.bilinear`` (``y = x1^T W x2 + b`` per output feature,
NOTE [ Bilinear ] in engine/ops/nn/bilinear.py)."""
from __future__ import annotations

from ... import functional as E
from ...backend.low_precision import autocast_slot
from ...core.dispatch import apply
from ...core.table import OPS


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``, composed as PyTorch's: a 2-D input with a bias is one addmm; another
    contiguous input with a 1-D bias is viewed as a matrix, addmm'd and viewed back (ViewBackward0 over
    AddmmBackward0); anything else is ``matmul(input, weight.t())`` plus the bias."""
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp)
        input, weight, bias = autocast_slot.cast("linear", [input, weight, bias])
    nd = input.ndim
    if bias is not None and nd == 2:
        return E.addmm(bias, input, E.t(weight))
    if bias is not None and input.is_contiguous() and nd >= 1 and bias.ndim == 1:
        lead = tuple(input.shape[:-1])
        n = 1
        for s in lead:
            n *= s
        out = E.addmm(bias, E.reshape(input, n, input.shape[-1]), E.t(weight))
        return E.view(out, lead + (out.shape[1],))
    out = E.matmul(input, E.t(weight))
    return E.add(out, bias) if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    """(*, in1) and (*, in2) with ``weight`` (out, in1, in2) -> (*, out)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional (out, in1, in2), but got {weight.ndim} "
                           f"dimensions")
    for name, t, j in (("input1", input1, 1), ("input2", input2, 2)):
        if t.shape[-1] != weight.shape[j]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {t.shape[-1]} but expected "
                               f"{weight.shape[j]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0] if bias.ndim else 1}"
                           f" but expected {weight.shape[0]}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    attrs = {"expand1": (1, 3), "expand2": (0,), "expand3": (1, 2), "sumdim": (2, 3)}
    out = apply(OPS["trilinear"], [x1, weight, x2], attrs)
    out = out.view(*lead, weight.shape[0])
    return E.add(out, bias) if bias is not None else out
