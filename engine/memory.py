"""``engine.memory``: PyTorch's memory functions over glassgrad's exact storage accounting."""
from __future__ import annotations

from . import _memstate
from ._device import as_device


def _key(device) -> str:
    if device is None:
        return "cpu"
    if isinstance(device, int):
        return f"cuda:{device}"
    return str(as_device(device))


def memory_allocated(device=None) -> int:
    """Bytes held by live storages on ``device`` (default: cpu)."""
    return _memstate.stats(_key(device))["allocated"]


def max_memory_allocated(device=None) -> int:
    """Peak of memory_allocated since start or the last reset_peak_memory_stats."""
    return _memstate.stats(_key(device))["peak"]


def reset_peak_memory_stats(device=None) -> None:
    _memstate.reset_peak(_key(device))


def memory_stats(device=None) -> dict:
    s = _memstate.stats(_key(device))
    out = {"allocated_bytes.all.current": s["allocated"], "allocated_bytes.all.peak": s["peak"],
           "active.all.current": s["count"]}
    for cat, b in s["by_cat"].items():
        out[f"allocated_bytes.{cat}.current"] = b
    for cat, b in s["peak_by_cat"].items():
        out[f"allocated_bytes.{cat}.peak"] = b
    return out
