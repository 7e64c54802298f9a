"""TraceModel: a trace's events plus per-event state, precomputed so the app can step in O(1).

NOTE [ Incremental trace state ]
1. Events arrive in order (a loaded trace, or a script streaming them); ``extend``
   folds each one in once: live bytes per category after event i are
   ``snaps[i]`` (a tuple shared by consecutive events that change no memory) and
   ``total[i]``, so memory at any step is a list lookup. Bytes live before
   recording began (``meta['memory_at_start']``) are the starting point.
   ``reserved[i]`` is the allocator model's reserved bytes after event i, summed
   over devices like ``total`` (each device's newest ``reserved`` field on an
   alloc/free/empty_cache event, from memory_at_start's figure); ``has_reserved``
   says whether the trace carries it at all.
2. Graph nodes are indexed by id with the event index where they appeared, the
   indices where backward executed them, where each saved tensor was released
   or dropped, and whether they were created while recomputing.
3. Node state at step i is answered by comparing those indices with i
   (a few comparisons per node drawn), never by replaying events.
4. The graph shown at step i is the set of graphs (weakly connected components,
   AccumulateGrad nodes excluded from the joining) alive around i: the newest
   one created by i, plus older ones still active after it appeared.
"""
from __future__ import annotations

import bisect

CATEGORIES = ["parameter", "gradient", "activation", "optimizer", "input", "other"]
NODE_KINDS = ("op", "leaf", "execute")
_RESERVED_KINDS = frozenset(("alloc", "free", "empty_cache"))
_ABOUT_NODES = frozenset(("op", "leaf", "execute", "accumulate", "release", "checkpoint_drop"))


class NodeRec:
    """A graph node as the trace tells it, with the event indices of what happened to it."""

    __slots__ = ("id", "name", "created", "next", "saved", "op", "inputs", "output", "tensor", "file", "line",
                 "region", "attrs", "recomputed", "executed", "released", "dropped", "dropped_bytes", "accumulated",
                 "last")

    def __init__(self, id, name, created, next=(), saved=(), op=None, inputs=(), output=None, tensor=None,
                 file=None, line=None, region=None, attrs=None, recomputed=False, last=0):
        self.id = id
        self.name = name
        self.created = created           # event index of its op/leaf event
        self.next = next                 # [(node id | None, input_nr, name)]
        self.saved = saved               # node_info["saved"] dicts
        self.op = op
        self.inputs = inputs             # tensor_info of the inputs
        self.output = output             # tensor_info of the output (its gradient has this shape)
        self.tensor = tensor             # AccumulateGrad: the leaf tensor
        self.file = file
        self.line = line
        self.region = region
        self.attrs = attrs or {}
        self.recomputed = recomputed
        self.executed = []               # event indices of execute events
        self.released = {}               # saved name -> event index
        self.dropped = None              # event index of the first checkpoint drop of its saved tensors
        self.dropped_bytes = 0           # bytes those drops really freed (not counting kept inputs/weights)
        self.accumulated = []
        self.last = last                 # last event index that touched it

    @property
    def is_leaf(self) -> bool:
        return self.name == "AccumulateGrad"

    def state(self, i: int) -> str:
        """future | alive | current | executed at step i."""
        if self.created > i:
            return "future"
        if i in self.executed or (self.accumulated and i in self.accumulated):
            return "current"
        if self.executed and self.executed[0] <= i:
            return "executed"
        if self.accumulated and self.accumulated[0] <= i:
            return "executed"
        return "alive"

    def event_indices(self) -> list:
        """Every event index known to be about this node, in order."""
        idx = {self.created, *self.executed, *self.released.values(), *self.accumulated}
        if self.dropped is not None:
            idx.add(self.dropped)
        return sorted(idx)

    def saved_bytes(self) -> int:
        return sum(s.get("bytes", 0) or 0 for s in self.saved)

    def saved_state(self, i: int) -> str:
        """kept | released | dropped | none for the node's saved tensors at step i."""
        if not self.saved:
            return "none"
        if self.dropped is not None and self.created <= i:
            return "dropped"
        if self.released and min(self.released.values()) <= i:
            return "released"
        if any(s.get("packed") for s in self.saved):
            return "packed"
        return "kept"


