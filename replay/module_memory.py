"""Memory around each module's forward and backward, as PyTorch's MemTracker reports it.

NOTE [ Module memory ]
1. A module's ops are the ``op`` events whose ``module`` is its path or below it
   (NOTE [ Module paths ] in engine/events.py). Its forward span, within a window, runs
   from the event after the op before its first op (that op's allocation comes first)
   to its last op; only the first such span in the window counts (one forward).
2. pre-forward is the live total before the span, post-forward after it, peak-forward
   the highest of pre-forward and every live total inside it.
3. Its backward span runs from the first ``execute`` of a node one of its ops made to
   the event before the next ``execute`` (or ``backward_end``) after its last one;
   pre-backward, peak-backward and post-backward are read the same way. A module whose
   nodes never ran in the window has no backward figures (None).
4. Rows come in the order modules first ran; "" is the outermost module.
5. On an opened trace (NOTE [ Trace index ]) the forward ``op`` events, ``execute`` and
   ``backward_end`` are found by the index's kind and phase columns and an ``execute``'s
   node by its node column. The forward ops are read one by one only while a module's
   first span is open; once every span is closed only a new module can add a row, and an
   op line that ends in ``, "module": X}`` with X the JSON of a module already met names
   that module (its last key, of the event itself: the quote after ``, `` opens a key, and
   the ``}`` after its string or null closes the line's object): the line's end is read,
   not the event. Any other op is read, and a new module opens spans again. The rows are
   those a walk of every event gives; a trace whose ops all run inside one module keeps
   the outermost span open to its last forward op, and its ops are all read.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from engine.trace_schema import PHASES

from .event_stream import index_of
from .index import replay_of
from .memory import Replay, events_of, start_of

COLUMNS = ("pre_fwd", "post_fwd", "peak_fwd", "pre_bwd", "peak_bwd", "post_bwd")


@dataclass
class ModuleMemory:
    module: str
    pre_fwd: int
    post_fwd: int
    peak_fwd: int
    pre_bwd: int | None = None
    peak_bwd: int | None = None
    post_bwd: int | None = None
    fwd: tuple = (0, 0)          # event span [lo, hi]
    bwd: tuple | None = None


def _within(path, module) -> bool:
    return path is not None and (module == "" or path == module or path.startswith(module + "."))


def _ancestors(p) -> list:
    parts = p.split(".") if p else []
    return [".".join(parts[:k]) for k in range(len(parts) + 1)]


_NO_NODE = object()


def _node_id(e):
    nd = e.get("node")
    return nd["id"] if isinstance(nd, dict) else _NO_NODE


class _LineEnds:
    """Rule 5: the module an op line names by its end, for modules already met."""

    def __init__(self, path, offsets):
        self.fd, self.off = os.open(path, os.O_RDONLY), offsets
        self.ends: dict = {}             # len -> {end bytes: module}
        self.width = 0

    def learn(self, module) -> None:
        if module is not None and type(module) is not str:
            return                                     # only a string or null is told by a line's end
        end = b', "module": ' + json.dumps(module).encode("utf-8") + b"}"
        self.ends.setdefault(len(end), {})[end] = module
        self.width = max(self.width, len(end))

    def module(self, i: int):
        """(True, module) when line i's end names one met, else (False, None)."""
        b = int(self.off[i + 1])
        raw = os.pread(self.fd, self.width + 8, max(int(self.off[i]), b - self.width - 8)).rstrip()
        for n, ends in self.ends.items():
            m = ends.get(raw[-n:], self)
            if m is not self:
                return True, m
        return False, None

    def close(self) -> None:
        os.close(self.fd)


def _spans(events, ops, idx) -> tuple:
    """Rules 1, 5: ({path: [first k, last k]}, paths in order, {k: node id}) over the forward ops ``ops``."""
    spans: dict = {}
    paths: list = []
    nodes: dict = {}
    open_: list = []                                   # paths whose first span has not ended yet
    ends = _LineEnds(events.path, idx.offsets) if idx is not None and hasattr(events, "path") else None
    pick = getattr(events, "pick", None)
    k, n = 0, len(ops)
    try:
        while k < n:
            it = pick(ops[k:]) if pick is not None else ((i, events[i]) for i in ops[k:])
            for i, e in it:                            # an open span: every op read
                p = e.get("module")
                for m in [m for m in open_ if not _within(p, m)]:
                    spans[m][1] = k - 1
                    open_.remove(m)
                if ends is not None:
                    ends.learn(p)
                if p is not None:
                    for m in _ancestors(p):
                        if m not in spans:
                            spans[m] = [k, None]
                            paths.append(m)
                            open_.append(m)
                nodes[k] = _node_id(e)
                k += 1
                if not open_ and ends is not None:
                    break
            while k < n and not open_:                 # every span closed: only a new module matters
                known, p = ends.module(ops[k]) if ends is not None else (False, None)
                if not known:
                    p = events[ops[k]].get("module")
                if p is not None and any(m not in spans for m in _ancestors(p)):
                    break                              # a new module: read from here
                if ends is not None and not known:
                    ends.learn(p)
                k += 1
    finally:
        if ends is not None:
            ends.close()
    for m in open_:
        spans[m][1] = n - 1
    return spans, paths, nodes


