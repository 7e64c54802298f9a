"""Live-byte counters per device and category; the allocator model hangs off these.

Every storage calls :func:`on_alloc` when created and :func:`on_free` when its last
reference dies (NOTE [ Storage lifetime and categories ] in ``core/storage.py``). The default
entry of ``allocator_hooks``, the caching allocator model (NOTE [ Caching allocator model ] in
``memory/allocator.py``), is fed from the same log as the counters (NOTE [ Deferred counters ]);
every other object in ``allocator_hooks`` sees the same calls itself.

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
# lock, so the log is appended and replayed under one lock (NOTE [ Deferred allocator model ] 5).
_lock = _allocator.LOCK
allocator_hooks: list = [_allocator.hook]   # objects with alloc(storage) / free(storage)
_model = _allocator.hook
_only_model = [_model]      # the default model is fed from ``_pending`` (NOTE [ Deferred counters ] 1)

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
# 1. ``on_alloc``, ``on_free`` and ``on_move`` append one entry to ``_pending`` and return. The
#    log feeds both the per-device counters (``_apply``) and the default allocator hook's models
#    (``allocator.replay``; the hook drains it before any read of a model through its
#    ``source``/``drain``, NOTE [ Deferred allocator model ] 6). ``_replay`` applies the entries
#    in order to both, so every current and peak figure is the one the storages' history gives.
#    Entries: ``(device, storage id, nbytes, category)`` for an alloc, the same with ``~nbytes``
#    (always < 0) for a free, ``(device, None, 0, (old, new, nbytes))`` for a category move (a
#    0-byte request: the model skips it).
# 2. Everything that reads or resets counters (``stats``, ``reset_peak``,
#    ``reset_accumulated``, ``devices``) or a model replays first; so does an append that finds
#    ``PENDING_LIMIT`` entries waiting, which bounds the log.
# 3. While a trace is recorded, each entry is replayed at once and its event carries the
#    figures of that moment, as before; other allocator hooks see every call at once, after
#    the entry is logged (so a hook that reads a figure sees it). When the default hook is not
#    in ``allocator_hooks``, the counters take the entry at once and the models never see it.
# 4. Replays run under ``_lock`` and set the default hook's ``_busy``: one replay at a time
#    touches its models, whether it started here or in the hook (NOTE [ Deferred allocator
#    model ] 3). A free that the garbage collector runs during a replay is appended and
#    applied by the same loop before it returns.
# 5. Outside a trace, with only the default hook, an append takes no lock: ``list.append``
#    is atomic, ``_pending`` is never replaced, and a replay applies the entries present
#    when it looks and then deletes exactly those (``del _pending[:n]``), so an entry another
#    thread appends meanwhile waits for the next replay instead of being lost.
# 6. ``_apply`` holds a device's counters in locals while it applies a run of that device's
#    entries and writes them back before it returns; nothing reads them meanwhile (rule 4:
#    a reader replays first, and a replay started during another returns at once).
PENDING_LIMIT = 4096
_pending: list = []


def _replay() -> None:
    """Apply the pending entries to the counters and the default hook's models (rules 1, 4, 5)."""
    with _lock:
        if _model._busy:        # a replay of these models is running further up this thread's stack
            return
        _model._busy = True
        try:
            while _pending:
                n = len(_pending)
                batch = _pending[:n]
                _apply(batch)
                _allocator.replay(_model._models, batch)
                del _pending[:n]
        finally:
            _model._busy = False


_model.source, _model.drain = _pending, _replay      # NOTE [ Deferred allocator model ] 6


def _apply(entries) -> None:
    """Apply log entries to the counters in order (rules 1 and 6)."""
    d = last = None
    allocated = peak = count = count_peak = b_alloc = b_freed = n_alloc = n_freed = 0
    bc = pbc = None
    for key, owner, n, cat in entries:
        if key != last:
            if d is not None:
                _store(d, allocated, peak, count, count_peak, b_alloc, b_freed, n_alloc, n_freed)
            d = _devices.get(key) or _dev(key)
            last, bc, pbc = key, d.by_cat, d.peak_by_cat
            allocated, peak, count, count_peak = d.allocated, d.peak, d.count, d.count_peak
            b_alloc, b_freed, n_alloc, n_freed = d.bytes_allocated, d.bytes_freed, d.n_allocated, d.n_freed
        if n < 0:                               # a free
            n = ~n
            allocated -= n
            count -= 1
            b_freed += n
            n_freed += 1
            bc[cat] = bc.get(cat, 0) - n
            continue
        if owner is not None:                   # an alloc
            allocated += n
            count += 1
            b_alloc += n
            n_alloc += 1
            if count > count_peak:
                count_peak = count
            if allocated > peak:
                peak = allocated
            now = bc[cat] = bc.get(cat, 0) + n
        else:                                   # a category move
            old, cat, n = cat
            bc[old] = bc.get(old, 0) - n
            now = bc[cat] = bc.get(cat, 0) + n
        if now > pbc.get(cat, 0):
            pbc[cat] = now
    if d is not None:
        _store(d, allocated, peak, count, count_peak, b_alloc, b_freed, n_alloc, n_freed)


def _store(d, allocated, peak, count, count_peak, b_alloc, b_freed, n_alloc, n_freed) -> None:
    d.allocated, d.peak, d.count, d.count_peak = allocated, peak, count, count_peak
    d.bytes_allocated, d.bytes_freed, d.n_allocated, d.n_freed = b_alloc, b_freed, n_alloc, n_freed


def _flush_both() -> None:
    """Bring the allocator model and the counters up to date."""
    _replay()
    _model.flush()


def _append(entry, st, free: bool):
    """Log one alloc or free with other allocator hooks present or a trace recorded, under the
    lock (rule 3); returns the reserved bytes its event carries, or None when no trace is recorded."""
    with _lock:
        if _model in allocator_hooks:
            _pending.append(entry)
        else:
            _replay()
            _apply([entry])
        for h in allocator_hooks:
            if h is not _model:
                h.free(st) if free else h.alloc(st)
        if not _events.active:
            if len(_pending) >= PENDING_LIMIT:
                _replay()
            return None
        _replay()
        return reserved_now(entry[0])


def on_alloc(st) -> None:
    key = "cpu" if st.device is _CPU else str(st.device)
    cat = st.base if not st.saved or st.base != "other" else "activation"   # st.category, inlined
    n = st.nbytes
    if not _events.active and allocator_hooks == _only_model:     # rule 5
        _pending.append((key, st.id, n, cat))
        if len(_pending) >= PENDING_LIMIT:
            _replay()
        return
    reserved = _append((key, st.id, n, cat), st, False)
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
        _pending.append((key, st.id, ~n, cat))
        if len(_pending) >= PENDING_LIMIT:
            _replay()
        return
    reserved = _append((key, st.id, ~n, cat), st, True)
    if reserved is not None:
        if key == "cpu":
            _events.emit("free", storage=st.id, bytes=n, device=key, category=cat, reserved=reserved)
        else:                      # as in on_alloc (rule 2 of NOTE [ CuPy pool figures in events ])
            _events.emit("free", storage=st.id, bytes=n, device=key, category=cat, reserved=reserved,
                         **_pool.fields_after_free(st, key))


def on_move(st, old: str, new: str) -> None:
    key = "cpu" if st.device is _CPU else str(st.device)
    _pending.append((key, None, 0, (old, new, st.nbytes)))      # rule 5
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
