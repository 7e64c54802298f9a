"""The bilinear form for the op table: ``out[b, o] = sum_ij x1[b, i] * W[o, i, j] * x2[b, j]``
(TrilinearBackward0, PyTorch's node for ``F.bilinear``).

NOTE [ Bilinear ]
1. ``F.bilinear`` flattens the batch dims of both inputs to 2-D views, runs this row, views the
   (B, O) result back and adds the bias (AddBackward0), as PyTorch composes it.
2. The node keeps each factor (``i1``, ``i2`` the weight, ``i3``) that another one's gradient reads,
   as PyTorch's; each gradient is the product of the incoming gradient with the other two.
"""
from __future__ import annotations

from ...backend import gaps as _backend
from ...core.table import op


def _tri_fwd(xp, x1, w, x2, expand1=(), expand2=(), expand3=(), sumdim=()):
    return _backend.einsum(xp, "bi,oij,bj->bo", x1, w, x2)


def _tri_bwd(F, g, s):
    x1, w, x2 = s.i1, s.i2, s.i3
    g1 = F.einsum("bo,oij,bj->bi", g, w, x2) if s.needs[0] else None
    gw = F.einsum("bo,bi,bj->oij", g, x1, x2) if s.needs[1] else None
    g2 = F.einsum("bo,bi,oij->bj", g, x1, w) if s.needs[2] else None
    return g1, gw, g2


op("trilinear", "TrilinearBackward0", ("i1", "i2", "i3"), _tri_fwd, _tri_bwd,
   save={"i1": ("i2", "i3"), "i2": ("i1", "i3"), "i3": ("i1", "i2")}, promote=False)
