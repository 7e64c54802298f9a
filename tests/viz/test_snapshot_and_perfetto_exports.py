"""The memory-snapshot pickle and the Perfetto JSON say what the trace says, in the formats
PyTorch's viewer and Perfetto read."""
import io
import json
import pickle

import pytest

import engine as torch
from engine.memory.allocator import round_size
from replay.memory import Replay, start_of
from viz.perfetto import perfetto, write_perfetto
from viz.snapshot_export import snapshot, write_snapshot


@pytest.fixture(scope="module")
def run():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    x = torch.randn(32, 64)
    with torch.record() as tr:
        tr.mark("step", step=0, title="one step")
        m(x).sum().backward()
        big = torch.zeros(3 << 18)            # 3 MiB: a large-pool segment
        del big
        torch.memory.empty_cache()
    return tr


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name}")


def test_the_snapshot_pickle_holds_only_plain_data(run, tmp_path):
    n = write_snapshot(run, tmp_path / "s.pickle")
    snap = _NoGlobals(io.BytesIO((tmp_path / "s.pickle").read_bytes())).load()
    assert sum(len(t) for t in snap["device_traces"]) == n > 0
    assert set(snap) == {"segments", "device_traces"}


def test_every_alloc_and_free_is_a_trace_entry_at_one_address(run):
    snap = snapshot(run)
    entries = snap["device_traces"][0]
    allocs = [e for e in run.events if e["kind"] == "alloc" and e["bytes"] > 0]
    frees = [e for e in run.events if e["kind"] == "free" and e["bytes"] > 0]
    got = [e for e in entries if e["action"] == "alloc"]
    pre = len(got) - len(allocs)
    assert pre >= 0                                           # storages alive before recording come first
    for a, e in zip(allocs, got[pre:]):                       # rule 1 and 5 of the allocator model
        small = round_size(a["bytes"]) <= 1 << 20
        assert e["size"] == round_size(a["bytes"]) if small else e["size"] >= round_size(a["bytes"])
    assert all(e["size"] % 512 == 0 for e in entries)
    live = {}
    for e in entries:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_requested":
            assert live.pop(e["addr"]) == e["size"]
    assert len([e for e in entries if e["action"] == "free_completed"]) == len(frees)
    assert [e["action"] for e in entries].count("segment_free") == 1       # the 3 MiB tensor's segment
    assert sum(s["allocated_size"] for s in snap["segments"]) == sum(live.values())


def test_a_block_made_by_an_op_names_the_op_and_line(run):
    snap = snapshot(run)
    framed = [e for e in snap["device_traces"][0] if e["action"] == "alloc" and e["frames"]]
    names = {f["name"] for e in framed for f in e["frames"]}
    assert {"addmm", "relu"} <= names
    assert all(f["filename"].endswith(".py") and f["line"] > 0 for e in framed for f in e["frames"])


def test_perfetto_has_one_slice_per_op_and_node_and_the_replays_memory(run, tmp_path):
    n = write_perfetto(run, tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    assert len(data["traceEvents"]) == n
    ops = [e for e in data["traceEvents"] if e["ph"] == "X" and e["tid"] == 1]
    assert [e["name"] for e in ops] == [e["op"] for e in run.events if e["kind"] == "op" and e["phase"] == "forward"]
    nodes = [e["name"] for e in data["traceEvents"] if e["ph"] == "X" and e["tid"] == 2]
    assert nodes == [e["name"] for e in run.events if e["kind"] == "execute"]
    counters = [e for e in data["traceEvents"] if e["ph"] == "C" and e["name"] == "live bytes cpu"]
    r = Replay(run.events, start_of(run.meta))
    assert sum(counters[-1]["args"].values()) == r.total[-1]
    assert all(e["dur"] >= 0 for e in data["traceEvents"] if e["ph"] == "X")
    assert perfetto(run)["traceEvents"][0]["args"]["name"] == "glassgrad"
