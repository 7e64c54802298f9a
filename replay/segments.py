"""The caching allocator's segments and blocks at any event, replayed from a trace.

NOTE [ Segments at an event ]
1. The trace's ``alloc``/``free`` events of one device are fed, in order, to a fresh
   ``CachingAllocatorModel`` (NOTE [ Caching allocator model ] in engine/memory/allocator.py);
   ``empty_cache`` events call its ``empty_cache``. Storages alive before recording are
   allocated first, in storage order (then the bytes no event mentions, one block per
   category), so the replay starts from the bytes the run had.
2. The replay may differ from the live model in addresses and reserved bytes when the live
   model held segments before recording began (the live figure is on every event's
   ``reserved``); ``live_reserved`` gives it beside the replay's.
3. Moving forward folds in the events since the last position (or since a saved copy
   nearer to the new one); moving back restarts from the nearest saved copy (one every
   ``every`` events), so any jump to where the replay has been costs at most ``every`` events.
4. ``gap`` explains allocated vs reserved in bytes: reserved = requested (what tensors
   asked for) + rounding (block sizes above the requests) + cached (free blocks kept in
   segments). ``fragmentation`` is 1 - the largest free block / all free bytes.
5. On a CUDA trace the ``alloc``/``free`` events carry CuPy's real pool figures
   (NOTE [ CuPy pool figures in events ] in engine/memory/cupy_pool.py); ``pool(i)`` is
   the last pair at or before event ``i`` on the device, folded in with the model (saved
   copies keep it), and None where no event carries them (a CPU or an older trace).
6. On an opened trace (NOTE [ Trace index ]) no event is parsed to fold: the device's
   ``alloc``/``free``/``empty_cache`` events are found by the kind and device columns and
   folded from the storage and bytes columns. Storages alive before recording are found as
   ``preexisting`` finds them: ``alloc``/``free``/``category`` from the columns, and an
   ``op``/``leaf`` event is parsed only when its line names (``"storage": N``, the key
   spelled in any JSON way) a storage not met yet, or a storage that is not a number (once
   per index). ``pool(i)`` parses the device's ``alloc``/``free`` events back
   from ``i`` to the last that carries the figures (one, on a CUDA trace) unless the file never
   names ``pool_used`` (in any JSON spelling); ``live_reserved`` reads the reserved column.
"""
from __future__ import annotations

import copy
import os
import re
import weakref

import numpy as np

from engine.memory.allocator import CachingAllocatorModel

from .event_stream import index_of
from .lifetimes import _unseen
from .memory import (
    MEMORY_KINDS,
    devices,
    events_of,
    first_mention,
    of_kinds,
    preexisting,
)


