"""TraceModel: a trace's events with per-event indices, so any step's graph and memory are a lookup.

``TraceModel(events, meta)`` (or ``TraceModel.from_trace(trace)``) folds each event in once
(``extend`` takes more as a running script streams them). It answers, for any step i (an
event index): which nodes the graph shows, each node's state, each saved tensor's state,
what checkpointing dropped and recomputed, and (``memory``) the live and reserved bytes.
The app's graph panel, the Graphviz pictures (through ``replay.graph``) and the lessons
all ask this one model, so they cannot disagree.

NOTE [ One trace model ]
1. Nodes: a grad_fn node exists from its ``op`` event (the ``node`` field), an AccumulateGrad
   from its ``leaf`` event. A node that an edge or an ``execute`` names but the trace never
   created (built before recording began) is a *missing* placeholder from the first event
   that names it.
2. A node is *future* before it exists, *pending* until backward runs it, *current* from
   its ``execute`` event (an AccumulateGrad: its ``accumulate`` event) until the next
   ``execute``, ``accumulate`` or ``backward_end``, then *executed*.
3. A saved slot is *live* from its op event until a ``release`` event names (node, name):
   then *released*. A slot a checkpoint packed inside its region is *dropped* (the
   ``checkpoint_drop`` event before the op names its storage and bytes) unless the drop
   says ``kept`` (a parameter, the region's input: alive anyway, so held). A dropped slot
   is *recomputed* once the region's recompute rebuilt its node, and *released* when its
   node has run in a backward without retain_graph; so is a live slot a hook packed (no
   ``release`` event names a slot a hook packed).
4. Ops recorded in phase "recompute" are matched to the forward nodes of the same
   checkpoint region in order (the k-th node rebuilt is the k-th node of the region, if
   their names agree); the forward node is *recomputed* from then on. A recompute op that
   matches nothing (reentrant checkpointing: forward ran without grad) is a node of its
   own, recomputed from its creation.
5. Storages, not tensors, hold memory: slots that name one storage (views, an output
   saved twice) are one storage, freed at its ``free`` event.
6. Graphs: grad_fn nodes joined by edges are one graph (a weakly connected component).
   AccumulateGrad nodes join nothing: PyTorch hands a leaf's one AccumulateGrad to every
   graph built while an older graph still holds it. A leaf belongs to each graph whose ops
   name it, from the first such op (from its own ``leaf`` event in the graph it was made
   for). Its state counts only the accumulates since it joined the oldest graph shown with
   it, so a new training iteration's leaves are pending again, not executed.
7. A graph starts at its first node. It ends when PyTorch frees it: when a backward
   without retain_graph that ran its nodes finishes (its saved tensors are released and
   PyTorch refuses a second backward), or when the last tensor it produced dies (the
   ``free`` of the storage of the last of its nodes' outputs; outputs that share an input's
   storage, views and in-place results, do not count).
8. The graph shown at step i is every graph started by i that has not left the view: a
   graph freed by backward leaves when the next graph starts after that backward (so the
   finished backward stays in view until new work begins); a graph whose last tensor died
   leaves at once if a newer graph has started, else when the next one starts. A retained
   graph stays while it lives, and the newest graph always shows (the end of a run keeps
   its last picture).
9. A node dies at its ``node_free`` event (NOTE [ Node death ] in engine/core/graph.py):
   its last reference is gone, and every saved slot it still held goes with it
   (*released* there). From then on the graph panel and the pictures leave it out (a
   graph whose grad_fn nodes all died has died, rule 7); asked to keep freed nodes
   (``keep_freed``), they show it greyed as *freed*, and a dead graph stays until the
   next graph starts after its death. A node of a graph spent by backward
   lives on while a tensor's ``grad_fn`` names it (its saved tensors are released).
10. Events arrive in order; each is folded in once (``extend``) and a query compares the
   stored indices with i (bisection, a few comparisons per node), never replaying events.
11. Text is made safe for a terminal as it is folded in: every string of every event and
   of ``meta`` goes through ``engine.trace.safe_value`` (NOTE [ Text from a trace ] in
   engine/trace_text.py), so ``events``, nodes, slots and marks hold only safe text. An
   event that needed no change is kept as the same object; ``from_trace`` skips the
   events ``Trace.load`` found plain (``trace.plain_events``, trace_text rule 5).
12. Graphs built when n events were folded in answer ``view(i)`` for i < n after more
   arrive, as graphs built again would (what rule 8 compares with such an i is at or before
   i, or else past it either way), unless a later edge joins two graphs built apart:
   ``_union`` drops them then. ``graphs()`` always builds them again (rule 13: the open ones).
13. A graph whose every grad_fn node is settled (NOTE [ Settled nodes ] in replay/node_table.py:
   freed, and its own output storage freed) is *retired* once no backward runs: no later event
   changes its ``first``, ``spent``, ``died`` or ``joins`` (its nodes run, join and die no more;
   an edge never names them), so its Graph is made then, kept, and its nodes packed. Each
   open graph keeps its members, how many are not settled yet and the first backward that
   spent it (``replay/graphs_build.py``), merged when an edge joins two. ``graphs()`` builds the
   open graphs and the leaves no op named, and works out ``hide``/``hide_kept`` of all (they
   depend on later starts) and the ``joins`` of the nodes open graphs name: O(open nodes + graphs).
"""
from __future__ import annotations

