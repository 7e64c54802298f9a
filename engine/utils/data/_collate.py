"""``default_collate`` and ``default_convert``: samples to batched tensors, as PyTorch's.

NOTE [ Batches are inputs ]
1. A batch the default collate stacks is a new tensor whose storage is in the
   ``input`` memory category, like a tensor a factory makes: the memory view shows
   each batch as input bytes, and a recording shows one ``alloc`` per batched
   tensor (not one op per sample).
2. The stack runs on the arrays directly when the samples are plain tensors (same
   shape, dtype and device, none requiring grad); otherwise it is ``engine.stack``
   (type promotion, a graph node when a sample requires grad, PyTorch's error for
   unequal shapes) and the result's storage is then moved to ``input``.
3. Python floats collate to float64 and ints to int64, as in PyTorch (a list of float
   labels becomes a *double* tensor); tuples become lists; dicts keep their keys.
4. A ``DataLoader`` over a ``TensorDataset`` (or a ``Subset`` of one) with the default
   collate skips the per-sample step: it indexes each tensor with the batch's indices at
   once. The values are those of stacking ``dataset[i]`` sample by sample; the recording
   shows one ``input`` allocation per tensor and no per-sample ops.
"""
from __future__ import annotations

import collections.abc
import copy

import numpy as np

from ...core.tensor import Tensor

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                  "lists; found {}")


def _as_input(t: Tensor) -> Tensor:
    if t._storage.base == "other":
        t._storage.set_base("input")
    return t


def _stack(batch) -> Tensor:
    """Stack sample tensors into one new ``input`` tensor (NOTE [ Batches are inputs ] 1-2)."""
    first = batch[0]
    plain = all(isinstance(t, Tensor) and not t.requires_grad and t.shape == first.shape
                and t.dtype is first.dtype and t.device == first.device for t in batch)
    if plain:
        xp = first._storage.xp
        return Tensor._wrap(xp.stack([t._data for t in batch]), base="input")
    from ... import functional as E
    return _as_input(E.stack(list(batch), 0))


def _collate_numbers(batch, dtype=None) -> Tensor:
    from ... import functional as E
    return E.tensor(batch, dtype=dtype)          # a factory: already an "input" storage


def collate(batch, *, collate_fn_map=None):
    """PyTorch's ``collate``: dispatch on the first element's type (``collate_fn_map`` first)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for kind in collate_fn_map:
            if isinstance(elem, kind):
                return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):        # namedtuple
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(s, collate_fn_map=collate_fn_map) for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _tensor_fn(batch, *, collate_fn_map=None):
    return _stack(batch)


def _numpy_array_fn(batch, *, collate_fn_map=None):
    if batch[0].dtype.kind in "SaUO":
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    from ... import functional as E
    return collate([E.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _numpy_scalar_fn(batch, *, collate_fn_map=None):
    from ... import functional as E
    return E.as_tensor(batch)


def _float_fn(batch, *, collate_fn_map=None):
    from ... import functional as E
    return _collate_numbers(batch, E.float64)


def _int_fn(batch, *, collate_fn_map=None):
    return _collate_numbers(batch)


def _str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {Tensor: _tensor_fn, np.ndarray: _numpy_array_fn,
                          (np.bool_, np.number, np.object_): _numpy_scalar_fn, float: _float_fn, int: _int_fn,
                          str: _str_fn, bytes: _str_fn}


def default_collate(batch):
    """Collate a list of samples into a batch: tensors, NumPy arrays and numbers are stacked into
    tensors with a new first dimension; dicts, tuples, lists and namedtuples are collated field by
    field (NOTE [ Batches are inputs ])."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """What a DataLoader without batching (``batch_size=None``) applies to each sample: NumPy arrays
    become tensors, containers are converted element by element, everything else is left alone."""
    from ... import functional as E
    t = type(data)
    if isinstance(data, Tensor):
        return data
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ == "ndarray" and data.dtype.kind in "SaUO":
            return data
        return E.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return t({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return t(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return t([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
