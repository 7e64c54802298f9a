"""Rebuilding tensors from a checkpoint: the allow-list, storages, map_location.

NOTE [ Restoring storages ]
1. Each persistent id ``('storage', torch.<X>Storage, key, location, numel)``
   names the record ``data/<key>``; its size must be exactly numel * itemsize of X.
   A key seen again returns the same storage, so tensors that shared a storage in
   the file share one array again (views of it: an in-place change through one
   shows in the other).
2. ``map_location`` picks the device, as in PyTorch: None keeps the file's tag
   (``cuda:0`` on a machine without a GPU is an error); a str or device sends every
   storage there; a dict maps tags (``{"cuda:0": "cpu"}``), others are kept; a
   callable gets ``(cpu_storage, location)`` and returns a Storage to use, a device
   or str to move to, or None to keep the file's tag.
3. A tensor is a view into its storage's 1-d array at the file's offset, sizes and
   strides, after checking that every element it can reach lies inside the storage.
4. Loaded storages count as ``input`` memory; a Parameter's storage as ``parameter``.
"""
from __future__ import annotations

import collections

import numpy as np

from ..backend import dtypes as _dtype
from ..backend.device import CPU, cuda_device_count, cuda_is_available, device, namespace_for, _numpy
from ..backend.size import Size
from ..core.storage import Storage
from .formats import COUNTER, DTYPE_GLOBALS, ORDERED_DICT, STORAGE_TYPES
from .unpickler import Allowed

_NO_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")


class StorageType:
    """What a ``torch.<X>Storage`` global stands for: the element dtype of a record."""

    __slots__ = ("name", "np_dtype", "dtype_name")

    def __init__(self, name):
        self.name = name
        self.np_dtype, self.dtype_name = STORAGE_TYPES[name]

    def __repr__(self):
        return f"torch.{self.name}"


