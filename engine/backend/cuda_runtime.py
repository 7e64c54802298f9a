"""``engine.cuda``'s device, event and stream API over CuPy: device names and properties, timing
events, streams, the current device. Every function starts CUDA (or raises the clear no-GPU error)
through ``_lazy_init_cuda``, as PyTorch's lazy init does."""
from __future__ import annotations

import contextlib

from .device import _cupy_module, _lazy_init_cuda, as_device


def _cp():
    _lazy_init_cuda()
    return _cupy_module()


def _index(device=None) -> int:
    """A device argument (None, int, "cuda:1", engine.device) as a CUDA device index."""
    if device is None:
        return int(_cp().cuda.runtime.getDevice())
    if isinstance(device, int):
        return device
    d = as_device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index if d.index is not None else int(_cp().cuda.runtime.getDevice())


def set_device(device) -> None:
    _cp().cuda.Device(_index(device)).use()


class _CudaDeviceProperties:
    """What ``get_device_properties`` returns (the fields learners read)."""

    def __init__(self, props: dict):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(props["major"]), int(props["minor"])
        self.total_memory = int(props["totalGlobalMem"])
        self.multi_processor_count = int(props["multiProcessorCount"])
        self.L2_cache_size = int(props.get("l2CacheSize", 0))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // 2**20}MB)")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    return _CudaDeviceProperties(_cp().cuda.runtime.getDeviceProperties(_index(device)))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None) -> tuple:
    """``(free, total)`` bytes of the device, as the driver counts them."""
    cp = _cp()
    with cp.cuda.Device(_index(device)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


@contextlib.contextmanager
def device(d):
    """``with engine.cuda.device(1):`` makes device 1 current inside the block."""
    cp = _cp()
    with cp.cuda.Device(_index(d)):
        yield


class Stream:
    """A CUDA stream (CuPy's); ``with engine.cuda.stream(s):`` makes kernels run on it."""

    def __init__(self, device=None, priority=0, _wrap=None):
        cp = _cp()
        if _wrap is not None:
            self._s = _wrap
        else:
            with cp.cuda.Device(_index(device)):
                self._s = cp.cuda.Stream(non_blocking=True, priority=priority)

    def synchronize(self) -> None:
        self._s.synchronize()

    def query(self) -> bool:
        return bool(self._s.done)

    def wait_event(self, event) -> None:
        self._s.wait_event(event._e)

    def wait_stream(self, stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self._s.ptr == other._s.ptr

    def __hash__(self):
        return hash(self._s.ptr)

    def __repr__(self):
        return f"<engine.cuda.Stream device=cuda:{_index()} cuda_stream={hex(self._s.ptr)}>"


def current_stream(device=None) -> Stream:
    return Stream(_wrap=_cp().cuda.get_current_stream())


def default_stream(device=None) -> Stream:
    return Stream(_wrap=_cp().cuda.Stream.null)


@contextlib.contextmanager
def stream(s):
    """Kernels launched in the block go to stream ``s`` (None: no change)."""
    if s is None:
        yield
        return
    with s._s:
        yield


class Event:
    """A CUDA event: ``record()`` on a stream, ``synchronize()``, and ``elapsed_time(end)`` in milliseconds."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._e = _cp().cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)
        self._recorded = False

    def record(self, stream=None) -> None:
        self._e.record(None if stream is None else stream._s)
        self._recorded = True

    def wait(self, stream=None) -> None:
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        return bool(self._e.done)

    def synchronize(self) -> None:
        self._e.synchronize()

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return float(_cupy_module().cuda.get_elapsed_time(self._e, end_event._e))

    def __repr__(self):
        return f"<engine.cuda.Event {hex(self._e.ptr)}>"