def _executes(events, lo: int, hi: int, idx) -> tuple:
    """Positions of the ``execute``/``backward_end`` events in [lo, hi), which are ``execute``, and
    their nodes (an int array, -1 where the node is not an int, those in ``odd``)."""
    if idx is None:
        pos = [i for i in range(lo, hi) if events[i].get("kind") in ("execute", "backward_end")]
        is_ex = [events[i].get("kind") == "execute" for i in pos]
        raw = [events[i].get("node") if x else None for i, x in zip(pos, is_ex)]
        node = [v if type(v) is int else -1 for v in raw]
        odd = {j: v for j, (v, x) in enumerate(zip(raw, is_ex)) if x and type(v) is not int}
        return np.asarray(pos, dtype=np.int64), np.asarray(is_ex, dtype=bool), np.asarray(node, dtype=np.int64), odd
    kind = idx.kind[lo:hi]
    ex = idx.codes("execute")
    pos = np.flatnonzero(np.isin(kind, ex + idx.codes("backward_end"))) + lo
    is_ex = np.isin(idx.kind[pos], ex)
    node = idx.node[pos]
    odd = {int(j): events[int(pos[j])].get("node") for j in np.flatnonzero(is_ex & (node == -1)).tolist()}
    return pos, is_ex, node, odd


def _peak(total, lo: int, hi: int, pre: int) -> int:
    a = getattr(total, "a", None)
    return max(pre, int(a[lo:hi].max()) if a is not None else max(total[lo:hi]))


def module_memory(trace, lo: int = 0, hi: int | None = None, replay: Replay | None = None) -> list:
    """One ModuleMemory per module that ran an op in events [lo, hi) (rules 1-5)."""
    events = events_of(trace)
    hi = len(events) if hi is None else min(hi, len(events))
    idx = index_of(trace)
    meta = getattr(trace, "meta", None)
    if replay is None and idx is not None:
        replay = replay_of(idx, meta or {})
    r = replay or Replay(events, start_of(meta))
    total = r.total
    lo = max(0, lo)
    if idx is not None:
        sel = (idx.kind[lo:hi] == (idx.codes("op") or [-1])[0]) & (idx.phase[lo:hi] == PHASES.index("forward"))
        ops = (np.flatnonzero(sel) + lo).tolist()
    else:
        ops = [i for i in range(lo, hi) if events[i].get("kind") == "op" and events[i].get("phase") == "forward"]
    spans, paths, node_of = _spans(events, ops, idx)
    ex_pos, ex_is, ex_node, odd = _executes(events, lo, hi, idx)
    out = []
    for m in paths:
        first, last = spans[m]
        start = (ops[first - 1] + 1) if first > 0 else lo
        end = ops[last]
        pre = total[start - 1] if start > 0 else sum(r.baseline.values())
        row = ModuleMemory(m, pre, total[end], _peak(total, start, end + 1, pre), fwd=(start, end))
        nodes = {node_of[k] for k in range(first, last + 1) if node_of[k] is not _NO_NODE}
        hit = ex_is & np.isin(ex_node, [x for x in nodes if type(x) is int])
        for j, v in odd.items():
            hit[j] = v in nodes
        runs = np.flatnonzero(hit)
        if len(runs):
            b0 = int(ex_pos[runs[0]])
            after = int(runs[-1]) + 1
            b1 = (int(ex_pos[after]) - 1) if after < len(ex_pos) else hi - 1
            row.pre_bwd, row.post_bwd = total[b0 - 1], total[b1]
            row.peak_bwd, row.bwd = _peak(total, b0, b1 + 1, row.pre_bwd), (b0, b1)
        out.append(row)
    return out
