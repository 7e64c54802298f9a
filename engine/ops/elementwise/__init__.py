"""The elementwise family: one value in, one value out, broadcast.

``unary.py``: inverse trigonometric and hyperbolic functions, log2/log10/log1p/expm1, sinc, logit,
nan_to_num, trunc/frac, floor/ceil/round, deg2rad/rad2deg, tan, angle and frexp.
``binary.py``: atan2, hypot, logaddexp(2), xlogy, lerp, addcmul/addcdiv, floor_divide, heaviside,
fmax/fmin, copysign, ldexp, nextafter, a number to a tensor power, fmod/remainder, rsub, rounded
division, the comparisons written in place and ``tensor`` times, over, plus or minus a number.
``integer.py``: gcd, lcm and the bitwise operations (NOTE [ Integer-only kernels ]).

Each row keeps what PyTorch's node keeps (its ``_saved_*`` tensors); the torch.* functions are in
engine/functions/elementwise/.
"""
from __future__ import annotations

from . import unary, binary, integer  # noqa: F401
