"""``engine.cuda``: whether CuPy sees a GPU, the CUDA memory functions, the generator, and devices,
events and streams (``engine/backend/cuda_runtime.py``)."""
from __future__ import annotations

from .amp.deprecated import cuda as amp  # noqa: F401  (torch.cuda.amp.autocast / GradScaler, deprecated names)
from .backend.cuda_runtime import Event, Stream, current_stream, default_stream, device, get_device_capability, get_device_name, get_device_properties, mem_get_info, set_device, stream  # noqa: F401
from .backend.device import _cupy_module, _lazy_init_cuda, cuda_device_count, cuda_is_available
from .memory.oom import OutOfMemoryError  # noqa: F401


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return cuda_is_available()


def device_count() -> int:
    return cuda_device_count()


def current_device() -> int:
    from .backend.device import _lazy_init_cuda
    _lazy_init_cuda()
    return int(__import__("cupy").cuda.runtime.getDevice())


def synchronize(device=None) -> None:
    """Wait for every kernel queued on the device (raises the clear no-GPU error without one)."""
    _lazy_init_cuda()
    _cupy_module().cuda.Device().synchronize()


def is_initialized() -> bool:
    """Whether CUDA work has started in this process (CuPy imported and a GPU seen)."""
    from .backend.device import _cuda_started
    return bool(_cuda_started)


def init() -> None:
    """Start CUDA now (raises the clear no-GPU error without one)."""
    _lazy_init_cuda()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: CuPy has no bfloat16, so glassgrad has none on CUDA (autocast("cuda") runs in float16)."""
    return False


def manual_seed(seed: int) -> None:
    from .random import generator_for
    generator_for("cuda:0").manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    from .random import generator_for
    generator_for("cuda:0").seed()


seed_all = seed


def initial_seed() -> int:
    from .random import generator_for
    return generator_for("cuda:0").initial_seed()


def get_rng_state_all() -> list:
    return [get_rng_state(f"cuda:{i}") for i in range(max(device_count(), 1))]


def set_rng_state_all(states) -> None:
    for i, st in enumerate(states):
        set_rng_state(st, f"cuda:{i}")


def get_rng_state(device="cuda"):
    from .random import generator_for
    return generator_for(device if device != "cuda" else "cuda:0").get_state()


def set_rng_state(state, device="cuda") -> None:
    from .random import generator_for
    generator_for(device if device != "cuda" else "cuda:0").set_state(state)


def __getattr__(name):
    if name in ("memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "memory_reserved",
                "memory_stats", "memory_snapshot", "empty_cache", "max_memory_reserved", "memory_summary",
                "reset_accumulated_memory_stats"):
        from . import memory
        fn = getattr(memory, name)

        def on_cuda(device="cuda", *a, **k):
            return fn(device, *a, **k)
        return on_cuda
    raise AttributeError(name)
