"""``engine.cuda``: whether CuPy sees a GPU, and the CUDA memory functions."""
from __future__ import annotations

from . import amp  # noqa: F401  (engine.cuda.amp.autocast / GradScaler, as torch.cuda.amp)
from ._device import cuda_device_count, cuda_is_available


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return cuda_is_available()


def device_count() -> int:
    return cuda_device_count()


def current_device() -> int:
    from ._device import _lazy_init_cuda
    _lazy_init_cuda()
    return int(__import__("cupy").cuda.runtime.getDevice())


def synchronize(device=None) -> None:
    if cuda_is_available():
        __import__("cupy").cuda.Device().synchronize()


def manual_seed(seed: int) -> None:
    from .random import generator_for
    generator_for("cuda:0").manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


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
