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

NOTE [ A followed run ]
1. ``glassgrad run`` follows the worker's ``OUT.part`` with a ``LineTail`` (NOTE [ Trace index ]
   rule 6 in engine/trace_index.py): a reader thread parses each complete line once and queues
   the events with their line offsets (``Lines``); the app folds them into the model
   ``TraceModel.followed(path)`` made, whose ``extend`` folds each event in (NOTE [ One trace model ]) and
   then keeps only its offset, kind and storage (``FollowedEvents``): no event dict outlives
   its fold but the few in the read-back cache (rule 7 there). The reader parses at most a
   few pieces ahead of the app (``FOLLOW_QUEUE`` in tui/app.py), so parsed events waiting to
   be folded in stay few too.
2. What the model holds per event is what a model from an index holds: offsets, the memory
   replay's figures, the per-node and per-slot indices; the event log, the inspector and the
   narrative read the events they show back from the file by offset, and a node reads the
   tensors and attributes of its op event (``inputs``, ``output``, ``attrs``), and a leaf its
   tensor, back from that event (``FollowedNode``). The replay's figures are held as they
   change: per event the row of live bytes it shares (``Snaps``), each row as the columns it
   changed (every ``Snaps.K``-th whole) with its sum, the total (``Totals``); the reserved
   bytes only where they change (``Changes``). A settled node is packed into a few integers
   (NOTE [ Settled nodes ] in replay/node_table.py), its graph kept (NOTE [ One trace model ]
   rule 13), so a training run's steps leave a few dozen bytes an event behind.
3. ``storage_at`` bisects the memory events of one storage (``FollowedStorages``), sorted
   again only after more events arrived.
4. When the run has ended and every line read is folded in, the reader opens the trace the
   worker saved, through its index as `glassgrad view` opens it, and ``settle`` points the
   model at it: its events (the nodes' too), storage lookup and meta replace the followed ones; nodes, graphs, steps and the memory replay are the same (the same events
   were folded in the same order), unless its meta says bytes were alive before the first
   event: then the replay is made from its columns (rule 1). A saved trace that is
   missing or holds another number of events is not used: the events stay readable from the
   followed file (NOTE [ Trace index ] rule 8).
