"""The op-table rows behind ``F.embedding`` (EmbeddingBackward0) and ``F.embedding_bag``
(EmbeddingBagBackward0).

NOTE [ Embedding bags ]
1. ``indices`` is one flat list of rows of ``weight``; ``offsets[b]`` is where bag ``b`` starts, and it
   ends where the next one starts; the last bag runs to the end of ``indices`` (with
   ``include_last_offset`` too: PyTorch's CPU kernel reads the last offset only to count the bags).
   ``offset2bag[i]`` is the bag of entry ``i``. Entries equal to ``padding_idx`` belong to no bag: they add
   nothing, are not counted by ``mean`` and never win ``max``. An empty bag gives zeros.
2. ``sum`` adds each bag's rows (each scaled by its ``per_sample_weights`` entry when given), ``mean``
   divides the sum by the bag's count, ``max`` takes the maximum per column (the first row that reaches
   it, as PyTorch's CPU loop) and records which row of ``weight`` that was.
3. The node keeps what PyTorch's keeps: ``indices``, ``offsets``, ``result1`` (offset2bag; empty in
   ``sum`` mode without ``padding_idx``, where PyTorch does not fill it), ``result2`` (bag sizes; zeros in
   ``sum`` mode), ``result3`` (``max``: the winning rows, (B, D); otherwise one int per bag), and
   ``per_sample_weights`` with, for their gradient, ``weight``.
4. Backward scatter-adds each entry's share of its bag's gradient into its row of ``weight`` (divided by
   the bag size for ``mean``; with ``scale_grad_by_freq``, by how often the row occurs in ``indices``,
   as documented: PyTorch's CPU kernel divides by the count of another row, a known slip); ``max``
   sends each column's gradient to its winning row only. The per-sample weights' gradient is the dot
   product of the bag's gradient with the entry's row. The bag of each entry is recomputed from
   ``offsets`` (``result1`` may be empty), as a count of the bag starts at or before it.
"""
from __future__ import annotations

import math

from ...backend import gaps as _backend
from ...core.table import op


def _embedding_fwd(xp, indices, weight, padding_idx=None):
    flat = xp.reshape(indices, (-1,))
    out = xp.take(weight, flat, axis=0)
    return xp.reshape(out, tuple(indices.shape) + (weight.shape[1],))


def _embedding_bwd(F, g, s):
    num, dim = s.shapes[1]
    flat_idx = F.reshape(s.indices, (-1,))
    gflat = F.reshape(g, (-1, dim))
    if s.padding_idx is not None:
        gflat = F.where(F.expand_dims(F.eq(flat_idx, s.padding_idx), axis=1), 0.0, gflat)
    return None, F.scatter_add((num, dim), (flat_idx,), gflat, gflat)


op("embedding", "EmbeddingBackward0", ("indices", "weight"), _embedding_fwd, _embedding_bwd,
   save={"indices": ()}, promote=False, nondiff=("indices",))


SUM, MEAN, MAX = 0, 1, 2




def _bag_fwd(xp, weight, indices, offsets, per_sample_weights=None, mode=MEAN, padding_idx=-1,
             include_last_offset=False, scale_grad_by_freq=False, sparse=False, weight_sym_argsize_0=0):
    n, d = indices.shape[0], weight.shape[1]
    b = offsets.shape[0] - (1 if include_last_offset else 0)
    starts = offsets[:b]
    pos = xp.arange(n, dtype=xp.int64)
    o2b = xp.searchsorted(starts, pos, side="right") - 1 if n else pos
    o2b = xp.clip(o2b, 0, max(b - 1, 0))
    keep = indices != padding_idx                                      # NOTE [ Embedding bags ] 1
    sizes = _backend.index_add(xp, xp.zeros(b, dtype=xp.int64), o2b, xp.astype(keep, xp.int64))
    rows = xp.take(weight, indices, axis=0)
    if mode == MAX:
        out, winners = _bag_max(xp, rows, indices, keep, o2b, starts, pos, b, d, sizes)
    else:
        if per_sample_weights is not None:
            rows = rows * xp.reshape(per_sample_weights, (n, 1))
        rows = xp.where(xp.reshape(keep, (n, 1)), rows, xp.zeros((), dtype=rows.dtype))
        out = _backend.index_add(xp, xp.zeros((b, d), dtype=weight.dtype), o2b, rows)
        if mode == MEAN:
            out = out / xp.reshape(xp.astype(xp.where(sizes > 0, sizes, 1), weight.dtype), (b, 1))
    empty = xp.zeros(0, dtype=xp.int64)
    aux = {"result1": o2b if (mode != SUM or padding_idx >= 0) else empty,
           "result2": sizes if mode != SUM else xp.zeros(b, dtype=xp.int64),
           "result3": winners if mode == MAX else (xp.asarray(sizes, copy=True) if mode == MEAN
                                                   else xp.zeros(b, dtype=xp.int64))}
    return out, aux


def _bag_max(xp, rows, indices, keep, o2b, starts, pos, b, d, sizes):
    """Each bag laid out as a row of a dense (B, L, D) block (L the longest bag), -inf where no entry."""
    n = rows.shape[0]
    inside = pos - xp.take(starts, o2b) if n else pos
    longest = int(xp.max(xp.where(keep, inside, -1))) + 1 if n else 0
    if longest <= 0:
        return xp.zeros((b, d), dtype=rows.dtype), xp.zeros((b, d), dtype=xp.int64)
    slot = xp.where(keep, o2b * longest + inside, b * longest)           # dropped entries: one spare slot
    dense = _backend.index_fill(xp, xp.full((b * longest + 1, d), -math.inf, dtype=rows.dtype), (slot,), rows)
    which_row = _backend.index_fill(xp, xp.zeros(b * longest + 1, dtype=xp.int64), (slot,), indices)
    dense = xp.reshape(dense[:b * longest, ...], (b, longest, d))
    first = xp.argmax(dense, axis=1)                                    # (B, D): the first maximum
    out = xp.max(dense, axis=1)
    filled = xp.reshape(sizes > 0, (b, 1))
    out = xp.where(filled, out, xp.zeros((), dtype=rows.dtype))
    at = xp.reshape(xp.arange(b, dtype=xp.int64), (b, 1)) * longest + first
    winners = xp.reshape(xp.take(which_row, xp.reshape(at, (-1,))), (b, d))
    return out, xp.where(filled, winners, xp.zeros((), dtype=xp.int64))


def _bag_of_each(F, s, n, like):
    """offset2bag from ``offsets`` (NOTE [ Embedding bags ] 4): how many bag starts lie at or before i."""
    b = s.shapes[2][0] - (1 if s.include_last_offset else 0)
    starts = F.reshape(F.index(s.offsets, (slice(0, b),)), (1, b))
    pos = F.iota(n, 0, 2, like)
    count = F.sum(F.astype(F.le(starts, pos), F.dtype(s.offsets)), axis=1)
    return F.where(F.gt(count, 0), count - 1, 0), b


def _bag_bwd(F, g, s):
    n = s.shapes[1][0]
    num, d = s.shapes[0]
    o2b, b = _bag_of_each(F, s, n, g)
    keep = F.logical_not(F.eq(s.indices, s.padding_idx)) if s.padding_idx >= 0 else None
    gw = gp = None
    if s.needs[0]:
        if s.mode == MAX:
            filled = F.reshape(F.gt(s.result2, 0), (b, 1))
            gm = F.where(filled, g, 0.0)
            gw = F.scatter_add((num, d), (s.result3, F.iota(d, 1, 2, g)), gm, gm)
        else:
            rows = F.index(g, (o2b,))                                    # (n, D): each entry's bag gradient
            if s.mode == MEAN:
                sizes = F.index(s.result2, (o2b,))
                rows = rows / F.reshape(F.astype(F.where(F.gt(sizes, 0), sizes, 1), F.dtype(g)), (n, 1))
            if s.per_sample_weights is not None:
                rows = rows * F.reshape(s.per_sample_weights, (n, 1))
            if s.scale_grad_by_freq:
                ones = F.zeros((n,), g) + 1.0
                counts = F.index(F.scatter_add((num,), (s.indices,), ones, ones), (s.indices,))
                rows = rows / F.reshape(counts, (n, 1))
            if keep is not None:
                rows = F.where(F.reshape(keep, (n, 1)), rows, 0.0)
            gw = F.scatter_add((num, d), (s.indices,), rows, rows)
    if len(s.needs) > 3 and s.needs[3]:
        dots = F.sum(F.index(g, (o2b,)) * F.index(s.weight, (s.indices,)), axis=1)
        gp = dots if keep is None else F.where(keep, dots, 0.0)
    return gw, None, None, gp


op("embedding_bag", "EmbeddingBagBackward0", ("weight", "indices", "offsets", "per_sample_weights"), _bag_fwd,
   _bag_bwd, save={"indices": (), "offsets": (), "per_sample_weights": ("weight",), "weight": ("per_sample_weights",),
                   "result1": (), "result2": (), "result3": ()},
   aux=("result1", "result2", "result3"), promote=False, nondiff=("indices", "offsets"))