class TraceModel:
    def __init__(self, events=None, meta=None):
        self.events: list = []
        self.meta: dict = dict(meta or {})
        self.categories: list = list(CATEGORIES)
        self._col = {c: k for k, c in enumerate(self.categories)}
        self.snaps: list = []             # per event: a tuple of live bytes per category (shared while unchanged)
        self.total: list = []
        self.peak_index: int = 0
        self.peak_bytes: int = 0
        self.nodes: dict = {}
        self.node_events: list = []       # indices of op/leaf/execute events
        self.phase_starts: list = []      # indices where the phase changes
        self.marks: list = []             # (index, event) of mark events
        self._cat_of: dict = {}           # storage -> category
        self._cur = [0] * len(self.categories)
        for dev in (self.meta.get("memory_at_start") or {}).values():  # bytes live before recording began
            for c, b in (dev.get("by_category") or {}).items():
                self._cur[self._column(c)] += b
        self._snap = tuple(self._cur)
        self._tot = sum(self._cur)
        self.reserved: list = []          # per event: reserved bytes, all devices
        self.has_reserved = False
        self._res_dev: dict = {}          # device -> its newest reserved figure
        for dev, m in (self.meta.get("memory_at_start") or {}).items():
            if isinstance(m.get("reserved"), int):
                self._res_dev[dev] = m["reserved"]
        self._res = self.reserved_start = sum(self._res_dev.values())
        self._parent: dict = {}           # union-find over non-leaf nodes
        self._comp_cache = None
        self._early_drops: dict = {}      # node id -> drop events seen before the node's op event
        if events:
            self.extend(events)

    # ------------------------------------------------------------ building

    @classmethod
    def from_trace(cls, trace) -> "TraceModel":
        return cls(list(trace.events), getattr(trace, "meta", None))

    def __len__(self):
        return len(self.events)

    def extend(self, events) -> None:
        for e in events:
            self._add(e)
        self._comp_cache = None

    def _column(self, cat) -> int:
        k = self._col.get(cat)
        if k is None:
            k = self._col[cat] = len(self.categories)
            self.categories.append(cat)
            self._cur.append(0)
            self.snaps = [sn + (0,) for sn in self.snaps]
        return k

    def _bump(self, cat, delta):
        self._cur[self._column(cat)] += delta
        self._tot += delta
        self._snap = None

    def _add(self, e: dict) -> None:
        i = len(self.events)
        self.events.append(e)
        k = e.get("kind")
        if k == "alloc":
            self._cat_of[e.get("storage")] = e.get("category", "other")
            self._bump(e.get("category", "other"), e.get("bytes", 0))
        elif k == "free":
            cat = self._cat_of.pop(e.get("storage"), e.get("category", "other"))
            self._bump(cat, -e.get("bytes", 0))
        elif k == "category":
            self._bump(e.get("old", "other"), -e.get("bytes", 0))
            self._bump(e.get("new", "other"), e.get("bytes", 0))
            self._cat_of[e.get("storage")] = e.get("new")
        if k in _RESERVED_KINDS and isinstance(e.get("reserved"), int):
            self.has_reserved = True
            self._res_dev[e.get("device")] = e["reserved"]
            self._res = sum(self._res_dev.values())
        self.reserved.append(self._res)
        if self._snap is None:
            self._snap = tuple(self._cur)
        self.snaps.append(self._snap)
        tot = self._tot
        self.total.append(tot)
        if tot > self.peak_bytes or i == 0:
            self.peak_bytes, self.peak_index = tot, i
        if i == 0 or e.get("phase") != self.events[i - 1].get("phase"):
            self.phase_starts.append(i)
        if k == "mark":
            self.marks.append((i, e))
        if k in _ABOUT_NODES:
            self._node_event(i, e, k)

    def _node_event(self, i, e, k):
        if k == "op" and e.get("node"):
            n = e["node"]
            rec = NodeRec(n["id"], n.get("name", "?"), i, [tuple(x) for x in n.get("next", ())],
                          n.get("saved", ()), e.get("op"), e.get("inputs", ()), e.get("output"),
                          None, e.get("file"), e.get("line"), e.get("region"), n.get("attrs"),
                          recomputed=e.get("phase") == "recompute", last=i)
            self.nodes[rec.id] = rec
            for d_i, d in self._early_drops.pop(rec.id, ()):
                self._drop(rec, d_i, d)
            self._parent.setdefault(rec.id, rec.id)
            for nid, _, _ in rec.next:
                if nid is not None and nid in self.nodes and not self.nodes[nid].is_leaf:
                    self._union(rec.id, nid)
            self.node_events.append(i)
        elif k == "leaf":
            nid = e.get("node")
            if nid not in self.nodes:
                self.nodes[nid] = NodeRec(nid, e.get("name", "AccumulateGrad"), i, tensor=e.get("tensor"), last=i)
            self.node_events.append(i)
        elif k == "execute":
            rec = self.nodes.get(e.get("node"))
            if rec is not None:
                rec.executed.append(i)
                rec.last = i
            self.node_events.append(i)
        elif k == "accumulate":
            rec = self.nodes.get(e.get("node"))
            if rec is not None:
                rec.accumulated.append(i)
                rec.last = i
        elif k == "release":
            rec = self.nodes.get(e.get("node"))
            if rec is not None:
                rec.released.setdefault(e.get("name"), i)
                rec.last = i
        elif k == "checkpoint_drop":
            # a checkpoint intercepts a save while the op runs, so the drop comes before the op event
            rec = self.nodes.get(e.get("node"))
            if rec is None:
                self._early_drops.setdefault(e.get("node"), []).append((i, e))
            else:
                self._drop(rec, i, e)

    @staticmethod
    def _drop(rec, i, e):
        if rec.dropped is None:
            rec.dropped = i
        if not e.get("kept"):
            rec.dropped_bytes += e.get("bytes", 0) or 0
        rec.last = max(rec.last, i)

    def _find(self, a):
        p = self._parent
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def _union(self, a, b):
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)

    # ------------------------------------------------------------ queries

    def live_at(self, i: int) -> dict:
        """Live bytes per category after event i."""
        if not self.events:
            return {}
        snap = self.snaps[self.clamp(i)]
        return {c: snap[k] for k, c in enumerate(self.categories)}

    def live_of(self, cat: str, i: int) -> int:
        k = self._col.get(cat)
        return 0 if k is None else self.snaps[i][k]

    def clamp(self, i: int) -> int:
        return max(0, min(i, len(self.events) - 1))

    def next_node_event(self, i: int, direction: int) -> int:
        ne = self.node_events
        if direction > 0:
            j = bisect.bisect_right(ne, i)
            return ne[j] if j < len(ne) else i
        j = bisect.bisect_left(ne, i) - 1
        return ne[j] if j >= 0 else i

    def next_phase(self, i: int, direction: int) -> int:
        ps = self.phase_starts
        if direction > 0:
            j = bisect.bisect_right(ps, i)
            return ps[j] if j < len(ps) else self.clamp(len(self.events) - 1)
        j = bisect.bisect_left(ps, i) - 1
        return ps[j] if j >= 0 else 0

    def components(self) -> list:
        """[(first_created, last_activity, frozenset(node ids))] sorted by first_created."""
        if self._comp_cache is None:
            groups: dict = {}
            for nid, rec in self.nodes.items():
                if rec.is_leaf:
                    continue
                groups.setdefault(self._find(nid), set()).add(nid)
            comps = []
            for members in groups.values():
                leaves = {x for m in members for x, _, _ in self.nodes[m].next
                          if x is not None and x in self.nodes and self.nodes[x].is_leaf}
                allm = members | leaves
                first = min(self.nodes[m].created for m in members)
                # leaves (parameters) are shared by every iteration's graph: they do not keep old graphs alive
                last = max(self.nodes[m].last for m in members)
                comps.append((first, last, frozenset(allm)))
            # leaves never joined to an op node form their own tiny graphs
            used = {m for c in comps for m in c[2]}
            for nid, rec in self.nodes.items():
                if rec.is_leaf and nid not in used:
                    comps.append((rec.created, rec.last, frozenset([nid])))
            comps.sort(key=lambda c: c[0])
            self._comp_cache = (comps, [c[0] for c in comps])
        return self._comp_cache[0]

    def graph_at(self, i: int) -> frozenset:
        """Node ids of the graph(s) shown at step i (see the NOTE)."""
        comps = self.components()
        if not comps:
            return frozenset()
        firsts = self._comp_cache[1]
        j = bisect.bisect_right(firsts, i) - 1
        if j < 0:
            return frozenset()
        newest_first = comps[j][0]
        keep = set(comps[j][2])
        for first, last, members in comps[:j]:
            if last >= newest_first:
                keep |= members
        return frozenset(keep)

    def step_of(self, i: int):
        """(step number, mark event) of the lesson step owning event i, or None."""
        owner = None
        for idx, ev in self.marks:
            if idx <= i and ev.get("text") == "step":
                owner = (ev.get("step"), ev)
        return owner
