"""Live, peak and reserved bytes per category and device after every event of a trace.

NOTE [ Memory replay ]
1. Only ``alloc``, ``free`` and ``category`` events move live bytes (``moves``): ``alloc``
   adds a storage's bytes to its category on its device, ``free`` takes them from the
   category the event names, ``category`` moves them from ``old`` to ``new`` (an "other"
   storage becomes an "activation" when a node saves it, and goes back when backward
   releases it).
2. Bytes alive before recording began have no ``alloc``. A recorded trace carries them
   per device and category in ``meta["memory_at_start"]``, and a replay starts from
   them. For a bare event list ``preexisting`` infers them: the first event that
   mentions a storage never allocated (a ``free``, a ``category``, a tensor in an
   ``op``/``leaf`` event) reveals it, counted from the start in the category that event
   implies (a ``category``'s ``old``, a ``free``'s ``category``, a named leaf that
   requires grad -> "parameter", else "other").
3. ``reserved`` is the caching allocator model's figure: per device, the one on the
   newest ``alloc``/``free``/``empty_cache`` event of that device that carries it; before
   that, the figure the replay starts from (``meta["memory_at_start"]``'s; a picture of
   a bare event list starts from the first figure its events give). ``reserved`` sums the
   devices' figures; ``reserved_devices`` names them, so that a view of a run on the GPU
   and the host can say the sum is of both (the allocator view shows one device's).
4. Categories come in the trace format's order, ``CATEGORIES``; a category outside it
   gets its own column after them.
5. The peak is the first event where the total is highest. Its cause is the op whose
   output that event allocated (the next ``op`` event in forward or recompute) or, in
   backward, the node executing then.
6. Two peaks, never confused: the *live-bytes peak* (``peak_index``/``peak_bytes``: every
   category summed, what ``max_memory_allocated`` reports) and the *activation peak*
   (``act_peak_index``/``act_peak_bytes``: the "activation" category alone). In a training
   step the activation peak is at the end of forward, when every saved tensor is alive;
   the live-bytes peak is often later, in backward, where gradients and temporaries
   are added while activations are not all freed yet. ``peak_in`` finds either within
   any range of events (a lesson step), the first event on ties; of a prefix of the events
   (a chart drawing what was folded in by its last catch-up) it reads where the running peak
   last rose before its end, without a pass over the prefix.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import engine.trace as _format

from .words import where

CATEGORIES = _format.CATEGORIES
MEMORY_KINDS = ("alloc", "free", "category")
RESERVED_KINDS = tuple(k for k, fields in _format.KINDS.items() if "reserved" in fields)
_TOUCHING = frozenset(MEMORY_KINDS + RESERVED_KINDS)


def events_of(trace) -> list:
    """The event list of a Trace, or the list (or an opened trace's event sequence) itself."""
    if hasattr(trace, "events"):
        return trace.events
    return trace if hasattr(trace, "of_kinds") or isinstance(trace, list) else list(trace)


def of_kinds(events, kinds, start: int = 0) -> list:
    """``[(index, event)]`` of the events from ``start`` on whose kind is in ``kinds``; an opened trace's
    events find them through its index without reading the others (NOTE [ Trace index ])."""
    pick = getattr(events, "of_kinds", None)
    if pick is not None:
        return pick(kinds, start)
    return [(i, events[i]) for i in range(max(0, start), len(events)) if events[i].get("kind") in kinds]


def moves(e: dict) -> tuple:
    """``((category, bytes), ...)``: what one event does to its device's live bytes (rule 1)."""
    k = e.get("kind")
    if k == "alloc":
        return ((e.get("category", "other"), e.get("bytes", 0)),)
    if k == "free":
        return ((e.get("category", "other"), -e.get("bytes", 0)),)
    if k == "category":
        b = e.get("bytes", 0)
        return ((e.get("old", "other"), -b), (e.get("new", "other"), b))
    return ()


def start_of(meta: dict | None, device: str | None = None) -> dict:
    """{category: bytes} alive when recording began (rule 2), on ``device`` or on all devices."""
    out: dict = {}
    for dev, m in ((meta or {}).get("memory_at_start") or {}).items():
        if device is None or dev == device:
            for c, b in (m.get("by_category") or {}).items():
                out[c] = out.get(c, 0) + b
    return out


def reserved_start(meta: dict | None, device: str | None = None) -> dict:
    """{device: reserved bytes} when recording began (rule 3), for the devices whose figure is known."""
    return {dev: m["reserved"] for dev, m in ((meta or {}).get("memory_at_start") or {}).items()
            if (device is None or dev == device) and isinstance(m.get("reserved"), int)}


def _tensor_infos(e):
    for t in e.get("inputs") or []:
        if isinstance(t, dict) and "storage" in t:
            yield t
    for key in ("output", "tensor"):
        t = e.get(key)
        if isinstance(t, dict) and "storage" in t:
            yield t


def preexisting(events) -> dict:
    """Storage id -> (bytes, device, category) for storages alive before recording (rule 2)."""
    seen, pre = set(), {}
    for e in events:
        first_mention(e, seen, pre)
    return pre


def first_mention(e, seen: set, pre: dict) -> None:
    """``preexisting``'s step: an alloc is ``seen``; a free, a category move or a tensor an op or leaf
    names whose storage is not ``seen`` yet was alive before recording (into ``pre``)."""
    k = e.get("kind")
    sid = e.get("storage")
    if k == "alloc":
        seen.add(sid)
    elif k in ("free", "category") and sid not in seen:
        seen.add(sid)
        cat = e.get("old") if k == "category" else e.get("category")
        pre[sid] = (e.get("bytes", 0), e.get("device", "cpu"), cat or "other")
    elif k in ("op", "leaf"):
        for t in _tensor_infos(e):
            s = t["storage"]
            if s not in seen:
                seen.add(s)
                cat = "parameter" if (t.get("leaf") and t.get("requires_grad") and t.get("name")) else "other"
                pre[s] = (t.get("storage_bytes", t.get("bytes", 0)), t.get("device", "cpu"), cat)


def devices(events) -> list:
    """Devices the events move memory on, in order of appearance (storages made before recording last)."""
    out = []
    for e in events:
        d = e.get("device") if e.get("kind") in MEMORY_KINDS else None
        if d is not None and d not in out:
            out.append(d)
    for _, dev, _ in preexisting(events).values():
        if dev not in out:
            out.append(dev)
    return out


class Replay:
    """Live bytes by category after each event (on one device, or summed over all), folded in as events arrive.

    ``start``: {category: bytes} alive before the first event; ``reserved``: {device: bytes} reserved
    then. After event i: ``snaps[i]`` (a tuple per column of ``categories``, shared by consecutive
    events that move no memory), ``total[i]`` and ``reserved[i]``.
    """

    def __init__(self, events=(), start: dict | None = None, reserved: dict | None = None,
                 device: str | None = None):
        self.device = device
        self.categories: list = list(CATEGORIES)
        self._col = {c: k for k, c in enumerate(self.categories)}
        self._cur = [0] * len(self.categories)
        self.snaps: list = []
        self.total: list = []
        self.reserved: list = []
        self.baseline = {c: b for c, b in (start or {}).items() if b}
        for c, b in self.baseline.items():
            self._cur[self._column(c)] += b
        self._snap = tuple(self._cur)
        self._tot = sum(self._cur)
        self.peak_index = self.peak_bytes = 0
        self._act = self._column("activation")
        self.act_peak_index, self.act_peak_bytes = 0, self._cur[self._act]
        self._rises = ([], [], [], [])      # rule 6: (indices, bytes) where each running peak rose
        self._res_dev = dict(reserved or {})
        self.reserved_devices = set(self._res_dev)      # rule 3: the devices ``reserved`` sums
        self.reserved_start = self._res = sum(self._res_dev.values())
        self.has_reserved = False
        self.extend(events)

    def __len__(self):
        return len(self.total)

    def extend(self, events) -> None:
        touching, snaps, total, reserved = _TOUCHING, self.snaps, self.total, self.reserved
        for e in events:
            if e.get("kind") in touching:
                self._touch(e)
                if self._snap is None:
                    self._snap = tuple(self._cur)
                if self._tot > self.peak_bytes or not total:
                    self.peak_bytes, self.peak_index = self._tot, len(total)
                    self._rises[0].append(len(total))
                    self._rises[1].append(self._tot)
                if self._snap[self._act] > self.act_peak_bytes:
                    self.act_peak_bytes, self.act_peak_index = self._snap[self._act], len(total)
                    self._rises[2].append(len(total))
                    self._rises[3].append(self.act_peak_bytes)
            elif not total:
                self.peak_bytes = self._tot
            snaps.append(self._snap)
            total.append(self._tot)
            reserved.append(self._res)

    def _column(self, cat) -> int:
        k = self._col.get(cat)
        if k is None:
            k = self._col[cat] = len(self.categories)
            self.categories.append(cat)
            self._cur.append(0)
            widen = getattr(self.snaps, "widen", None)       # a followed model's (replay/index.py)
            if widen is not None:
                widen()
            else:
                self.snaps[:] = [sn + (0,) for sn in self.snaps]    # in place: extend holds the list
        return k

    def add(self, e: dict) -> None:
        """Fold in the next event."""
        self.extend((e,))

    def _touch(self, e: dict) -> None:
        dev = e.get("device", self.device)
        if self.device is not None and dev != self.device:
            return
        for c, b in moves(e):
            self._cur[self._column(c)] += b
            self._tot += b
            self._snap = None
        if e.get("kind") in RESERVED_KINDS and isinstance(e.get("reserved"), int):
            self.has_reserved = True
            self._res_dev[dev] = e["reserved"]
            self.reserved_devices.add(dev)
            self._res = sum(self._res_dev.values())

    def live_at(self, i: int) -> dict:
        """Live bytes per category after event i (clamped to the events there are)."""
        if not self.snaps:
            return {}
        snap = self.snaps[max(0, min(i, len(self.snaps) - 1))]
        return {c: snap[k] for k, c in enumerate(self.categories)}

    def live_of(self, cat: str, i: int) -> int:
        k = self._col.get(cat)
        return 0 if k is None else self.snaps[i][k]

    def peak_in(self, lo: int = 0, hi: int | None = None, category: str | None = None) -> tuple:
        """(event index, bytes) of the highest live bytes in events [lo, hi), the first on ties (rule 6).

        ``category=None``: the live-bytes peak (all categories); ``"activation"``: the activation peak.
        """
        n = len(self.total)
        hi = n if hi is None else min(hi, n)
        lo = max(0, lo)
        if hi <= lo:
            return max(0, min(lo, n - 1)), 0
        if (lo, hi) == (0, n):
            if category is None:
                return self.peak_index, self.peak_bytes
            if category == "activation":
                return self.act_peak_index, self.act_peak_bytes
        if lo == 0 and category in (None, "activation"):
            at, val = self._rises[:2] if category is None else self._rises[2:]   # a prefix: where the peak rose last
            k = bisect.bisect_left(at, hi) - 1
            if k >= 0:                  # else (no activation rise yet): the pass below
                return at[k], val[k]
        if category is None:
            seg = self.total[lo:hi]
        else:
            k = self._col.get(category)
            seg = [0] * (hi - lo) if k is None else [sn[k] for sn in self.snaps[lo:hi]]
        j = max(range(len(seg)), key=seg.__getitem__)
        return lo + j, seg[j]


def live_after(events, device: str | None = None) -> dict:
    """Live bytes per category after ``events``, counted from nothing; categories at zero left out."""
    live: dict = {}
    for e in events:
        if device is None or e.get("device") == device:
            for c, b in moves(e):
                live[c] = live.get(c, 0) + b
    return {c: b for c, b in live.items() if b}


def rows(trace, device: str | None = None) -> list:
    """``[(seq, {device: live bytes}, {category: bytes})]`` after every memory event (as ``Trace.replay_memory``)."""
    live: dict = {}
    cats: dict = {}
    for dev, m in (trace.meta.get("memory_at_start") or {}).items():
        if device is None or dev == device:
            live[dev] = m.get("allocated", 0)
            for c, b in (m.get("by_category") or {}).items():
                cats[c] = cats.get(c, 0) + b
    out = []
    for e in trace.events:
        if e["kind"] not in MEMORY_KINDS or (device is not None and e["device"] != device):
            continue
        for c, b in moves(e):
            cats[c] = cats.get(c, 0) + b
        if e["kind"] != "category":
            live[e["device"]] = live.get(e["device"], 0) + sum(b for _, b in moves(e))
        out.append((e["seq"], dict(live), dict(cats)))
    return out


def reserved_rows(trace, device: str | None = None) -> list:
    """``[(seq, {device: reserved bytes})]`` after every event that carries ``reserved`` (rule 3)."""
    res = {dev: m["reserved"] for dev, m in (trace.meta.get("memory_at_start") or {}).items()
           if (device is None or dev == device) and "reserved" in m}
    out = []
    for e in trace.events:
        if e["kind"] in RESERVED_KINDS and "reserved" in e and (device is None or e["device"] == device):
            res[e["device"]] = e["reserved"]
            out.append((e["seq"], dict(res)))
    return out


def peaks(trace) -> dict:
    """Per device: peak and final live bytes, the seq of the peak, peak and final reserved bytes."""
    peak, peak_seq, final = {}, {}, {}
    for seq, live, _ in rows(trace):
        for dev, b in live.items():
            if b > peak.get(dev, -1):
                peak[dev], peak_seq[dev] = b, seq
        final = live
    res_peak, res_final = {}, {}
    for _, res in reserved_rows(trace):
        for dev, b in res.items():
            res_peak[dev] = max(b, res_peak.get(dev, 0))
        res_final = res
    return {"peak_bytes": peak, "peak_seq": peak_seq, "final_bytes": dict(final),
            "peak_reserved": res_peak, "final_reserved": dict(res_final)}


def by_device(trace) -> dict:
    """seq -> (device, {category: live bytes on that device}) after every memory event."""
    cats = {dev: dict(m.get("by_category") or {}) for dev, m in (trace.meta.get("memory_at_start") or {}).items()}
    out = {}
    for e in trace.events:
        if e["kind"] in MEMORY_KINDS:
            c = cats.setdefault(e["device"], {})
            for cat, b in moves(e):
                c[cat] = c.get(cat, 0) + b
            out[e["seq"]] = (e["device"], dict(c))
    return out


def cause_of(events, i: int) -> str:
    """What made event ``i`` happen, in words (rule 5)."""
    if not events:
        return ""
    if events[i].get("phase") == "backward":
        for j in range(i, -1, -1):
            if events[j].get("kind") == "execute":
                return f"{events[j].get('name')} (backward)"
    for j in range(i, min(len(events), i + 50)):
        e = events[j]
        if e.get("kind") == "op":
            w = where(e.get("file"), e.get("line"))
            return f"{e.get('op')}" + (f" ({w})" if w else "")
        if e.get("kind") == "optimizer_step":
            return "optimizer step"
    return events[i].get("kind", "")


def phase_runs(events) -> list:
    """[(first, last, phase)]: the runs of consecutive events in one phase."""
    out, start, ph = [], 0, None
    for i, e in enumerate(events):
        p = e.get("phase", "forward")
        if p != ph:
            if ph is not None:
                out.append((start, i - 1, ph))
            start, ph = i, p
    if ph is not None:
        out.append((start, len(events) - 1, ph))
    return out


@dataclass
class Timeline:
    """One device's memory after every event: ``by_category[c][i]`` = live bytes of c after event i."""
    device: str
    steps: list = field(default_factory=list)
    by_category: dict = field(default_factory=dict)
    total: list = field(default_factory=list)
    reserved: list | None = None
    phases: list = field(default_factory=list)       # [(first, last, phase)] runs of events
    peak_step: int = -1
    peak_bytes: int = 0
    peak_cause: str = ""
    act_peak_step: int = -1                          # the activation peak (rule 6): end of forward, usually
    act_peak_bytes: int = 0
    baseline: dict = field(default_factory=dict)     # bytes alive before recording, by category

    def at(self, step: int) -> dict:
        return {c: v[step] for c, v in self.by_category.items()}


def device_replay(trace, device: str) -> Replay:
    """The replay of one device: from ``memory_at_start`` for a recorded trace, else inferred (rule 2)."""
    evs = events_of(trace)
    meta = getattr(trace, "meta", None) or {}
    if isinstance(meta.get("memory_at_start"), dict):
        start, res = start_of(meta, device), reserved_start(meta, device)
    else:
        start, res = {}, {}
        for b, dev, c in preexisting(evs).values():
            if dev == device:
                start[c] = start.get(c, 0) + b
    if device not in res:   # rule 3: a picture starts from the first figure the events give
        first = next((e["reserved"] for e in evs if e.get("kind") in RESERVED_KINDS
                      and isinstance(e.get("reserved"), int) and e.get("device", device) == device), None)
        if first is not None:
            res[device] = first
    return Replay(evs, start, res, device)


def timeline(trace, device: str | None = None) -> Timeline:
    """One device's memory timeline (by default the device whose total peaks highest)."""
    evs = events_of(trace)
    if device is None:
        devs = devices(evs)
        meta = getattr(trace, "meta", None) or {}
        devs += [d for d in (meta.get("memory_at_start") or {}) if d not in devs]
        device = (max(devs, key=lambda d: device_replay(trace, d).peak_bytes) if len(devs) > 1
                  else devs[0] if devs else "cpu")
    r = device_replay(trace, device)
    series = {c: [0] * len(r) for c in CATEGORIES}
    for k, c in enumerate(r.categories):
        col = series[c if c in series else "other"]
        for i, snap in enumerate(r.snaps):
            col[i] += snap[k]
    baseline: dict = {}
    for c, b in r.baseline.items():
        c = c if c in CATEGORIES else "other"
        baseline[c] = baseline.get(c, 0) + b
    tl = Timeline(device, steps=list(range(len(evs))), by_category=series, total=list(r.total),
                  reserved=list(r.reserved) if r.has_reserved else None, phases=phase_runs(evs), baseline=baseline)
    if tl.total:
        tl.peak_bytes, tl.peak_step = r.peak_bytes, r.peak_index
        tl.peak_cause = cause_of(evs, tl.peak_step)
        tl.act_peak_step, tl.act_peak_bytes = r.act_peak_index, r.act_peak_bytes
    return tl
