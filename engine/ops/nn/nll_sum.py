"""PyTorch's order of summation in ``nll_loss``'s CPU forward, so a float32 loss and its
``total_weight`` (and with it a weighted loss's gradient) are PyTorch's to the last bit.

NOTE [ nll_loss's cascaded sum ]
1. PyTorch's CPU kernel for a 2-D input adds the counted samples' terms (``-x[b, t_b]``, times the
   class weight with weights; and the weights themselves for ``total_weight``) into eight partial
   sums: each term goes into level 0, and after sample ``b`` every level ``j`` with ``b`` a
   multiple of ``16 ** (j + 1)`` is added into level ``j + 1`` and cleared (so sample 0 goes
   straight to the top). The result is ``0 + level 0 + level 1 + ... + level 7``, left to right.
2. Without an ignored target that is: groups of 16 consecutive terms from sample 1 on, each summed
   left to right, their sums grouped by 16 again one level up, the rest of each level summed left
   to right; :func:`cascade_sum` does it with one ``add.accumulate`` per level.
3. An ignored sample adds nothing and moves nothing up (the kernel skips it before the moves), which
   shifts the groups: then :func:`cascade_sum` walks the samples one by one.
4. Only NumPy arrays take this path (mean, sum); the mean divides by ``total_weight`` after.
"""
from __future__ import annotations

import numpy as np


def cascade_sum(terms: np.ndarray, counted: np.ndarray | None = None):
    """The sum of the 1-D ``terms`` in PyTorch's nll_loss order (NOTE rules 1-3); ``counted`` marks
    the samples whose target is not ignored (None: all). A 0-d array of ``terms``' dtype."""
    dt = terms.dtype.type
    if counted is not None and not counted.all():
        return _walk(terms, counted, dt)
    if terms.shape[0] == 0:
        return np.asarray(0, dtype=terms.dtype)
    levels = []
    arriving = terms[1:]
    for _ in range(7):
        k = arriving.shape[0] // 16
        rest = arriving[16 * k:]
        levels.append(np.add.accumulate(rest)[-1] if rest.shape[0] else dt(0))
        arriving = np.add.accumulate(arriving[:16 * k].reshape(k, 16), axis=1)[:, -1] if k else arriving[:0]
    levels.append(np.add.accumulate(np.concatenate([terms[:1], arriving]))[-1])
    total = dt(0)
    for p in levels:
        total = dt(total + p)
    return np.asarray(total, dtype=terms.dtype)


def _walk(terms, counted, dt):
    """Rule 3: sample by sample, as the kernel's loop."""
    p = [dt(0)] * 8
    for b in range(terms.shape[0]):
        if not counted[b]:
            continue
        p[0] = dt(p[0] + terms[b])
        for j in range(7):
            if b & (15 << (4 * j)):
                break
            p[j + 1] = dt(p[j + 1] + p[j])
            p[j] = dt(0)
    total = dt(0)
    for v in p:
        total = dt(total + v)
    return np.asarray(total, dtype=terms.dtype)
