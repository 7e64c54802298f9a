"""``torch.autocast``: a region in which the ops on PyTorch's lists run in a lower-precision dtype
(NOTE [ Mixed precision ] in engine/amp/__init__.py)."""
from __future__ import annotations

import functools
import threading
import warnings
import weakref

from ..backend import dtypes as _dtype
from ..backend.device import cuda_is_available
from ..backend.low_precision import autocast_slot
from ..core.tensor import Tensor
from .op_lists import BANNED_MESSAGE, POLICY

_DEVICES = ("cpu", "cuda")
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                       "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class _State(threading.local):
    """This thread's autocast switches, per device type, as PyTorch keeps them (rule 1)."""

    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}       # id(fp32 leaf) -> (weakref to it, its low-precision copy): rule 5


_state = _State()


def _sync_slot() -> None:
    autocast_slot.cast = _cast_inputs if (_state.enabled["cpu"] or _state.enabled["cuda"]) else None


def _check_device(device_type: str) -> str:
    if device_type in _DEVICES:
        return device_type
    if device_type in _TORCH_DEVICE_TYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    raise RuntimeError("Expected one of " + ", ".join(_TORCH_DEVICE_TYPES)
                       + f" device type at start of device string: {device_type}")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on ``device_type`` (the CPU and CUDA here)."""
    return device_type in _DEVICES


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an autocast region is on for ``device_type`` (CUDA when none is named, as in PyTorch)."""
    return _state.enabled[_check_device(device_type)]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """``set_autocast_enabled(device_type, enabled)`` (or ``set_autocast_enabled(enabled)`` for CUDA)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.enabled[_check_device(device_type)] = bool(enabled)
    _sync_slot()


def get_autocast_dtype(device_type: str):
    """The dtype autocast's lower-precision ops run in on ``device_type`` (bfloat16 CPU, float16 CUDA)."""
    return _state.dtype[_check_device(device_type)]


def set_autocast_dtype(device_type: str, dtype) -> None:
    _state.dtype[_check_device(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached low-precision copies of weights (rule 5)."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def is_autocast_cpu_enabled() -> bool:
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use torch.is_autocast_enabled('cpu') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    warnings.warn("torch.get_autocast_cpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cpu') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    warnings.warn("torch.get_autocast_gpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cuda') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cuda")


# ---- the cast every op asks for (NOTE [ Low-precision results ] 2) ----------------------------------------
def _eligible(t, device_type) -> bool:
    """A floating tensor on the autocast device, float64 excepted (rule 3)."""
    return (isinstance(t, Tensor) and t.dtype.is_floating_point and t.dtype is not _dtype.float64
            and t.device.type == device_type)


def _cached_cast(t, to, device_type):
    """``t.to(to)``; a float32 leaf that requires grad (a weight) is cast once per region (rule 5)."""
    if t.dtype is to:
        return t
    st = _state
    cacheable = (st.cache_enabled and to is st.dtype[device_type] and t.dtype is _dtype.float32
                 and t.requires_grad and t.grad_fn is None and t._base is None)
    if cacheable:
        hit = st.cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
    out = t.to(to)
    if cacheable:
        st.cache[id(t)] = (weakref.ref(t), out)
    return out


def _cast_inputs(name, inputs):
    """The inputs op ``name`` runs on under this thread's autocast (rules 2-4)."""
    first = next((t for t in inputs if isinstance(t, Tensor)), None)
    if first is None:
        return inputs
    device_type = first.device.type
    if not _state.enabled.get(device_type):
        return inputs
    policy = POLICY[device_type].get(name)
    if policy is None:
        return inputs
    if policy == "banned":
        raise RuntimeError(BANNED_MESSAGE)
    if policy == "lower":
        to = _state.dtype[device_type]
    elif policy == "fp32":
        to = _dtype.float32
    else:
        to = _state.dtype[device_type]
        for t in inputs:
            if _eligible(t, device_type):
                to = _dtype.promote_types(to, t.dtype)
    return [_cached_cast(t, to, device_type) if _eligible(t, device_type) else t for t in inputs]


def cast_inputs(name, *inputs):
    """For a composite function on the lists (``matmul``, ``linear``, ``cross_entropy``): its inputs as
    autocast would have them, or unchanged outside autocast (one attribute read)."""
    if autocast_slot.cast is None:
        return inputs
    return tuple(_cast_inputs(name, list(inputs)))


# ---- the region --------------------------------------------------------------------------------------------
class autocast:
    """``with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` (also a decorator)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004
        self.device = _check_device(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if self.device == "cuda":
                if not cuda_is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
                elif self.fast_dtype is _dtype.bfloat16:
                    raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to "
                                       "float16.")
            elif self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        st = _state
        self.prev_cache_enabled = st.cache_enabled
        self.prev = st.enabled[self.device]
        self.prev_fastdtype = st.dtype[self.device]
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        st.nesting += 1
        st.cache_enabled = self._cache_enabled
        _sync_slot()
        return self

    def __exit__(self, *exc):
        st = _state
        st.nesting -= 1
        if st.nesting == 0:
            st.cache.clear()
        st.enabled[self.device] = self.prev
        st.dtype[self.device] = self.prev_fastdtype
        st.cache_enabled = self.prev_cache_enabled
        _sync_slot()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast
