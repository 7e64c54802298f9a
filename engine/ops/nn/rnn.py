"""The op-table row behind ``pack_padded_sequence`` (PackPaddedSequenceBackward0): a padded batch
packed time-major without its padding (NOTE [ Packed layout ] in engine/nn/utils/rnn.py, rule 3).

The packing and unpacking functions are in engine/nn/utils/rnn.py.
"""
from __future__ import annotations

from ...core.table import op


def _runs(batch_sizes):
    """(t0, t1, batch size) for each run of equal batch sizes."""
    out, t0 = [], 0
    for t in range(1, len(batch_sizes) + 1):
        if t == len(batch_sizes) or batch_sizes[t] != batch_sizes[t0]:
            out.append((t0, t, batch_sizes[t0]))
            t0 = t
    return out


def _swap01(ndim):
    return (1, 0) + tuple(range(2, ndim))


def _pack_fwd(xp, a, batch_sizes, batch_first):
    if batch_first:
        a = xp.permute_dims(a, _swap01(a.ndim))
    rest = tuple(a.shape[2:])
    pieces = [xp.reshape(a[t0:t1, :bs, ...], ((t1 - t0) * bs,) + rest) for t0, t1, bs in _runs(batch_sizes)]
    return pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=0)


def _pack_bwd(F, g, s):
    shape = tuple(s.shapes[0])
    if s.batch_first:
        shape = (shape[1], shape[0]) + shape[2:]
    big_t, big_b, rest = shape[0], shape[1], shape[2:]
    blocks, off = [], 0
    for t0, t1, bs in _runs(s.batch_sizes):
        n = (t1 - t0) * bs
        block = F.reshape(F.index(g, (slice(off, off + n),)), (t1 - t0, bs) + rest)
        if bs < big_b:
            block = F.concat([block, F.zeros((t1 - t0, big_b - bs) + rest, g)], 1)
        blocks.append(block)
        off += n
    if len(s.batch_sizes) < big_t:
        blocks.append(F.zeros((big_t - len(s.batch_sizes), big_b) + rest, g))
    grad = blocks[0] if len(blocks) == 1 else F.concat(blocks, 0)
    return (F.permute(grad, _swap01(len(shape))) if s.batch_first else grad,)


op("_pack_padded_sequence", "PackPaddedSequenceBackward0", ("input",), _pack_fwd, _pack_bwd, promote=False)
