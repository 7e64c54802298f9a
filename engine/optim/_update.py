"""The parameter update ``p -= lr * g`` without a parameter-sized temporary.

NOTE [ Cache-blocked parameter update ]
1. ``d -= lr * g`` in NumPy first writes ``lr * g`` to a new array as big as the
   parameter, then reads it back: two extra passes over memory that PyTorch's fused
   ``add_(g, alpha=-lr)`` does not make. For megabyte-sized weights that is most of
   the optimizer's time.
2. For C-contiguous NumPy arrays of one dtype and shape, the update runs in blocks of
   ``BLOCK`` elements through one small scratch buffer that stays in the CPU cache:
   ``scratch = g[block] * lr`` then ``d[block] -= scratch``. The values are the same
   as the one-line form's, element for element (the same two roundings).
3. Anything else (CuPy, array_api_strict, strided views, small arrays) takes the
   one-line form: on a GPU the temporary is cheap and blocking would only add launches.
4. The scratch buffer is made per call, so optimizers in different threads never share it.
"""
from __future__ import annotations

import numpy as np

BLOCK = 1 << 16   # elements: 256 KB of float32, well inside a core's L2 cache

_ndarray = np.ndarray


def sub_scaled_(d, g, scale: float) -> None:
    """``d -= scale * g`` in place (NOTE [ Cache-blocked parameter update ])."""
    n = d.size
    if (n <= BLOCK or type(d) is not _ndarray or type(g) is not _ndarray or d.dtype != g.dtype
            or d.shape != g.shape or not (d.flags.c_contiguous and g.flags.c_contiguous)):
        d -= scale * g
        return
    df, gf = d.reshape(-1), g.reshape(-1)
    scratch = np.empty(BLOCK, dtype=d.dtype)
    mul, sub = np.multiply, np.subtract
    for i in range(0, n, BLOCK):
        j = min(i + BLOCK, n)
        s = scratch[:j - i]
        mul(gf[i:j], scale, out=s)
        dv = df[i:j]
        sub(dv, s, out=dv)
