"""A trace as PyTorch's memory snapshot (``torch.cuda.memory._dump_snapshot``'s pickle), for
PyTorch's own viewer at pytorch.org/memory_viz.

NOTE [ Snapshot export ]
1. The snapshot is the dict PyTorch pickles: ``segments`` (the allocator's state at the end,
   NOTE [ Segments at an event ] in replay/segments.py) and ``device_traces`` (one list per
   device index of trace entries: ``action``, ``addr``, ``size``, ``stream``, ``frames``,
   ``time_us``).
2. Entries come from replaying the trace's ``alloc``/``free``/``empty_cache`` events into the
   allocator model: ``segment_alloc`` when a new segment is reserved, ``alloc`` for a block,
   ``free_requested`` then ``free_completed`` for a free, ``segment_free`` per released
   segment. Sizes are block sizes (multiples of 512), as PyTorch records them.
3. A block's frames are its maker's source line and op (NOTE [ Storage lifetimes ] rule 3),
   innermost first as PyTorch lists them.
4. Each device of the trace gets its own index (``cuda:1`` -> 1; ``cpu`` -> 0 when it is the
   only device). Addresses are the model's, not real ones.
5. Only plain dicts, lists, strings and ints are pickled: the file loads anywhere with
   ``pickle.load`` (no glassgrad classes), and PyTorch's viewer reads it.
"""
from __future__ import annotations

import pickle

from engine.memory.allocator import CachingAllocatorModel
from replay.lifetimes import lifetimes
from replay.memory import events_of, preexisting


def _device_index(dev: str, devices: list) -> int:
    if ":" in dev:
        try:
            return int(dev.split(":")[1])
        except ValueError:
            pass
    return devices.index(dev)


def snapshot(trace) -> dict:
    """The snapshot dict of ``trace`` (rules 1-4)."""
    events = events_of(trace)
    lts = {lt.storage: lt for lt in lifetimes(events)}
    devices = []
    for e in events:
        if e.get("kind") in ("alloc", "free") and e.get("device") not in devices:
            devices.append(e.get("device"))
    for _, dev, _ in preexisting(events).values():
        if dev not in devices:
            devices.append(dev)
    models = {dev: CachingAllocatorModel(dev) for dev in devices}
    traces: dict = {dev: [] for dev in devices}

    def frames(sid):
        lt = lts.get(sid)
        if lt is None or not lt.where:
            return []
        file, _, line = lt.where.rpartition(":")
        return [{"filename": file, "line": int(line) if line.isdigit() else 0, "name": lt.made_by or "?"}]

    def malloc(dev, sid, nbytes, t):
        m = models[dev]
        before = set(m.segments)
        b = m.malloc(sid, nbytes)
        if b is None:
            return
        for addr in sorted(set(m.segments) - before):
            traces[dev].append({"action": "segment_alloc", "addr": addr, "size": m.segments[addr].size,
                                "stream": 0, "frames": frames(sid), "time_us": t})
        traces[dev].append({"action": "alloc", "addr": b.address, "size": b.size, "stream": 0,
                            "frames": frames(sid), "time_us": t})

    for sid, (b, dev, _) in sorted(preexisting(events).items(), key=lambda kv: str(kv[0])):
        malloc(dev, sid, b, 0)
    for e in events:
        k, dev = e.get("kind"), e.get("device")
        t = int(1e6 * e.get("t", 0.0))
        if k == "alloc" and dev in models:
            malloc(dev, e.get("storage"), e.get("bytes", 0), t)
        elif k == "free" and dev in models:
            b = models[dev].by_owner.get(e.get("storage"))
            if b is None:
                continue
            addr, size = b.address, b.size
            for action in ("free_requested", "free_completed"):
                traces[dev].append({"action": action, "addr": addr, "size": size, "stream": 0,
                                    "frames": frames(e.get("storage")), "time_us": t})
            models[dev].free(e.get("storage"))
        elif k == "empty_cache" and dev in models:
            m = models[dev]
            before = {a: s.size for a, s in m.segments.items()}
            m.empty_cache()
            for addr in sorted(set(before) - set(m.segments)):
                traces[dev].append({"action": "segment_free", "addr": addr, "size": before[addr], "stream": 0,
                                    "frames": [], "time_us": t})
    n = max([_device_index(d, devices) for d in devices] + [-1]) + 1
    device_traces = [[] for _ in range(n)]
    segments = []
    for dev in devices:
        idx = _device_index(dev, devices)
        device_traces[idx] = traces[dev]
        frames_of = {sid: frames(sid) for sid in models[dev].by_owner}
        segments.extend(models[dev].snapshot(idx, frames_of))
    return {"segments": segments, "device_traces": device_traces}


def write_snapshot(trace, path) -> int:
    """Pickle the snapshot to ``path``; returns the number of trace entries written."""
    snap = snapshot(trace)
    with open(path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    return sum(len(t) for t in snap["device_traces"])
