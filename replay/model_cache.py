"""The folded model of an opened trace, saved beside its index so the next open skips the fold.

NOTE [ A saved model ]
1. Once the model of an opened trace is folded (NOTE [ A model from an index ] in
   replay/index.py) and its graphs are built, what it learned is saved as
   ``<trace>.ggmodel.npz`` beside the index: per node, its name, kind, creation, the op
   and leaf events that filled it, and the event indices of NOTE [ One trace model ]
   (runs, mentions, joins, drops, death), per saved slot its storages and event indices,
   per graph its bounds and joins, the model's own lists (node events, runs, backward
   depth and roots, marks, checkpoint regions) and its memory replay's arrays.
2. The next open reads these arrays instead of folding. A node's record (``Node`` with its
   ``Slot``s) is made when it is first asked for, from its arrays and its op event's line,
   so opening makes none of them: ``nodes`` is a mapping over the saved ids.
3. A saved model is trusted only when it names the same trace as the index (the index's
   fingerprint, NOTE [ Trace index ] rule 3) and this version; it is read with
   ``numpy.load(allow_pickle=False)`` and a JSON header. Anything missing or inconsistent
   and the model is folded again and saved anew, with a note in ``trace.notes``.
4. Reading a model for its arrays takes Python work per node (half a second at 150,000
   events), so an app saves it a slice at a time (``save_steps``: :data:`SLICE` nodes, or the
   arrays made of them, between yields) on its own timer, and writes the file on a thread: a run
   that just ended, or a first open that just settled, answers keys meanwhile. An app that
   quits first finishes the save then (tui/model_saver.py).
"""
from __future__ import annotations

import json
import os
from array import array
from collections.abc import Mapping

import numpy as np

from engine.trace_index import write_npz

from .memory import Replay, reserved_start, start_of
from .nodes import INF, Graph, Node, Region, Slot

VERSION = 2
SUFFIX = ".ggmodel.npz"
_NONE = -1
_KINDS = ("fn", "leaf", "missing")
_NODE = ("id", "kind", "name", "created", "seq", "op_at", "leaf_at", "recomputed_at", "dropped_at", "dropped_bytes",
         "first_namer", "mortal", "died", "freed_at")
_SLOT = ("storage", "bytes", "dropped", "dropped_storage", "recomputed_at", "recomputed_storage", "released_at")
_LISTS = ("runs", "about", "joins", "slots")
_GRAPH = ("first", "spent", "died", "hide", "hide_kept", "has_fn")


def path_of(idx) -> str | None:
    """Where the model of the trace indexed by ``idx`` is saved (beside its index), or None."""
    at = getattr(idx, "stored_at", None)
    return None if at is None else at[: -len(".ggidx.npz")] + SUFFIX if at.endswith(".ggidx.npz") else None


def save_beside(model, idx) -> bool:
    """Save ``model`` beside its index ``idx`` (a followed run or a first open that settled on its new
    index: the next open reads it); whether it was written."""
    at = path_of(idx)
    return at is not None and save(model, at)


def _o(x):
    return _NONE if x is None else x


def _b(x):
    return None if x == _NONE else x


def save(model, path: str) -> bool:
    """Write the folded ``model`` to ``path`` (rule 1); whether it was written (a model whose values do
    not fit the arrays, an id past int64 or a region id JSON cannot hold, is simply not saved)."""
    steps = save_steps(model, path)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def save_steps(model, path: str, write=None):
    """``save`` a slice at a time (rule 4): a generator that yields between slices of the model's
    reading and returns whether it was written. ``write(path, header, arrays)`` writes the file
    (``write_npz`` unless given: an app hands it to a thread)."""
    try:
        arrays, header = yield from _arrays(model)
        json.dumps(header)                              # a header JSON cannot hold raises before writing
        return (write or write_npz)(path, header, arrays)
    except (TypeError, ValueError, OverflowError):
        return False


SLICE = 100       # rule 4: nodes (or graphs) read between two yields
CHUNK = 20_000    # rule 4: list items made an array between two yields


