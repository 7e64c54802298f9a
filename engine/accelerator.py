"""``engine.accelerator``: the current accelerator, if any (CUDA through CuPy)."""
from __future__ import annotations

from .backend.device import cuda_is_available, device


def is_available() -> bool:
    return cuda_is_available()


def current_accelerator(check_available: bool = False):
    """``device('cuda')`` when a GPU is usable, else None."""
    return device("cuda") if cuda_is_available() else None


def device_count() -> int:
    from .backend.device import cuda_device_count
    return cuda_device_count()
