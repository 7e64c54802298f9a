"""Max unpooling for the op table: ``F.max_unpool2d``/``3d`` (MaxUnpool2DBackward0, MaxUnpool3DBackward0).

NOTE [ Max unpooling ]
1. ``max_unpool`` is max pooling's partial inverse: every dim before the last two (three) is a
   batch of planes (volumes), seen as ``(P, n)``; the output is zeros of ``(P, prod(output_size))``
   with ``input[p, i]`` written at ``indices[p, i]`` (the positions ``max_pool*(return_indices=True)``
   hands back). Two inputs aimed at one position: the later one stays, as PyTorch's CPU loop.
2. The node keeps only ``indices``: backward gathers the gradient at them, so an input's gradient
   is the output gradient at the position it was written to (and a lost duplicate still reads it).
3. The frontend checks every index against the output plane first, with PyTorch's message.
"""
from __future__ import annotations

from ...backend import gaps as _backend
from ...core.table import op
from .pool import _lead


# ---- max unpooling (NOTE [ Max unpooling ]) -------------------------------------------------------------
def _unpool_fwd(k):
    def fwd(xp, x, indices, output_size):
        lead, p = _lead(tuple(x.shape), k)
        n = 1
        for s in output_size:
            n *= s
        m = 1
        for s in x.shape[len(lead):]:
            m *= s
        out = xp.zeros((p, n), dtype=x.dtype)
        rows = xp.reshape(xp.arange(p, dtype=xp.int64), (p, 1)) * xp.ones((1, m), dtype=xp.int64)
        out = _backend.index_fill(xp, out, (xp.reshape(rows, (-1,)), xp.reshape(indices, (-1,))),
                                  xp.reshape(x, (-1,)))
        return xp.reshape(out, lead + tuple(output_size))
    return fwd


def _unpool_bwd(k):
    def bwd(F, g, s):
        shape = tuple(s.shapes[0])
        _, p = _lead(shape, k)
        g2 = F.reshape(g, (p, -1))
        idx = F.reshape(s.indices, (p, -1))
        return F.reshape(F.index(g2, (F.iota(p, 0, 2, g2), idx)), shape), None
    return bwd


op("max_unpool2d", "MaxUnpool2DBackward0", ("self", "indices"), _unpool_fwd(2), _unpool_bwd(2),
   save={"indices": ()}, promote=False, nondiff=("indices",))
op("max_unpool3d", "MaxUnpool3DBackward0", ("self", "indices"), _unpool_fwd(3), _unpool_bwd(3),
   save={"indices": ()}, promote=False, nondiff=("indices",))
