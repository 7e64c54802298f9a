"""Storage lifetimes: when each storage lived, who made it, who kept it and why it went.

NOTE [ Storage lifetimes ]
1. A storage lives from its ``alloc`` event to its ``free`` event: it is alive after events
   ``start .. end - 1`` (``end`` is the free's index; None while alive at the trace's end).
   A storage alive before recording (``preexisting``, NOTE [ Memory replay ] rule 2) starts
   at 0 and has no maker; bytes the recorder counted at the start (``meta["memory_at_start"]``)
   in storages no event mentions become one ``unseen`` lifetime per device and category
   (negative storage ids), so lifetimes always add up to the replay's live bytes.
2. Its categories: the alloc's, then one ``(index, old, new)`` per ``category`` event.
3. Its maker: the first ``op`` event at or after the alloc whose output lives in it (op name,
   file, line, and the module path the op ran in, NOTE [ Module paths ] in engine/events.py). Tensors: every tensor id seen in it (op inputs and outputs, leaves); views:
   those that are the output of an op whose input shares the storage.
4. Saved by: one ``(event index, node id, saved name)`` per ``pack`` of the storage; node
   names come from the op events that made the nodes.
5. Why it was freed, the first that applies to the events before its ``free``:
   a. a ``checkpoint_drop`` of it with ``kept`` False: "checkpoint dropped it";
   b. a ``release`` of it in backward: "backward released it";
   c. its category was "gradient": "its .grad was cleared (zero_grad or .grad = None)";
   d. its category was "optimizer": "the optimizer replaced it";
   e. otherwise "its last reference died".
   A storage allocated in backward without an op event of its own is made by the node
   executing then ("MulBackward0 (backward)"); an "optimizer" allocation by the optimizer
   named in the next ``optimizer_step`` ("Adam state (step 1)"); a storage that is no op's
   output, allocated (not as "input" data) after the previous op event and packed by an op's
   node before its op event (LayerNorm's mean and rstd), by that op ("layer_norm (kept for
   backward: result1)").
6. ``bands`` keeps the ``n`` largest storages alive in a window (by bytes, then by how long
   they live in it) and sums the rest into one band, as PyTorch's memory viewer does with
   its detail slider.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .event_stream import stream
from .memory import first_mention
from .spans import Spans
from .words import where


@dataclass
class Lifetime:
    storage: int
    bytes: int
    device: str
    start: int
    end: int | None = None
    category: str = "other"                         # the category it was born in
    categories: list = field(default_factory=list)  # [(index, old, new)]
    made_by: str | None = None                      # op name
    where: str = ""                                 # "file.py:12"
    made_at: int | None = None                      # the op event's index
    module: str | None = None                       # the maker's module path (NOTE [ Module paths ])
    tensors: list = field(default_factory=list)     # tensor ids, in order seen
    views: list = field(default_factory=list)       # tensor ids that are views of it
    saved_by: list = field(default_factory=list)    # [(index, node id, node name, saved name)]
    freed_why: str | None = None
    before_recording: bool = False
    unseen: bool = False              # bytes alive at the start that no event names (one band per category)

    def alive_at(self, i: int) -> bool:
        return self.start <= i and (self.end is None or i < self.end)

    def category_at(self, i: int) -> str:
        cat = self.category
        for j, _, new in self.categories:
            if j <= i:
                cat = new
        return cat

    def overlap(self, lo: int, hi: int) -> int:
        """Events of [lo, hi) during which it is alive."""
        end = hi if self.end is None else min(self.end, hi)
        return max(0, end - max(self.start, lo))


_KINDS = ("alloc", "free", "category", "op", "leaf", "pack", "release", "checkpoint_drop", "optimizer_step",
          "execute", "backward_end")
_PARSE = ("op", "leaf", "pack", "checkpoint_drop", "optimizer_step", "execute")     # the rest: from columns
_MENTIONS = ("alloc", "free", "category", "op", "leaf")


PROGRESS_EVERY = 256      # events of the pass between two calls of ``progress``


def lifetimes(trace, progress=None) -> list:
    """Every storage's Lifetime, in order of birth (rules 1-5), in one pass over the events it needs
    (NOTE [ A pass over some kinds ] in replay/event_stream.py); ``progress(done, total)``, how far
    the stream got, is called every :data:`PROGRESS_EVERY` events of it and lifetimes of the last loop
    over them (a thread gives the app its turn there: NOTE [ Lifetimes on a thread ] rule 6)."""
    out: dict = {}
    pre: dict = {}                                  # rule 1: storages alive before recording, as first seen
    early: dict = {}                                # storage -> its packs before anything else named it
    seen_ids, fresh = set(), {}                     # storages met so far; those just found alive before
    seen: dict = {}                                 # id(a lifetime's tensors or views list) -> its set
    node_names: dict = {}
    pending_release: dict = {}                      # storage -> index of its backward release
    dropped: set = set()
    executing = None
    optimizer_state: list = []                      # optimizer allocations waiting for their step's event
    packed: dict = {}                               # node -> [(storage, saved name)] packed before its op event
    last_op = -1                                    # the previous op event's index
    told = [0, 1]                                   # how far the stream last said it got
    tell = None if progress is None else (lambda done, n: told.__setitem__(slice(None), (done, n)))
    for k, (i, e) in enumerate(stream(trace, _KINDS, _PARSE, tell)):
        if tell is not None and k % PROGRESS_EVERY == 0:
            progress(*told)
        k = e.get("kind")
        sid = e.get("storage")
        if k in _MENTIONS:
            first_mention(e, seen_ids, fresh)               # rule 1: alive before recording
            for s, (b, dev, cat) in fresh.items():
                pre[s] = fresh[s]
                out[s] = Lifetime(s, b, dev, 0, category=cat, before_recording=True, made_by=None,
                                  saved_by=early.pop(s, []))
            fresh.clear()
        if k == "alloc":
            lt = out[sid] = Lifetime(sid, e.get("bytes", 0), e.get("device", "cpu"), i,
                                     category=e.get("category", "other"))
            if executing is not None and e.get("phase") == "backward":
                lt.made_by, lt.made_at = f"{executing} (backward)", i
            elif lt.category == "optimizer":
                optimizer_state.append(lt)
        elif k == "free":
            lt = out.get(sid)
            if lt is not None and lt.end is None:
                lt.end = i
                cat = e.get("category") or lt.category_at(i)
                lt.freed_why = ("checkpoint dropped it" if sid in dropped else
                                "backward released it" if sid in pending_release else
                                "its .grad was cleared (zero_grad or .grad = None)" if cat == "gradient" else
                                "the optimizer replaced it" if cat == "optimizer" else
                                "its last reference died")
            dropped.discard(sid)
            pending_release.pop(sid, None)
        elif k == "category":
            lt = out.get(sid)
            if lt is not None:
                lt.categories.append((i, e.get("old"), e.get("new")))
        elif k == "op":
            _read_op(out, e, i, node_names, seen)
            node = e.get("node")
            nid = node.get("id") if isinstance(node, dict) else node
            for psid, name in packed.pop(nid, ()):       # rule 5: what the op made only to keep
                lt = out.get(psid)
                if (lt is not None and lt.made_by is None and not lt.before_recording and last_op < lt.start <= i
                        and lt.category != "input"):
                    lt.made_by, lt.made_at = f"{e.get('op')} (kept for backward: {name})", i
                    lt.where, lt.module = where(e.get("file"), e.get("line")), e.get("module")
            last_op = i
        elif k == "leaf":
            t = e.get("tensor") or {}
            lt = out.get(t.get("storage"))
            if lt is not None:
                _add(seen, lt.tensors, t.get("id"))
        elif k == "pack":
            lt = out.get(sid)
            entry = (i, e.get("node"), node_names.get(e.get("node"), "?"), e.get("name"))
            if lt is None:              # packed before the op that names it: alive before recording, or never seen
                early.setdefault(sid, []).append(entry)
            else:
                lt.saved_by.append(entry)
                if e.get("phase") != "backward":
                    packed.setdefault(e.get("node"), []).append((sid, e.get("name")))
        elif k == "release" and e.get("phase") == "backward":
            pending_release[sid] = i
        elif k == "checkpoint_drop" and not e.get("kept"):
            dropped.add(sid)
        elif k == "optimizer_step":
            for lt in optimizer_state:
                lt.made_by, lt.made_at = f"{e.get('optimizer', 'optimizer')} state (step {e.get('step', '?')})", i
            optimizer_state = []
        elif k == "execute":
            executing = e.get("name")
        elif k == "backward_end":
            executing = None
    for k, lt in enumerate(_unseen(getattr(trace, "meta", None), pre)):
        lt.storage = -1 - k
        out[lt.storage] = lt
    for k, lt in enumerate(out.values()):      # a pack's node may be named by an op event after it (the node's own)
        lt.saved_by = [(i, n, node_names.get(n, name), s) for i, n, name, s in lt.saved_by]
        if progress is not None and k % PROGRESS_EVERY == 0:
            progress(*told)
    return LifetimeList(sorted(out.values(), key=lambda lt: (lt.start, lt.storage if isinstance(lt.storage, int) else 0)))


class LifetimeList(list):
    """Lifetimes in order of birth, with their ``spans`` (NOTE [ Lifetime spans ] in replay/spans.py)
    made when first asked for."""

    _spans = None

    @property
    def spans(self) -> Spans:
        if self._spans is None or len(self._spans.start) != len(self):
            self._spans = Spans(self)
        return self._spans


def spans_of(lts) -> Spans:
    """The spans of ``lts`` (a LifetimeList's own, else made now)."""
    return lts.spans if isinstance(lts, LifetimeList) else Spans(lts)


def _unseen(meta, pre) -> list:
    """Rule 1's bytes alive at the start that no event mentions (the recorder's ``memory_at_start``
    counts them): one Lifetime per device and category, so lifetimes add up to the replay's live bytes."""
    out = []
    for dev, m in ((meta or {}).get("memory_at_start") or {}).items():
        seen: dict = {}
        for b, d, cat in pre.values():
            if d == dev:
                seen[cat] = seen.get(cat, 0) + b
        rest = {cat: b - seen.get(cat, 0) for cat, b in (m.get("by_category") or {}).items()}
        for cat, b in seen.items():
            rest.setdefault(cat, -b)
        over = -sum(v for v in rest.values() if v < 0)   # storages the events file under another category
        for cat, v in rest.items():                      # (an input seen as "other"): counted once, not twice
            take = min(max(v, 0), over)
            over -= take
            if v - take > 0:
                out.append(Lifetime(0, v - take, dev, 0, category=cat, before_recording=True, unseen=True))
    return out


def _add(seen, ids: list, x) -> None:
    """Append ``x`` to a lifetime's ``ids`` (its tensors or views) unless there: a parameter's storage
    gains a view every step (``t()``), so membership is a set's, beside the list."""
    have = seen.get(id(ids))
    if have is None:
        have = seen[id(ids)] = set(ids)
    if x not in have:
        have.add(x)
        ids.append(x)


def _read_op(out, e, i, node_names, seen) -> None:
    node = e.get("node")
    if isinstance(node, dict) and "id" in node:
        node_names[node["id"]] = node.get("name", "?")
    ins = [t for t in (e.get("inputs") or []) if isinstance(t, dict) and "storage" in t]
    o = e.get("output")
    for t in ins + ([o] if isinstance(o, dict) and "storage" in o else []):
        lt = out.get(t["storage"])
        if lt is not None:
            _add(seen, lt.tensors, t.get("id"))
    if isinstance(o, dict) and "storage" in o:
        lt = out.get(o["storage"])
        if lt is None:
            return
        if any(t["storage"] == o["storage"] for t in ins):
            _add(seen, lt.views, o.get("id"))
        elif lt.made_by is None and not lt.before_recording and lt.start <= i:
            lt.made_by, lt.made_at = e.get("op"), i
            lt.where = where(e.get("file"), e.get("line"))
            lt.module = e.get("module")


@dataclass
class Bands:
    """The ``n`` largest storages of a window and one band for the rest (rule 6)."""
    lo: int
    hi: int
    top: list                      # [Lifetime]
    rest: list                     # [Lifetime]
    spans: Spans | None = None     # of the lifetimes ``rest_at`` indexes
    rest_at: object = None         # their positions in it

    def rest_bytes_at(self, i: int) -> int:
        return self.rest_bytes_over([i])[0]

    def rest_bytes_over(self, points) -> list:
        """The rest band's bytes alive after each of ``points`` (NOTE [ Lifetime spans ] rule 3)."""
        if self.spans is None:
            return [sum(lt.bytes for lt in self.rest if lt.alive_at(i)) for i in points]
        return self.spans.bytes_at(self.rest_at, points)


def bands(lts, lo: int, hi: int, n: int = 12, device: str | None = None) -> Bands:
    """Rule 6, over the storages alive somewhere in events [lo, hi): the largest, then the longest
    alive in it, then the oldest, ties in birth order."""
    sp = spans_of(lts)
    pos, ov = sp.overlapping(lo, hi, device)
    order = pos[np.lexsort((sp.start[pos], -ov, -sp.bytes[pos]))]
    top = order[:n].tolist()
    return Bands(lo, hi, sorted((lts[k] for k in top), key=lambda lt: lt.start), Picked(lts, order[n:]), sp, order[n:])


class Picked(Sequence):
    """The lifetimes of ``lts`` at positions ``pos``, made a list only when iterated (a million-event
    trace's rest band holds about 150,000)."""

    def __init__(self, lts, pos):
        self.lts, self.pos = lts, pos

    def __len__(self):
        return len(self.pos)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self.lts[j] for j in self.pos[k].tolist()]
        return self.lts[int(self.pos[k])]

    def __iter__(self):
        lts = self.lts
        return (lts[j] for j in self.pos.tolist())


