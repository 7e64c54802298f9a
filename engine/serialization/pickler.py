"""Writes ``data.pkl``: pickle protocol 2 opcodes for the objects a checkpoint may hold.

NOTE [ Writing data.pkl by hand ]
1. glassgrad emits the pickle opcodes itself instead of using ``pickle.Pickler``:
   the file must name PyTorch's globals (``torch._utils._rebuild_tensor_v2``,
   ``torch.FloatStorage``, ...) which do not exist here, and only a fixed set of
   types may be written at all. Anything else is refused, naming its type and where
   it sits in the object.
2. A tensor is ``REDUCE(_rebuild_tensor_v2, (storage, offset, size, stride,
   requires_grad, OrderedDict()))``; a Parameter wraps that (with requires_grad
   False) in ``REDUCE(_rebuild_parameter, (tensor, requires_grad, OrderedDict()))``.
3. ``storage`` is a persistent id ``('storage', torch.<X>Storage, key, location,
   numel)`` followed by ``BINPERSID``. Tensors whose ``_storage`` is the same object
   get the same key, so the storage's bytes are written once (see the archive writer).
4. Memoisation follows Python's pickler (containers, strings, non-empty tuples,
   globals and REDUCE results get a ``BINPUT``); meeting the same object again
   writes ``BINGET``, so identity survives a round trip (the same tensor twice loads
   as one object). With that, a tensor's data.pkl is byte for byte what torch.save
   writes for it.
5. Storage bytes are the whole owning array of ``tensor._storage`` in memory order;
   offset and strides are the tensor's own, in elements. A tensor whose layout cannot
   be described that way (a backend without pointers, negative strides) is written
   as a contiguous copy in a record of its own.
"""
from __future__ import annotations

import collections
import struct
import warnings

import numpy as np

from ..backend import gaps as _backend
from . import modules as _modules
from .formats import COUNTER, ORDERED_DICT, REBUILD_PARAMETER, REBUILD_TENSOR_V2, STORAGE_OF_DTYPE

# pickle opcodes (see pickletools for the full table)
PROTO, STOP, MARK = b"\x80", b".", b"("
NONE, NEWTRUE, NEWFALSE = b"N", b"\x88", b"\x89"
BININT, BININT1, BININT2, LONG1, LONG4, BINFLOAT = b"J", b"K", b"M", b"\x8a", b"\x8b", b"G"
BINUNICODE = b"X"
EMPTY_TUPLE, TUPLE, TUPLE1, TUPLE2, TUPLE3 = b")", b"t", b"\x85", b"\x86", b"\x87"
EMPTY_LIST, APPEND, APPENDS, EMPTY_DICT, SETITEM, SETITEMS = b"]", b"a", b"e", b"}", b"s", b"u"
GLOBAL, REDUCE, BUILD, BINPERSID, NEWOBJ = b"c", b"R", b"b", b"Q", b"\x81"
BINPUT, LONG_BINPUT, BINGET, LONG_BINGET = b"q", b"r", b"h", b"j"

_BATCH = 1000  # items per APPENDS / SETITEMS, as pickle does
_STORAGE = "storage"


class StorageRecord:
    """One ``data/<key>`` record: the bytes of a storage and how the pickle names it."""

    __slots__ = ("key", "storage_type", "location", "numel", "array", "owner")

    def __init__(self, key, storage_type, location, numel, array, owner):
        self.key = key
        self.storage_type = storage_type
        self.location = location
        self.numel = numel
        self.array = array      # 1-d host NumPy array, memory order of the storage
        self.owner = owner      # keeps the storage alive so its id() is not reused

    def tobytes(self) -> bytes:
        a = self.array
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        return a.tobytes()


