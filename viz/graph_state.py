"""The autograd graph as a trace describes it at one step: pure Python, no Graphviz.

``GraphState.at(events, step)`` replays ``events[0..step]`` and answers: which
grad_fn nodes exist, how they connect, which tensors each keeps for backward
(grouped by storage), which nodes backward has executed, which one runs now,
which saved tensors are already released, and what checkpointing dropped and
recomputed. The Graphviz renderer and the terminal app both draw from it.

NOTE [ Graph state rules ]
1. Nodes come from ``op`` events (their ``node`` field) and ``leaf`` events
   (AccumulateGrad). An edge ``next`` that names a node the trace never created
   (it was built before recording began) becomes a "missing" placeholder node.
2. A node is *pending* until backward reaches it, *current* from its ``execute``
   event until the next ``execute``/``accumulate``/``backward_end``, then
   *executed*. AccumulateGrad has no ``execute`` event: its ``accumulate`` event
   executes it.
3. A saved slot is *live* from its op event until a ``release`` event names it
   (node, name): then *released*. Inside a checkpoint region a slot whose value
   was packed by the checkpoint (``packed`` true) is *dropped*: forward did not
   keep it. The ``checkpoint_drop`` event before the op names its storage and
   bytes; with ``kept`` true (a parameter, the region's input) the storage
   stays alive anyway, so the slot is drawn as held, not dropped. A dropped slot
   is *recomputed* once the region's recompute ran, and *released* when its node
   has run (no ``release`` event names a slot a hook packed).
4. Storages, not tensors, hold memory: every slot names its storage, and slots
   that share one storage (views, aliases, an output saved twice) are drawn as
   one storage. A storage is *freed* once a ``free`` event names it.
5. A new graph starts at the first forward op that builds a node after a
   backward without ``retain_graph`` finished: the old graph is dead by then (its
   saved tensors were released) and a training loop would otherwise pile up
   every iteration's graph.
6. Ops recorded in phase "recompute" are matched to the forward nodes of the
   same checkpoint region in order (the k-th node rebuilt is the k-th node of
   the region); the matched forward node is marked *recomputed*. A recompute op
   that matches nothing is added as its own node, marked recomputed.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SavedSlot:
    """One tensor a node keeps for backward (``node._saved[name]``)."""
    node: int
    name: str
    storage: int | None
    bytes: int
    shape: list
    dtype: str
    is_output: bool = False
    packed: bool = False
    state: str = "live"          # live | released | dropped | recomputed
    dropped_storage: int | None = None   # the storage checkpointing did not keep (rule 3)


@dataclass
class GNode:
    """A grad_fn node (``kind`` "fn"), an AccumulateGrad (``"leaf"``) or a placeholder (``"missing"``)."""
    id: int
    name: str
    kind: str = "fn"
    op: str | None = None
    next: list = field(default_factory=list)       # [(node_id | None, input_nr)]
    saved: list = field(default_factory=list)      # [SavedSlot]
    output: dict | None = None                     # tensor_info of the op's output
    tensor: dict | None = None                     # tensor_info of a leaf
    file: str | None = None
    line: int | None = None
    region: int | None = None
    seq: int = -1
    state: str = "pending"                         # pending | current | executed
    recomputed: bool = False
    module: str | None = None                      # module path (op event field, or inferred)

    @property
    def label_name(self) -> str:
        if self.kind == "leaf":
            return (self.tensor or {}).get("name") or "the leaf tensor"
        return self.name


@dataclass
class GStorage:
    id: int
    bytes: int = 0
    category: str = "other"
    live: bool = True
    tensors: set = field(default_factory=set)
    slots: list = field(default_factory=list)      # [SavedSlot] that keep it


@dataclass
class Region:
    id: int
    nodes: list = field(default_factory=list)      # forward node ids, in order
    recompute_nodes: list = field(default_factory=list)
    dropped_bytes: int = 0                         # counted once per dropped storage
    recomputed: bool = False
    dropped_keys: set = field(default_factory=set)


class GraphState:
    """The graph at one step of a trace. Build with :meth:`at`."""

    def __init__(self):
        self.step = -1
        self.nodes: dict[int, GNode] = {}
        self.storages: dict[int, GStorage] = {}
        self.tensors: dict[int, dict] = {}
        self.regions: dict[int, Region] = {}
        self.roots: list[int] = []           # tensor ids backward started from
        self.current: int | None = None      # node executing now
        self.phase = "forward"
        self.in_backward = False
        self.iteration = 0                   # graphs started so far (NOTE rule 5)
        self.ops: list[dict] = []            # every op event of the current graph, nodes or not
        self._stale = False
        self._retain = False
        self._recompute_cursor: dict[int, int] = {}
        self._drops: dict = {}               # (node, name) -> checkpoint_drop event
        self._bw_depth = 0

    # ------------------------------------------------------------------ build
    @classmethod
    def at(cls, events, step: int | None = None) -> "GraphState":
        """Replay ``events`` (a Trace or list of dicts) through index ``step`` (inclusive; None = all)."""
        evs = events.events if hasattr(events, "events") else events
        n = len(evs) if step is None else max(-1, min(step, len(evs) - 1)) + 1
        g = cls()
        for i in range(n):
            g.apply(evs[i])
            g.step = i
        return g

    def apply(self, e: dict) -> None:
        kind = e.get("kind")
        self.phase = e.get("phase", self.phase)
        handler = getattr(self, "_on_" + str(kind), None)
        if handler is not None:
            handler(e)

    def _tensor(self, info):
        if not isinstance(info, dict) or "id" not in info:
            return
        self.tensors[info["id"]] = info
        st = info.get("storage")
        if st is not None:
            s = self.storages.get(st)
            if s is None:
                s = self.storages[st] = GStorage(st, info.get("storage_bytes", 0))
            s.tensors.add(info["id"])

    def _storage(self, sid, nbytes=0, category=None) -> GStorage:
        s = self.storages.get(sid)
        if s is None:
            s = self.storages[sid] = GStorage(sid, nbytes)
        if nbytes:
            s.bytes = nbytes
        if category:
            s.category = category
        return s

    def _new_graph(self):
        self.iteration += 1
        self.nodes.clear()
        self.regions.clear()
        self.roots = []
        self.ops = []
        self.current = None
        self._recompute_cursor.clear()
        self._drops.clear()
        for s in self.storages.values():
            s.slots = []
        self._stale = False

    # ------------------------------------------------------------- handlers
    def _on_alloc(self, e):
        s = self._storage(e["storage"], e.get("bytes", 0), e.get("category"))
        s.live = True

    def _on_free(self, e):
        self._storage(e["storage"], e.get("bytes", 0), e.get("category")).live = False

    def _on_category(self, e):
        self._storage(e["storage"], e.get("bytes", 0), e.get("new"))

    def _on_leaf(self, e):
        self._tensor(e.get("tensor"))
        nid = e["node"]
        n = self.nodes.get(nid)
        if n is None or n.kind == "missing":
            self.nodes[nid] = GNode(nid, e.get("name", "AccumulateGrad"), kind="leaf",
                                    tensor=e.get("tensor"), seq=e.get("seq", -1))

    def _on_op(self, e):
        node = e.get("node")
        phase = e.get("phase", "forward")
        if node is not None and phase == "forward" and self._stale:
            self._new_graph()
        self.ops.append(e)
        for t in e.get("inputs") or []:
            self._tensor(t)
        self._tensor(e.get("output"))
        if node is None:
            return
        region = e.get("region")
        if phase == "recompute" and region is not None and self._match_recompute(e, node, region):
            return
        gn = GNode(node["id"], node["name"], op=e.get("op"), output=e.get("output"),
                   file=e.get("file"), line=e.get("line"), region=region, seq=e.get("seq", -1),
                   module=e.get("module"))
        gn.next = [(nx[0], nx[1]) for nx in node.get("next", [])]
        gn.recomputed = phase == "recompute"
        for nx in node.get("next", []):
            if nx[0] is not None and nx[0] not in self.nodes:
                self.nodes[nx[0]] = GNode(nx[0], nx[2] or "?", kind="missing")
        for sv in node.get("saved", []):
            slot = SavedSlot(gn.id, sv["name"], sv.get("storage"), sv.get("bytes", 0), sv.get("shape", []),
                             sv.get("dtype", "?"), sv.get("is_output", False), sv.get("packed", False))
            if region is not None and slot.packed and phase != "recompute":
                drop = self._drops.pop((gn.id, slot.name), None)
                if drop is not None and drop.get("kept"):
                    slot.storage, slot.bytes = drop.get("storage"), drop.get("bytes", 0)
                else:
                    slot.state = "dropped"
                    if drop is not None:
                        slot.dropped_storage, slot.bytes = drop.get("storage"), drop.get("bytes", 0)
            gn.saved.append(slot)
            if slot.storage is not None and slot.state != "dropped":
                self._storage(slot.storage, slot.bytes).slots.append(slot)
        self.nodes[gn.id] = gn
        if region is not None:
            r = self.regions.setdefault(region, Region(region))
            if phase == "recompute":
                r.recompute_nodes.append(gn.id)
                r.recomputed = True
            else:
                r.nodes.append(gn.id)
                for sl in gn.saved:
                    key = sl.dropped_storage if sl.dropped_storage is not None else (gn.id, sl.name)
                    if sl.state == "dropped" and key not in r.dropped_keys:
                        r.dropped_keys.add(key)
                        r.dropped_bytes += sl.bytes

    def _match_recompute(self, e, node, region) -> bool:
        r = self.regions.get(region)
        if r is None:
            return False
        k = self._recompute_cursor.get(region, 0)
        if k >= len(r.nodes):
            return False
        target = self.nodes.get(r.nodes[k])
        if target is None or target.name != node["name"]:
            return False
        self._recompute_cursor[region] = k + 1
        target.recomputed = True
        r.recomputed = True
        r.recompute_nodes.append(target.id)
        for sv in node.get("saved", []):
            self._tensor_slot_recomputed(target, sv)
        return True

    def _tensor_slot_recomputed(self, target: GNode, sv: dict):
        for slot in target.saved:
            if slot.name == sv["name"] and slot.state == "dropped":
                slot.state = "recomputed"
                if sv.get("storage") is not None:
                    slot.storage = sv["storage"]
                    self._storage(slot.storage, sv.get("bytes", 0)).slots.append(slot)
                return

    def _on_checkpoint_drop(self, e):
        self._drops[(e.get("node"), e.get("name"))] = e

    def _on_backward_begin(self, e):
        self._bw_depth += 1
        self.in_backward = True
        if self._bw_depth == 1:
            self._retain = bool(e.get("retain_graph"))
        for r in e.get("roots", []):
            if r not in self.roots:
                self.roots.append(r)

    def _finish_current(self):
        n = self.nodes.get(self.current) if self.current is not None else None
        if n is not None:
            n.state = "executed"
            if not self._retain:
                for sl in n.saved:
                    if sl.state == "recomputed" or (sl.state == "live" and sl.packed):
                        sl.state = "released"
        self.current = None

    def _on_execute(self, e):
        self._finish_current()
        n = self.nodes.get(e["node"])
        if n is None:
            n = self.nodes[e["node"]] = GNode(e["node"], e.get("name", "?"), kind="missing")
        n.state = "current"
        self.current = n.id

    def _on_accumulate(self, e):
        self._finish_current()
        n = self.nodes.get(e["node"])
        if n is not None:
            n.state = "executed"

    def _on_backward_end(self, e):
        self._finish_current()
        self._bw_depth = max(self._bw_depth - 1, 0)
        self.in_backward = self._bw_depth > 0
        if not self._retain and not self.in_backward and self.phase != "recompute":
            self._stale = True

    def _on_release(self, e):
        n = self.nodes.get(e["node"])
        if n is None:
            return
        for slot in n.saved:
            if slot.name == e.get("name") and slot.state in ("live", "recomputed"):
                slot.state = "released"
                return

    # --------------------------------------------------------------- queries
    def saved_by_storage(self) -> dict[int, list[SavedSlot]]:
        """Saved slots grouped by the storage that holds them (rule 4); dropped slots are left out."""
        out: dict[int, list] = {}
        for n in self.nodes.values():
            for s in n.saved:
                if s.storage is not None and s.state != "dropped":
                    out.setdefault(s.storage, []).append(s)
        return out

    def leaf_storages(self) -> dict[int, GNode]:
        """Storage id -> the leaf node whose tensor lives in it (so a saved parameter is drawn as that parameter)."""
        out = {}
        for n in self.nodes.values():
            if n.kind == "leaf" and n.tensor is not None and n.tensor.get("storage") is not None:
                out.setdefault(n.tensor["storage"], n)
        return out

    def output_nodes(self) -> list[GNode]:
        """Nodes whose output tensor backward started from, or (before backward) that nothing consumes."""
        if self.roots:
            outs = [n for n in self.nodes.values()
                    if n.kind == "fn" and n.output and n.output.get("id") in self.roots]
            if outs:
                return outs
        used = {nx for n in self.nodes.values() for nx, _ in n.next if nx is not None}
        return [n for n in self.nodes.values() if n.kind == "fn" and n.id not in used]

    def counts(self) -> dict:
        states = [n.state for n in self.nodes.values() if n.kind != "missing"]
        return {"nodes": len(states), "executed": states.count("executed"),
                "current": states.count("current"), "pending": states.count("pending")}


def default_step(events) -> int | None:
    """The step pictures show by default: just before the first backward starts, else the end."""
    evs = events.events if hasattr(events, "events") else events
    for i, e in enumerate(evs):
        if e.get("kind") == "backward_begin":
            return max(i - 1, 0)
    return len(evs) - 1 if evs else None


def phase_step(events, phase: str) -> int:
    """The last event of the first span of ``phase`` (forward / backward / recompute / optimizer)."""
    evs = events.events if hasattr(events, "events") else events
    last = None
    for i, e in enumerate(evs):
        if e.get("phase") == phase:
            last = i
        elif last is not None:
            break
    if last is None:
        raise ValueError(f"the trace has no events in phase {phase!r}")
    return last
