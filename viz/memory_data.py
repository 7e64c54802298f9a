"""Live bytes after every event of a trace, by category: the data behind the memory pictures.

NOTE [ Memory replay ]
1. ``alloc`` adds a storage's bytes to its category, ``free`` removes them,
   ``category`` moves them (an "other" storage becomes an "activation" when a
   node saves it, and back when backward releases it).
2. Storages alive before recording began have no ``alloc``. A recorded trace
   carries their bytes by category in ``meta["memory_at_start"]`` and is replayed
   with ``Trace.replay_memory``. For a bare event list, the first event that
   mentions such a storage (a ``free``, a ``category``, or a tensor in an ``op`` /
   ``leaf`` event) reveals it; it is counted from the start of the timeline, in
   the category that event implies (a ``category`` event's ``old``, a ``free``'s
   ``category``, a named leaf that requires grad -> "parameter", else "other").
   ``baseline`` reports those bytes.
3. One device at a time: by default the device whose total peaks highest.
4. ``reserved`` comes from the trace only (the caching allocator model's figure on
   ``alloc``/``free``/``empty_cache`` events); a trace without it has ``reserved`` None.
   Before the device's first such event it is ``meta["memory_at_start"]``'s
   ``reserved`` or, for a bare event list, the first figure the events give.
5. The peak is the first event where the total is highest; its cause is the op
   whose output that event allocated (the next ``op`` event in forward or
   recompute) or, in backward, the node executing then.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import _fmt

_RESERVED_KINDS = ("alloc", "free", "empty_cache")
CATEGORIES = ("parameter", "optimizer", "gradient", "activation", "input", "other")
LABELS = {"parameter": "parameters", "optimizer": "optimizer state", "gradient": "gradients",
          "activation": "activations (saved for backward)", "input": "inputs", "other": "other (outputs, temporaries)"}


@dataclass
class MemoryTimeline:
    """Per-event samples: ``by_category[c][i]`` = live bytes of category c after event i."""
    device: str
    steps: list = field(default_factory=list)
    by_category: dict = field(default_factory=dict)
    total: list = field(default_factory=list)
    reserved: list | None = None
    phases: list = field(default_factory=list)       # [(first, last, phase)] runs of events
    peak_step: int = -1
    peak_bytes: int = 0
    peak_cause: str = ""
    baseline: dict = field(default_factory=dict)     # bytes alive before recording, by category

    def at(self, step: int) -> dict:
        return {c: v[step] for c, v in self.by_category.items()}


def _events(trace):
    return trace.events if hasattr(trace, "events") else list(trace)


def _tensor_infos(e):
    for t in e.get("inputs") or []:
        if isinstance(t, dict) and "storage" in t:
            yield t
    for key in ("output", "tensor"):
        t = e.get(key)
        if isinstance(t, dict) and "storage" in t:
            yield t


def _preexisting(evs) -> dict:
    """Storage id -> (bytes, device, category) for storages alive before recording (rule 2)."""
    seen, pre = set(), {}
    for e in evs:
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
    return pre


def devices(trace) -> list[str]:
    evs = _events(trace)
    out = []
    for e in evs:
        d = e.get("device") if e.get("kind") in ("alloc", "free", "category") else None
        if d is not None and d not in out:
            out.append(d)
    for _, dev, _ in _preexisting(evs).values():
        if dev not in out:
            out.append(dev)
    return out


def cause_of(evs, i: int) -> str:
    """What made event ``i`` happen, in words (rule 5)."""
    if not evs:
        return ""
    ph = evs[i].get("phase")
    if ph == "backward":
        for j in range(i, -1, -1):
            if evs[j].get("kind") == "execute":
                return f"{evs[j].get('name')} (backward)"
    for j in range(i, min(len(evs), i + 50)):
        e = evs[j]
        if e.get("kind") == "op":
            w = _fmt.where(e.get("file"), e.get("line"))
            return f"{e.get('op')}" + (f" ({w})" if w else "")
        if e.get("kind") == "optimizer_step":
            return "optimizer step"
    return evs[i].get("kind", "")


def _norm(cats: dict) -> dict:
    out = {c: 0 for c in CATEGORIES}
    for c, b in cats.items():
        out[c if c in out else "other"] += b
    return out


def _own_replay(evs, device):
    """Rule 1-2: per-event category bytes from alloc/free/category events, inferring what came before."""
    pre = {s: v for s, v in _preexisting(evs).items() if v[1] == device}
    cur = {c: 0 for c in CATEGORIES}
    live: dict = {}
    baseline: dict = {}
    for sid, (b, _, c) in pre.items():
        c = c if c in cur else "other"
        live[sid] = (b, c)
        cur[c] += b
        baseline[c] = baseline.get(c, 0) + b
    series = []
    for e in evs:
        k = e.get("kind")
        if k in ("alloc", "free", "category") and e.get("device", device) == device:
            sid = e.get("storage")
            if k == "alloc" and sid not in live:
                c = e.get("category", "other")
                c = c if c in cur else "other"
                live[sid] = (e.get("bytes", 0), c)
                cur[c] += e.get("bytes", 0)
            elif k == "free" and sid in live:
                b, c = live.pop(sid)
                cur[c] -= b
            elif k == "category" and sid in live:
                b, c = live[sid]
                new = e.get("new", "other")
                new = new if new in cur else "other"
                cur[c] -= b
                cur[new] += b
                live[sid] = (b, new)
        series.append(cur.copy())
    return series, baseline


def _trace_replay(trace, evs, device, start):
    """The trace's own ``replay_memory`` (it starts from ``meta["memory_at_start"]``), one sample per event."""
    at = {seq: cats for seq, _, cats in trace.replay_memory(device)}
    baseline = {c: b for c, b in start.get(device, {}).get("by_category", {}).items() if b}
    cur = _norm(baseline)
    series = []
    for e in evs:
        cats = at.get(e.get("seq"))
        if cats is not None:
            cur = _norm(cats)
        series.append(cur)
    return series, baseline