class CheckpointPickler:
    """``CheckpointPickler().dumps(obj)`` -> (pickle bytes, [StorageRecord, ...])."""

    def __init__(self, protocol: int = 2):
        if protocol not in (2, 3, 4, 5):
            raise ValueError(f"pickle_protocol must be 2 to 5, got {protocol!r}")
        self.protocol = protocol
        self.out = bytearray()
        self.memo: dict = {}        # id(obj) -> (memo index, obj)
        self.records: list = []
        self._by_storage: dict = {}  # id(Storage) -> StorageRecord
        self.tensors = 0
        self.placed: list = []       # (tensor, StorageRecord, offset, stride) for the save event

    # ---- entry point ---------------------------------------------------------
    def dumps(self, obj):
        self.out += PROTO + bytes([self.protocol])
        self.save(obj, "obj")
        self.out += STOP
        return bytes(self.out), self.records

    # ---- memo -----------------------------------------------------------------
    def _put(self, obj=None) -> None:
        """Memoise the value just written (``obj`` None: a value nobody can meet again)."""
        i = len(self.memo)
        self.memo[id(obj) if obj is not None else ("anon", i)] = (i, obj)
        self.out += BINPUT + bytes([i]) if i < 256 else LONG_BINPUT + struct.pack("<I", i)

    def _get(self, obj) -> bool:
        hit = self.memo.get(id(obj))
        if hit is None:
            return False
        i = hit[0]
        self.out += BINGET + bytes([i]) if i < 256 else LONG_BINGET + struct.pack("<I", i)
        return True

    def _global(self, module: str, name: str) -> None:
        key = ("global", module, name)
        hit = self.memo.get(key)
        if hit is not None:
            i = hit[0]
            self.out += BINGET + bytes([i]) if i < 256 else LONG_BINGET + struct.pack("<I", i)
            return
        self.out += GLOBAL + f"{module}\n{name}\n".encode("ascii")
        i = len(self.memo)
        self.memo[key] = (i, None)
        self.out += BINPUT + bytes([i]) if i < 256 else LONG_BINPUT + struct.pack("<I", i)

    # ---- dispatch -------------------------------------------------------------
    def save(self, obj, where: str) -> None:
        from ..backend.device import device
        from ..backend.dtypes import dtype
        from ..backend.size import Size
        from ..core.tensor import Tensor
        if obj is None:
            self.out += NONE
        elif obj is True or obj is False:
            self.out += NEWTRUE if obj else NEWFALSE
        elif isinstance(obj, (bool, np.bool_)):
            self.out += NEWTRUE if bool(obj) else NEWFALSE
        elif isinstance(obj, int):
            self._int(int(obj))
        elif isinstance(obj, float):
            self.out += BINFLOAT + struct.pack(">d", float(obj))
        elif isinstance(obj, str):
            if not self._get(obj):
                b = obj.encode("utf-8", "surrogatepass")
                self.out += BINUNICODE + struct.pack("<I", len(b)) + b
                self._put(obj)
        elif isinstance(obj, Tensor):
            if not self._get(obj):
                self._tensor(obj, where)
        elif isinstance(obj, Size):
            if not self._get(obj):
                self._global("torch", "Size")
                self._tuple((tuple(obj),), where)
                self.out += REDUCE
                self._put(obj)
        elif type(obj) is tuple:
            if not self._get(obj):
                self._tuple(obj, where, obj)
        elif type(obj) is list:
            if not self._get(obj):
                self.out += EMPTY_LIST
                self._put(obj)
                self._appends(obj, where)
        elif type(obj) is dict:
            if not self._get(obj):
                self.out += EMPTY_DICT
                self._put(obj)
                self._setitems(obj, where)
        elif type(obj) is collections.OrderedDict:
            if not self._get(obj):
                self._global(*ORDERED_DICT)
                self.out += EMPTY_TUPLE + REDUCE
                self._put(obj)
                self._setitems(obj, where)
                state = getattr(obj, "__dict__", None)
                if state:  # a state_dict's _metadata, restored by BUILD
                    self.save(dict(state), f"{where}.__dict__")
                    self.out += BUILD
        elif type(obj) is collections.Counter:
            if not self._get(obj):
                self._global(*COUNTER)
                self._tuple((dict(obj),), where)     # Counter.__reduce__: (Counter, (dict(self),))
                self.out += REDUCE
                self._put(obj)
        elif isinstance(obj, device):
            self._global("torch", "device")
            self._tuple((str(obj),), where)
            self.out += REDUCE
            self._put()
        elif isinstance(obj, dtype):
            self._global("torch", obj.name)
        elif _modules.is_module(obj):                 # NOTE [ Saving a whole module ]
            if not self._get(obj):
                self._global(*_modules.class_path(type(obj)))
                self.out += EMPTY_TUPLE + NEWOBJ
                self._put(obj)
                self.save(_modules.state_of(obj, where, self._savable), f"{where}.__dict__")
                self.out += BUILD
        else:
            t = type(obj)
            hint = ""
            if isinstance(obj, np.generic):
                hint = " (convert NumPy scalars with .item())"
            elif isinstance(obj, np.ndarray):
                hint = " (wrap NumPy arrays with engine.tensor(...))"
            raise TypeError(
                f"engine.save cannot serialize an object of type {t.__module__}.{t.__qualname__} at {where}: "
                "a checkpoint holds only tensors, Parameters, dtypes, devices and "
                f"dict/list/tuple/OrderedDict/Counter containers of them and of str, int, float, bool and None{hint}")

    @staticmethod
    def _savable(v) -> bool:
        """A module attribute this pickler can write (NOTE [ Saving a whole module ] rule 2)."""
        from ..backend.device import device
        from ..backend.dtypes import dtype
        from ..core.tensor import Tensor
        return _modules.plain(v) or isinstance(v, (Tensor, dtype, device)) or _modules.is_module(v)

    # ---- scalars and containers ---------------------------------------------
    def _int(self, v: int) -> None:
        if 0 <= v < 256:
            self.out += BININT1 + bytes([v])
        elif 0 <= v < 65536:
            self.out += BININT2 + struct.pack("<H", v)
        elif -2**31 <= v < 2**31:
            self.out += BININT + struct.pack("<i", v)
        else:
            n = (v.bit_length() + 8) // 8  # room for the sign bit
            b = v.to_bytes(n, "little", signed=True)
            self.out += (LONG1 + bytes([n]) if n < 256 else LONG4 + struct.pack("<i", n)) + b

    def _tuple(self, items, where: str, obj=None) -> None:
        """A tuple, memoised as pickle does (every non-empty tuple gets a memo slot)."""
        if not items:
            self.out += EMPTY_TUPLE
            return
        short = len(items) <= 3
        if not short:
            self.out += MARK
        for i, x in enumerate(items):
            self.save(x, f"{where}[{i}]")
        self.out += (TUPLE1, TUPLE2, TUPLE3)[len(items) - 1] if short else TUPLE
        self._put(obj)

    def _appends(self, items: list, where: str) -> None:
        for start in range(0, len(items), _BATCH):
            batch = range(start, min(start + _BATCH, len(items)))
            if len(batch) > 1:
                self.out += MARK
            for i in batch:
                self.save(items[i], f"{where}[{i}]")
            self.out += APPENDS if len(batch) > 1 else APPEND

    def _setitems(self, d: dict, where: str) -> None:
        items = list(d.items())
        for start in range(0, len(items), _BATCH):
            batch = items[start:start + _BATCH]
            if len(batch) > 1:
                self.out += MARK
            for k, v in batch:
                if not isinstance(k, (str, int, float, bool, tuple, type(None))):
                    raise TypeError(f"engine.save cannot serialize a dict key of type "
                                    f"{type(k).__module__}.{type(k).__qualname__} at {where}")
                self.save(k, f"{where} key {k!r}")
                self.save(v, f"{where}[{k!r}]")
            self.out += SETITEMS if len(batch) > 1 else SETITEM

    # ---- tensors ----------------------------------------------------------------
    def _tensor(self, t, where: str) -> None:
        if t._hooks:
            for h in t._hooks:
                warnings.warn(f"backward hook {h!r} on tensor will not be serialized.  If this is expected, "
                              "you can decorate the function with @torch.utils.hooks.unserializable_hook "
                              "to suppress this warning", stacklevel=4)
        is_param = bool(getattr(t, "_is_param", False))
        if is_param:  # NOTE [ Writing data.pkl by hand ] rule 2
            self._global(*REBUILD_PARAMETER)
        self._global(*REBUILD_TENSOR_V2)
        self.out += MARK
        rec, offset, stride = self._record_for(t)
        self.placed.append((t, rec, offset, stride))
        self._storage_pid(rec)
        self._int(offset)
        self._tuple(tuple(int(s) for s in t.shape), where)
        self._tuple(tuple(int(s) for s in stride), where)
        self.out += NEWFALSE if is_param or not t.requires_grad else NEWTRUE
        self._empty_ordered_dict()
        self.out += TUPLE
        self._put()
        self.out += REDUCE
        if is_param:
            self._put()
            self.out += NEWTRUE if t.requires_grad else NEWFALSE
            self._empty_ordered_dict()
            self.out += TUPLE3
            self._put()
            self.out += REDUCE
        self._put(t)
        self.tensors += 1

    def _empty_ordered_dict(self) -> None:
        """``OrderedDict()``: the backward_hooks argument, always empty (hooks are never saved)."""
        self._global(*ORDERED_DICT)
        self.out += EMPTY_TUPLE + REDUCE
        self._put()

    def _storage_pid(self, rec: StorageRecord) -> None:
        """``('storage', torch.<X>Storage, key, location, numel)`` then BINPERSID (rule 3).

        As in torch, a fresh tuple each time: a storage met again costs BINGETs of its
        memoised parts, and its bytes are still written once.
        """
        self.out += MARK
        self.save(_STORAGE, "pid")
        self._global("torch", rec.storage_type)
        self.save(rec.key, "pid")
        self.save(rec.location, "pid")
        self._int(rec.numel)
        self.out += TUPLE
        self._put()
        self.out += BINPERSID

    def _record_for(self, t):
        """The storage record for ``t`` plus its offset and strides in that record (rule 5)."""
        st = t._storage
        stype = STORAGE_OF_DTYPE[t.dtype.name]
        location = "cpu" if st.device.type == "cpu" else f"cuda:{st.device.index or 0}"
        layout = _layout_in_owner(t)
        if layout is not None:
            rec = self._by_storage.get(id(st))
            if rec is None or rec.storage_type != stype:
                flat = _owner_flat(st)
                rec = StorageRecord(str(len(self.records)), stype, location, int(flat.size), flat, st)
                self.records.append(rec)
                if id(st) not in self._by_storage:
                    self._by_storage[id(st)] = rec
            return rec, layout[0], layout[1]
        flat = np.ascontiguousarray(_backend.to_numpy(st.xp, t._data)).reshape(-1)
        rec = StorageRecord(str(len(self.records)), stype, location, int(flat.size), flat, t)
        self.records.append(rec)
        return rec, 0, _contiguous_strides(t.shape)


