"""``DataLoader``: batches of samples from a dataset, in the main process.

NOTE [ Reproducible shuffling ]
1. ``shuffle=True`` uses a ``RandomSampler``. Without a ``generator=`` it seeds a
   fresh generator, for each pass, with an int64 drawn from the global generator, as
   PyTorch does; so ``engine.manual_seed(s)`` before the loop fixes every epoch's order
   (and each epoch's order differs). With ``generator=g`` the order comes from ``g``.
2. As in PyTorch, starting a pass (``iter(loader)``) also draws one int64 (the base
   seed PyTorch hands to worker processes) from ``generator`` or the global generator,
   before the sampler's first draw. glassgrad makes the same draws in the same order,
   so what a script draws after a pass matches in kind, though the numbers are
   glassgrad's own (PCG64, not PyTorch's Mersenne Twister).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ...core.tensor import Tensor
from ... import random as _random
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _INT63


def get_worker_info():
    """``None``: glassgrad loads every batch in the main process."""
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` (PyTorch's arguments and checks)."""

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers == 0 and persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if num_workers > 0:   # a PyTorch script runs unchanged: same batches, loaded where they are recorded
            warnings.warn(f"DataLoader(num_workers={num_workers}): glassgrad loads every batch in the main process, "
                          "so that every tensor it makes is recorded; the batches are the ones workers would give "
                          "(worker_init_fn is not called)", UserWarning, stacklevel=2)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._iterable = True
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            self._iterable = False
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                          "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        # NOTE [ Reproducible shuffling ] 2: the base seed is drawn when the pass starts
        gen = self.generator if self.generator is not None else _random.default_generator
        self._base_seed = int(gen.integers(0, _INT63, ()))
        if self._iterable:
            return self._iter_iterable()
        return self._iter_map()

    def _iter_map(self):
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            fast = self._tensor_rows(indices) if self.collate_fn is default_collate else None
            if fast is not None:
                yield fast
                continue
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(indices) if getitems else [self.dataset[i] for i in indices]
            yield self.collate_fn(data)

    def _iter_iterable(self):
        it = iter(self.dataset)
        if self.batch_size is None:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = []
            for sample in it:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    break
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)

    def _tensor_rows(self, indices):
        """NOTE [ Batches are inputs ] 4: a batch of a TensorDataset as one gather per tensor, or
        None when the dataset is anything else (then samples are fetched and collated one by one)."""
        ds, idx = self.dataset, list(indices)
        while type(ds) is Subset:
            try:
                idx = [ds.indices[i] for i in idx]
            except (IndexError, TypeError):
                return None
            ds = ds.dataset
        if type(ds) is not TensorDataset or not idx:
            return None
        if any(not isinstance(t, Tensor) or t.requires_grad or t.ndim == 0 for t in ds.tensors):
            return None
        n = len(ds)
        if not all(type(i) is int and -n <= i < n for i in idx):
            return None
        from ...backend import gaps as _backend
        host_rows, out = np.asarray(idx, dtype=np.int64), []
        for t in ds.tensors:
            xp = t._storage.xp
            rows = host_rows if type(t._data) is np.ndarray else _backend.from_numpy(xp, host_rows)
            out.append(Tensor._wrap(xp.take(t._data, rows, axis=0), base="input"))
        return out
