"""PyTorch's float32 ``exp`` inside its CPU softmax kernels, bit for bit, in NumPy.

NOTE [ The float32 exp of log_softmax's backward ]
1. PyTorch's CPU ``_log_softmax_backward_data`` computes ``grad - exp(output) * sum(grad, dim)``
   in float32 with its vectorized ``exp``: SLEEF's ``expf_u10`` (within 1 ulp, not correctly
   rounded). NumPy's float32 ``exp`` and a float64 ``exp`` rounded to float32 each differ from it
   in the last bit for some inputs (about 40% and 1% of random ones), and so did the gradient
   of every float32 ``cross_entropy``.
2. :func:`expf_u10` is SLEEF's algorithm step by step: ``q = rint(d / ln 2)``; ``s = d - q ln 2``
   with ln 2 in two parts; a degree-6 polynomial by Horner's rule; ``1 + (s*s*u + s)``; then
   ``* 2**(q >> 1) * 2**(q - (q >> 1))``; 0 below -104 and inf above 100.
3. Each of SLEEF's fused multiply-adds is a product of two float32 numbers (exact in float64)
   plus a float32 number, rounded to float64 and then to float32. That double rounding could
   differ from one rounding only where the float64 sum lies exactly halfway between two float32
   numbers; over a million random inputs in [-20, 0] every result equals PyTorch's.
4. The kernel's ``grad - exp(output) * sum`` is one fused multiply-add (a single rounding of
   the exact value), computed the same way as in rule 3.
5. That is the kernel for the last dim. Along any other dim PyTorch's kernel takes the C
   library's ``expf``, correctly rounded: a float64 ``exp`` rounded to float32 gives it.
6. Only NumPy float32 arrays take these paths (PyTorch's CUDA kernels use another exp; float64
   keeps NumPy's ``exp``). The sum of the incoming gradient is NumPy's: exact for
   ``cross_entropy``'s gradient (one value per row), possibly a last bit off PyTorch's
   vectorized order for a dense one.
"""
from __future__ import annotations

import numpy as np

_f32 = np.float32
_LOG2E = _f32(1.442695040888963407359924681001892137)
_L2U = _f32(0.693145751953125)            # ln 2 = L2U + L2L
_L2L = _f32(1.428606765330187045e-06)
_POLY = tuple(_f32(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                                0.00833336077630519866943359, 0.0416664853692054748535156,
                                0.166666671633720397949219, 0.5))


def _fma(a, b, c):
    """float32 ``a * b + c`` with one rounding of the exact product's sum (rule 3)."""
    return (a.astype(np.float64) * b + c).astype(_f32)


def expf_u10(d: np.ndarray) -> np.ndarray:
    """SLEEF's ``expf_u10`` of a float32 array (NOTE rule 2)."""
    t = d * _LOG2E
    q = np.rint(np.where(np.abs(t) < 256, t, _f32(0))).astype(np.int32)   # NaN and far values: 0, set below
    qf = q.astype(_f32)
    s = _fma(qf, -_L2U, d)
    s = _fma(qf, -_L2L, s)
    u = np.full(d.shape, _POLY[0], dtype=_f32)
    for c in _POLY[1:]:
        u = _fma(u, s, c)
    u = _f32(1.0) + _fma(s * s, u, s)
    half = q >> 1
    with np.errstate(over="ignore", under="ignore"):    # inf and subnormals, as SLEEF's multiplies give
        u = u * np.ldexp(_f32(1.0), half).astype(_f32) * np.ldexp(_f32(1.0), q - half).astype(_f32)
    u = np.where(d < -104, _f32(0.0), u)
    return np.where(d > 100, _f32(np.inf), u).astype(_f32, copy=False)
