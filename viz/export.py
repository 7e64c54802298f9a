"""Exports of a recorded trace for outside viewers.

``to_chrome_trace(trace, path)`` writes Chrome's trace event JSON (open it in Perfetto,
ui.perfetto.dev, or chrome://tracing):
- one process "glassgrad", one thread per phase (forward, backward, recompute,
  optimizer, tids 1-4);
- every ``op`` event is a complete slice ("ph": "X") on its phase's thread, from the
  previous op or node boundary in that phase (or the phase's first event) up to the op
  event itself (the recorder stamps an op when it has finished); every ``execute`` is a slice from its
  own time to the next execute or the end of that backward pass;
- ``backward_begin``..``backward_end``, ``checkpoint_enter``..``checkpoint_exit`` and
  ``recompute_begin``..``recompute_end`` are enclosing slices, ``optimizer_step`` a
  slice over its optimizer-phase events, ``mark`` an instant event;
- memory is a counter ("ph": "C") per device, "memory <device>", with one series per
  category, sampled at every alloc/free/category event (values from
  ``replay.memory.by_device``); the caching allocator model's reserved bytes are a
  second counter, "reserved <device>" (series "reserved"), sampled at every
  alloc/free/empty_cache event that carries them (its own track: it is often far
  larger than the live bytes).
Timestamps are microseconds since recording began.

``to_memory_snapshot(trace, path)`` writes the structure ``torch.cuda.memory._snapshot()``
returns and PyTorch's memory viewer (pytorch.org/memory_viz) reads: ``{"segments":
[...], "device_traces": [[...], ...]}``. A fresh caching allocator model (NOTE [ Caching
allocator model ] in engine/_allocator.py) is run over the trace's alloc, free and
empty_cache events, so addresses, segments and blocks are the model's. Each device
trace lists ``segment_alloc``, ``alloc``, ``free_requested``, ``free_completed`` and
``segment_free`` entries with ``addr``, ``size`` (requested bytes for alloc/free, segment
bytes for segments), ``stream`` 0, ``time_us``, ``frames`` and glassgrad's ``category``.
Frames name the op that made the storage (``filename``/``line`` of the user's code,
``name`` the op) or, in backward, the node that was running. Devices are numbered as
PyTorch numbers them: ``cuda:i`` is i, the CPU comes after the last CUDA device (0 when
there is none). A path ending in ``.json`` gets JSON, anything else a pickle of plain
dicts, lists, ints and strings (what ``torch.cuda.memory._dump_snapshot`` writes).
PyTorch's own reader, ``python -m torch.cuda._memory_viz stats|trace|trace_plot|
segment_plot FILE``, accepts the pickle.
"""
from __future__ import annotations

import json
import pickle

from replay.memory import by_device

PHASE_TIDS = {"forward": 1, "backward": 2, "recompute": 3, "optimizer": 4}
PID = 1


def _us(t) -> float:
    return round(t * 1e6, 3)


def chrome_trace(trace) -> dict:
    """The Chrome trace event dict for ``trace`` (see the module docstring)."""
    out = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": "glassgrad"}}]
    for phase, tid in PHASE_TIDS.items():
        out.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": {"name": phase}})
    events = trace.events
    slices = []
    open_: dict = {}          # (kind, key) -> start event
    op_start: dict = {}       # phase -> t where the next op's slice starts
    pending_exec = None       # the execute slice still open
    opt_start = None
    for e in events:
        k, t, ph = e["kind"], e["t"], e["phase"]
        tid = PHASE_TIDS.get(ph, 1)
        op_start.setdefault(ph, t)
        if pending_exec is not None and k in ("execute", "backward_end"):
            s = pending_exec
            slices.append(_slice(s["name"], "node", s["t"], t, PHASE_TIDS.get(s["phase"], 2),
                                 {"node": s["node"], "seq": s["seq"]}))
            pending_exec = None
        if k == "op":
            start = op_start.get(ph, t)
            node = e.get("node")
            args = {"seq": e["seq"], "output": e["output"].get("shape") if e.get("output") else None,
                    "node": node["name"] if node else None,
                    "saved_bytes": sum(s["bytes"] for s in node["saved"]) if node else 0}
            if e.get("file"):
                args["source"] = f"{e['file']}:{e['line']}"
            slices.append(_slice(e["op"], "op", start, t, tid, args))
            op_start[ph] = t
        elif k == "execute":
            pending_exec = e
            op_start[ph] = t
        elif k in ("backward_begin", "checkpoint_enter", "recompute_begin"):
            open_[(k, e.get("region"))] = e
            op_start[ph] = t
        elif k in ("backward_end", "checkpoint_exit", "recompute_end"):
            begin = {"backward_end": "backward_begin", "checkpoint_exit": "checkpoint_enter",
                     "recompute_end": "recompute_begin"}[k]
            s = open_.pop((begin, e.get("region")), None)
            if s is not None:
                name = {"backward_begin": "backward", "checkpoint_enter": f"checkpoint {s.get('fn', '')}".strip(),
                        "recompute_begin": "recompute"}[begin]
                stid = PHASE_TIDS["backward"] if begin == "backward_begin" else PHASE_TIDS.get(s["phase"], 1)
                args = {"region": s["region"]} if "region" in s else {"roots": s.get("roots")}
                slices.append(_slice(name, begin.split("_")[0], s["t"], t, stid, args))
            op_start[ph] = t
        elif k == "optimizer_step":
            slices.append(_slice(f"{e.get('optimizer', 'optimizer')}.step", "optimizer",
                                 opt_start if opt_start is not None else t, t, tid,
                                 {"step": e.get("step"), "params": e.get("params")}))
            opt_start = None
            op_start[ph] = t
        elif k == "mark":
            out.append({"name": e.get("text", ""), "ph": "i", "s": "g", "ts": _us(t), "pid": PID, "tid": tid,
                        "args": {"seq": e["seq"]}})
        if ph == "optimizer" and opt_start is None and k != "optimizer_step":
            opt_start = t
    if pending_exec is not None:
        s = pending_exec
        slices.append(_slice(s["name"], "node", s["t"], s["t"], PHASE_TIDS.get(s["phase"], 2),
                             {"node": s["node"], "seq": s["seq"]}))
    out.extend(slices)
    by_dev = by_device(trace)
    for e in events:
        rows = by_dev.get(e["seq"])
        if rows is None:
            continue
        dev, cats = rows
        out.append({"name": f"memory {dev}", "ph": "C", "ts": _us(e["t"]), "pid": PID,
                    "args": {c: b for c, b in sorted(cats.items())}})
    for e in events:
        if e["kind"] in ("alloc", "free", "empty_cache") and isinstance(e.get("reserved"), int):
            out.append({"name": f"reserved {e['device']}", "ph": "C", "ts": _us(e["t"]), "pid": PID,
                        "args": {"reserved": e["reserved"]}})
    return {"traceEvents": out, "displayTimeUnit": "ms",
            "otherData": {"format": "glassgrad-trace", "meta": _jsonable(trace.meta)}}