"""
from __future__ import annotations

import bisect
from array import array

import numpy as np

from engine.trace_schema import CATEGORIES, PHASES

from .memory import RESERVED_KINDS, Replay, reserved_start, start_of
from .nodes import Node


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
            r.reserved_devices.add(dev)
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


# ---------------------------------------------------------------------- a followed run (NOTE [ A followed run ])

def follow(m, path) -> None:
    """Make the empty TraceModel ``m`` follow the trace being written at ``path`` (rule 1)."""
    from engine.trace_index import FollowedEvents

    m.events = FollowedEvents(path)
    m.storages = FollowedStorages(m.events)
    m._node = type("FollowedNode", (FollowedNode,), {"__slots__": (), "events": m.events})
    snaps = Snaps(m.memory.snaps)
    m.memory.snaps, m.memory.total, m.memory.reserved = snaps, Totals(snaps), Changes(m.memory.reserved)


class Snaps:
    """A followed model's live bytes per category after each event (``Replay.snaps``, rule 2): per event
    the row it shares (consecutive events that move no memory share one, ``_which``); each row the
    replay makes once, with its sum (``Totals``), as the columns it changed from the row before
    (every :attr:`K`-th row whole); a row is a tuple again when read, the last one read kept."""

    K = 32

    def __init__(self, rows=()):
        self._which, self._sums = array("i"), array("q")
        self._full = array("q")                           # every K-th row, whole
        self._count, self._cols, self._vals = array("H"), array("H"), array("q")   # the others: changes
        self._block = array("q")                          # where each K rows' changes begin
        self._k, self._last, self._prev = 0, None, ()
        self._seen = (-1, ())
        for r in rows:
            self.append(r)

    def append(self, row) -> None:
        if row is not self._last:
            r, prev = len(self._sums), self._prev
            if r % self.K == 0:
                self._full.extend(row)
                self._block.append(len(self._cols))
                self._count.append(0)
            else:
                n = 0
                for c, v in enumerate(row):
                    if c >= len(prev) or v != prev[c]:
                        self._cols.append(c)
                        self._vals.append(v)
                        n += 1
                self._count.append(n)
            self._sums.append(sum(row))
            self._k, self._last, self._prev = len(row), row, tuple(row)
        self._which.append(len(self._sums) - 1)

    def widen(self) -> None:
        """Every row gains a column of zeros (a category met for the first time)."""
        k, old = self._k, self._full
        self._full = array("q", [v for r in range(len(old) // k if k else 0) for v in (*old[r * k:(r + 1) * k], 0)])
        self._k, self._last, self._prev = k + 1, None, self._prev + (0,)
        self._seen = (-1, ())

    def _row(self, r: int) -> tuple:
        seen, row = self._seen
        if seen == r:
            return row
        K, k = self.K, self._k
        base = r - r % K
        if base < seen < r:
            vals, j = list(row), seen + 1
            p = self._block[r // K] + sum(self._count[base + 1:j])
        else:
            vals, j = list(self._full[(r // K) * k:(r // K + 1) * k]), base + 1
            p = self._block[r // K]
        cols, values, count = self._cols, self._vals, self._count
        for q in range(j, r + 1):
            end = p + count[q]
            while p < end:
                vals[cols[p]] = values[p]
                p += 1
        row = tuple(vals)
        self._seen = (r, row)
        return row

    def __len__(self):
        return len(self._which)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._row(r) for r in self._which[i]]
        return self._row(self._which[i])

    def __iter__(self):
        return (self._row(r) for r in self._which)

    @property
    def a(self) -> np.ndarray:
        """Every event's row, as one 2-D array (a saved model's column, NOTE [ A saved model ])."""
        n, k = len(self._sums), max(1, self._k)
        rows = np.zeros((n, k), dtype=np.int64)
        if n:
            full = np.array(self._full, dtype=np.int64).reshape(-1, self._k)
            rows[::self.K, :self._k] = full
            at = np.repeat(np.arange(n), np.array(self._count, dtype=np.int64))
            cols = np.array(self._cols, dtype=np.int64)
            rows[at, cols] = np.array(self._vals, dtype=np.int64)
            held = np.zeros((n, k), dtype=bool)      # each value from the last row that set it
            held[::self.K] = True
            held[at, cols] = True
            src = np.maximum.accumulate(np.where(held, np.arange(n)[:, None], 0), axis=0)
            rows = np.take_along_axis(rows, src, axis=0)
        return rows[np.array(self._which, dtype=np.int64)] if len(self._which) else rows[:0]


class Totals:
    """A followed model's ``Replay.total``: the sum of each event's row of its ``Snaps`` (the replay's
    total is always its row's sum), held once per row (rule 2)."""

    def __init__(self, snaps: Snaps):
        self.snaps = snaps

    def append(self, value) -> None:
        """The replay's total of the event just added to the rows: already there."""

    def __len__(self):
        return len(self.snaps)

    def __getitem__(self, i):
        s = self.snaps
        if isinstance(i, slice):
            sums = s._sums
            return [sums[r] for r in s._which[i]]
        return s._sums[s._which[i]]

    def __iter__(self):
        sums = self.snaps._sums
        return (sums[r] for r in self.snaps._which)

    @property
    def a(self) -> np.ndarray:
        s = self.snaps
        sums = np.frombuffer(s._sums, dtype=np.int64) if len(s._sums) else np.zeros(1, dtype=np.int64)
        return sums[np.frombuffer(s._which, dtype=np.int32)] if len(s._which) else sums[:0]


class Changes:
    """A followed model's ``Replay.reserved``: a figure per event, held only where it changes (rule 2)."""

    def __init__(self, values=()):
        self._at, self._val, self._n = array("q"), array("q"), 0
        for v in values:
            self.append(v)

    def append(self, v) -> None:
        if not self._val or v != self._val[-1]:
            self._at.append(self._n)
            self._val.append(v)
        self._n += 1

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("index out of range")
        return self._val[bisect.bisect_right(self._at, i) - 1]

    def __iter__(self):
        return iter(self.a.tolist())

    @property
    def a(self) -> np.ndarray:
        if not self._n:
            return np.zeros(0, dtype=np.int64)
        at = np.frombuffer(self._at, dtype=np.int64)
        return np.repeat(np.frombuffer(self._val, dtype=np.int64), np.diff(np.r_[at, self._n]))


def _op_event(n):
    return n.events[n.op_at] if n.op_at is not None else {}


def _ignore(n, value):
    pass


class FollowedNode(Node):
    """A followed run's node (rule 2): the tensors and attributes its op event names, and a leaf's
    tensor, are read back from that event (``events``, a class attribute) when asked for, not held."""

    __slots__ = ()
    events: object = None
    inputs = property(lambda n: _op_event(n).get("inputs") or (), _ignore)
    tensor = property(lambda n: n.events[n.leaf_at].get("tensor") if n.leaf_at is not None else None, _ignore)
    output = property(lambda n: _op_event(n).get("output"), _ignore)
    attrs = property(lambda n: (_op_event(n).get("node") or {}).get("attrs") or {}, _ignore)


class FollowedStorages:
    """``at(sid, i)`` of a followed model from its events' memory columns (rule 3)."""

    def __init__(self, events):
        self.events = events
        self._n = -1
        self._at = self._keys = None

    def at(self, sid, i: int):
        if type(sid) is not int:
            return None
        ev = self.events
        if self._n != len(ev.mem_at):
            self._n = len(ev.mem_at)
            at, keys = np.array(ev.mem_at, dtype=np.int64), np.array(ev.mem_storage, dtype=np.int64)
            order = np.argsort(keys, kind="stable")
            self._at, self._keys = at[order], keys[order]
        js = self._at[np.searchsorted(self._keys, sid, "left"):np.searchsorted(self._keys, sid, "right")].tolist()
        k = bisect.bisect_right(js, i) - 1
        if k < 0:
            return None
        e = ev[js[k]]
        cat = e.get("new") if e.get("kind") == "category" else e.get("category")
        return e.get("bytes", 0), cat or "other", e.get("kind") != "free"


def settle(model, trace) -> bool:
    """Point the followed ``model`` at ``trace``, the run's saved trace opened through its index (rule 4);
    whether it was used."""
    from engine.trace import safe_value

    if getattr(trace, "index", None) is None or len(trace.events) != len(model.events):
        return False
    old = model.events
    if isinstance(model._node, type) and issubclass(model._node, FollowedNode):
        model._node.events = trace.events
    meta = dict(safe_value(dict(trace.meta or {})))
    if (start_of(meta), reserved_start(meta)) != (start_of(model.meta), reserved_start(model.meta)):
        model.memory = replay_of(trace.index, meta)     # bytes alive before the first event: counted again
    model.meta = meta
    model.events, model.index = trace.events, trace.index
    model.storages = StorageLookup(trace.index)
    model._views, model._storage_idx = {}, None
    old.close()
    return True