def timeline(trace, device: str | None = None) -> MemoryTimeline:
    """Replay alloc/free/category events into per-event live bytes by category.

    A recorded Trace whose meta has ``memory_at_start`` is replayed by
    ``Trace.replay_memory`` (live bytes as ``engine.memory.memory_allocated``
    counts them); a bare event list by this module's own replay (rules 1-2).
    """
    evs = _events(trace)
    start = (getattr(trace, "meta", None) or {}).get("memory_at_start")
    use_trace = isinstance(start, dict) and hasattr(trace, "replay_memory")
    if device is None:
        devs = devices(evs)
        for d in (start or {}) if use_trace else ():
            if d not in devs:
                devs.append(d)
        if len(devs) > 1:
            device = max(devs, key=lambda d: timeline(trace, d).peak_bytes)
        else:
            device = devs[0] if devs else "cpu"
    series, baseline = _trace_replay(trace, evs, device, start) if use_trace else _own_replay(evs, device)
    tl = MemoryTimeline(device, baseline=baseline)
    tl.by_category = {c: [s[c] for s in series] for c in CATEGORIES}
    tl.total = [sum(s.values()) for s in series]
    def has_reserved(e):
        return (e.get("kind") in _RESERVED_KINDS and isinstance(e.get("reserved"), int)
                and e.get("device", device) == device)
    res_evs = [e for e in evs if has_reserved(e)]
    if res_evs:
        res_now = ((start or {}).get(device) or {}).get("reserved") if use_trace else None
        res_now = res_now if isinstance(res_now, int) else res_evs[0]["reserved"]
        reserved = []
        for e in evs:
            if has_reserved(e):
                res_now = e["reserved"]
            reserved.append(res_now)
        tl.reserved = reserved
    ph_start, ph = 0, None
    for i, e in enumerate(evs):
        p = e.get("phase", "forward")
        if p != ph:
            if ph is not None:
                tl.phases.append((ph_start, i - 1, ph))
            ph_start, ph = i, p
    if ph is not None:
        tl.phases.append((ph_start, len(evs) - 1, ph))
    tl.steps = list(range(len(evs)))
    if tl.total:
        tl.peak_bytes = max(tl.total)
        tl.peak_step = tl.total.index(tl.peak_bytes)
        tl.peak_cause = cause_of(evs, tl.peak_step)
    return tl
