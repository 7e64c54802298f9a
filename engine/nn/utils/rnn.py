"""``engine.nn.utils.rnn``: batching sequences of different lengths, as ``torch.nn.utils.rnn``.

glassgrad's recurrent layers take padded batches; there is no PackedSequence.
"""
from __future__ import annotations

from ... import functional as E
from ..._dispatch import broadcast_mismatch


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shape (L_i, *) into (T, B, *) (or (B, T, *)), T the longest L_i, filling the rest
    with ``padding_value``. As PyTorch, each sequence is copied into a slice of a filled tensor, so the
    graph shows CopySlices nodes."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    rest = tuple(first.shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != rest:   # the copy into the slice fails as PyTorch's copy_ does
            raise RuntimeError(broadcast_mismatch((s.shape[0],) + rest, tuple(s.shape)) or
                               f"The expanded size of the tensor must match: {list(rest)} and {list(s.shape[1:])}")
    longest = max(s.shape[0] for s in sequences)
    lead = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = E.full(lead + rest, padding_value, dtype=first.dtype, device=first.device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        window = slice(0, n) if padding_side == "right" else slice(longest - n, longest)
        if batch_first:
            out[i, window] = s
        else:
            out[window, i] = s
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The inverse of ``pad_sequence``: a list of (L_i, *) tensors."""
    if not batch_first:
        padded_sequences = E.transpose(padded_sequences, 0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(lengths.tolist() if hasattr(lengths, "tolist")
                                                                 else lengths)]


__all__ = ["pad_sequence", "unpad_sequence"]