def alive_at(lts, i: int, device: str | None = None) -> list:
    """The storages alive after event ``i``, largest first."""
    return sorted((lts[k] for k in spans_of(lts).alive(i, device).tolist()), key=lambda lt: (-lt.bytes, lt.start))


def describe(lt: Lifetime, events=None) -> list:
    """Lines a learner reads about one storage (the lifetime view's detail pane)."""
    from .words import nbytes
    life = f"events #{lt.start}–#{lt.end}" if lt.end is not None else f"from event #{lt.start} to the end"
    if lt.unseen:
        return [f"{nbytes(lt.bytes)} of {lt.category} on {lt.device} alive before recording began, in storages "
                "no event of this trace mentions (the recorder counted them at the start)"]
    lines = [f"storage {lt.storage}: {nbytes(lt.bytes)} on {lt.device}, {life}"]
    if lt.before_recording:
        lines.append("made before recording began")
    elif lt.made_by:
        lines.append(f"made by {lt.made_by}" + (f" at {lt.where}" if lt.where else "") + f" (event #{lt.made_at})")
    if lt.tensors:
        views = f", views {', '.join(map(str, lt.views))}" if lt.views else ""
        lines.append(f"tensors {', '.join(map(str, lt.tensors[:8]))}{' …' if len(lt.tensors) > 8 else ''}{views}")
    cats = [lt.category] + [new for _, _, new in lt.categories]
    lines.append("category " + " → ".join(cats))
    for i, node, name, saved in lt.saved_by:
        who = f"{name} (node {node})" if name != "?" else f"node {node}"
        lines.append(f"saved by {who} as {saved!r} at event #{i}")
    lines.append(f"freed: {lt.freed_why} (event #{lt.end})" if lt.end is not None else "still alive at the end")
    return lines
