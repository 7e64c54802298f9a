"""Chrome trace and PyTorch memory snapshot exports, checked exactly on a small trace."""
import json
import pickle

import engine
import engine.nn.functional as F
from engine.memory.allocator import BASE
from engine.trace import Trace
from viz.export import chrome_trace, memory_snapshot, to_chrome_trace, to_memory_snapshot

MiB = 1 << 20


def ev(seq, t, phase, kind, **fields):
    return {"seq": seq, "t": t, "phase": phase, "kind": kind, **fields}


def small_trace():
    node = {"id": 7, "name": "ExpBackward0", "next": [], "attrs": {},
            "saved": [{"name": "result", "storage": 1, "bytes": 100, "shape": [25], "dtype": "float32",
                       "is_output": True, "packed": False}]}
    return Trace([
        ev(0, 0.001, "forward", "alloc", storage=1, bytes=100, device="cpu", category="other"),
        ev(1, 0.0015, "forward", "category", storage=1, bytes=100, device="cpu", old="other", new="activation"),
        ev(2, 0.002, "forward", "op", op="exp", inputs=[], output={"shape": [25], "storage": 1}, node=node,
           file="m.py", line=3, region=None),
        ev(3, 0.003, "forward", "mark", text="hello"),
        ev(4, 0.004, "forward", "backward_begin", roots=[9], retain_graph=False, create_graph=False),
        ev(5, 0.005, "backward", "execute", node=7, name="ExpBackward0"),
        ev(6, 0.006, "backward", "alloc", storage=2, bytes=3 * MiB, device="cpu", category="other"),
        ev(7, 0.007, "backward", "free", storage=1, bytes=100, device="cpu", category="activation"),
        ev(8, 0.008, "backward", "backward_end", roots=[9]),
        ev(9, 0.009, "forward", "free", storage=2, bytes=3 * MiB, device="cpu", category="other"),
        ev(10, 0.010, "forward", "empty_cache", device="cpu", bytes=22 * MiB),
    ], meta={"memory_at_start": {"cpu": {"allocated": 40, "by_category": {"input": 40}}}})


def test_chrome_trace_structure():
    d = chrome_trace(small_trace())
    assert d["displayTimeUnit"] == "ms"
    assert d["otherData"]["format"] == "glassgrad-trace"
    evs = d["traceEvents"]
    meta = [e for e in evs if e["ph"] == "M"]
    assert [(e["name"], e["tid"], e["args"]["name"]) for e in meta] == [
        ("process_name", 0, "glassgrad"), ("thread_name", 1, "forward"), ("thread_name", 2, "backward"),
        ("thread_name", 3, "recompute"), ("thread_name", 4, "optimizer")]
    slices = [e for e in evs if e["ph"] == "X"]
    assert slices == [
        {"name": "exp", "cat": "op", "ph": "X", "ts": 1000.0, "dur": 1000.0, "pid": 1, "tid": 1,
         "args": {"seq": 2, "output": [25], "node": "ExpBackward0", "saved_bytes": 100, "source": "m.py:3"}},
        {"name": "ExpBackward0", "cat": "node", "ph": "X", "ts": 5000.0, "dur": 3000.0, "pid": 1, "tid": 2,
         "args": {"node": 7, "seq": 5}},
        {"name": "backward", "cat": "backward", "ph": "X", "ts": 4000.0, "dur": 4000.0, "pid": 1, "tid": 2,
         "args": {"roots": [9]}},
    ]
    assert [e for e in evs if e["ph"] == "i"] == [
        {"name": "hello", "ph": "i", "s": "g", "ts": 3000.0, "pid": 1, "tid": 1, "args": {"seq": 3}}]
    counters = [(e["name"], e["ts"], e["args"]) for e in evs if e["ph"] == "C"]
    assert counters == [
        ("memory cpu", 1000.0, {"input": 40, "other": 100}),
        ("memory cpu", 1500.0, {"activation": 100, "input": 40, "other": 0}),
        ("memory cpu", 6000.0, {"activation": 100, "input": 40, "other": 3 * MiB}),
        ("memory cpu", 7000.0, {"activation": 0, "input": 40, "other": 3 * MiB}),
        ("memory cpu", 9000.0, {"activation": 0, "input": 40, "other": 0}),
    ]


