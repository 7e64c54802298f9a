"""``reserved`` on alloc/free/empty_cache events (NOTE [ Reserved bytes in events ]).

Each test that needs exact segment sizes gets a fresh allocator model for every
device, so the first request on "cpu" opens the first segment.
"""
import gc
import json

import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from engine.memory import allocator as _allocator, state as _memstate
from engine import memory
from engine.trace import Trace, TraceFormatError, record

KiB, MiB = 1 << 10, 1 << 20


@pytest.fixture
def fresh(monkeypatch):
    """A fresh allocator model per device for this test (storages from before are unknown to it)."""
    gc.collect()
    gc.disable()
    monkeypatch.setattr(_allocator.hook, "models", {})
    yield
    gc.enable()


def _mem(tr):
    return [(e["kind"], e.get("bytes"), e["reserved"]) for e in tr if e["kind"] in ("alloc", "free", "empty_cache")]


def test_segment_sizes_show_in_the_events(fresh):
    with record() as tr:
        x = engine.empty(256)            # 1 KiB: a 2 MiB small-pool segment
        z = engine.empty(256)            # fits in the same segment
        y = engine.empty(3 * MiB // 4)   # 3 MiB: a 20 MiB large-pool segment
        del y                            # cached: still reserved
        memory.empty_cache()             # the large segment is entirely free: released
        del x, z
        memory.empty_cache()             # now the small one too
    assert _mem(tr) == [
        ("alloc", KiB, 2 * MiB),
        ("alloc", KiB, 2 * MiB),
        ("alloc", 3 * MiB, 22 * MiB),
        ("free", 3 * MiB, 22 * MiB),
        ("empty_cache", 20 * MiB, 2 * MiB),
        ("free", KiB, 2 * MiB),
        ("free", KiB, 2 * MiB),
        ("empty_cache", 2 * MiB, 0),
    ]
    assert tr.meta["memory_at_start"].get("cpu", {}).get("reserved", 0) == 0   # a fresh model
    assert tr.replay_reserved() == [(e["seq"], {"cpu": e["reserved"]}) for e in tr]
    s = tr.summary()
    assert s["peak_reserved"] == {"cpu": 22 * MiB} and s["final_reserved"] == {"cpu": 0}


def test_reserved_equals_memory_reserved_at_every_event(fresh):
    truth = []

    class Probe:          # runs after the allocator model has seen the storage
        def alloc(self, st):
            truth.append(memory.memory_reserved(st.device))
        free = alloc
    _memstate.allocator_hooks.append(Probe())
    try:
        with record() as tr:
            engine.manual_seed(0)
            model = nn.Sequential(nn.Linear(64, 300), nn.ReLU(), nn.Linear(300, 10))
            opt = engine.optim.Adam(model.parameters())
            x, y = engine.randn(1000, 64), engine.randint(0, 10, (1000,))   # 1.1 MiB hidden: large pool
            for _ in range(2):
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
                del loss
            memory.empty_cache()
    finally:
        _memstate.allocator_hooks.pop()
    got = [e["reserved"] for e in tr if e["kind"] in ("alloc", "free")]
    assert got == truth and len(got) > 50
    # everything below 1 MiB fits one 2 MiB small segment; the 1.2 MB hidden activations
    # and their gradients share one 20 MiB large segment
    assert sorted(set(got)) == [2 * MiB, 22 * MiB]
    assert got == sorted(got)         # a free never lowers it; only empty_cache does
    (ec,) = tr.of_kind("empty_cache")
    assert ec["reserved"] == memory.memory_reserved() == got[-1] - ec["bytes"]
    # every byte allocated while recording sits in a reserved segment
    start = tr.meta["memory_at_start"].get("cpu", {}).get("allocated", 0)
    live = [r[1]["cpu"] - start for r in tr.replay_memory() if tr[r[0]]["kind"] != "category"]
    assert all(r >= a for r, a in zip(got, live)) and max(live) > 0


def test_memory_at_start_carries_reserved(fresh):
    a = engine.empty(256)
    b = engine.empty(1 << 20)            # 4 MiB: a 20 MiB large segment
    del b                                # cached
    with record() as tr:
        memory.empty_cache()
    start = tr.meta["memory_at_start"]["cpu"]
    assert start["reserved"] == 22 * MiB
    (e,) = tr.of_kind("empty_cache")
    assert (e["bytes"], e["reserved"]) == (20 * MiB, 2 * MiB)
    assert tr.replay_reserved("cpu") == [(e["seq"], {"cpu": 2 * MiB})]
    assert tr.replay_reserved("cuda:0") == []
    del a


def test_free_keeps_reserved_and_cached_blocks_are_reused(fresh):
    with record() as tr:
        a = engine.empty(3 * MiB // 4)
        del a
        b = engine.empty(3 * MiB // 4)   # the cached block: no new segment
        del b
    assert [e["reserved"] for e in tr.of_kind("alloc", "free")] == [20 * MiB] * 4


# ---- files ------------------------------------------------------------------------
HEADER = json.dumps({"format": "glassgrad-trace", "version": 1, "meta": {}}) + "\n"


def _alloc(**over):
    e = {"seq": 0, "t": 0.0, "phase": "forward", "kind": "alloc", "storage": 1, "bytes": 8, "device": "cpu",
         "category": "other", "reserved": 2 * MiB}
    e.update(over)
    return json.dumps(e) + "\n"


def test_saved_trace_keeps_reserved(tmp_path, fresh):
    with record() as tr:
        x = engine.empty(256)
        del x
    tr.save(tmp_path / "t.jsonl")
    back = Trace.load(tmp_path / "t.jsonl")
    assert _mem(back) == [("alloc", KiB, 2 * MiB), ("free", KiB, 2 * MiB)]


@pytest.mark.parametrize("bad, msg", [
    ({"reserved": "2MiB"}, "line 2: alloc event: field 'reserved' must be a non-negative integer, got '2MiB'"),
    ({"reserved": 1.5}, r"line 2: alloc event: field 'reserved' must be a non-negative integer, got 1\.5"),
    ({"reserved": -1}, "line 2: alloc event: field 'reserved' must be a non-negative integer, got -1"),
    ({"kind": "empty_cache", "reserved": None},
     "line 2: empty_cache event: field 'reserved' must be a non-negative integer, got None"),
])
def test_bad_reserved_is_refused(bad, msg):
    with pytest.raises(TraceFormatError, match=msg):
        Trace.loads(HEADER + _alloc(**bad))


def test_traces_without_reserved_still_load():
    e = json.loads(_alloc())
    del e["reserved"]
    t = Trace.loads(HEADER + json.dumps(e) + "\n")
    assert t.warnings == [] and t.replay_reserved() == []
    assert t.summary()["peak_reserved"] == {}


@pytest.mark.skipif(not engine.cuda.is_available(), reason="no GPU: CuPy sees no CUDA device")
def test_cuda_events_carry_the_cuda_model(fresh):
    with record() as tr:
        c = engine.empty(256, device="cuda")          # the cuda:0 model's first small segment
        h = engine.empty(256)                         # and the CPU's, counted apart
        del c
        memory.empty_cache("cuda")
    mem = [e for e in tr if e["kind"] in ("alloc", "free", "empty_cache")]
    assert [(e["kind"], e["reserved"]) for e in mem if e["device"] == "cuda:0"] == [
        ("alloc", 2 * MiB), ("free", 2 * MiB), ("empty_cache", 0)]
    assert [e["reserved"] for e in mem if e["device"] == "cpu"][-1] == memory.memory_reserved("cpu") == 2 * MiB
    assert memory.memory_reserved("cuda:0") == 0
    del h