def _contiguous_strides(shape) -> tuple:
    out, acc = [], 1
    for s in reversed(tuple(shape)):
        out.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(out))


def _layout_in_owner(t):
    """(offset, strides) of ``t`` inside its storage's owning array, or None when not expressible."""
    st = t._storage
    xp = st.xp
    if not (_backend._is_numpy(xp) or _backend._is_cupy(xp)):
        return None
    owner = st.array
    if owner.dtype != t._data.dtype or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return None
    stride = tuple(int(s) for s in t.stride())
    offset = int(t.storage_offset())
    itemsize = t.dtype.itemsize
    if any(s < 0 for s in stride) or offset < 0:
        return None
    if _backend._is_numpy(xp):
        base_ptr = owner.__array_interface__["data"][0]
        ptr = t._data.__array_interface__["data"][0]
    else:
        base_ptr, ptr = owner.data.ptr, t._data.data.ptr
    if ptr - base_ptr != offset * itemsize:  # misaligned view (not a whole number of elements)
        return None
    if t.numel() and offset + sum((n - 1) * s for n, s in zip(t.shape, stride)) >= owner.size:
        return None
    return offset, stride


def _owner_flat(st) -> np.ndarray:
    """The storage's bytes as a 1-d host array in memory order."""
    owner = st.array
    order = "F" if owner.flags.f_contiguous and not owner.flags.c_contiguous else "C"
    return _backend.to_numpy(st.xp, owner.reshape(-1, order=order))  # flatten first: a view, then copy to host