def test_memory_snapshot_structure():
    s = memory_snapshot(small_trace())
    assert s["segments"] == []                       # empty_cache gave both segments back
    exp = [{"filename": "m.py", "line": 3, "name": "exp"}]
    bwd = [{"filename": "", "line": 0, "name": "ExpBackward0"}]
    big = BASE + 2 * MiB
    assert s["device_traces"] == [[
        {"action": "segment_alloc", "addr": BASE, "size": 2 * MiB, "stream": 0, "time_us": 1000, "frames": []},
        {"action": "alloc", "addr": BASE, "size": 100, "stream": 0, "time_us": 1000, "frames": exp,
         "category": "other"},
        {"action": "segment_alloc", "addr": big, "size": 20 * MiB, "stream": 0, "time_us": 6000, "frames": []},
        {"action": "alloc", "addr": big, "size": 3 * MiB, "stream": 0, "time_us": 6000, "frames": bwd,
         "category": "other"},
        {"action": "free_requested", "addr": BASE, "size": 100, "stream": 0, "time_us": 7000, "frames": exp,
         "category": "activation"},
        {"action": "free_completed", "addr": BASE, "size": 100, "stream": 0, "time_us": 7000, "frames": exp,
         "category": "activation"},
        {"action": "free_requested", "addr": big, "size": 3 * MiB, "stream": 0, "time_us": 9000, "frames": bwd,
         "category": "other"},
        {"action": "free_completed", "addr": big, "size": 3 * MiB, "stream": 0, "time_us": 9000, "frames": bwd,
         "category": "other"},
        {"action": "segment_free", "addr": BASE, "size": 2 * MiB, "stream": 0, "time_us": 10000, "frames": []},
        {"action": "segment_free", "addr": big, "size": 20 * MiB, "stream": 0, "time_us": 10000, "frames": []},
    ]]


def test_memory_snapshot_live_segments_and_blocks():
    t = small_trace()
    t.events = t.events[:7]                          # stop while both storages are live
    s = memory_snapshot(t)
    assert s["segments"] == [
        {"device": 0, "address": BASE, "total_size": 2 * MiB, "allocated_size": 512, "active_size": 512,
         "requested_size": 100, "stream": 0, "segment_type": "small", "segment_pool_id": [0, 0],
         "is_expandable": False, "frames": [],
         "blocks": [{"address": BASE, "size": 512, "requested_size": 100, "state": "active_allocated",
                     "frames": [{"filename": "m.py", "line": 3, "name": "exp"}]},
                    {"address": BASE + 512, "size": 2 * MiB - 512, "requested_size": 0, "state": "inactive",
                     "frames": []}]},
        {"device": 0, "address": BASE + 2 * MiB, "total_size": 20 * MiB, "allocated_size": 3 * MiB,
         "active_size": 3 * MiB, "requested_size": 3 * MiB, "stream": 0, "segment_type": "large",
         "segment_pool_id": [0, 0], "is_expandable": False, "frames": [],
         "blocks": [{"address": BASE + 2 * MiB, "size": 3 * MiB, "requested_size": 3 * MiB,
                     "state": "active_allocated", "frames": [{"filename": "", "line": 0, "name": "ExpBackward0"}]},
                    {"address": BASE + 5 * MiB, "size": 17 * MiB, "requested_size": 0, "state": "inactive",
                     "frames": []}]}]


def test_devices_are_numbered_as_pytorch_does():
    t = Trace([ev(0, 0.0, "forward", "alloc", storage=1, bytes=8, device="cuda:1", category="other"),
               ev(1, 0.1, "forward", "alloc", storage=2, bytes=8, device="cpu", category="other")])
    s = memory_snapshot(t)
    assert [len(d) for d in s["device_traces"]] == [0, 2, 2]       # cuda:0, cuda:1, then the CPU
    assert [seg["device"] for seg in s["segments"]] == [2, 1]


def test_files_written_from_a_real_recording(tmp_path):
    w = engine.randn(3, 2, requires_grad=True)
    x = engine.randn(4, 2)
    with engine.record() as tr:
        F.linear(x, w).relu().sum().backward()
    d = to_chrome_trace(tr, tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text()) == d
    names = [e["name"] for e in d["traceEvents"] if e["ph"] == "X"]
    assert names[:4] == ["t", "mm", "relu", "sum"] and "backward" in names and "ReluBackward0" in names
    s = to_memory_snapshot(tr, tmp_path / "snap.pickle")
    assert pickle.loads((tmp_path / "snap.pickle").read_bytes()) == s
    s2 = to_memory_snapshot(tr, tmp_path / "snap.json")
    assert json.loads((tmp_path / "snap.json").read_text()) == s2 == s
    allocs = [e for e in s["device_traces"][0] if e["action"] == "alloc"]
    assert len(allocs) == len(tr.of_kind("alloc"))
    assert allocs[0]["frames"][0]["name"] == "mm"


def test_chrome_trace_reserved_counter():
    tr = small_trace()
    reserved = {0: 2 * MiB, 6: 22 * MiB, 7: 22 * MiB, 9: 22 * MiB, 10: 0}
    for e in tr.events:
        if e["seq"] in reserved:
            e["reserved"] = reserved[e["seq"]]
    evs = chrome_trace(tr)["traceEvents"]
    assert [(e["name"], e["ts"], e["args"]) for e in evs if e["ph"] == "C" and e["name"].startswith("reserved")] == [
        ("reserved cpu", 1000.0, {"reserved": 2 * MiB}), ("reserved cpu", 6000.0, {"reserved": 22 * MiB}),
        ("reserved cpu", 7000.0, {"reserved": 22 * MiB}), ("reserved cpu", 9000.0, {"reserved": 22 * MiB}),
        ("reserved cpu", 10000.0, {"reserved": 0})]
    assert len([e for e in evs if e["name"] == "memory cpu"]) == 5      # the live-bytes counter is unchanged
