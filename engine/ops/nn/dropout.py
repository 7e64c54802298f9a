"""The fused dropout (NativeDropoutBackward0, CUDA's form): the mask comes in as an input with no edge,
the node keeps it, and the gradient is masked and scaled as the output was. F.dropout on the CPU is
composed from a mask and a multiply instead, as PyTorch's CPU path (engine/nn/functional/dropouts.py).
"""
from __future__ import annotations

from ...core.table import op


def _native_dropout_fwd(xp, a, mask, p):
    return a * xp.astype(mask, a.dtype) * (1.0 / (1.0 - p)), {"mask": mask}


op("native_dropout", "NativeDropoutBackward0", ("self", "mask_in"), _native_dropout_fwd,
   lambda F, g, s: (g * F.astype(s.mask, F.dtype(g)) * (1.0 / (1.0 - s.p)), None),
   save={"mask": ()}, aux=("mask",), promote=False, nondiff=("mask_in",))
