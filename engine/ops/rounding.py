"""floor, ceil and round for the op table: their gradient is zero everywhere it exists, and, as in
PyTorch, they still make a node (FloorBackward0, CeilBackward0, RoundBackward0/1) that keeps nothing."""
from __future__ import annotations

from ..derivatives import op


def _zero(F, g, s):
    return (F.zeros(s.shapes[0], g),)


def _round_decimals(xp, a, decimals):
    scale = 10.0 ** decimals
    return xp.round(a * scale) / scale


def _keep_ints(fn):
    """Integers are already whole: they come back as a copy, as PyTorch's kernels give them."""
    return lambda xp, a: fn(a) if xp.isdtype(a.dtype, "real floating") else xp.asarray(a, copy=True)


op("floor", "FloorBackward0", ("self",), lambda xp, a: _keep_ints(xp.floor)(xp, a), _zero, promote=False)
op("ceil", "CeilBackward0", ("self",), lambda xp, a: _keep_ints(xp.ceil)(xp, a), _zero, promote=False)
op("round", "RoundBackward0", ("self",), lambda xp, a: _keep_ints(xp.round)(xp, a), _zero, promote=False)
op("round_decimals", "RoundBackward1", ("self",), _round_decimals, _zero, promote=False)