import bisect
from array import array

from engine.trace import safe_value

from . import graphs_build as gb
from .compact import compact
from .memory import Replay, reserved_start, start_of
from .node_table import NodeTable
from .nodes import INF, Node, Region, Slot, View

NODE_STATES = ("future", "pending", "current", "executed")
_NO_NODE = -(1 << 63)                     # ``_bound_node`` of a backward_end
SLOT_STATES = ("live", "released", "dropped", "recomputed")


class TraceModel:
    """A trace's events with the indices NOTE [ One trace model ] answers from; ``memory`` replays its bytes."""

    def __init__(self, events=None, meta=None, plain: int = 0):
        self.events: list = []
        self.meta: dict = dict(safe_value(dict(meta or {})))                # rule 11
        self.memory = Replay(start=start_of(self.meta), reserved=reserved_start(self.meta))
        self.nodes = NodeTable(self)      # NOTE [ Settled nodes ]: the fold reads ``nodes.live``
        self.node_events = array("q")     # indices of op (with a node), leaf and execute events
        self.phase_starts: list = []      # indices where the phase changes
        self.marks: list = []             # (index, event) of mark events
        self._phase = None
        self._bounds = array("q")         # indices of execute, accumulate and backward_end events (rule 2)
        self._bound_node = array("q")     # the node each of those runs (_NO_NODE for backward_end)
        self._depth: list = [(-1, 0)]     # (index, backward nesting depth after it)
        self._roots: list = []            # (index, root tensor ids) of backward_begin events
        self._retain = False              # retain_graph of the outermost backward running
        self._ran: set = set()            # nodes executed by the outermost backward running
        self._current = None              # the node running (its saved slots finish when it stops)
        self._regions: dict = {}
        self._cursor: dict = {}           # region -> forward nodes matched by its recompute so far (rule 4)
        self._drops: dict = {}            # node id -> [(index, checkpoint_drop event)] before its op event
        self._outputs: dict = {}          # storage -> ids of nodes whose output it holds (rule 7)
        self._parent: dict = {}           # union-find over the open graphs' nodes (rule 6)
        self._members: dict = {}          # rule 13: root -> ids, open members, first spend, of each open graph
        self._open: dict = {}
        self._spent_at: dict = {}
        self._waiting: set = set()        # roots whose members all settled while a backward ran
        self._kept: list = []             # retired Graphs
        self._kept_joins: dict = {}       # leaf id -> where it joined retired graphs
        self._namers: dict = {}           # leaf id -> edges of open graphs' nodes naming it
        self._unnamed: dict = {}          # ids of leaves no op named yet (in order)
        self._pack = True                 # pack settled nodes (NOTE [ Settled nodes ])
        self._graphs = None
        self._graphs_n = self._graph_roots = None   # rule 12: events folded in, roots, when graphs were built
        self._firsts: list = []
        self._views: dict = {}
        self._storage_idx = None
        self.index = self.storages = None   # an opened trace's index and its storage lookup (replay/index.py)
        self._stream = not events           # folded in as a run streams it (NOTE [ A followed run's events ])
        self._node = Node                   # a followed run's nodes read their op event back (replay/index.py)
        if events:
            self.extend(events, plain)

    @classmethod
    def from_trace(cls, trace) -> "TraceModel":
        """The model of a Trace; of one ``Trace.open`` read through its index, from the index's columns
        (NOTE [ A model from an index ] in replay/index.py)."""
        if getattr(trace, "index", None) is not None and cls is TraceModel:
            if getattr(trace, "model", None) is None:     # made once per opened trace (it is never extended)
                trace.model = cls._of_opened(trace)
            return trace.model
        return cls(list(trace.events), getattr(trace, "meta", None), getattr(trace, "plain_events", 0))

    @classmethod
    def followed(cls, path, meta=None) -> TraceModel:
        """An empty model of the trace a running script is writing at ``path`` (NOTE [ A followed run ]),
        whose header's ``meta`` is known or not yet."""
        from .index import follow

        m = cls(None, meta)
        follow(m, path)
        return m

    @classmethod
    def _of_opened(cls, trace) -> TraceModel:
        """The saved model of an opened trace (NOTE [ A saved model ]), else its fold, saved for next time."""
        from . import model_cache
        from .index import begin, fold

        m = cls(None, trace.meta)
        begin(m, trace, memory=False)
        if model_cache.load(m, trace):
            return m
        m = cls(None, trace.meta)
        m._pack = False                   # saved at once: its nodes stay made
        begin(m, trace)
        fold(m, trace, _HANDLERS)
        path = model_cache.path_of(trace.index)
        if path is not None:
            model_cache.save(m, path)
        return m

    def __len__(self):
        return len(self.events)

    # ------------------------------------------------------------------ building

    def extend(self, events, plain: int = 0) -> None:
        """Fold in ``events``; the first ``plain`` of them are known to hold only safe text (rule 11)."""
        if self.index is not None:
            raise TypeError("a model of an opened trace file holds the whole file; fold a stream into a TraceModel")
        lines = (getattr(events, "start", None), getattr(events, "ends", None))
        events = list(events)
        events[plain:] = [safe_value(e) for e in events[plain:]]
        if self._stream:
            events = [compact(e) for e in events]
        start = len(self.events)
        if isinstance(self.events, list):
            self.events.extend(events)
        else:                   # a followed run keeps offsets, not events (NOTE [ A followed run ] in replay/index.py)
            self.events.add(*lines, events)
        self.memory.extend(events)
        handlers, phase, starts = _HANDLERS, self._phase, self.phase_starts
        for i, e in enumerate(events, start):
            if e.get("phase") != phase or i == 0:
                phase = e.get("phase")
                starts.append(i)
            handler = handlers.get(e.get("kind"))
            if handler is not None:
                handler(self, i, e)
        self._phase = phase
        if self._graphs is None:
            self._graphs_n = None
        elif self._graphs_n is None:
            self._graphs_n = start        # rule 12: they still answer views before ``start``
        self._views, self._storage_idx = {}, None

    def _on_mark(self, i, e):
        self.marks.append((i, e))

    def _placeholder(self, nid, name, i, seq) -> Node:
        n = self.nodes.live[nid] = self._node(nid, name or "?", "missing", i, seq)
        if not n.is_leaf:
            gb.join(self, nid)
        else:
            self._unnamed[nid] = None
        return n

    def _on_op(self, i, e):
        info = e.get("node")
        if not info:
            return
        self.node_events.append(i)
        phase, region = e.get("phase", "forward"), e.get("region")
        if phase == "recompute" and region is not None and self._match_recompute(i, info, region):
            return
        live = self.nodes.live
        n = live.get(info["id"])
        if n is None or n.kind == "missing":
            n = self._node(info["id"], info.get("name", "?"), "fn", i if n is None else n.created, e.get("seq", i))
            live[n.id] = n
        elif n.id in self._parent:
            gb.named(self, n, -1)         # filled again: its old edges name leaves no more
        n.fill(e, info, i if phase == "recompute" else None)
        n.op_at = i
        if n.id not in self._parent:
            gb.join(self, n.id)
        n.saved = [self._slot(n, sv, region, phase) for sv in info.get("saved", ())]
        for j, d in self._drops.pop(n.id, ()):
            n.dropped_by(j, d)
        for nid, _, name in n.next:
            if nid is None:
                continue
            child = live.get(nid) or self._placeholder(nid, name, i, e.get("seq", i))
            if not child.is_leaf:
                self._union(n.id, nid)
            else:
                self._unnamed.pop(nid, None)
                if child.first_namer is None:
                    child.first_namer = n.id
        gb.named(self, n, 1)
        out = e.get("output") or {}
        ins = {t.get("storage") for t in e.get("inputs") or () if isinstance(t, dict)}
        if out.get("storage") is not None and out["storage"] not in ins:
            self._outputs.setdefault(out["storage"], []).append(n.id)
            n.mortal = True
        if region is not None:
            self._regions.setdefault(region, Region(region)).add(i, n, phase == "recompute")

    def _slot(self, n, sv, region, phase) -> Slot:
        slot = Slot(n.id, sv)
        if region is not None and slot.packed and phase != "recompute":
            drop = {d.get("name"): d for _, d in self._drops.get(n.id, ())}.get(slot.name)
            if drop is not None and drop.get("kept"):
                slot.storage, slot.bytes = drop.get("storage"), drop.get("bytes", 0)
            else:
                slot.dropped = True
                if drop is not None:
                    slot.dropped_storage, slot.bytes = drop.get("storage"), drop.get("bytes", 0)
        return slot

    def _match_recompute(self, i, info, region) -> bool:
        """Rule 4: the recompute op rebuilt the next forward node of its region, if the names agree."""
        reg = self._regions.get(region)
        k = self._cursor.get(region, 0)
        if reg is None or k >= len(reg.nodes):
            return False
        target = self.nodes.live.get(reg.nodes[k])
        if target is None or target.name != info.get("name"):
            return False
        self._cursor[region] = k + 1
        if target.recomputed_at is None:
            target.recomputed_at = i
        target.about.append(i)
        reg.recompute.append((i, target.id))
        for sv in info.get("saved", ()):
            for slot in target.saved:
                if slot.name == sv.get("name") and slot.dropped and slot.recomputed_at is None:
                    slot.recomputed_at, slot.recomputed_storage = i, sv.get("storage")
                    break
        return True

    def _on_leaf(self, i, e):
        self.node_events.append(i)
        nid = e.get("node")
        live = self.nodes.live
        n = live.get(nid)
        if n is None:
            self._unnamed[nid] = None
        if n is None or n.kind == "missing":
            n = live[nid] = self._node(nid, e.get("name", "AccumulateGrad"), "leaf",
                                       i if n is None else n.created, e.get("seq", i))
        n.tensor = e.get("tensor")
        n.leaf_at = i
        n.about.append(i)

    def _run(self, i, nid):
        self._bounds.append(i)
        try:
            self._bound_node.append(_NO_NODE if nid is None else nid)
        except (TypeError, OverflowError):       # an id that is no 64-bit int
            self._bound_node = [None if x == _NO_NODE else x for x in self._bound_node] + [nid]
        self._current = nid

    def _on_execute(self, i, e):
        self._finish(i)
        self.node_events.append(i)
        n = self.nodes.live.get(e.get("node")) or self._placeholder(e.get("node"), e.get("name"), i, e.get("seq", i))
        n.runs.append(i)
        n.about.append(i)
        self._ran.add(n.id)
        self._run(i, n.id)

    def _on_accumulate(self, i, e):
        self._finish(i)
        n = self.nodes.live.get(e.get("node"))
        if n is not None:
            n.runs.append(i)
            n.about.append(i)
        self._run(i, n.id if n is not None else None)

    def _on_release(self, i, e):
        n = self.nodes.live.get(e.get("node"))
        if n is None:
            return
        n.about.append(i)
        for slot in n.saved:
            if slot.name == e.get("name") and slot.released_at is None and slot.state(i) in ("live", "recomputed"):
                slot.released_at = i
                return

    def _on_drop(self, i, e):
        nid = e.get("node")
        if nid is None:
            return
        if nid in self.nodes.live:
            self.nodes.live[nid].dropped_by(i, e)
        else:     # a checkpoint packs a saved tensor while its op runs: the drop comes before the op event
            self._drops.setdefault(nid, []).append((i, e))

    def _finish(self, i):
        """The running node stopped (rule 3): without retain_graph its recomputed and hook-packed slots go."""
        nid, self._current = self._current, None
        n = self.nodes.live.get(nid) if nid is not None else None
        if n is None or self._retain:
            return
        for slot in n.saved:
            if slot.released_at is None:
                st = slot.state(i)
                if st == "recomputed" or (st == "live" and slot.packed):
                    slot.released_at = i

    def _on_backward_begin(self, i, e):
        depth = self._depth[-1][1] + 1
        if depth == 1:
            self._retain, self._ran = bool(e.get("retain_graph")), set()
        self._depth.append((i, depth))
        self._roots.append((i, list(e.get("roots") or ())))

    def _on_backward_end(self, i, e):
        self._finish(i)
        self._run(i, None)
        depth = max(self._depth[-1][1] - 1, 0)
        self._depth.append((i, depth))
        if depth == 0 and not self._retain and e.get("phase") != "recompute":
            gb.spend(self, i, self._ran)
        if depth == 0 and self._waiting:
            gb.retire_waiting(self)

    def _on_free(self, i, e):
        live = self.nodes.live
        for nid in self._outputs.pop(e.get("storage"), ()):
            n = live.get(nid)
            if n is None:
                continue          # settled and packed already (an output named twice)
            was = gb.settled(n)
            n.died = i
            gb.settling(self, n, was)

    def _on_node_free(self, i, e):
        n = self.nodes.live.get(e.get("node"))
        if n is None or n.freed_at is not None:
            return      # a recompute's own node (rule 4), or one made before recording
        n.freed_at = i
        n.about.append(i)
        for slot in n.saved:
            if slot.released_at is None:
                slot.released_at = i
        gb.settling(self, n, False)

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
            gb.merged(self, min(ra, rb), max(ra, rb))
            built = self._graph_roots
            if built is not None and (ra in built or rb in built):      # rule 12
                if ra in built and rb in built:
                    self._graphs = self._graph_roots = None      # two graphs built apart are one
                else:
                    built.add(min(ra, rb))

    # ------------------------------------------------------------------ graphs (rules 6-8)

    def graphs(self) -> list:
        """Every graph of the trace, by start (rules 6-7); ``hide`` is where a newer graph replaces it."""
        if self._graphs is None or self._graphs_n is not None:
            self._graphs, self._graphs_n = gb.build(self), None        # rule 13
        return self._graphs

    def view(self, i: int, keep_freed: bool = False) -> View:
        """What the graph panel and the picture show at step i (rule 8), dead nodes left out unless
        ``keep_freed`` (rule 9)."""
        v = self._views.get((i, keep_freed))
        if v is not None:
            return v
        gs = self._graphs
        if gs is None or (self._graphs_n is not None and i >= self._graphs_n):     # rule 12
            gs = self.graphs()
        k = bisect.bisect_right(self._firsts, i)
        shown = [g for g in gs[:k] if (g.hide_kept if keep_freed else g.hide) > i]
        ids, since = set(), {}
        freed_at = self.nodes.freed_at
        for g in shown:
            for nid, j in g.joins.items():
                if j <= i:
                    if nid not in since or j < since[nid]:
                        since[nid] = j
                    f = freed_at(nid)
                    if f is None or f > i or keep_freed:
                        ids.add(nid)
        v = View(i, frozenset(ids), since, shown)
        if len(self._views) > 8:
            self._views.clear()
        self._views[(i, keep_freed)] = v
        return v

    def shown(self, i: int, keep_freed: bool = False) -> frozenset:
        """Ids of the nodes the graph shows at step i (rule 9: the living ones, unless ``keep_freed``)."""
        return self.view(i, keep_freed).ids

    def freed(self, nid, i: int) -> bool:
        """Whether the node object died by step i (rule 9)."""
        f = self.nodes.freed_at(nid)
        return f is not None and f <= i

    def iteration(self, i: int) -> int:
        """How many graphs started before the newest one started by step i."""
        return max(0, sum(1 for g in self.graphs() if g.has_fn and g.first <= i) - 1)

    # ------------------------------------------------------------------ states at step i

    def since(self, nid, i: int) -> int:
        """From which event a node's runs count at step i (rule 6: a leaf's join, else its creation)."""
        n = self.nodes[nid]
        j = self.view(i).since.get(nid)
        if j is None and n.is_leaf:
            self.graphs()
            k = bisect.bisect_right(n.joins, i) - 1
            j = n.joins[k] if k >= 0 else None
        return n.created if j is None else j

    def state(self, nid, i: int) -> str:
        """future | pending | current | executed (rule 2)."""
        n = self.nodes[nid]
        if n.created > i:
            return "future"
        k = bisect.bisect_right(n.runs, i) - 1
        if k < 0 or n.runs[k] < self.since(nid, i):
            return "pending"
        b = bisect.bisect_right(self._bounds, i) - 1
        return "current" if b >= 0 and self._bounds[b] == n.runs[k] else "executed"

    def saved_state(self, nid, i: int) -> str:
        """A node's saved tensors in one word: none | dropped | released | recomputed | packed | kept."""
        n = self.nodes[nid]
        states = [s.state(i) for s in n.saved]
        if not states:
            return "none"
        for word in ("dropped", "released", "recomputed"):
            if word in states:
                return word
        return "packed" if any(s.packed for s in n.saved) else "kept"

    def recomputed(self, nid, i: int) -> bool:
        """Whether checkpointing has rebuilt the node by step i (rule 4)."""
        at = self.nodes[nid].recomputed_at
        return at is not None and at <= i

    def current(self, i: int):
        """The node running at step i, or None."""
        b = bisect.bisect_right(self._bounds, i) - 1
        nid = self._bound_node[b] if b >= 0 else None
        return None if nid == _NO_NODE else nid

    def in_backward(self, i: int) -> bool:
        k = bisect.bisect_right(self._depth, (i, INF)) - 1
        return self._depth[k][1] > 0

    def roots(self, lo: int, hi: int) -> list:
        """Tensor ids backward started from in events lo..hi."""
        out = []
        for j, rs in self._roots:
            if lo <= j <= hi:
                out.extend(r for r in rs if r not in out)
        return out

    def regions(self) -> dict:
        """Checkpoint region id -> Region (its forward nodes, drops and recompute)."""
        return self._regions

    def storage_at(self, sid, i: int):
        """(bytes, category, live) of a storage after event i from its memory events, or None before any."""
        if self.storages is not None:
            return self.storages.at(sid, i)
        if self._storage_idx is None:
            idx: dict = {}
            for j, e in enumerate(self.events):
                if e.get("kind") in ("alloc", "free", "category"):
                    idx.setdefault(e.get("storage"), []).append(j)
            self._storage_idx = idx
        js = self._storage_idx.get(sid)
        k = bisect.bisect_right(js, i) - 1 if js else -1
        if k < 0:
            return None
        e = self.events[js[k]]
        cat = e.get("new") if e.get("kind") == "category" else e.get("category")
        return e.get("bytes", 0), cat or "other", e.get("kind") != "free"

    # ------------------------------------------------------------------ moving around

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

    def step_of(self, i: int):
        """(step number, mark event) of the lesson step owning event i, or None."""
        owner = None
        for idx, ev in self.marks:
            if idx <= i and ev.get("text") == "step":
                owner = (ev.get("step"), ev)
        return owner


_HANDLERS = {
    "mark": TraceModel._on_mark,
    "op": TraceModel._on_op,
    "leaf": TraceModel._on_leaf,
    "execute": TraceModel._on_execute,
    "accumulate": TraceModel._on_accumulate,
    "release": TraceModel._on_release,
    "checkpoint_drop": TraceModel._on_drop,
    "backward_begin": TraceModel._on_backward_begin,
    "backward_end": TraceModel._on_backward_end,
    "free": TraceModel._on_free,
    "node_free": TraceModel._on_node_free,
}
