"""Live-byte counters per device and category; the allocator model hangs off these.

Every storage calls :func:`on_alloc` when created and :func:`on_free` when its last
reference dies (NOTE [ Storage lifetime and categories ] in ``core/storage.py``); each
object in ``allocator_hooks`` sees the same calls. The default hook is the caching
allocator model (NOTE [ Caching allocator model ] in ``memory/allocator.py``).

NOTE [ Reserved bytes in events ]
1. ``alloc``, ``free`` and ``empty_cache`` events carry ``reserved``: the caching
   allocator model's reserved bytes on the event's device right after the event,
   the figure ``engine.memory.memory_reserved(device)`` returns then.
2. It is read under the lock, after every hook has seen the storage (a dict
   lookup and an attribute read), so it never lags the model.
3. Only a new segment (an ``alloc``) and ``empty_cache`` change it: a ``free``
   returns the block to the model's cache, so its ``reserved`` repeats the figure
   before it (unless the garbage collector ran that free in the middle of an
   allocation that had just reserved a segment: then it already shows it).
"""
from __future__ import annotations

from . import allocator as _allocator, cupy_pool as _pool
from .. import events as _events
from ..backend.device import CPU as _CPU

# Reentrant: a storage allocated under the lock may make the garbage collector finalize
# another storage (Storage.__del__ -> on_free) on this same thread. The allocator model's
# lock, so its log is appended and replayed under one lock (NOTE [ Deferred allocator model ] 5).
_lock = _allocator.LOCK
allocator_hooks: list = [_allocator.hook]   # objects with alloc(storage) / free(storage)
_model = _allocator.hook
_only_model = [_model]      # on_alloc/on_free append to its log themselves (AllocatorHook.alloc/free, inlined)

_FIELDS = ("allocated", "peak", "count", "count_peak", "bytes_allocated", "bytes_freed", "n_allocated", "n_freed")


class _Dev:
    """One device's counters (attributes: every storage pays for reading and writing them)."""

    __slots__ = _FIELDS + ("by_cat", "peak_by_cat")

    def __init__(self):
        for f in _FIELDS:
            setattr(self, f, 0)
        self.by_cat: dict = {}
        self.peak_by_cat: dict = {}


_devices: dict[str, _Dev] = {}


def _dev(key: str) -> _Dev:
    d = _devices.get(key)
    if d is None:
        d = _devices[key] = _Dev()
    return d


def reserved_now(key: str) -> int:
    """NOTE [ Reserved bytes in events ] rule 1 (0 for a device the model has not seen)."""
    return _allocator.hook.reserved(key)


# NOTE [ Deferred counters ]
# 1. ``on_alloc``, ``on_free`` and ``on_move`` append one entry to ``_pending`` (and, for the
#    default allocator hook, one to the model's log: NOTE [ Deferred allocator model ]) and
#    return; the per-device counters are brought up to date by ``_replay``, which applies
#    the entries in order, so every current and peak figure is the one the storages'
#    history gives.
# 2. Everything that reads or resets counters (``stats``, ``reset_peak``,
#    ``reset_accumulated``, ``devices``) replays first; so does an append that finds
#    ``PENDING_LIMIT`` entries waiting, which bounds the log.
# 3. While a trace is recorded, each entry is replayed at once and its event carries the
#    figures of that moment, as before; other allocator hooks also see every call at once.
# 4. Replays run under ``_lock``. A free that the garbage collector runs during a replay is
#    appended and applied by the same loop before it returns.
# 5. Outside a trace, with only the default hook, an append takes no lock: ``list.append``
#    is atomic, ``_pending`` is never replaced, and a replay applies the entries present
#    when it looks and then deletes exactly those (``del _pending[:n]``), so an entry another
#    thread appends meanwhile waits for the next replay instead of being lost.
PENDING_LIMIT = 4096
_pending: list = []        # (kind, device, bytes, category, new category); kind 0 alloc, 1 free, 2 move
_replaying = False


def _replay() -> None:
    """Apply the pending entries to the counters (NOTE [ Deferred counters ] 1, 4, 5)."""
    global _replaying
    with _lock:
        if _replaying:
            return
        _replaying = True
        try:
            while _pending:
                n = len(_pending)
                _apply(_pending[:n])
                del _pending[:n]
        finally:
            _replaying = False


def _apply(entries) -> None:
    last = None
    for kind, key, n, cat, new in entries:
        if key != last:         # runs of one device: look its counters up once per run
            d = _devices.get(key) or _dev(key)
            last, bc, pbc = key, d.by_cat, d.peak_by_cat
        if kind == 0:
            allocated = d.allocated = d.allocated + n
            count = d.count = d.count + 1
            d.bytes_allocated += n
            d.n_allocated += 1
            if count > d.count_peak:
                d.count_peak = count
            if allocated > d.peak:
                d.peak = allocated
            now = bc[cat] = bc.get(cat, 0) + n
        elif kind == 1:
            d.allocated -= n
            d.count -= 1
            d.bytes_freed += n
            d.n_freed += 1
            bc[cat] = bc.get(cat, 0) - n
            continue
        else:
            bc[cat] = bc.get(cat, 0) - n
            now = bc[new] = bc.get(new, 0) + n
            cat = new
        if now > pbc.get(cat, 0):
            pbc[cat] = now


