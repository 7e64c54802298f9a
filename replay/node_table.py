"""A model's graph nodes: the ones that can still change as Node objects, the settled ones packed into integers.

NOTE [ Settled nodes ]
1. A node is *settled* once its ``node_free`` is folded in and, when its output has a storage of
   its own (``mortal``, NOTE [ One trace model ] rule 7), that storage's ``free`` too: in a trace
   no later event names it (a freed node runs, saves, releases and is named no more), so nothing
   it records can change.
2. A grad_fn node is packed when its graph retires (NOTE [ One trace model ] rule 13 in
   replay/model.py); a leaf (AccumulateGrad) once it is settled, some op named it and no open
   graph's node names it. Packing keeps its event indices and figures as 32-bit integers in one
   array (``_heap``), present fields only (a bit mask says which), and drops the Node; what the
   trace said about it (its name aside) is read back from its op or leaf event when asked for,
   as a model from an index does (NOTE [ A saved model ] rule 2). A model folded from an index
   to be saved at once packs none (``_pack``).
3. ``nodes[nid]`` of a packed node makes a Node from its integers and its events; the last
   :data:`MADE` made are kept, so asking twice gives the same object. ``freed_at(nid)`` reads one
   integer and makes none; ``records()`` gives every node's figures without reading events (what
   a saved model holds). The fold never reads a packed node: it uses ``live``.
4. A node whose figures do not fit 32 bits, or whose ids or storages are not integers, stays a Node.
5. A packed node is found by its id in two sorted runs: the ids packed up to some point, sorted
   once, and those packed since, sorted again after each batch (a followed run, a first open).
   When the second run exceeds an eighth of the first (and :data:`RECENT` ids), both become one:
   the first step after a batch costs a sort of the batch, not of every packed id (10 ms at a
   million events).
"""
from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from .nodes import Slot

MADE = 256
RECENT = 4096           # rule 5: ids packed since the big sort, at least, before they join it
_KINDS = ("fn", "leaf", "missing")
_FIELDS = ("created", "seq", "op_at", "leaf_at", "recomputed_at", "dropped_at", "dropped_bytes", "first_namer",
           "mortal", "died", "freed_at")
_SLOT = ("storage", "bytes", "dropped", "dropped_storage", "recomputed_at", "recomputed_storage", "released_at")
_ZERO = {"dropped_bytes": 0, "mortal": False, "bytes": 0, "dropped": False}     # absent: this, else None
_FREED = _FIELDS.index("freed_at")
_LO, _HI = -(1 << 31), (1 << 31) - 1


def _fields(obj, names, out) -> bool:
    """Append ``obj``'s present ``names`` to ``out`` after their bit mask (rule 2); False when one is no int."""
    at, mask = len(out), 0
    out.append(0)
    for k, f in enumerate(names):
        v = getattr(obj, f)
        if v is None or (f in _ZERO and not v):
            continue
        if type(v) is bool:
            v = int(v)
        elif type(v) is not int or not _LO <= v <= _HI:
            return False
        mask |= 1 << k
        out.append(v)
    out[at] = mask
    return True


_PRESENT: dict = {}


def _read(heap, p: int, names) -> tuple:
    """(values by name, next position) of one mask and its fields at ``heap[p]``."""
    mask = heap[p]
    present = _PRESENT.get((names, mask))
    if present is None:
        present = _PRESENT[names, mask] = tuple(f for k, f in enumerate(names) if mask >> k & 1)
    vals = {f: _ZERO.get(f) for f in names}
    vals.update(zip(present, heap[p + 1:p + 1 + len(present)].tolist()))
    for f in ("mortal", "dropped"):
        if f in vals:
            vals[f] = bool(vals[f])
    return vals, p + 1 + len(present)


class Packed:
    """A packed node's integers as attributes (``records()``): its fields, ``runs``, ``about``, ``joins``
    and ``saved`` (one object per slot with the slot's fields); no event read."""

    def __init__(self, nid, name, kind, vals, lists, slots):
        self.id, self.name, self.kind = nid, name, kind
        self.__dict__.update(vals)
        self.runs, self.about, self.joins = lists
        self.saved = slots


class _SlotFields:
    def __init__(self, vals):
        self.__dict__.update(vals)