class Loader:
    """State of one ``engine.load``: the archive, the storages met so far, counters."""

    def __init__(self, reader, map_location, byteorder: str):
        self.reader = reader
        self.map_location = map_location
        self.byteorder = byteorder
        self.storages: dict = {}    # key -> (StorageType, Storage)
        self.locations: dict = {}   # key -> the location tag data.pkl gave it (for the load event)
        self.tensors = 0
        self.globals = self._allow_list()

    def close(self) -> None:
        """Drop the tables: the allow-list's bound methods make a cycle through ``self``."""
        self.storages = {}
        self.globals = {}

    # ---- the allow-list (NOTE [ Loading without running code ] rule 2) ---------
    def _allow_list(self) -> dict:
        g = {
            ORDERED_DICT: Allowed(*ORDERED_DICT, fn=_ordered_dict),
            COUNTER: Allowed(*COUNTER, fn=_counter),
            ("torch._utils", "_rebuild_tensor_v2"): Allowed("torch._utils", "_rebuild_tensor_v2",
                                                            fn=self.rebuild_tensor_v2),
            ("torch._utils", "_rebuild_tensor"): Allowed("torch._utils", "_rebuild_tensor", fn=self.rebuild_tensor),
            ("torch._utils", "_rebuild_parameter"): Allowed("torch._utils", "_rebuild_parameter",
                                                            fn=self.rebuild_parameter),
            ("torch._utils", "_rebuild_parameter_with_state"): Allowed(
                "torch._utils", "_rebuild_parameter_with_state", fn=self.rebuild_parameter_with_state),
            ("torch", "device"): Allowed("torch", "device", fn=_device),
            ("torch", "Size"): Allowed("torch", "Size", fn=_size),
        }
        for name in STORAGE_TYPES:
            g[("torch", name)] = Allowed("torch", name, value=StorageType(name))
        for name, ours in DTYPE_GLOBALS.items():
            g[("torch", name)] = Allowed("torch", name, value=_dtype._NAMES[ours])
        return g

    # ---- storages ----------------------------------------------------------------
    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _bad(f"persistent id {pid!r} is not ('storage', type, key, location, numel)")
        _, stype, key, location, numel = pid
        if not isinstance(stype, StorageType) or not isinstance(key, str) or not isinstance(location, str) \
                or not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise _bad(f"persistent id {pid!r} is malformed")
        hit = self.storages.get(key)
        if hit is not None:
            if hit[0].name != stype.name:
                raise _bad(f"storage {key} is named as {hit[0]!r} and as {stype!r}")
            return hit
        name = f"data/{key}"
        if not self.reader.has(name):
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        want = numel * stype.np_dtype.itemsize
        have = self.reader.size(name)
        if have != want:
            raise RuntimeError(f"checkpoint record {name} holds {have} bytes, but its persistent id says "
                               f"{numel} elements of {stype!r} ({want} bytes): the file is corrupted")
        host = _host_array(self.reader.read(name), stype, self.byteorder)
        storage = self._restore(host, stype, location)
        self.storages[key] = (stype, storage)
        self.locations[key] = location
        return self.storages[key]

    def _restore(self, host: np.ndarray, stype, location: str) -> Storage:
        ml = self.map_location
        if ml is None:
            return _to_device(host, location, stype)
        if isinstance(ml, (str, device)):
            return _to_device(host, str(ml), stype)
        if isinstance(ml, dict):
            return _to_device(host, str(ml.get(location, location)), stype)
        if callable(ml):
            cpu = Storage(host, CPU, _numpy(), base="input")
            out = ml(cpu, location)
            if out is None:
                return _to_device(host, location, stype)
            if isinstance(out, Storage):
                return out
            if isinstance(out, (str, device)):
                return cpu if device(out) == CPU else _to_device(host, str(out), stype)
            raise TypeError(f"map_location callable returned {type(out).__name__}; expected a Storage, "
                            "a device, a str or None")
        raise TypeError(f"map_location should be a str, a device, a dict or a callable, "
                        f"not {type(ml).__name__}")

    # ---- tensors --------------------------------------------------------------
    def rebuild_tensor_v2(self, storage, offset, size, stride, requires_grad, backward_hooks, metadata=None):
        if not isinstance(backward_hooks, dict):
            raise _bad("backward_hooks of a tensor is not an OrderedDict")
        if metadata:
            raise _bad(f"tensor metadata {metadata!r} (conjugate/negative bits) is not supported by glassgrad")
        if not isinstance(requires_grad, bool):
            raise _bad(f"requires_grad {requires_grad!r} is not a bool")
        return self._tensor(storage, offset, size, stride, requires_grad)

    def rebuild_tensor(self, storage, offset, size, stride):
        return self._tensor(storage, offset, size, stride, False)

    def rebuild_parameter(self, data, requires_grad, backward_hooks):
        from ..core.tensor import Tensor
        if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
            raise _bad("_rebuild_parameter needs a tensor and a bool")
        return _parameter(data, requires_grad)

    def rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        if state:
            raise _bad("a Parameter with extra Python attributes (a Parameter subclass) is not supported")
        return self.rebuild_parameter(data, requires_grad, backward_hooks)

    def _tensor(self, storage, offset, size, stride, requires_grad):
        from ..core.tensor import Tensor
        if not (isinstance(storage, tuple) and len(storage) == 2 and isinstance(storage[0], StorageType)):
            raise _bad("a tensor's storage is not a storage persistent id")
        st = storage[1]
        if not _ints(size) or not _ints(stride) or len(size) != len(stride) or not _ints((offset,)):
            raise _bad(f"tensor layout offset={offset!r} size={size!r} stride={stride!r} is malformed")
        numel_storage = int(st.array.size)
        n = 1
        for s in size:
            n *= s
        if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0 or offset > numel_storage or \
                (n and offset + sum((a - 1) * b for a, b in zip(size, stride)) >= numel_storage):
            raise RuntimeError(f"tensor of size {tuple(size)}, stride {tuple(stride)} at offset {offset} reaches "
                               f"outside its storage of {numel_storage} elements: the file is corrupted")
        view = _view(st, offset, tuple(size), tuple(stride))
        t = Tensor._wrap(view, storage=st)
        if requires_grad:
            t.requires_grad = True
        self.tensors += 1
        return t


