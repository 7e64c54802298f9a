"""CuPy's real memory-pool figures on the memory events of a CUDA trace.

NOTE [ CuPy pool figures in events ]
1. While a trace is recorded, every ``alloc`` and ``free`` event of a ``cuda`` storage
   carries ``pool_used`` and ``pool_total``: what the pool source returns for the event's
   device at that moment (for CuPy's default pool, ``used_bytes()`` and ``total_bytes()``).
   ``empty_cache`` events and the events of other devices carry neither.
2. An ``alloc`` reads them right after the storage's array was made, so ``pool_used``
   includes its block. A ``free`` drops the storage's array first (``Storage.__del__``
   would a moment later), so ``pool_used`` no longer includes it unless another array
   still views that memory.
3. Nothing is read outside a trace or for a CPU storage: the untraced path is unchanged
   and a traced CPU event pays one string comparison. Reading at every alloc and free
   (not only at step marks or the peak) costs two calls into CuPy's host-side counters,
   no device synchronisation, next to the event itself; it lets a reader take the
   figures at any event, the peak included.
4. The source is injectable (:func:`set_source`): a function of the device string that
   returns ``(used, total)`` in bytes, or None for "no figures" (then the event carries
   none). The default reads ``cupy.get_default_memory_pool()`` on that device, and
   returns None where CuPy or a GPU is missing.
5. CuPy's pool is not PyTorch's caching allocator: both round requests to 512 bytes, but
   CuPy takes each block from the driver at its own size (with bins of free chunks it
   splits and merges) where PyTorch reserves 2 MiB and 20 MiB segments, so CuPy's
   ``total_bytes`` is what this process really holds from the driver and the model's
   ``reserved`` is what PyTorch's allocator would hold for the same tensors.
"""
from __future__ import annotations

_pool = []          # [the default pool] once looked up; [None] where CuPy has no GPU


def cupy_figures(device: str):
    """Rule 4's default source: (used, total) bytes of CuPy's default pool on ``device``."""
    if not _pool:
        from ..backend.device import _cupy_module, cuda_is_available
        _pool.append(_cupy_module().get_default_memory_pool() if cuda_is_available() else None)
    pool = _pool[0]
    if pool is None:
        return None
    import cupy
    index = int(device.partition(":")[2] or 0)
    if index == cupy.cuda.runtime.getDevice():
        return int(pool.used_bytes()), int(pool.total_bytes())
    with cupy.cuda.Device(index):
        return int(pool.used_bytes()), int(pool.total_bytes())


source = cupy_figures


def set_source(fn):
    """Read pool figures with ``fn(device) -> (used, total) | None`` from now on (rule 4);
    None restores CuPy's. Returns the previous source."""
    global source
    old, source = source, (fn or cupy_figures)
    return old


def fields(device: str) -> dict:
    """``{"pool_used": ..., "pool_total": ...}`` for an event on ``device``, or {} (rules 1, 3, 4)."""
    if not device.startswith("cuda"):
        return {}
    got = source(device)
    return {} if got is None else {"pool_used": got[0], "pool_total": got[1]}


def fields_after_free(st, device: str) -> dict:
    """Rule 2: drop the dying storage's array, then read the figures."""
    if not device.startswith("cuda"):
        return {}
    st.array = None
    return fields(device)
