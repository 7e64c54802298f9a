"""The TraceModel of an opened trace file, made from its index's columns (NOTE [ Trace index ] in engine/trace_index.py).

NOTE [ A model from an index ]
1. The memory replay is computed from the columns at once (NumPy cumulative sums, one per
   category; reserved bytes carried forward per device): the same figures ``Replay``
   folds in one event at a time (NOTE [ Memory replay ]), held as arrays and read back as
   Python ints (``IntColumn``, ``RowColumn``).
2. Events that move no graph state are never parsed: the index's kind column picks the
   ones a handler of NOTE [ One trace model ] reads; ``free``, ``node_free``, ``accumulate``
   and the ``execute`` of a node the trace made are folded in from the storage and node
   columns alone; the rest are read in blocks of lines.
3. Phase starts come from the phase column; ``storage_at`` bisects the memory events of
   one storage, found through the storage column sorted once.
4. The model is of a whole file: its ``extend`` is refused (a running script's stream is
   folded into a model of its own); ``TraceModel.from_trace`` makes it once per opened
   trace and keeps it there (``trace.model``).
"""
from __future__ import annotations

import bisect

import numpy as np

from engine.trace_schema import CATEGORIES, PHASES

from .memory import RESERVED_KINDS, Replay, reserved_start, start_of


class IntColumn:
    """A 1-D integer array read as a list of Python ints (slices are lists)."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __len__(self):
        return len(self.a)

    def __getitem__(self, i):
        return self.a[i].tolist()

    def __iter__(self):
        return iter(self.a.tolist())


class RowColumn(IntColumn):
    """A 2-D integer array read as a list of tuples, one per row."""

    __slots__ = ()

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [tuple(r) for r in self.a[i].tolist()]
        return tuple(self.a[i].tolist())

    def __iter__(self):
        return (tuple(r) for r in self.a.tolist())


def replay_of(idx, meta: dict) -> Replay:
    """The whole trace's memory replay from the index's columns (rule 1)."""
    r = Replay(start=start_of(meta), reserved=reserved_start(meta))
    n = len(idx)
    kind, b, cat, cat2 = idx.kind, idx.nbytes, idx.cat, idx.cat2
    alloc, free, moved = (np.isin(kind, idx.codes(k)) for k in ("alloc", "free", "category"))
    snaps = np.empty((n, len(r.categories)), dtype=np.int64)
    for col, c in enumerate(r.categories):
        k = CATEGORIES.index(c) if c in CATEGORIES else -2
        d = (np.where((alloc & (cat == k)) | (moved & (cat2 == k)), b, 0)
             - np.where((free | moved) & (cat == k), b, 0))
        np.cumsum(d, out=snaps[:, col])
        snaps[:, col] += r._cur[col]
    total = snaps.sum(axis=1)
    res = np.zeros(n, dtype=np.int64)
    carried = np.isin(kind, idx.codes(*RESERVED_KINDS)) & (idx.reserved >= 0)
    start = dict(r._res_dev)
    for code, dev in enumerate(idx.devices):
        mine = carried & (idx.device == code)
        if mine.any():
            pos = np.maximum.accumulate(np.where(mine, np.arange(n), -1))
            res += np.where(pos >= 0, idx.reserved[np.maximum(pos, 0)], start.pop(dev, 0))
    res += sum(start.values())
    return with_arrays(r, snaps, total, res, bool(carried.any()))


def with_arrays(r: Replay, snaps, total, res, has_reserved: bool) -> Replay:
    """``r`` (a Replay of no events) holding these arrays, its peaks found in them (rule 1)."""
    n = len(total)
    if snaps.shape != (n, len(r.categories)) or res.shape != (n,) or total.shape != (n,):
        raise ValueError("memory arrays of the wrong shape")
    r.snaps, r.total, r.reserved = RowColumn(snaps), IntColumn(total), IntColumn(res)
    r.has_reserved = has_reserved
    if n:
        r.peak_index = int(np.argmax(total))
        r.peak_bytes = int(total[r.peak_index])
        act = snaps[:, r._act]
        if int(act.max()) > r.act_peak_bytes:
            r.act_peak_index = int(np.argmax(act))
            r.act_peak_bytes = int(act[r.act_peak_index])
        r._cur = snaps[-1].tolist()
        r._tot = int(total[-1])
    return r


def begin(model, trace, memory: bool = True) -> None:
    """Give the empty ``model`` (a TraceModel) what the opened ``trace``'s index says at once (rules 1, 3);
    its memory replay unless ``memory`` is false (a saved model holds it)."""
    model.index = idx = trace.index
    model.events = trace.events
    if memory:
        model.memory = replay_of(idx, model.meta)
    model.storages = StorageLookup(idx)
    ph = idx.phase
    if len(ph):                                                         # rule 3
        model.phase_starts = np.flatnonzero(np.r_[True, ph[1:] != ph[:-1]]).tolist()
        model._phase = PHASES[int(ph[-1])]


def fold(model, trace, handlers: dict) -> None:
    """Fold the opened ``trace`` into ``model`` (after ``begin``) by its index (rule 2); ``handlers`` are
    the model's, by kind."""
    idx = trace.index
    names = idx.kinds
    sel = np.flatnonzero(np.isin(idx.kind, [k for k, name in enumerate(names) if name in handlers]))
    kinds = idx.kind[sel].tolist()
    sel = sel.tolist()
    free, node_free, execute, accumulate = (names.index(k) if k in names else -1
                                            for k in ("free", "node_free", "execute", "accumulate"))
    by_column = {free, node_free, execute, accumulate}
    storage, node = idx.storage, idx.node
    on_free, on_node_free = handlers["free"], handlers["node_free"]
    on_execute, on_accumulate = handlers["execute"], handlers["accumulate"]
    outputs, nodes = model._outputs, model.nodes
    events = model.events.pick([i for i, k in zip(sel, kinds) if k not in by_column])
    for i, k in zip(sel, kinds):                                        # rule 2
        if k == free:
            s = int(storage[i])
            if s in outputs:
                on_free(model, i, {"storage": s})
        elif k == node_free:
            on_node_free(model, i, {"node": int(node[i])})
        elif k == execute:              # its name and seq matter only to a node the trace never made
            nid = int(node[i])
            on_execute(model, i, {"node": nid} if nid in nodes else model.events[i])
        elif k == accumulate:
            nid = int(node[i])
            on_accumulate(model, i, {"node": nid if nid >= 0 else None})
        else:
            _, e = next(events)
            handlers[e["kind"]](model, i, e)


class StorageLookup:
    """``at(sid, i)``: a storage's (bytes, category, live) after event i from the index's columns (rule 3)."""

    def __init__(self, idx):
        self.idx = idx
        pos = np.flatnonzero(np.isin(idx.kind, idx.codes("alloc", "free", "category")))
        self.order = pos[np.argsort(idx.storage[pos], kind="stable")]
        self.keys = idx.storage[self.order]

    def at(self, sid, i: int):
        if type(sid) is not int:
            return None
        idx, keys = self.idx, self.keys
        js = self.order[np.searchsorted(keys, sid, "left"):np.searchsorted(keys, sid, "right")].tolist()
        k = bisect.bisect_right(js, i) - 1
        if k < 0:
            return None
        j = js[k]
        name = idx.kinds[int(idx.kind[j])]
        c = int(idx.cat2[j] if name == "category" else idx.cat[j])
        return int(idx.nbytes[j]), CATEGORIES[c] if c >= 0 else "other", name != "free"