def _slice(name, cat, start, end, tid, args) -> dict:
    return {"name": name, "cat": cat, "ph": "X", "ts": _us(start), "dur": round(max(end - start, 0) * 1e6, 3),
            "pid": PID, "tid": tid, "args": args}


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=repr))


def to_chrome_trace(trace, path) -> dict:
    """Write ``trace`` as Chrome trace event JSON to ``path``; returns the dict written."""
    data = chrome_trace(trace)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return data


# ---- PyTorch memory snapshot ---------------------------------------------------------
def _device_numbers(devices) -> dict:
    cuda = sorted(int(d.split(":")[1]) if ":" in d else 0 for d in devices if d.startswith("cuda"))
    n_cuda = (max(cuda) + 1) if cuda else 0
    return {d: (int(d.split(":")[1]) if ":" in d else 0) if d.startswith("cuda") else n_cuda
            for d in devices}


def memory_snapshot(trace) -> dict:
    """The ``torch.cuda.memory._snapshot()`` dict for ``trace`` (see the module docstring)."""
    from engine.memory.allocator import CachingAllocatorModel

    frames: dict = {}         # storage id -> frames
    pending: list = []        # storages allocated since the last op event
    running = None            # the backward node running now
    for e in trace.events:
        k = e["kind"]
        if k == "alloc":
            if running is not None and e["phase"] in ("backward", "recompute"):
                frames[e["storage"]] = [{"filename": "", "line": 0, "name": running}]
            else:
                pending.append(e["storage"])
        elif k == "op":
            fr = [{"filename": e.get("file") or "", "line": e.get("line") or 0, "name": e["op"]}]
            for sid in pending:
                frames[sid] = fr
            pending = []
        elif k == "execute":
            running = e["name"]
        elif k == "backward_end":
            running = None
    devices = sorted({e["device"] for e in trace.events if e["kind"] in ("alloc", "free", "empty_cache")})
    number = _device_numbers(devices)
    n = (max(number.values()) + 1) if number else 1
    traces: list = [[] for _ in range(n)]
    models = {d: CachingAllocatorModel(d) for d in devices}
    for e in trace.events:
        k = e["kind"]
        if k not in ("alloc", "free", "empty_cache"):
            continue
        dev = e["device"]
        m = models[dev]
        out = traces[number[dev]]
        ts = int(round(e["t"] * 1e6))
        if k == "alloc":
            before = set(m.segments)
            b = m.malloc(e["storage"], e["bytes"])
            if b is None:
                continue
            for addr in sorted(set(m.segments) - before):
                out.append({"action": "segment_alloc", "addr": addr, "size": m.segments[addr].size,
                            "stream": 0, "time_us": ts, "frames": []})
            out.append({"action": "alloc", "addr": b.address, "size": e["bytes"], "stream": 0, "time_us": ts,
                        "frames": frames.get(e["storage"], []), "category": e["category"]})
        elif k == "free":
            b = m.by_owner.get(e["storage"])
            if b is None:
                continue          # allocated before recording began: not in the model
            entry = {"addr": b.address, "size": e["bytes"], "stream": 0, "time_us": ts,
                     "frames": frames.get(e["storage"], []), "category": e["category"]}
            out.append({"action": "free_requested", **entry})
            m.free(e["storage"])
            out.append({"action": "free_completed", **entry})
        else:
            before = dict(m.segments)
            m.empty_cache()
            for addr in sorted(set(before) - set(m.segments)):
                out.append({"action": "segment_free", "addr": addr, "size": before[addr].size, "stream": 0,
                            "time_us": ts, "frames": []})
    segments = []
    for dev in devices:
        segments.extend(models[dev].snapshot(number[dev], frames))
    return {"segments": segments, "device_traces": traces}


def to_memory_snapshot(trace, path) -> dict:
    """Write the memory snapshot of ``trace`` to ``path`` (JSON for .json, else pickle)."""
    data = memory_snapshot(trace)
    if str(path).endswith(".json"):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
    else:
        with open(path, "wb") as f:
            pickle.dump(data, f)
    return data