class NodeTable(Mapping):
    """Node id -> Node of one model: ``live`` Nodes and packed ones (NOTE [ Settled nodes ])."""

    def __init__(self, model):
        self.model = model
        self.live: dict = {}
        self._ids, self._at, self._heap = array("q"), array("q"), array("i")
        self._names: list = []
        self._code: dict = {}
        self._lo = self._hi = None
        self._runs = []          # rule 5: [(sorted ids, their rows)], the big sort then the recent one
        self._sorted_n = 0       # ids the runs hold
        self._big_n = 0          # ... the first of them
        self._made: OrderedDict = OrderedDict()

    # ------------------------------------------------------------------ packing (rule 2)

    def pack(self, n) -> bool:
        """Pack the settled node ``n`` (it leaves ``live``); False when it cannot be (rule 4)."""
        nid = n.id
        if type(nid) is not int or not _LO <= nid <= _HI or self.live.get(nid) is not n:
            return False
        code = self._code.get(n.name)
        out = [len(self._names) if code is None else code, _KINDS.index(n.kind)]
        if not _fields(n, _FIELDS, out):
            return False
        lists = (n.runs, n.about, n.joins)
        out += [len(x) for x in lists] + [len(n.saved)]
        for x in lists:
            if any(type(v) is not int for v in x):
                return False
            out += x
        for s in n.saved:
            if not _fields(s, _SLOT, out):
                return False
        try:
            rec = array("i", out)
        except OverflowError:
            return False
        if code is None:
            self._code[n.name] = len(self._names)
            self._names.append(n.name)
        self._at.append(len(self._heap))
        self._heap.extend(rec)
        self._ids.append(nid)
        self._lo = nid if self._lo is None else min(self._lo, nid)
        self._hi = nid if self._hi is None else max(self._hi, nid)
        del self.live[nid]
        return True

    def _row(self, nid):
        """The packed row of ``nid``, or None."""
        if type(nid) is not int or self._lo is None or not self._lo <= nid <= self._hi:
            return None
        n = len(self._ids)
        if self._sorted_n != n:                  # rule 5
            if n - self._big_n > max(RECENT, self._big_n // 8):
                self._big_n = 0
            lo = self._big_n
            ids = np.frombuffer(self._ids, dtype=np.int64, count=n - lo, offset=lo * 8).copy()
            order = np.argsort(ids, kind="stable")
            run = (ids[order], order + lo)
            self._runs = [run] if lo == 0 else [self._runs[0], run]
            self._big_n = self._big_n or n
            self._sorted_n = n
        for ids, rows in self._runs:
            k = int(np.searchsorted(ids, nid))
            if k < len(ids) and ids[k] == nid:
                return int(rows[k])
        return None

    def _decode(self, r: int) -> tuple:
        heap, p = self._heap, self._at[r]
        name, kind = self._names[heap[p]], _KINDS[heap[p + 1]]
        vals, p = _read(heap, p + 2, _FIELDS)
        counts = heap[p:p + 4].tolist()
        p += 4
        lists = []
        for c in counts[:3]:
            lists.append(heap[p:p + c].tolist())
            p += c
        slots = []
        for _ in range(counts[3]):
            sv, p = _read(heap, p, _SLOT)
            slots.append(sv)
        return name, kind, vals, lists, slots

    def _make(self, nid, r: int):
        """A Node of packed row ``r`` (rule 3), its op and leaf events read back."""
        m = self.model
        name, kind, vals, lists, slots = self._decode(r)
        n = m._node(nid, name, kind, vals["created"], vals["seq"])
        if vals["op_at"] is not None:
            e = m.events[vals["op_at"]]
            info = e.get("node") or {}
            n.fill(e, info, None)
            n.saved = [Slot(nid, sv) for sv in info.get("saved", ())]
        if vals["leaf_at"] is not None:
            n.tensor = m.events[vals["leaf_at"]].get("tensor")
        for f, v in vals.items():
            setattr(n, f, v)
        n.runs, n.about, n.joins = lists
        for slot, sv in zip(n.saved, slots):
            for f, v in sv.items():
                setattr(slot, f, v)
        return n

    # ------------------------------------------------------------------ reading (rule 3)

    def __getitem__(self, nid):
        n = self.live.get(nid)
        if n is not None:
            return n
        n = self._made.get(nid)
        if n is not None:
            self._made.move_to_end(nid)
            return n
        r = self._row(nid)
        if r is None:
            raise KeyError(nid)
        n = self._made[nid] = self._make(nid, r)
        while len(self._made) > MADE:
            self._made.popitem(last=False)
        return n

    def get(self, nid, default=None):
        n = self.live.get(nid)
        if n is not None:
            return n
        try:
            return self[nid]
        except KeyError:
            return default

    def __setitem__(self, nid, node) -> None:
        self.live[nid] = node

    def __contains__(self, nid):
        return nid in self.live or self._row(nid) is not None

    def __len__(self):
        return len(self.live) + len(self._ids)

    def __iter__(self):
        yield from list(self.live)
        yield from self._ids.tolist()

    def freed_at(self, nid):
        """A node's ``freed_at`` without making a packed one (rule 3)."""
        n = self.live.get(nid)
        if n is not None:
            return n.freed_at
        r = self._row(nid)
        if r is None:
            raise KeyError(nid)
        p = self._at[r] + 2
        mask = self._heap[p]
        if not mask >> _FREED & 1:
            return None
        return self._heap[p + (mask & ((1 << _FREED) - 1)).bit_count() + 1]

    def records(self):
        """Every node: the live ones, then each packed one as a :class:`Packed` (no event read)."""
        yield from list(self.live.values())
        for r, nid in enumerate(self._ids.tolist()):
            name, kind, vals, lists, slots = self._decode(r)
            yield Packed(nid, name, kind, vals, lists, [_SlotFields(s) for s in slots])
