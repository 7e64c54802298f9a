"""Lookups: ``F.embedding``, ``F.one_hot`` and ``F.embedding_bag`` (the sum, mean or max of bags of
embedding rows without materialising the rows one by one, NOTE [ Embedding bags ] in
engine/ops/nn/embedding.py)."""
from __future__ import annotations

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core.dispatch import apply
from ...core.grad_mode import no_grad
from ...core.table import OPS
from ...ops.nn.embedding import MAX, MEAN, SUM


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if input.dtype is not _dtype.int64:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if input.numel():
        lo, hi = int(E.min(input).item()), int(E.max(input).item())
        if lo < 0 or hi >= weight.shape[0]:
            raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:          # PyTorch's embedding_renorm_ on weight.detach(): rows scaled in place
        _renorm(weight, input, max_norm, norm_type)
    return apply(OPS["embedding"], [input, weight], {"padding_idx": padding_idx})


def one_hot(tensor, num_classes=-1):
    """``tensor``'s class indices as rows of 0s with a 1 at the class (int64, no gradient)."""
    if tensor.numel():
        lo, hi = int(E.min(tensor).item()), int(E.max(tensor).item())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes < 0:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes < 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    return E.eq(E.unsqueeze(tensor, -1), E.arange(num_classes, device=tensor.device)).long()


_MODES = {"sum": SUM, "mean": MEAN, "max": MAX}


def _check_index_dtype(t):
    if t.dtype is not _dtype.int64:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {t.type()} instead (while checking arguments for embedding_bag)")


def _type_name(v):
    return "<class 'torch.Tensor'>" if isinstance(v, E.Tensor) else str(type(v))


def _renorm(weight, indices, max_norm, norm_type):
    """PyTorch's embedding_renorm_: rows used by ``indices`` whose norm exceeds ``max_norm`` are scaled
    down to it in place (no gradient flows through this)."""
    with no_grad():
        rows = E.unique(indices.reshape(-1))
        norms = E.norm(weight[rows], norm_type, dim=1)
        scale = E.where(norms > max_norm, max_norm / (norms + 1e-7), E.ones_like(norms))
        weight[rows] = weight[rows] * scale.unsqueeze(1)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The ``mode`` ("sum", "mean" or "max") of each bag of rows of ``weight``.

    ``input`` is 1-D with ``offsets`` (where each bag starts), or 2-D (one bag per row, no offsets).
    ``per_sample_weights`` (mode "sum" only) scales each row; entries equal to ``padding_idx`` count in
    no bag. An empty bag gives zeros.
    """
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    _check_index_dtype(input)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {_type_name(offsets)}")
        b, length = input.shape
        offsets = E.arange(0, b * length, length, dtype=_dtype.int64, device=input.device)
        input = E.reshape(input, (-1,))
        if per_sample_weights is not None:
            per_sample_weights = E.reshape(per_sample_weights, (-1,))
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    _check_index_dtype(offsets)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if sparse:
        raise NotImplementedError("glassgrad has no sparse gradients: use sparse=False")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, "
                               f"but got {padding_idx}")
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
    input = input.to(_dtype.int64) if input.dtype is not _dtype.int64 else input
    offsets = offsets.to(_dtype.int64) if offsets.dtype is not _dtype.int64 else offsets
    _check_bags(input, offsets, num)
    if max_norm is not None:
        _renorm(weight, input, max_norm, norm_type)
    out, _ = apply(OPS["embedding_bag"], [weight, input, offsets, per_sample_weights],
                   {"mode": _MODES[mode], "padding_idx": -1 if padding_idx is None else int(padding_idx),
                    "include_last_offset": bool(include_last_offset), "scale_grad_by_freq": bool(scale_grad_by_freq),
                    "sparse": bool(sparse), "weight_sym_argsize_0": num}, return_aux=True)
    return out


def _check_bags(input, offsets, num):
    """PyTorch's checks of the indices and offsets, in its words where it has them (read on the host, so
    no op lands in a recorded trace)."""
    n = input.shape[0]
    if input.numel():
        lo, hi = int(E.min(input).item()), int(E.max(input).item())
        if lo < 0 or hi >= num:
            values = input.tolist()
            i = next(k for k, v in enumerate(values) if not 0 <= v < num)
            raise RuntimeError(f"Index {i} of input takes value {values[i]} which is not in the valid range "
                               f"[0, {num})")
    starts = offsets.tolist()
    if starts:
        if starts[0] != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {starts[0]}\n[ torch.LongTensor{{}} ]")
        if starts[-1] > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                               f"{starts[-1]}")
        if any(b < a for a, b in zip(starts, starts[1:])):
            raise RuntimeError("offsets must be non-decreasing: each bag starts where the one before it ends or later")
