"""The op-table row behind ``F.pdist`` (PdistBackward0).

NOTE [ pdist ]
1. ``pdist(x)`` lists ``||x[i] - x[j]||_p`` for every row pair ``i < j`` in row-major order (the upper
   triangle of ``cdist(x, x)`` without its diagonal): ``n (n - 1) / 2`` values.
2. The node keeps ``self`` and ``result`` (and ``p``). Backward rebuilds the differences ``d`` and sends
   ``g * dnorm/dd`` to row ``i`` and its negative to row ``j``: ``d |d|^(p-2) / dist^(p-1)`` in general,
   ``sign(d)`` for p = 1, ``d / dist`` for p = 2, ``sign(d)`` where ``|d|`` is the maximum for p = inf,
   nothing for p = 0; a zero distance passes no gradient, as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from ...backend import gaps as _backend
from ...core.table import op
from .pool import _cached


def pairs(n):
    """Row indices (i, j) of every pair i < j, row-major, as int64 NumPy arrays."""
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.int64), j.astype(np.int64)


def _norm(xp, d, p):
    a = xp.abs(d)
    if p == 0:
        return xp.sum(xp.astype(a != 0, d.dtype), axis=-1)
    if p == math.inf:
        return xp.max(a, axis=-1) if d.shape[-1] else xp.zeros(d.shape[:-1], dtype=d.dtype)
    if p == 1:
        return xp.sum(a, axis=-1)
    if p == 2:
        return xp.sqrt(xp.sum(d * d, axis=-1))
    return xp.sum(a ** p, axis=-1) ** (1.0 / p)


def _pdist_fwd(xp, x, p=2.0):
    n = x.shape[0]
    dev = str(getattr(x, "device", None))
    ii, jj = _cached(("pdist", xp.__name__, dev, n),
                     lambda: tuple(_backend.from_numpy(xp, a) for a in pairs(n)))
    d = xp.take(x, ii, axis=0) - xp.take(x, jj, axis=0)
    return _norm(xp, d, p)


def _index(F, arr, like):
    """An int64 index in F's currency (a Tensor when the backward is recorded)."""
    if F.differentiable:
        E = F.E   # the torch.* namespace (core/fns.py rule 5)
        return E.tensor(arr, device=like.device)
    return _backend.from_numpy(F.xp, arr)


def _pdist_bwd(F, g, s):
    n, m = s.shapes[0]
    p = s.p
    if p == 0 or n < 2:
        return (F.zeros((n, m), g),)
    ii, jj = pairs(n)
    ti, tj = _index(F, ii, g), _index(F, jj, g)
    d = F.index(s.self, (ti,)) - F.index(s.self, (tj,))
    dist = F.expand_dims(s.result, axis=1)
    gg = F.expand_dims(g, axis=1)
    zero = F.eq(dist, 0.0)
    if p == 1:
        part = F.sign(d) * gg
    elif p == 2:
        part = d * gg / F.where(zero, 1.0, dist)
    elif p == math.inf:
        part = F.sign(d) * F.astype(F.eq(F.abs(d), dist), F.dtype(d)) * gg
    else:
        a = F.abs(d)
        grad = F.sign(d) * F.where(F.eq(a, 0.0), 1.0, a) ** (p - 1)        # 0 where a component is 0
        part = grad * gg / F.where(zero, 1.0, dist) ** (p - 1)
    part = F.where(zero, 0.0, part)
    gx = F.scatter_add((n, m), (ti,), part, part) - F.scatter_add((n, m), (tj,), part, part)
    return (gx,)


op("pdist", "PdistBackward0", ("self",), _pdist_fwd, _pdist_bwd, save={"self": (), "result": ()}, promote=False)
