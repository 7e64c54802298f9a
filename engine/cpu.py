"""``engine.cpu``: ``torch.cpu``'s names: the CPU is always there, and ``torch.cpu.amp``'s deprecated
autocast and GradScaler."""
from __future__ import annotations

from .amp.deprecated import cpu as amp  # noqa: F401


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU work is done when the call returns."""