def _bad(msg):
    import pickle
    return pickle.UnpicklingError(f"data.pkl is not a valid checkpoint: {msg}")


def _ints(xs) -> bool:
    return isinstance(xs, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in xs)


def _ordered_dict(*args):
    if args and not (len(args) == 1 and isinstance(args[0], list)
                     and all(isinstance(p, tuple) and len(p) == 2 for p in args[0])):
        raise _bad("OrderedDict is built from something other than a list of pairs")
    return collections.OrderedDict(*args)


def _counter(*args):
    """``collections.Counter(dict)``, as PyTorch's weights-only loader allows; counts are numbers."""
    if not (len(args) == 1 and type(args[0]) is dict
            and all(type(v) in (int, float) for v in args[0].values())
            and all(k is None or type(k) in (int, float, str, bool) for k in args[0])):
        raise _bad("Counter is built from something other than one dict of plain keys and numeric counts")
    return collections.Counter(args[0])


def _device(*args):
    if not (1 <= len(args) <= 2 and isinstance(args[0], str) and (len(args) == 1 or args[1] is None
                                                                  or isinstance(args[1], int))):
        raise _bad(f"torch.device{args!r} is malformed")
    return device(*args)


def _size(*args):
    if len(args) != 1 or not _ints(tuple(args[0]) if isinstance(args[0], (tuple, list)) else None):
        raise _bad(f"torch.Size{args!r} is malformed")
    return Size(args[0])


def _parameter(data, requires_grad):
    try:
        from ..nn.parameter import Parameter
    except ImportError:  # pragma: no cover - nn is part of the engine
        data._is_param = True
        data._storage.set_base("parameter")
        data.requires_grad = requires_grad
        return data
    return Parameter(data, requires_grad)


def _host_array(raw: bytes, stype: StorageType, byteorder: str) -> np.ndarray:
    """The record's elements as a writable native NumPy array of a glassgrad dtype."""
    dt = stype.np_dtype
    if byteorder == "big" and dt.itemsize > 1:
        dt = dt.newbyteorder(">")
    a = np.frombuffer(raw, dtype=dt)
    if stype.name == "BFloat16Storage":
        return a.astype(np.uint16).view(_dtype.to_array_dtype(np, _dtype.bfloat16))   # a native-order copy
    if stype.name == "BoolStorage":
        return a.astype(np.bool_)  # any nonzero byte is True, as in PyTorch
    return a.astype(_dtype.to_array_dtype(np, getattr(_dtype, stype.dtype_name)))  # a fresh, writable, native copy


def _to_device(host: np.ndarray, location: str, stype) -> Storage:
    try:
        d = device(location)
    except (RuntimeError, TypeError):
        raise RuntimeError(f"don't know how to restore data location of {stype!r} (tagged with {location})") from None
    if d.type == "cpu":
        return Storage(host, CPU, _numpy(), base="input")
    if not cuda_is_available():
        raise RuntimeError(_NO_CUDA)
    count = cuda_device_count()
    if d.index >= count:
        raise RuntimeError(f"Attempting to deserialize object on CUDA device {d.index} but "
                           f"torch.cuda.device_count() is {count}. Please use torch.load with map_location "
                           "to map your storages to an existing device.")
    import cupy
    with cupy.cuda.Device(d.index):
        arr = cupy.asarray(host)
    return Storage(arr, d, namespace_for(d), base="input")


def _view(st: Storage, offset: int, size: tuple, stride: tuple):
    """The array for a tensor at (offset, size, stride) inside storage ``st`` (rule 3)."""
    flat = st.array
    expected, acc = [], 1
    for s in reversed(size):
        expected.append(acc)
        acc *= s
    n = acc
    if tuple(reversed(expected)) == stride:
        return flat[offset:offset + n].reshape(size)
    item = flat.dtype.itemsize
    if isinstance(flat, np.ndarray):
        return np.lib.stride_tricks.as_strided(flat[offset:], shape=size, strides=[s * item for s in stride])
    import cupy
    return cupy.lib.stride_tricks.as_strided(flat[offset:], shape=size, strides=[s * item for s in stride])