class SegmentsAt:
    """``at(i)``: the allocator model of ``device`` after event ``i`` (rules 1-3, 6)."""

    def __init__(self, trace, device: str = "cpu", every: int = 20000):
        self.events = events_of(trace)
        self.device = device
        self.every = max(1, every)
        self._model = CachingAllocatorModel(device)
        self._idx = idx = index_of(trace)
        pre = preexisting(self.events) if idx is None else _preexisting(self.events, idx)
        for sid, (b, dev, _) in sorted(pre.items(), key=lambda kv: str(kv[0])):
            if dev == device:
                self._model.malloc(sid, b)
        for k, lt in enumerate(_unseen(getattr(trace, "meta", None), pre)):     # NOTE [ Storage lifetimes ] 1
            if lt.device == device:
                self._model.malloc(-1 - k, lt.bytes)
        self._pos = -1                          # events folded in: [0, _pos]
        self._pool = None                       # rule 5: (used, total) after them
        self._saved = {-1: (copy.deepcopy(self._model), None)}
        if idx is not None:                     # rule 6
            self._cols = _device_columns(idx, device)
            self._pool_none = -1                # no event of the device at or before it carries figures
            self._pool_named = None
            self._reserved_at = None

    def _fold(self, e) -> None:
        k = e.get("kind")
        if e.get("device", self.device) != self.device:
            return
        if k == "alloc":
            self._model.malloc(e.get("storage"), e.get("bytes", 0))
        elif k == "free":
            self._model.free(e.get("storage"))
        else:
            if k == "empty_cache":
                self._model.empty_cache()
            return
        used = e.get("pool_used")
        if used is not None:
            self._pool = (used, e.get("pool_total", 0))

    def _fold_columns(self, a: int, b: int) -> None:
        """Rule 6: the device's events from the ``a``-th to the ``b``-th (exclusive) of its own."""
        _, kind, storage, nbytes = self._cols
        m = self._model
        for k, s, nb in zip(kind[a:b].tolist(), storage[a:b].tolist(), nbytes[a:b].tolist()):
            if k == 0:
                m.malloc(s, nb)
            elif k == 1:
                m.free(s)
            else:
                m.empty_cache()

    def at(self, i: int) -> CachingAllocatorModel:
        i = max(-1, min(i, len(self.events) - 1))
        start = max(k for k in self._saved if k <= i)
        if i < self._pos or start > self._pos:
            model, self._pool = self._saved[start]
            self._model, self._pos = copy.deepcopy(model), start
        if self._idx is None:
            for j in range(self._pos + 1, i + 1):
                self._fold(self.events[j])
                if (j + 1) % self.every == 0 and j not in self._saved:
                    self._saved[j] = (copy.deepcopy(self._model), self._pool)
        else:
            pos = self._cols[0]
            done = int(np.searchsorted(pos, self._pos, "right"))
            every = self.every
            for j in range((self._pos + 1 + every) // every * every - 1, i + 1, every):
                upto = int(np.searchsorted(pos, j, "right"))
                self._fold_columns(done, upto)
                done = upto
                if j not in self._saved:
                    self._saved[j] = (copy.deepcopy(self._model), None)
            self._fold_columns(done, int(np.searchsorted(pos, i, "right")))
        self._pos = i
        return self._model

    def pool(self, i: int) -> tuple | None:
        """CuPy's (used, total) pool bytes after event ``i`` on this device (rule 5), or None."""
        if self._idx is None:
            self.at(i)
            return self._pool
        return self._pool_at(max(-1, min(i, len(self.events) - 1)))

    def _pool_at(self, i: int) -> tuple | None:
        """Rule 6: the last figures at or before event ``i``, read back from the events that may carry them."""
        if self._pool_named is None:
            self._pool_named = _names_pool(self.events, self._idx)
        pos, kind = self._cols[0], self._cols[1]
        if not self._pool_named or i <= self._pool_none:
            return None
        mine = pos[:int(np.searchsorted(pos, i, "right"))]
        mine = mine[(kind[:len(mine)] < 2) & (mine > self._pool_none)].tolist()
        hi = len(mine)
        while hi > 0:
            lo = max(0, hi - 256)
            for _, e in reversed(list(_pick(self.events, mine[lo:hi]))):
                used = e.get("pool_used")
                if used is not None:
                    return used, e.get("pool_total", 0)
            hi = lo
        self._pool_none = i
        return None

    def live_reserved(self, i: int) -> int | None:
        """The live run's reserved figure after event ``i`` (rule 2), when the trace has one."""
        idx = self._idx
        if idx is not None:                     # rule 6
            if self._reserved_at is None:
                code = idx.devices.index(self.device) if self.device in idx.devices else -2
                self._reserved_at = np.flatnonzero((idx.device == code) & (idx.reserved >= 0))
            k = int(np.searchsorted(self._reserved_at, min(i, len(self.events) - 1), "right"))
            return int(idx.reserved[self._reserved_at[k - 1]]) if k else None
        for j in range(min(i, len(self.events) - 1), -1, -1):
            e = self.events[j]
            if e.get("device") == self.device and isinstance(e.get("reserved"), int):
                return e["reserved"]
        return None


def devices_of(trace) -> list:
    """``devices(events)`` (NOTE [ Memory replay ]), read from the columns of an opened trace (rule 6)."""
    idx = index_of(trace)
    if idx is None:
        return devices(events_of(trace))
    first = np.flatnonzero(np.isin(idx.kind, idx.codes(*MEMORY_KINDS)) & (idx.device >= 0))
    codes, at = np.unique(idx.device[first], return_index=True)
    out = [idx.devices[c] for _, c in sorted(zip(at.tolist(), codes.tolist()))]
    for _, dev, _ in _preexisting(events_of(trace), idx).values():
        if dev not in out:
            out.append(dev)
    return out


def _pick(events, indices):
    pick = getattr(events, "pick", None)
    return pick(indices) if pick is not None else ((i, events[i]) for i in indices)


def _device_columns(idx, device: str) -> tuple:
    """Rule 6: (event index, 0 alloc / 1 free / 2 empty_cache, storage, bytes) of ``device``'s events, as arrays."""
    kinds = [idx.codes(k) for k in ("alloc", "free", "empty_cache")]
    dev = [k for k, d in enumerate(idx.devices) if d == device] + [-1]     # no device: the one asked for
    pos = np.flatnonzero(np.isin(idx.kind, idx.codes("alloc", "free", "empty_cache")) & np.isin(idx.device, dev))
    code = np.full(256, 3, dtype=np.int8)
    for n, ks in enumerate(kinds):
        code[ks] = n
    return pos, code[idx.kind[pos]], idx.storage[pos], idx.nbytes[pos]


def _names_pool(events, idx) -> bool:
    """Rule 6: whether the trace's text may carry pool figures (it names ``pool_used`` in some JSON spelling)."""
    path = getattr(events, "path", None)
    if path is None:
        return True
    with open(path, "rb") as f:
        tail = b""
        while True:
            piece = f.read(1 << 22)
            if not piece:
                return False
            piece = tail + piece
            if b"pool_used" in piece or (b"\\u" in piece and _POOL_USED.search(piece)):
                return True
            tail = piece[-64:]


def _key(name: str) -> bytes:
    """A pattern for the JSON key ``name``, each character as itself or as a ``\\u`` escape."""
    return b'"' + b"".join(rb"(?:%s|\\u%04x)" % (re.escape(c).encode(), ord(c)) for c in name) + b'"'


_POOL_USED = re.compile(_key("pool_used"), re.IGNORECASE)
_STORAGE = re.compile(_key("storage") + rb"\s*:\s*([^,}\]\s]*)", re.IGNORECASE)
_PRE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _preexisting(events, idx) -> dict:
    """``preexisting(events)`` of an opened trace (rule 6), kept per index."""
    pre = _PRE.get(idx)
    if pre is None:
        pre = _PRE[idx] = _preexisting_columns(events, idx)
    return pre


def _preexisting_columns(events, idx) -> dict:
    seen, pre = set(), {}
    alloc, free, cat = (set(idx.codes(k)) for k in ("alloc", "free", "category"))
    tensors = set(idx.codes("op", "leaf"))
    pos = np.flatnonzero(np.isin(idx.kind, sorted(alloc | free | cat | tensors)))
    off, fd = idx.offsets, None
    try:
        for i, k, sid in zip(pos.tolist(), idx.kind[pos].tolist(), idx.storage[pos].tolist()):
            if k in alloc:
                seen.add(sid if sid >= 0 else events[i].get("storage"))
            elif k not in tensors:
                if sid < 0 or sid not in seen:
                    first_mention(events[i], seen, pre)
            else:
                if fd is None:
                    fd = os.open(events.path, os.O_RDONLY)
                a = int(off[i])
                line = os.pread(fd, int(off[i + 1]) - a, a)
                if any(not v.isdigit() or int(v) not in seen for v in _STORAGE.findall(line)):
                    first_mention(events[i], seen, pre)
    finally:
        if fd is not None:
            os.close(fd)
    return pre


def gap(model: CachingAllocatorModel) -> dict:
    """Rule 4: reserved split into requested, rounding and cached bytes, plus fragmentation."""
    free = [b["size"] for s in model.snapshot() for b in s["blocks"] if b["state"] == "inactive"]
    return {"reserved": model.reserved, "requested": model.requested,
            "rounding": model.active - model.requested, "cached": model.reserved - model.active,
            "segments": len(model.segments), "free_blocks": len(free), "largest_free": max(free, default=0),
            "fragmentation": 0.0 if not free else 1 - max(free) / sum(free)}


def explain(g: dict) -> str:
    """The allocated-vs-reserved gap in one line."""
    from .words import nbytes
    return (f"reserved {nbytes(g['reserved'])} = tensors {nbytes(g['requested'])} + rounding "
            f"{nbytes(g['rounding'])} + cached free blocks {nbytes(g['cached'])} "
            f"({_count(g['free_blocks'], 'block')} in {_count(g['segments'], 'segment')}, "
            f"fragmentation {g['fragmentation']:.2f})")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


#: What differs between CuPy's pool and PyTorch's allocator, in one line: worded for three widths.
POOL_DIFFERS = (("both round to 512 B; CuPy takes each block from the driver at its own size (held), "
                 "PyTorch's allocator 2 or 20 MiB segments (reserved)"),
                "held: CuPy's own-size blocks · reserved: 2/20 MiB segments",
                "held: own-size blocks · reserved: segments")


def pool_lines(pool: tuple, model: CachingAllocatorModel) -> list:
    """Rule 5: CuPy's real pool beside the model's allocated (block) and reserved bytes, worded
    for four widths: one line, two lines, two short lines, two lines in short units (widest first)."""
    from .words import nbytes, short_bytes
    used, held, alloc, res = (nbytes(b) for b in (pool[0], pool[1], model.active, model.reserved))
    cupy, mine = f"CuPy pool (real): used {used} · held {held}", f"model: allocated {alloc} · reserved {res}"
    su, sh, sa, sr = (short_bytes(b) for b in (pool[0], pool[1], model.active, model.reserved))
    return [[f"{cupy}   {mine}"], [cupy, mine],
            [f"CuPy (real): used {used} · held {held}", f"model: used {alloc} · reserved {res}"],
            [f"CuPy (real): used {su} · held {sh}", f"model: used {sa} · reserved {sr}"]]


def pool_line(pool: tuple, model: CachingAllocatorModel) -> str:
    """Rule 5's figures in one line."""
    return pool_lines(pool, model)[0][0]


def pool_at_peak(trace) -> str | None:
    """For ``glassgrad view --text``: the pool line at the trace's peak, on the first device whose
    events carry pool figures; None for a trace without them."""
    from .model import TraceModel
    m = trace if isinstance(trace, TraceModel) else TraceModel.from_trace(trace)
    idx = index_of(m)
    if idx is not None and not _names_pool(m.events, idx):      # rule 6: a file that never names them
        return None
    dev = next((e.get("device") for _, e in of_kinds(m.events, ("alloc", "free")) if "pool_used" in e), None)
    if dev is None:
        return None
    i = m.memory.peak_index
    seg = SegmentsAt(m, dev)
    pool = seg.pool(i)
    return None if pool is None else f"{dev} at the peak (#{i}): " + pool_line(pool, seg.at(i))
