"""Integer-only elementwise rows: gcd, lcm and the bitwise operations.

NOTE [ Integer-only kernels ]
1. gcd, lcm and the bitwise operations take int64 and bool arrays only (the array API has no
   gcd or lcm, so gcd is Euclid's algorithm run on the whole array until every divisor is 0).
2. Shifts follow PyTorch, not C: a shift by 64 or more, or by a negative count, gives 0 to the
   left, and 0 or -1 (the sign) to the right.
3. None of them has a gradient: their outputs are never floating point.
"""
from __future__ import annotations

from ...core.table import op


# ---- integer-only: gcd, lcm, bitwise (NOTE [ Integer-only kernels ]) ------------------------------------
def _gcd_fwd(xp, a, b):
    a, b = xp.abs(a), xp.abs(b)
    while bool(xp.any(b != 0)):
        nz = b != 0
        r = xp.where(nz, a % xp.where(nz, b, xp.ones_like(b)), xp.zeros_like(b))
        a = xp.where(nz, b, a)
        b = r
    return a


def _lcm_fwd(xp, a, b):
    g = _gcd_fwd(xp, a, b)
    zero = g == 0
    return xp.abs(xp.where(zero, xp.zeros_like(a), a // xp.where(zero, xp.ones_like(g), g)) * b)


op("gcd", None, ("self", "other"), _gcd_fwd, differentiable=False)
op("lcm", None, ("self", "other"), _lcm_fwd, differentiable=False)
op("bitwise_and", None, ("self", "other"), lambda xp, a, b: xp.bitwise_and(a, b), differentiable=False)
op("bitwise_or", None, ("self", "other"), lambda xp, a, b: xp.bitwise_or(a, b), differentiable=False)
op("bitwise_xor", None, ("self", "other"), lambda xp, a, b: xp.bitwise_xor(a, b), differentiable=False)
op("bitwise_not", None, ("self",), lambda xp, a: xp.bitwise_invert(a), differentiable=False)


def _shift_fwd(xp, a, b, left):
    dt = next((x.dtype for x in (a, b) if hasattr(x, "shape")), xp.int64)     # u8 << 1 stays uint8
    a, b = (x if hasattr(x, "shape") else xp.asarray(x, dtype=dt) for x in (a, b))
    out_of_range = xp.logical_or(b < 0, b >= 64)
    count = xp.clip(b, 0, 63)
    if left:
        return xp.where(out_of_range, xp.zeros_like(a), xp.bitwise_left_shift(a, count))
    sign = xp.where(a < 0, -xp.ones_like(a), xp.zeros_like(a))
    return xp.where(out_of_range, sign, xp.bitwise_right_shift(a, count))


op("bitwise_left_shift", None, ("self", "other"), lambda xp, a, b: _shift_fwd(xp, a, b, True),
   differentiable=False)
op("bitwise_right_shift", None, ("self", "other"), lambda xp, a, b: _shift_fwd(xp, a, b, False),
   differentiable=False)
