"""Storages: the unit of memory. Every tensor's array lives in exactly one storage.

NOTE [ Storage lifetime and categories ]
1. A storage is created for every array an op, factory or load produces, except
   views, which share their base's storage (so bytes are never counted twice).
2. It is freed when its last reference dies: tensors and saved tensors hold it, and
   CPython's reference counting makes the free happen exactly then (``__del__``).
3. Its category is its ``base`` category (parameter, gradient, optimizer, input,
   other), except that an ``other`` storage held by at least one saved tensor counts
   as ``activation``. Every change of category is an event.
4. A storage is freed once. In a reference cycle the garbage collector may finalize
   it before a saved tensor that still names it; later changes to its saved count
   then change nothing (no event, no counter).
"""
from __future__ import annotations

import math

import numpy as np

from .. import events as _events
from ..memory import state as _memstate

_ndarray = np.ndarray

CATEGORIES = _events.CATEGORIES


class Storage:
    __slots__ = ("id", "array", "nbytes", "device", "xp", "base", "saved", "version", "freed", "__weakref__")

    def __init__(self, array, device, xp, base: str = "other"):
        self.id = _events.new_id()
        self.array = array          # the array that owns the memory
        if type(array) is _ndarray:
            self.nbytes = array.nbytes
        else:
            self.nbytes = int(array.size * array.dtype.itemsize) if hasattr(array.dtype, "itemsize") else _nbytes(xp, array)
        self.device = device
        self.xp = xp
        self.base = base
        self.saved = 0
        self.version = 0
        self.freed = False
        _memstate.on_alloc(self)

    @property
    def category(self) -> str:
        return "activation" if self.saved and self.base == "other" else self.base

    def set_base(self, base: str) -> None:
        old = self.category
        self.base = base
        self._moved(old)

    def add_saved(self, n: int) -> None:
        if self.base != "other":      # only an "other" storage changes category when saved
            self.saved += n
            return
        old = "activation" if self.saved else "other"
        self.saved += n
        new = "activation" if self.saved else "other"
        if new != old and not self.freed:
            _memstate.on_move(self, old, new)

    def _moved(self, old: str) -> None:
        new = self.category
        if new != old and not self.freed:
            _memstate.on_move(self, old, new)

    def __del__(self):
        if self.freed:
            return
        self.freed = True
        try:
            _memstate.on_free(self)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _nbytes(xp, array) -> int:
    return math.prod(int(s) for s in array.shape) * _itemsize(xp, array.dtype)


def _itemsize(xp, adt) -> int:
    if adt == xp.bool:
        return 1
    if adt in (xp.float32, xp.int32):
        return 4
    return 8
