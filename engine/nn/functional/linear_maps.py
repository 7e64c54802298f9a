"""``F.linear`` (``input @ weight.T + bias``) and ``F.bilinear`` (``y = x1^T W x2 + b`` per output feature,
NOTE [ Bilinear ] in engine/ops/nn/bilinear.py)."""
from __future__ import annotations

from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``; 2-D input with bias is one addmm, as in PyTorch."""
    if input._data.shape[-1:] != weight._data.shape[-1:]:
        lead = 1
        for s in input.shape[:-1]:
            lead *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({lead}x{input.shape[-1]} and "
                           f"{weight.shape[-1]}x{weight.shape[0]})")
    if bias is None:
        return E.matmul(input, E.t(weight))
    nd = len(input._data.shape)
    if nd == 2:
        return E.addmm(bias, input, E.t(weight))
    if nd > 2:
        lead = tuple(input.shape[:-1])
        out = E.addmm(bias, E.reshape(input, -1, input.shape[-1]), E.t(weight))
        return E.view(out, lead + (weight.shape[0],))
    return E.add(E.matmul(input, E.t(weight)), bias)


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
