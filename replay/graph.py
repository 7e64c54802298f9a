"""The autograd graph at one step, ready to draw: ``graph_at(model, i)``.

A :class:`Graph` holds the nodes a :class:`~replay.model.TraceModel` shows at step i
(NOTE [ One trace model ] rule 8) with their states, each node's saved slots, the
storages those slots keep (slots sharing a storage are one storage), the checkpoint
regions, the node running and the tensors backward started from. The Graphviz picture
draws it; ``make_dot`` fills one from a live graph. It is a plain copy: a drawer may
annotate it (``module``) without touching the model.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SavedSlot:
    """One tensor a node keeps for backward (``node._saved[name]``) at the step."""
    node: int
    name: str
    storage: int | None
    bytes: int
    shape: list
    dtype: str
    is_output: bool = False
    packed: bool = False
    state: str = "live"                  # live | released | dropped | recomputed
    dropped_storage: int | None = None   # the storage checkpointing did not keep


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
    freed: bool = False                            # the node object died (shown only with keep_freed)

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
    slots: list = field(default_factory=list)      # [SavedSlot] that keep it


@dataclass
class GRegion:
    id: int
    nodes: list = field(default_factory=list)      # forward node ids shown, in order
    recompute_nodes: list = field(default_factory=list)
    dropped_bytes: int = 0                         # counted once per dropped storage
    recomputed: bool = False


@dataclass
class Graph:
    """The graph at one step. Build with :func:`graph_at`."""
    step: int = -1
    nodes: dict = field(default_factory=dict)      # id -> GNode
    storages: dict = field(default_factory=dict)   # id -> GStorage
    regions: dict = field(default_factory=dict)    # id -> GRegion
    roots: list = field(default_factory=list)      # tensor ids backward started from
    current: int | None = None                     # the node running now
    phase: str = "forward"
    in_backward: bool = False
    iteration: int = 0                             # graphs started before the newest one

    def saved_by_storage(self) -> dict:
        """Saved slots grouped by the storage that holds them; dropped slots are left out."""
        out: dict = {}
        for n in self.nodes.values():
            for s in n.saved:
                if s.storage is not None and s.state != "dropped":
                    out.setdefault(s.storage, []).append(s)
        return out

    def leaf_storages(self) -> dict:
        """Storage id -> the leaf node whose tensor lives in it (a saved parameter is drawn as that parameter)."""
        out = {}
        for n in self.nodes.values():
            if n.kind == "leaf" and n.tensor is not None and n.tensor.get("storage") is not None:
                out.setdefault(n.tensor["storage"], n)
        return out

    def output_nodes(self) -> list:
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


def _node(model, nid, i) -> GNode:
    n = model.nodes[nid]
    g = GNode(n.id, n.name, n.kind, n.op, [(x[0], x[1]) for x in n.next], [], n.output, n.tensor, n.file,
              n.line, n.region, n.seq, model.state(nid, i), model.recomputed(nid, i), n.module,
              model.freed(nid, i))
    g.saved = [SavedSlot(n.id, s.name, s.storage_at(i), s.bytes, s.shape, s.dtype, s.is_output, s.packed,
                         s.state(i), s.dropped_storage) for s in n.saved]
    return g


def _region(reg, shown, i) -> GRegion:
    rec = [nid for j, nid in reg.recompute if j <= i]
    return GRegion(reg.id, [nid for nid in reg.nodes if nid in shown], rec,
                   sum(b for j, b in reg.drops if j <= i), bool(rec))


def graph_at(model, i: int | None = None, keep_freed: bool = False) -> Graph:
    """The graph a TraceModel shows at step i (None: the last event; -1: before any); nodes whose
    object died are left out unless ``keep_freed`` (NOTE [ One trace model ] rule 9)."""
    i = len(model) - 1 if i is None else i
    g = Graph(step=i)
    if i < 0 or not len(model):
        return g
    v = model.view(i, keep_freed)
    for nid in sorted(v.ids, key=lambda x: (model.nodes[x].seq, x)):
        g.nodes[nid] = node = _node(model, nid, i)
        for s in node.saved:
            if s.storage is not None and s.state != "dropped":
                st = g.storages.get(s.storage)
                if st is None:
                    known = model.storage_at(s.storage, i)
                    st = g.storages[s.storage] = (GStorage(s.storage, *known) if known
                                                  else GStorage(s.storage, s.bytes))
                st.slots.append(s)
    regions = model.regions()
    for rid in sorted({n.region for n in g.nodes.values() if n.region is not None}):
        if rid in regions:
            g.regions[rid] = _region(regions[rid], g.nodes, i)
    g.roots = model.roots(v.start, i)
    g.current = model.current(i)
    g.phase = model.events[i].get("phase", "forward")
    g.in_backward = model.in_backward(i)
    g.iteration = model.iteration(i)
    return g


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
