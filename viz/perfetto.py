"""A trace as Chrome trace-event JSON, for Perfetto (ui.perfetto.dev) or chrome://tracing.

NOTE [ Perfetto export ]
1. Times are the events' ``t`` in microseconds. Track 1 ("ops") has one complete slice
   (``ph: "X"``) per forward or recompute ``op`` event, lasting until the next event;
   track 2 ("backward") one per executed node, lasting until the next ``execute`` or the
   end of its backward; track 3 ("phases") one slice per run of one phase.
2. Memory is a counter (``ph: "C"``) per device, ``live bytes`` with one series per
   category, written at each event that moves memory, starting from what was alive when
   recording began (NOTE [ Memory replay ] rules 1-2); a second
   counter gives ``reserved`` bytes when the trace has them.
3. Marks (lesson steps) and checkpoint regions are instant events (``ph: "i"``).
4. Every string is the trace's own, already made safe by the trace loader; the output is
   plain JSON.
"""
from __future__ import annotations

import json

from replay.memory import MEMORY_KINDS, events_of, moves, phase_runs, preexisting

PID = 1
TRACKS = {"ops": 1, "backward": 2, "phases": 3}


def _us(e) -> float:
    return round(1e6 * float(e.get("t", 0.0)), 3)


def perfetto(trace) -> dict:
    """The trace-event dict (rules 1-3)."""
    events = events_of(trace)
    out = [{"ph": "M", "pid": PID, "name": "process_name", "args": {"name": "glassgrad"}}]
    out += [{"ph": "M", "pid": PID, "tid": tid, "name": "thread_name", "args": {"name": name}}
            for name, tid in TRACKS.items()]
    n = len(events)
    for i, e in enumerate(events):
        k = e.get("kind")
        nxt = _us(events[i + 1]) if i + 1 < n else _us(e)
        if k == "op" and e.get("phase") in ("forward", "recompute"):
            args = {"output": (e.get("output") or {}).get("shape"), "event": i}
            if e.get("file"):
                args["where"] = f"{e.get('file')}:{e.get('line')}"
            out.append({"ph": "X", "pid": PID, "tid": TRACKS["ops"], "name": str(e.get("op")),
                        "ts": _us(e), "dur": max(0.0, nxt - _us(e)), "args": args})
        elif k == "execute":
            end = next((_us(events[j]) for j in range(i + 1, n)
                        if events[j].get("kind") in ("execute", "backward_end")), nxt)
            out.append({"ph": "X", "pid": PID, "tid": TRACKS["backward"], "name": str(e.get("name")),
                        "ts": _us(e), "dur": max(0.0, end - _us(e)), "args": {"node": e.get("node"), "event": i}})
        elif k in ("mark", "checkpoint_enter", "recompute_begin"):
            label = e.get("title") or e.get("text") or k
            out.append({"ph": "i", "pid": PID, "tid": TRACKS["phases"], "s": "p", "name": str(label),
                        "ts": _us(e), "args": {"event": i}})
    for lo, hi, ph in phase_runs(events):
        out.append({"ph": "X", "pid": PID, "tid": TRACKS["phases"], "name": ph, "ts": _us(events[lo]),
                    "dur": max(0.0, _us(events[hi]) - _us(events[lo]))})
    live: dict = {}
    at_start = (getattr(trace, "meta", None) or {}).get("memory_at_start") or {}
    if at_start:                                  # what the recorder saw alive (NOTE [ Memory replay ] rule 2)
        for dev, m in at_start.items():
            live[dev] = {c: b for c, b in (m.get("by_category") or {}).items()}
    else:
        for b, dev, cat in preexisting(events).values():
            live.setdefault(dev, {})[cat] = live.get(dev, {}).get(cat, 0) + b
    for i, e in enumerate(events):
        k = e.get("kind")
        if k in MEMORY_KINDS:
            dev = e.get("device", "cpu")
            cats = live.setdefault(dev, {})
            for cat, b in moves(e):
                cats[cat] = cats.get(cat, 0) + b
            out.append({"ph": "C", "pid": PID, "name": f"live bytes {dev}", "ts": _us(e), "args": dict(cats)})
        if isinstance(e.get("reserved"), int):
            out.append({"ph": "C", "pid": PID, "name": f"reserved {e.get('device', 'cpu')}", "ts": _us(e),
                        "args": {"reserved": e["reserved"]}})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def write_perfetto(trace, path) -> int:
    """Write the JSON to ``path``; returns the number of trace events."""
    data = perfetto(trace)
    with open(path, "w") as f:
        json.dump(data, f)
    return len(data["traceEvents"])
