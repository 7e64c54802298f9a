"""The records a TraceModel keeps: graph nodes, their saved slots, checkpoint regions, graphs and views.

Each record holds what the trace said about it plus the event indices of what happened
to it later; its state at a step is a comparison of those indices with the step
(NOTE [ One trace model ] in replay/model.py).
"""
from __future__ import annotations

from array import array

INF = float("inf")


class Slot:
    """One tensor a node keeps for backward (``node._saved[name]``), with the events that change it."""

    __slots__ = ("node", "name", "storage", "bytes", "shape", "dtype", "is_output", "packed", "dropped",
                 "dropped_storage", "recomputed_at", "recomputed_storage", "released_at")

    def __init__(self, node, info: dict):
        self.node = node
        self.name = info.get("name")
        self.storage = info.get("storage")
        self.bytes = info.get("bytes", 0) or 0
        self.shape = info.get("shape", [])
        self.dtype = info.get("dtype", "?")
        self.is_output = bool(info.get("is_output", False))
        self.packed = bool(info.get("packed", False))
        self.dropped = False                 # checkpointing did not keep it in forward
        self.dropped_storage = None          # the storage it did not keep
        self.recomputed_at = None            # event index where the region's recompute restored it
        self.recomputed_storage = None
        self.released_at = None              # event index where it was released

    def state(self, i: int) -> str:
        """live | released | dropped | recomputed at step i."""
        if self.released_at is not None and self.released_at <= i:
            return "released"
        if self.dropped:
            return "recomputed" if self.recomputed_at is not None and self.recomputed_at <= i else "dropped"
        return "live"

    def storage_at(self, i: int):
        """The storage holding it at step i (the recomputed one once the recompute ran)."""
        if self.recomputed_at is not None and self.recomputed_at <= i and self.recomputed_storage is not None:
            return self.recomputed_storage
        return self.storage


class Node:
    """A graph node as the trace tells it: what its op event said and the event indices of what happened to it."""

    __slots__ = ("id", "name", "kind", "created", "seq", "op", "inputs", "output", "tensor", "file", "line",
                 "region", "module", "attrs", "next", "saved", "recomputed_at", "runs", "about", "dropped_at",
                 "dropped_bytes", "first_namer", "mortal", "died", "joins", "freed_at", "op_at", "leaf_at")

    def __init__(self, id, name: str, kind: str, created: int, seq: int):
        self.id = id
        self.name = name
        self.kind = kind                     # fn | leaf (AccumulateGrad) | missing (built before recording)
        self.created = created               # event index where it appeared
        self.seq = seq
        self.op = None
        self.inputs = ()                     # tensor_info of the op's inputs
        self.output = None                   # tensor_info of its output (the gradient flowing in has its shape)
        self.tensor = None                   # an AccumulateGrad's leaf tensor
        self.file = self.line = self.region = self.module = None
        self.attrs = {}
        self.next = []                       # [(node id | None, input_nr, name)]
        self.saved = []                      # [Slot]
        self.recomputed_at = None            # event index from which it counts as recomputed
        self.runs = []                       # event indices of its execute (or accumulate) events
        self.about = [created]               # event indices of every event about it
        self.dropped_at = None               # first checkpoint_drop event about it
        self.dropped_bytes = 0               # bytes those drops really freed (kept ones are alive anyway)
        self.first_namer = None              # a leaf: the first op that named it
        self.mortal = False                  # its output has a storage of its own (rule 7)
        self.died = None                     # event index where that storage was freed
        self.joins = []                      # a leaf: where it joined each graph (sorted)
        self.freed_at = None                 # its node_free event: the object (and what it saved) is gone
        self.op_at = self.leaf_at = None     # the op event it was last filled from, its last leaf event

    def fill(self, e: dict, info: dict, recomputed_at) -> None:
        """Take what an ``op`` event says about the node."""
        self.op, self.inputs, self.output = e.get("op"), e.get("inputs") or (), e.get("output")
        self.file, self.line, self.region, self.module = e.get("file"), e.get("line"), e.get("region"), e.get("module")
        self.attrs = info.get("attrs") or {}
        self.next = [tuple(x) for x in info.get("next", ())]
        self.recomputed_at = recomputed_at

    @property
    def is_leaf(self) -> bool:
        """An AccumulateGrad (a placeholder one too): shared by graphs, never joining them."""
        return self.kind == "leaf" or (self.kind == "missing" and self.name == "AccumulateGrad")

    @property
    def executed(self) -> list:
        return self.runs

    def saved_bytes(self) -> int:
        return sum(s.bytes for s in self.saved)

    def event_indices(self) -> list:
        """Every event index known to be about this node, in order."""
        return sorted(set(self.about))

    def dropped_by(self, i: int, e: dict) -> None:
        """A ``checkpoint_drop`` event named this node."""
        if self.dropped_at is None:
            self.dropped_at = i
        if not e.get("kept"):
            self.dropped_bytes += e.get("bytes", 0) or 0
        self.about.append(i)


class Region:
    """A checkpoint region: its forward nodes in order, what it dropped and when it was recomputed."""

    __slots__ = ("id", "nodes", "recompute", "drops", "_keys")

    def __init__(self, id):
        self.id = id
        self.nodes = []                      # forward node ids, in order
        self.recompute = []                  # (event index, node id) rebuilt by its recompute
        self.drops = []                      # (event index, bytes) per dropped storage, counted once
        self._keys = set()

    def add(self, i: int, node: Node, recompute: bool) -> None:
        if recompute:
            self.recompute.append((i, node.id))
            return
        self.nodes.append(node.id)
        for sl in node.saved:
            key = sl.dropped_storage if sl.dropped_storage is not None else (node.id, sl.name)
            if sl.dropped and key not in self._keys:
                self._keys.add(key)
                self.drops.append((i, sl.bytes))


class Graph:
    """One graph (rule 6): when it starts, is spent or dies (rule 7), leaves the view (rule 8), and when
    each member joins it."""

    __slots__ = ("first", "spent", "died", "hide", "hide_kept", "_joins", "has_fn")

    def __init__(self, first, spent, died, joins, has_fn):
        self.first, self.spent, self.died, self.hide, self._joins, self.has_fn = first, spent, died, INF, joins, has_fn
        self.hide_kept = INF                 # where it leaves a view that keeps freed nodes (rule 9)

    @property
    def joins(self) -> dict:
        """Node id -> the event where it joined the graph."""
        j = self._joins
        if type(j) is dict:
            return j
        k = len(j) // 2
        return dict(zip(j[:k].tolist(), j[k:].tolist()))

    @joins.setter
    def joins(self, value: dict) -> None:
        self._joins = value

    def pack(self) -> None:
        """Hold ``joins`` as one array of ids, then events (a retired graph's, rule 13), when they fit."""
        j = self._joins
        if type(j) is dict:
            for code in "iq":           # 32-bit figures when they fit
                try:
                    self._joins = array(code, [*j, *j.values()])
                    return
                except (TypeError, OverflowError):
                    pass

    @property
    def end(self):
        """Where PyTorch freed it (rule 7), or inf."""
        return min(self.spent, self.died)


class View:
    """What is shown at one step: node ids, the graphs, and since when each leaf counts (rule 6)."""

    __slots__ = ("step", "ids", "since", "graphs", "start")

    def __init__(self, step, ids, since, graphs):
        self.step, self.ids, self.since, self.graphs = step, ids, since, graphs
        self.start = min((g.first for g in graphs), default=step)
