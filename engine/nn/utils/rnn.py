"""``engine.nn.utils.rnn``: batching sequences of different lengths, as ``torch.nn.utils.rnn``.

``pad_sequence``/``unpad_sequence`` make and undo a padded batch; ``PackedSequence`` and
``pack_padded_sequence``/``pad_packed_sequence``/``pack_sequence``/``unpack_sequence`` hold the
same batch without the padding, in PyTorch's layout (NOTE [ Packed layout ]); RNN, LSTM and GRU
take one and step over only the real elements.
"""
from __future__ import annotations

from typing import NamedTuple

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core.dispatch import apply, broadcast_mismatch
from ...core.tensor import Tensor
from ...core.table import OPS
from ...ops.nn.rnn import _runs   # the packing row is engine/ops/nn/rnn.py

# NOTE [ Packed layout ]
# 1. A packed batch is time-major with the padding cut out: ``data`` holds step 0 of every sequence,
#    then step 1 of every sequence still running, and so on; ``batch_sizes[t]`` (an int64 CPU tensor,
#    one entry per step of the longest sequence) says how many rows step t has.
# 2. So the sequences must be sorted longest first: step t's rows are always the first
#    ``batch_sizes[t]`` columns of the padded batch. ``enforce_sorted=False`` sorts them first
#    (``sorted_indices``, an IndexSelectBackward0 node) and ``unsorted_indices`` undoes it.
# 3. Packing is one op, PackPaddedSequenceBackward0, as PyTorch's: its backward lays each step's
#    gradient rows back into a zero padded tensor. It keeps ``batch_sizes`` and ``batch_first`` as
#    attributes (PyTorch also keeps ``batch_sizes`` as the saved int64 tensor ``_saved_result1``).
# 4. Unpacking is composed as PyTorch composes it: a tensor filled with ``padding_value`` and one
#    slice copy per run of steps with equal batch size, so the graph shows CopySlices nodes over
#    ViewBackward0 of a slice of ``data``.


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


_BATCH_SIZES_ON_CPU = ("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                       "manually. They should be instantiated by functions like pack_sequence and "
                       "pack_padded_sequences in nn.utils.rnn. "
                       "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")


class PackedSequence(PackedSequence_):
    """A batch of sequences without padding (NOTE [ Packed layout ]): ``data`` (sum of lengths, *),
    ``batch_sizes`` (int64, CPU), ``sorted_indices``/``unsorted_indices`` (None when the batch came
    sorted). Made by ``pack_padded_sequence`` and ``pack_sequence``; a tuple, as PyTorch's."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(_BATCH_SIZES_ON_CPU)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        """``self`` when ``data`` is unchanged, else a copy whose indices follow ``data`` to its device."""
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def to(self, *args, **kwargs):
        """``data.to(...)`` (dtype and/or device); the indices follow the device, ``batch_sizes`` stays
        on the CPU. Returns ``self`` when nothing changes."""
        if "copy" in kwargs:
            raise RuntimeError(".to() does not accept copy argument")
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._with_data(self.data.cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._with_data(self.data.cpu(*args, **kwargs))

    def double(self):
        return self._with_data(self.data.double())

    def float(self):
        return self._with_data(self.data.float())

    def half(self):
        return self._with_data(self.data.half())

    def long(self):
        return self._with_data(self.data.long())

    def int(self):
        return self._with_data(self.data.int())

    def short(self):
        return self._with_data(self.data.short())

    def char(self):
        return self._with_data(self.data.char())

    def byte(self):
        return self._with_data(self.data.byte())

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """Always False: glassgrad has no pinned (page-locked) host memory."""
        return False


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None stays None)."""
    if permutation is None:
        return None
    out = E.empty_like(permutation)
    out.scatter_(0, permutation, E.arange(permutation.numel(), device=permutation.device))
    return out


def _index_select(x, dim, index):
    """``x.index_select(dim, index)`` recorded as PyTorch records it (IndexSelectBackward0)."""
    return apply(OPS["index_select_dim"], [x, index], {"dim": dim})


def _type_name(dt):
    return _dtype.SHORT_NAMES.get(
        str(dt).replace("torch.", "").replace("engine.", ""), str(dt))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) whose b-th sequence has
    ``lengths[b]`` real steps. ``lengths`` is a list or a CPU tensor; with ``enforce_sorted`` it must
    be non-increasing, else the batch is sorted first. Returns a PackedSequence."""
    if not isinstance(lengths, Tensor):
        lengths = E.as_tensor(lengths, dtype=_dtype.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=_dtype.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = E.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = _index_select(input, 0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack(input, lengths, batch_first):
    """PyTorch's ``_pack_padded_sequence``: its checks, in its order, then the op (NOTE [ Packed layout ] 3)."""
    time_major = E.transpose(input, 0, 1) if batch_first else input   # a 1-D input fails here, as PyTorch's
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device} {_type_name(lengths.dtype)} tensor")
    batch = time_major.size(1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.shape[0]} "
                           f"(batch_size={batch})")
    lens = [int(v) for v in lengths.tolist()]
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lens[0] > time_major.shape[0]:   # PyTorch reads past the end of the input here; glassgrad refuses
        raise RuntimeError(f"Expected every length to be at most the padded sequence length "
                           f"{time_major.shape[0]}, but got a length of {lens[0]}")
    sizes = tuple(sum(1 for n in lens if n > t) for t in range(lens[0]))
    data = apply(OPS["_pack_padded_sequence"], [input], {"batch_sizes": sizes, "batch_first": bool(batch_first)})
    return data, E.tensor(list(sizes), dtype=_dtype.int64, device="cpu")


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo packing: ``(padded, lengths)``, padded (T, B, *) (or (B, T, *)) in the original batch
    order with ``padding_value`` past each end, T = ``total_length`` or the longest length;
    ``lengths`` an int64 CPU tensor."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    sizes = [int(v) for v in batch_sizes.tolist()]
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    batch, rest = sizes[0], tuple(data.shape[1:])
    out = E.full((total_length, batch) + rest, padding_value, dtype=data.dtype, device=data.device)
    off = 0
    for t0, t1, bs in _runs(sizes):       # NOTE [ Packed layout ] 4
        n = (t1 - t0) * bs
        out[t0:t1, :bs] = data[off:off + n].view((t1 - t0, bs) + rest)
        off += n
    lengths = [sum(1 for s in sizes if s > b) for b in range(batch)]
    if batch_first:
        out = E.transpose(out, 0, 1)
    lengths = E.tensor(lengths, dtype=_dtype.int64, device="cpu")
    if sequence.unsorted_indices is not None:
        out = _index_select(out, 0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return out, lengths


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) tensors: ``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = E.as_tensor([v.size(0) for v in sequences], dtype=_dtype.int64, device="cpu")
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of (L_i, *) tensors a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


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


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]
