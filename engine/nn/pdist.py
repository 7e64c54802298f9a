"""``F.pdist``: the p-norm distance between every pair of rows (NOTE [ pdist ] in engine/ops/pdist.py)."""
from __future__ import annotations

from ..core.dispatch import apply
from ..derivatives import OPS


def pdist(input, p=2):
    """``||input[i] - input[j]||_p`` for each pair of rows ``i < j`` of an (N, M) tensor, row-major."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(OPS["pdist"], [input], {"p": float(p)})


__all__ = ["pdist"]
