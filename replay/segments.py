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
3. Moving forward folds in the events since the last position; moving back restarts from
   the nearest saved copy (one every ``every`` events), so any jump costs at most
   ``every`` events.
4. ``gap`` explains allocated vs reserved in bytes: reserved = requested (what tensors
   asked for) + rounding (block sizes above the requests) + cached (free blocks kept in
   segments). ``fragmentation`` is 1 - the largest free block / all free bytes.
5. On a CUDA trace the ``alloc``/``free`` events carry CuPy's real pool figures
   (NOTE [ CuPy pool figures in events ] in engine/memory/cupy_pool.py); ``pool(i)`` is
   the last pair at or before event ``i`` on the device, folded in with the model (saved
   copies keep it), and None where no event carries them (a CPU or an older trace).
"""
from __future__ import annotations

import copy

from engine.memory.allocator import CachingAllocatorModel

from .lifetimes import _unseen
from .memory import events_of, preexisting


class SegmentsAt:
    """``at(i)``: the allocator model of ``device`` after event ``i`` (rules 1-3)."""

    def __init__(self, trace, device: str = "cpu", every: int = 20000):
        self.events = events_of(trace)
        self.device = device
        self.every = max(1, every)
        self._model = CachingAllocatorModel(device)
        pre = preexisting(self.events)
        for sid, (b, dev, _) in sorted(pre.items(), key=lambda kv: str(kv[0])):
            if dev == device:
                self._model.malloc(sid, b)
        for k, lt in enumerate(_unseen(getattr(trace, "meta", None), pre)):     # NOTE [ Storage lifetimes ] 1
            if lt.device == device:
                self._model.malloc(-1 - k, lt.bytes)
        self._pos = -1                          # events folded in: [0, _pos]
        self._pool = None                       # rule 5: (used, total) after them
        self._saved = {-1: (copy.deepcopy(self._model), None)}

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

    def at(self, i: int) -> CachingAllocatorModel:
        i = max(-1, min(i, len(self.events) - 1))
        if i < self._pos:
            start = max(k for k in self._saved if k <= i)
            model, self._pool = self._saved[start]
            self._model, self._pos = copy.deepcopy(model), start
        for j in range(self._pos + 1, i + 1):
            self._fold(self.events[j])
            if (j + 1) % self.every == 0 and j not in self._saved:
                self._saved[j] = (copy.deepcopy(self._model), self._pool)
        self._pos = i
        return self._model

    def pool(self, i: int) -> tuple | None:
        """CuPy's (used, total) pool bytes after event ``i`` on this device (rule 5), or None."""
        self.at(i)
        return self._pool

    def live_reserved(self, i: int) -> int | None:
        """The live run's reserved figure after event ``i`` (rule 2), when the trace has one."""
        for j in range(min(i, len(self.events) - 1), -1, -1):
            e = self.events[j]
            if e.get("device") == self.device and isinstance(e.get("reserved"), int):
                return e["reserved"]
        return None


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
            f"({g['free_blocks']} blocks in {g['segments']} segments, fragmentation {g['fragmentation']:.2f})")


#: What differs between CuPy's pool and PyTorch's allocator, in one line: worded for three widths.
POOL_DIFFERS = (("both round to 512 B; CuPy takes each block from the driver at its own size (held), "
                 "PyTorch's allocator 2 or 20 MiB segments (reserved)"),
                "held: CuPy's own-size blocks · reserved: 2/20 MiB segments",
                "held: own-size blocks · reserved: segments")


def pool_lines(pool: tuple, model: CachingAllocatorModel) -> list:
    """Rule 5: CuPy's real pool beside the model's allocated (block) and reserved bytes, worded
    for three widths: one line, two lines, two short lines (the widest first)."""
    from .words import nbytes
    used, held, alloc, res = (nbytes(b) for b in (pool[0], pool[1], model.active, model.reserved))
    cupy, mine = f"CuPy pool (real): used {used} · held {held}", f"model: allocated {alloc} · reserved {res}"
    return [[f"{cupy}   {mine}"], [cupy, mine],
            [f"CuPy (real): used {used} · held {held}", f"model: used {alloc} · reserved {res}"]]


def pool_line(pool: tuple, model: CachingAllocatorModel) -> str:
    """Rule 5's figures in one line."""
    return pool_lines(pool, model)[0][0]


def pool_at_peak(trace) -> str | None:
    """For ``glassgrad view --text``: the pool line at the trace's peak, on the first device whose
    events carry pool figures; None for a trace without them."""
    from .model import TraceModel
    m = trace if isinstance(trace, TraceModel) else TraceModel.from_trace(trace)
    dev = next((e.get("device") for e in m.events if "pool_used" in e and e.get("kind") in ("alloc", "free")), None)
    if dev is None:
        return None
    i = m.memory.peak_index
    seg = SegmentsAt(m, dev)
    pool = seg.pool(i)
    return None if pool is None else f"{dev} at the peak (#{i}): " + pool_line(pool, seg.at(i))