def _arrays(model):
    gs = model.graphs()                # builds every node's joins too
    yield
    arrays = {}
    yield from _node_arrays(model, arrays)
    vocab = arrays.pop("names")
    yield from _graph_arrays(gs, arrays)
    arrays["node_events"] = np.asarray(model.node_events, dtype=np.int64)
    arrays["bounds"] = np.asarray(model._bounds, dtype=np.int64)
    bound = array("q")
    for k in range(0, len(model._bound_node), CHUNK):
        bound.extend(_o(x) for x in model._bound_node[k:k + CHUNK])
        yield
    arrays["bound_node"] = np.asarray(bound, dtype=np.int64)
    depth = array("q")
    for k in range(0, len(model._depth), CHUNK):
        depth.extend(v for pair in model._depth[k:k + CHUNK] for v in pair)
        yield
    arrays["depth"] = np.asarray(depth, dtype=np.int64).reshape(len(model._depth), 2)
    arrays["marks"] = np.asarray([i for i, _ in model.marks], dtype=np.int64)
    yield
    mem = model.memory
    arrays["m_snaps"], arrays["m_total"], arrays["m_reserved"] = (_array(mem.snaps), _array(mem.total),
                                                                  _array(mem.reserved))
    regions = [[r.id, r.nodes, [list(x) for x in r.recompute], [list(x) for x in r.drops],
                [list(k) if isinstance(k, tuple) else k for k in r._keys]] for r in model.regions().values()]
    header = {"version": VERSION, "mark": model.index.header["mark"], "events": len(model.index), "names": vocab,
              "roots": [[i, r] for i, r in model._roots], "regions": regions, "has_reserved": mem.has_reserved,
              "reserved_devices": sorted(mem.reserved_devices)}
    return arrays, header


def _node_arrays(model, arrays):
    """Rule 1's per-node and per-slot arrays into ``arrays`` (and the sorted names as ``"names"``),
    :data:`SLICE` nodes between yields."""
    records = getattr(model.nodes, "records", None)      # packed nodes as their figures (NOTE [ Settled nodes ])
    cols = {f: array("q") for f in _NODE if f not in ("kind", "name")}
    kinds, names, first = array("q"), array("q"), {}     # names numbered as first met, sorted below
    lists = {f: (array("q", [0]), array("q")) for f in ("runs", "about", "joins")}
    slots_ptr, slot_cols = array("q", [0]), {f: array("q") for f in _SLOT}
    nodes = records() if records is not None else (model.nodes[i] for i in list(model.nodes))
    for k, n in enumerate(nodes, 1):
        for f, col in cols.items():
            col.append(_o(getattr(n, f)))
        kinds.append(_KINDS.index(n.kind))
        names.append(first.setdefault(n.name, len(first)))
        for f in ("runs", "about", "joins"):
            ptr, flat = lists[f]
            flat.extend(getattr(n, f))
            ptr.append(len(flat))
        slots_ptr.append(slots_ptr[-1] + len(n.saved))
        for sl in n.saved:
            for f, col in slot_cols.items():
                col.append(_o(getattr(sl, f)))
        if k % SLICE == 0:
            yield
    vocab = sorted(first)
    rank = np.empty(len(first), dtype=np.int64)
    rank[[first[name] for name in vocab]] = np.arange(len(vocab))
    for f, col in cols.items():
        arrays["n_" + f] = np.asarray(col, dtype=np.int64).reshape(len(col))
    arrays["n_kind"] = np.asarray(kinds, dtype=np.int64).reshape(len(kinds))
    arrays["n_name"] = rank[np.asarray(names, dtype=np.int64)].reshape(len(names))
    for f, (ptr, flat) in lists.items():
        arrays[f + "_ptr"], arrays[f] = np.asarray(ptr, dtype=np.int64), np.asarray(flat, dtype=np.int64)
    arrays["slots_ptr"], arrays["slots"] = np.asarray(slots_ptr, dtype=np.int64), np.zeros(0, dtype=np.int64)
    for f, col in slot_cols.items():
        arrays["s_" + f] = np.asarray(col, dtype=np.int64).reshape(len(col))
    arrays["names"] = vocab
    yield


def _graph_arrays(gs, arrays):
    """The per-graph arrays of rule 1 into ``arrays``, :data:`SLICE` graphs between yields."""
    cols = {f: array("d") for f in _GRAPH}
    ptr, nodes, at = array("q", [0]), array("q"), array("q")
    for k, g in enumerate(gs, 1):
        for f, col in cols.items():
            col.append(getattr(g, f))
        nodes.extend(g.joins)
        at.extend(g.joins.values())
        ptr.append(len(nodes))
        if k % SLICE == 0:
            yield
    for f, col in cols.items():
        arrays["g_" + f] = np.asarray(col, dtype=np.float64).reshape(len(col))
    arrays["gj_ptr"], arrays["gj_node"], arrays["gj_at"] = (np.asarray(ptr, dtype=np.int64),
                                                             np.asarray(nodes, dtype=np.int64),
                                                             np.asarray(at, dtype=np.int64))
    yield