def _flush_both() -> None:
    """Bring the allocator model and the counters up to date (a log reached its limit)."""
    _model.flush()
    _replay()


def _append(kind: int, st, key: str, n: int, cat: str):
    """Log one alloc (kind 0) or free (kind 1) for the counters and every allocator hook, under the
    lock (NOTE [ Deferred counters ] 1, 3; rule 5's path is inlined in on_alloc/on_free); returns
    the reserved bytes its event carries, or None when no trace is recorded."""
    with _lock:
        _pending.append((kind, key, n, cat, None))
        for h in allocator_hooks:
            h.alloc(st) if kind == 0 else h.free(st)
        if not _events.active:
            if len(_pending) >= PENDING_LIMIT:
                _replay()
            return None
        _replay()
        return reserved_now(key)


def on_alloc(st) -> None:
    key = "cpu" if st.device is _CPU else str(st.device)
    cat = st.base if not st.saved or st.base != "other" else "activation"   # st.category, inlined
    n = st.nbytes
    if not _events.active and allocator_hooks == _only_model:     # _append's rule 5 path, inlined
        _pending.append((0, key, n, cat, None))
        log = _model._log
        log.append((key, st.id, n))
        if len(log) >= _model.LOG_LIMIT or len(_pending) >= PENDING_LIMIT:
            _flush_both()
        return
    reserved = _append(0, st, key, n, cat)
    if reserved is not None:
        if key == "cpu":
            _events.emit("alloc", storage=st.id, bytes=n, device=key, category=cat, reserved=reserved)
        else:                      # with CuPy's pool figures (NOTE [ CuPy pool figures in events ])
            _events.emit("alloc", storage=st.id, bytes=n, device=key, category=cat, reserved=reserved,
                         **_pool.fields(key))


def on_free(st) -> None:
    key = "cpu" if st.device is _CPU else str(st.device)
    cat = st.base if not st.saved or st.base != "other" else "activation"   # st.category, inlined
    n = st.nbytes
    if not _events.active and allocator_hooks == _only_model:     # as in on_alloc
        _pending.append((1, key, n, cat, None))
        log = _model._log
        log.append((key, st.id, -1))
        if len(log) >= _model.LOG_LIMIT or len(_pending) >= PENDING_LIMIT:
            _flush_both()
        return
    reserved = _append(1, st, key, n, cat)
    if reserved is not None:
        if key == "cpu":
            _events.emit("free", storage=st.id, bytes=n, device=key, category=cat, reserved=reserved)
        else:                      # as in on_alloc (rule 2 of NOTE [ CuPy pool figures in events ])
            _events.emit("free", storage=st.id, bytes=n, device=key, category=cat, reserved=reserved,
                         **_pool.fields_after_free(st, key))


def on_move(st, old: str, new: str) -> None:
    key = "cpu" if st.device is _CPU else str(st.device)
    _pending.append((2, key, st.nbytes, old, new))      # NOTE [ Deferred counters ] 5
    if not _events.active:
        if len(_pending) >= PENDING_LIMIT:
            _replay()
        return
    _replay()
    _events.emit("category", storage=st.id, bytes=st.nbytes, device=key, old=old, new=new)


def stats(key: str) -> dict:
    with _lock:
        _replay()
        d = _dev(key)
        out = {f: getattr(d, f) for f in _FIELDS}
        out["by_cat"] = dict(d.by_cat)
        out["peak_by_cat"] = dict(d.peak_by_cat)
        return out


def reset_peak(key: str) -> None:
    with _lock:
        _replay()
        d = _dev(key)
        d.peak = d.allocated
        d.count_peak = d.count
        d.peak_by_cat = dict(d.by_cat)
        _allocator.hook.model(key).reset_peak()


def reset_accumulated(key: str) -> None:
    with _lock:
        _replay()
        d = _dev(key)
        d.bytes_allocated = d.bytes_freed = d.n_allocated = d.n_freed = 0


def devices() -> list:
    """Device strings that have seen at least one storage."""
    with _lock:
        _replay()
        return sorted(_devices)


def empty_cache(key: str) -> int:
    """Release the allocator model's fully free segments on ``key``; returns bytes released."""
    with _lock:
        released = _allocator.hook._run(_allocator.hook.model(key).empty_cache)
        reserved = reserved_now(key) if _events.active else 0
    if _events.active:
        _events.emit("empty_cache", device=key, bytes=released, reserved=reserved)
    return released
