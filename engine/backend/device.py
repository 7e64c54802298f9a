"""Devices and the array namespace that backs each one.

``cpu`` runs on NumPy, ``cuda`` on CuPy. Kernels never import either: they call
``xp.*`` on the namespace returned by :func:`namespace_for`.
"""
from __future__ import annotations

import contextlib
import functools
import threading

import array_api_compat


class device:
    """``engine.device("cpu")`` / ``engine.device("cuda", 0)``, as in PyTorch."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        if ":" in type:
            type, _, idx = type.partition(":")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'") from None
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + type)
        if type == "cuda" and index is None:
            index = 0
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (other.type, other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        """``with engine.device("cuda"):``: factories in this thread default to this device in the block."""
        _state.__dict__.setdefault("outer", []).append(get_default_device())
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        set_default_device(_state.outer.pop())


CPU = device("cpu")


def as_device(d) -> device:
    if d is None:
        return get_default_device()
    if isinstance(d, device):
        return d
    if isinstance(d, int):
        return device("cuda", d)
    return device(d)


_state = threading.local()


def get_default_device() -> device:
    return getattr(_state, "default", CPU)


def set_default_device(d) -> None:
    """Make factories create tensors on ``d`` unless told otherwise."""
    _state.default = CPU if d is None else as_device(d)


# ---- backends -------------------------------------------------------------

_cpu_override = threading.local()


@contextlib.contextmanager
def cpu_namespace(xp):
    """Run CPU tensors on another array-API namespace (tests use array_api_strict)."""
    old = getattr(_cpu_override, "xp", None)
    _cpu_override.xp = xp
    try:
        yield
    finally:
        _cpu_override.xp = old


@functools.lru_cache(maxsize=None)
def _numpy():
    import numpy
    return array_api_compat.array_namespace(numpy.empty(0))


@functools.lru_cache(maxsize=None)
def _cupy_module():
    try:
        import cupy
    except Exception:  # noqa: BLE001 - any import failure means "no CuPy"
        return None
    return cupy


def cuda_is_available() -> bool:
    cp = _cupy_module()
    if cp is None:
        return False
    try:
        return bool(cp.cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


def cuda_device_count() -> int:
    if not cuda_is_available():
        return 0
    return int(_cupy_module().cuda.runtime.getDeviceCount())


_cuda_started = []      # [True] once CUDA work has begun in this process


def _lazy_init_cuda():
    if _cuda_started:
        return
    if _cupy_module() is None:
        raise RuntimeError(
            "Torch not compiled with CUDA enabled: glassgrad needs CuPy for device='cuda' "
            "(pip install 'glassgrad[gpu]'), and no CuPy is installed")
    if not cuda_is_available():
        raise RuntimeError(
            "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
            "and installed a driver from http://www.nvidia.com/Download/index.aspx "
            "(glassgrad: CuPy is installed but sees no CUDA device; use device='cpu')")
    _cuda_started.append(True)


def namespace_for(d: device):
    """The array namespace behind device ``d``."""
    if d.type == "cpu":
        return getattr(_cpu_override, "xp", None) or _numpy()
    _lazy_init_cuda()
    if not _cuda_xp:
        _cuda_xp.append(array_api_compat.array_namespace(_cupy_module().empty(0)))
    return _cuda_xp[0]


_cuda_xp: list = []           # CuPy's array-API namespace, found once
_cuda_devices: dict = {}      # device index -> engine.device("cuda", index), made once


def device_of_array(arr) -> device:
    cp = _cupy_module()
    if cp is not None and isinstance(arr, cp.ndarray):
        i = arr.device.id
        d = _cuda_devices.get(i)
        if d is None:
            d = _cuda_devices[i] = device("cuda", i)
        return d
    return CPU