def _array(column):
    """A replay column as an int64 array: an index's column holds one (``.a``), a fold's is a list
    or an ``array('q')`` (a followed run's, NOTE [ A followed run ])."""
    a = getattr(column, "a", None)
    return a if a is not None else np.asarray(column, dtype=np.int64)


class BadModel(Exception):
    """A saved model this glassgrad cannot trust for this trace (rule 3); the message says why."""


def _read(path: str, idx) -> tuple:
    from engine.trace_index import looks_like_npz

    if not looks_like_npz(path):
        raise BadModel("it is not a saved model (not a zip archive)")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except ValueError as e:
        raise BadModel("it holds a pickled object, which is never loaded" if "pickle" in str(e)
                       else f"it cannot be read ({e})") from None
    except Exception as e:  # noqa: BLE001 - a zip that is not one, a truncated member: folded again (rule 3)
        raise BadModel(f"it cannot be read ({type(e).__name__}: {e})") from None
    try:
        header = json.loads(arrays.pop("header").tobytes().decode("utf-8"))
    except (KeyError, ValueError):
        raise BadModel("its header is not JSON") from None
    if type(header) is not dict or header.get("version") != VERSION or header.get("mark") != idx.header["mark"] \
            or header.get("events") != len(idx):
        raise BadModel("it was made from another version of the trace")
    want = ["n_" + f for f in _NODE] + ["s_" + f for f in _SLOT] + ["g_" + f for f in _GRAPH] + \
        [f + "_ptr" for f in _LISTS] + ["runs", "about", "joins", "gj_ptr", "gj_node", "gj_at", "node_events",
                                         "bounds", "bound_node", "depth", "marks", "m_snaps", "m_total",
                                         "m_reserved"]
    missing = [k for k in want if k not in arrays]
    if missing:
        raise BadModel(f"it lacks {', '.join(missing)}")
    n, ns, ng = len(arrays["n_id"]), len(arrays["s_storage"]), len(arrays["g_first"])
    ok = all(arrays["n_" + f].shape == (n,) for f in _NODE) and all(arrays["s_" + f].shape == (ns,) for f in _SLOT)
    ok = ok and all(arrays["g_" + f].shape == (ng,) for f in _GRAPH)
    for name, count, total in (("runs", n, None), ("about", n, None), ("joins", n, None), ("slots", n, ns),
                               ("gj", ng, len(arrays["gj_node"]))):
        ptr = arrays[name + "_ptr"]
        total = len(arrays[name]) if total is None else total
        ok = ok and ptr.shape == (count + 1,) and ptr[0] == 0 and ptr[-1] == total and bool(np.all(ptr[1:] >= ptr[:-1]))
    ok = ok and len(arrays["gj_at"]) == len(arrays["gj_node"]) and len(arrays["bound_node"]) == len(arrays["bounds"])
    ok = ok and arrays["depth"].ndim == 2 and arrays["depth"].shape[1:] == (2,)
    ok = ok and (n == 0 or (0 <= int(arrays["n_kind"].min()) and int(arrays["n_kind"].max()) < len(_KINDS)
                            and 0 <= int(arrays["n_name"].min()) and int(arrays["n_name"].max()) < len(header["names"])))
    events = [arrays[k] for k in ("n_op_at", "n_leaf_at", "node_events", "bounds", "marks")]
    ok = ok and all(len(a) == 0 or (int(a.min()) >= _NONE and int(a.max()) < len(idx)) for a in events)
    if not ok or type(header.get("names")) is not list:
        raise BadModel("its arrays disagree with each other or with the trace")
    return header, arrays


def load(model, trace) -> bool:
    """Fill the empty ``model`` of the opened ``trace`` from its saved model (rule 2); False when there is
    none to trust (a note in ``trace.notes`` says why when one was there)."""
    path = path_of(trace.index)
    if path is None or not os.path.exists(path):
        return False
    try:
        header, a = _read(path, trace.index)
        _fill(model, trace, header, a)
    except BadModel as why:
        if "another version" not in str(why):
            trace.notes.append(f"the saved model {path} was made again: {why}")
        return False
    except (KeyError, TypeError, ValueError, IndexError) as why:
        trace.notes.append(f"the saved model {path} was made again: it does not fit the trace ({why})")
        return False
    return True


