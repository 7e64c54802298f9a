"""``engine.memory``: PyTorch's memory functions over glassgrad's exact storage accounting.

Every function takes ``device`` (a device, a string such as "cpu" or "cuda:0", or an
int meaning that CUDA device); None means the default device.

Differs from PyTorch: ``memory_allocated`` counts tensor bytes exactly (PyTorch's
``requested_bytes``) on every device, CPU included. The caching allocator model
(NOTE [ Caching allocator model ] in ``engine/memory/allocator.py``) supplies what
``torch.cuda`` reports from its real allocator: reserved bytes, segments, and the
rounded block bytes (``active_bytes.*``, which is what ``torch.cuda.memory_allocated``
returns on a GPU). It runs for CPU storages too, so "reserved" can be taught anywhere.
"""
from __future__ import annotations

from . import allocator as _allocator, state as _memstate
from ..backend.device import as_device

__all__ = ["memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
           "reset_accumulated_memory_stats", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_snapshot", "empty_cache", "memory_summary"]


def _key(device) -> str:
    if isinstance(device, str) and device == "cuda":
        return "cuda:0"
    return str(as_device(device))


def _model(key: str) -> _allocator.CachingAllocatorModel:
    return _allocator.hook.model(key)


def memory_allocated(device=None) -> int:
    """Bytes held by live storages on ``device`` (views are not counted again)."""
    return _memstate.stats(_key(device))["allocated"]


def max_memory_allocated(device=None) -> int:
    """Peak of memory_allocated since start or the last reset_peak_memory_stats."""
    return _memstate.stats(_key(device))["peak"]


def reset_peak_memory_stats(device=None) -> None:
    """Make every ``*.peak`` figure equal to its current value."""
    _memstate.reset_peak(_key(device))


def reset_accumulated_memory_stats(device=None) -> None:
    """Zero the running totals (``*.allocated`` and ``*.freed`` keys of memory_stats)."""
    _memstate.reset_accumulated(_key(device))


def memory_reserved(device=None) -> int:
    """Bytes the allocator model holds in segments (allocated blocks plus cached free ones)."""
    return _model(_key(device)).reserved


def max_memory_reserved(device=None) -> int:
    return _model(_key(device)).reserved_peak


def empty_cache(device=None) -> None:
    """Return the model's entirely free segments (a real GPU's CuPy pool too, when present)."""
    key = _key(device)
    _memstate.empty_cache(key)
    if key.startswith("cuda"):
        pool = _cupy_pool()
        if pool is not None:
            pool.free_all_blocks()


def _cupy_pool():
    from ..backend.device import cuda_is_available
    if not cuda_is_available():
        return None
    import cupy
    return cupy.get_default_memory_pool()


def memory_stats(device=None) -> dict:
    """PyTorch's counters by their names, plus glassgrad's per-category ones.

    ``allocated_bytes.all.*`` and ``allocation.all.*`` are exact (storage bytes and
    count: ``current``, ``peak``, and the running totals ``allocated``/``freed``); ``allocated_bytes.<category>.current/peak`` split them
    by category (parameter, gradient, activation, optimizer, input, other).
    ``reserved_bytes.*``, ``active_bytes.*``, ``segment.*``, ``inactive_split*`` and
    ``requested_bytes.*`` come from the allocator model. On a real GPU,
    ``cupy.used_bytes`` and ``cupy.total_bytes`` give CuPy's own pool figures.
    """
    key = _key(device)
    s = _memstate.stats(key)
    out = {"allocated_bytes.all.current": s["allocated"], "allocated_bytes.all.peak": s["peak"],
           "allocated_bytes.all.allocated": s["bytes_allocated"], "allocated_bytes.all.freed": s["bytes_freed"],
           "allocation.all.current": s["count"], "allocation.all.peak": s["count_peak"],
           "allocation.all.allocated": s["n_allocated"], "allocation.all.freed": s["n_freed"],
           "active.all.current": s["count"]}
    with _memstate._lock:
        out.update(_allocator.hook._run(_model(key).stats))
    for cat, b in sorted(s["by_cat"].items()):
        out[f"allocated_bytes.{cat}.current"] = b
    for cat, b in sorted(s["peak_by_cat"].items()):
        out[f"allocated_bytes.{cat}.peak"] = b
    if key.startswith("cuda"):
        pool = _cupy_pool()
        if pool is not None:
            out["cupy.used_bytes"] = int(pool.used_bytes())
            out["cupy.total_bytes"] = int(pool.total_bytes())
    return dict(sorted(out.items()))


def memory_snapshot(device=None) -> list:
    """The allocator model's segments and blocks, in ``torch.cuda.memory_snapshot()``'s shape.

    Each segment: device, address, total_size, allocated_size, active_size,
    requested_size, stream, segment_type ("small"/"large"), segment_pool_id,
    is_expandable, frames, blocks; each block: address, size, requested_size, state
    ("active_allocated" or "inactive"), frames. Addresses are the model's, not real.
    With ``device=None`` every device that has segments is included.
    """
    if device is None:
        out = []
        for key in sorted(_allocator.hook.models):
            out.extend(_snapshot(key))
        return out
    return _snapshot(_key(device))


def _snapshot(key: str) -> list:
    with _memstate._lock:
        return _allocator.hook._run(_model(key).snapshot, _index(key))


def _index(key: str) -> int:
    return int(key.split(":")[1]) if ":" in key else 0


def _fmt(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def memory_summary(device=None, abbreviated=False) -> str:
    """A readable table of the figures memory_stats gives (current and peak)."""
    key = _key(device)
    st = memory_stats(key)
    rows = [("Allocated memory (exact)", "allocated_bytes.all"),
            ("Active memory (blocks)", "active_bytes.all"),
            ("Reserved memory (segments)", "reserved_bytes.all")]
    cats = ("parameter", "gradient", "activation", "optimizer", "input", "other")
    if not abbreviated:
        rows += [(f"  {c}", f"allocated_bytes.{c}") for c in cats
                 if f"allocated_bytes.{c}.peak" in st]
    width = 72
    lines = ["=" * width, f" glassgrad memory summary, device {key}".ljust(width), "=" * width,
             f"{'Metric':<34}{'Current':>18}{'Peak':>18}", "-" * width]
    for label, k in rows:
        cur = st.get(f"{k}.current", 0)
        peak = st.get(f"{k}.peak", cur)
        lines.append(f"{label:<34}{_fmt(cur):>18}{_fmt(peak):>18}")
    lines.append("-" * width)
    lines.append(f"{'Live storages':<34}{st['allocation.all.current']:>18}")
    lines.append(f"{'Segments (small / large pool)':<34}"
                 f"{str(st['segment.small_pool.current']) + ' / ' + str(st['segment.large_pool.current']):>18}")
    lines.append(f"{'Free split blocks':<34}{st['inactive_split.all.current']:>18}"
                 f"{_fmt(st['inactive_split_bytes.all.current']):>18}")
    if "cupy.used_bytes" in st:
        lines.append(f"{'CuPy pool used / total':<34}{_fmt(st['cupy.used_bytes']):>18}"
                     f"{_fmt(st['cupy.total_bytes']):>18}")
    lines.append("=" * width)
    return "\n".join(lines) + "\n"