def _fill(model, trace, header, a) -> None:
    from .index import with_arrays

    devs = header.get("reserved_devices")
    if a["m_total"].shape != (len(model.events),) or type(header.get("has_reserved")) is not bool \
            or type(devs) is not list or not all(type(d) is str for d in devs):
        raise BadModel("its memory arrays do not fit the trace")
    model.memory = with_arrays(Replay(start=start_of(model.meta), reserved=reserved_start(model.meta)),
                               a["m_snaps"], a["m_total"], a["m_reserved"], header["has_reserved"])
    model.memory.reserved_devices.update(devs)
    model.node_events = array("q", a["node_events"].tolist())
    model._bounds = array("q", a["bounds"].tolist())
    model._bound_node = [_b(x) for x in a["bound_node"].tolist()]
    model._depth = [tuple(x) for x in a["depth"].tolist()]
    model._roots = [(i, list(r)) for i, r in header["roots"]]
    model.marks = [(i, model.events[i]) for i in a["marks"].tolist()]
    regions = {}
    for rid, nodes, recompute, drops, keys in header["regions"]:
        r = regions[rid] = Region(rid)
        r.nodes, r.recompute, r.drops = list(nodes), [tuple(x) for x in recompute], [tuple(x) for x in drops]
        r._keys = {tuple(k) if isinstance(k, list) else k for k in keys}
    model._regions = regions
    model.nodes = SavedNodes(a, header["names"], model.events)
    gs = []
    ptr, gnode, gat = a["gj_ptr"].tolist(), a["gj_node"].tolist(), a["gj_at"].tolist()
    cols = [a["g_" + f].tolist() for f in _GRAPH]
    for k, (first, spent, died, hide, hide_kept, has_fn) in enumerate(zip(*cols)):
        lo, hi = ptr[k], ptr[k + 1]
        g = Graph(int(first), _inf(spent), _inf(died), dict(zip(gnode[lo:hi], gat[lo:hi])), bool(has_fn))
        g.hide, g.hide_kept = _inf(hide), _inf(hide_kept)
        gs.append(g)
    if not bool(np.all(np.isin(a["gj_node"], a["n_id"]))):
        raise BadModel("its graphs name nodes it does not hold")
    model._graphs, model._firsts = gs, [g.first for g in gs]


def _inf(x):
    return INF if x == INF else int(x)


class SavedNodes(Mapping):
    """Node id -> Node, each made from the saved arrays and its events when first asked for (rule 2)."""

    def __init__(self, a, names, events):
        self._a, self._names, self._events = a, names, events
        self._ids = a["n_id"]
        self._order = np.argsort(self._ids, kind="stable")
        self._sorted = self._ids[self._order]
        self._made: dict = {}

    def __len__(self):
        return len(self._ids)

    def __iter__(self):
        return iter(self._ids.tolist())

    def _row(self, nid):
        if type(nid) is not int and not isinstance(nid, np.integer):
            return None
        k = int(np.searchsorted(self._sorted, nid))
        return int(self._order[k]) if k < len(self._sorted) and self._sorted[k] == nid else None

    def __contains__(self, nid):
        return nid in self._made or self._row(nid) is not None

    def freed_at(self, nid):
        """A node's ``freed_at``, read from its array without making the node."""
        n = self._made.get(nid)
        if n is not None:
            return n.freed_at
        r = self._row(nid)
        if r is None:
            raise KeyError(nid)
        return _b(self._a["n_freed_at"][r].item())

    def __getitem__(self, nid):
        n = self._made.get(nid)
        if n is None:
            r = self._row(nid)
            if r is None:
                raise KeyError(nid)
            n = self._made[nid] = self._make(r)
        return n

    def _make(self, r: int) -> Node:
        a, ev = self._a, self._events
        v = {f: a["n_" + f][r].item() for f in _NODE}
        n = Node(v["id"], self._names[v["name"]], _KINDS[v["kind"]], v["created"], v["seq"])
        if v["op_at"] != _NONE:
            e = ev[v["op_at"]]
            info = e.get("node") or {}
            n.fill(e, info, None)
            n.saved = [Slot(n.id, sv) for sv in info.get("saved", ())]
        if v["leaf_at"] != _NONE:
            n.tensor = ev[v["leaf_at"]].get("tensor")
        for f in ("op_at", "leaf_at", "recomputed_at", "dropped_at", "first_namer", "died", "freed_at"):
            setattr(n, f, _b(v[f]))
        n.dropped_bytes, n.mortal = v["dropped_bytes"], bool(v["mortal"])
        for f in ("runs", "about", "joins"):
            ptr = a[f + "_ptr"]
            setattr(n, f, a[f][ptr[r]:ptr[r + 1]].tolist())
        ptr = a["slots_ptr"]
        for k, slot in zip(range(int(ptr[r]), int(ptr[r + 1])), n.saved):
            for f in _SLOT:
                setattr(slot, f, _b(a["s_" + f][k].item()))
            slot.bytes = slot.bytes or 0
            slot.dropped = bool(slot.dropped)
        return n
