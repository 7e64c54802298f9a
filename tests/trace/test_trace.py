"""Recording, saving, loading (with validation), memory replay and summaries of traces."""
import json

import pytest

import engine
import engine.nn.functional as F
from engine import events as _events, memory
from engine.trace import KINDS, PHASES, Trace, TraceFormatError, mark, record


def _small_step():
    engine.manual_seed(0)
    w = engine.randn(3, 2, requires_grad=True)
    x = engine.randn(4, 2)
    with record(lesson="t") as tr:
        h = F.linear(x, w).relu()
        loss = (h * h).sum()
        tr.mark("forward done", step=1)
        loss.backward()
    return tr, w, x


def test_every_event_has_seq_t_phase_kind():
    tr, _, _ = _small_step()
    assert [e["seq"] for e in tr] == list(range(len(tr)))
    for e in tr:
        assert e["phase"] in PHASES
        assert isinstance(e["t"], float)
        assert e["kind"] in KINDS, e["kind"]
    ts = [e["t"] for e in tr]
    assert ts == sorted(ts)


def test_backward_events_are_in_the_backward_phase():
    tr, _, _ = _small_step()
    (begin,) = tr.of_kind("backward_begin")
    (end,) = tr.of_kind("backward_end")
    assert begin["phase"] == "forward"   # emitted as backward is called, before it runs
    assert end["phase"] == "backward"
    inside = tr.events[begin["seq"] + 1:end["seq"] + 1]
    assert {e["phase"] for e in inside} == {"backward"}
    assert [e["name"] for e in tr.of_kind("execute")] == ["SumBackward0", "MulBackward0", "ReluBackward0",
                                                          "MmBackward0", "TBackward0"]


def test_pack_events_match_the_saved_list_of_the_op_event():
    tr, _, _ = _small_step()
    ops = {e["op"]: e for e in tr.of_kind("op")}
    relu, mul = ops["relu"], ops["mul"]
    packs = tr.of_kind("pack")
    by_node = {}
    for p in packs:
        by_node.setdefault(p["node"], []).append(p)
    for op in (relu, mul, ops["mm"]):
        node = op["node"]
        got = [(p["name"], p["storage"], p["bytes"], p["hooked"]) for p in by_node[node["id"]]]
        want = [(s["name"], s["storage"], s["bytes"], False) for s in node["saved"]]
        assert got == want
        assert all(p["seq"] < op["seq"] for p in by_node[node["id"]])   # packed before the op event
    # relu keeps its result (4x3 float32); mul keeps both operands, one storage
    assert [(s["name"], s["bytes"]) for s in relu["node"]["saved"]] == [("result", 48)]
    assert {s["storage"] for s in mul["node"]["saved"]} == {relu["output"]["storage"]}


def test_pack_under_saved_tensors_hooks_is_marked_hooked():
    x = engine.randn(3, requires_grad=True)
    with record() as tr, engine.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        x.exp()
    (p,) = tr.of_kind("pack")
    assert p["hooked"] is True and p["name"] == "result" and p["bytes"] == 12


def test_marks():
    tr, _, _ = _small_step()
    (m,) = tr.of_kind("mark")
    assert (m["text"], m["step"], m["phase"]) == ("forward done", 1, "forward")
    with record() as a, record() as b:
        mark("both", n=2)
    assert [e["text"] for e in a.of_kind("mark")] == ["both"] == [e["text"] for e in b.of_kind("mark")]
    mark("nobody listens")   # no recorder: nothing happens


def test_recording_off_emits_nothing():
    assert _events.active is False
    n = []

    class Spy:
        def _append(self, kind, fields):
            n.append(kind)
    engine.randn(3, requires_grad=True).exp().sum().backward()
    assert n == [] and _events._recorders == ()


# ---- save / load ---------------------------------------------------------------
def test_save_load_round_trip(tmp_path):
    tr, _, _ = _small_step()
    p = tmp_path / "run.jsonl"
    tr.save(p)
    lines = p.read_text().splitlines()
    header = json.loads(lines[0])
    assert set(header) == {"format", "version", "meta", "created"}
    assert (header["format"], header["version"], header["meta"]["lesson"]) == ("glassgrad-trace", 1, "t")
    assert "memory_at_start" in header["meta"]
    back = Trace.load(p)
    assert back.events == json.loads(json.dumps(tr.events))
    assert back.meta == json.loads(json.dumps(tr.meta))
    assert back.created == tr.created and back.warnings == []
    assert back.replay_memory() == tr.replay_memory()
    assert engine.Trace is Trace


def _write(tmp_path, text):
    p = tmp_path / "t.jsonl"
    p.write_text(text)
    return p


HEADER = json.dumps({"format": "glassgrad-trace", "version": 1, "meta": {}}) + "\n"
EV0 = json.dumps({"seq": 0, "t": 0.0, "phase": "forward", "kind": "mark", "text": "a"}) + "\n"


def _ev(**kw):
    e = {"seq": 1, "t": 0.1, "phase": "forward", "kind": "mark", "text": "b"}
    e.update(kw)
    return json.dumps({k: v for k, v in e.items() if v is not ...}) + "\n"


@pytest.mark.parametrize("body,msg", [
    ("{not json}\n", "line 3: bad JSON: Expecting property name enclosed in double quotes (column 2)"),
    ("[1, 2]\n", "line 3: event is not a JSON object"),
    ("\n", "line 3: blank line (expected a JSON object)"),
    (_ev(seq=...), "line 3: missing 'seq'"),
    (_ev(seq="1"), "line 3: field 'seq' must be an integer, got '1'"),
    (_ev(seq=0), "line 3: seq 0 does not increase (previous event has seq 0)"),
    (_ev(kind=...), "line 3: missing 'kind'"),
    (_ev(kind=3), "line 3: field 'kind' must be a string, got 3"),
    (_ev(phase=...), "line 3: missing 'phase'"),
    (_ev(phase="sideways"), "line 3: unknown phase 'sideways' (expected one of forward, backward, recompute, "
                            "optimizer)"),
    (_ev(t=...), "line 3: missing 't'"),
    (_ev(t="soon"), "line 3: field 't' must be a finite number, got 'soon'"),
    (_ev(kind="alloc", bytes=4, device="cpu", category="other"), "line 3: alloc event: missing 'storage'"),
    (_ev(kind="free", storage=1, bytes="4", device="cpu", category="other"),
     "line 3: free event: field 'bytes' must be a non-negative integer, got '4'"),
    (_ev(kind="alloc", storage=1, bytes=-4, device="cpu", category="other"), 
     "line 3: alloc event: field 'bytes' must be a non-negative integer, got -4"),
    (_ev(kind="category", storage=1, bytes=4, device="cpu", old="other"), "line 3: category event: missing 'new'"),
])
def test_bad_event_lines(tmp_path, body, msg):
    p = _write(tmp_path, HEADER + EV0 + body)
    with pytest.raises(TraceFormatError) as e:
        Trace.load(p)
    assert str(e.value) == f"{p}: {msg}"


def test_truncated_last_line_is_reported(tmp_path):
    p = _write(tmp_path, HEADER + EV0 + '{"seq": 1, "t": 0.1, "pha')
    with pytest.raises(TraceFormatError, match=r"line 3: truncated: the last line is incomplete "
                                               r"\(Unterminated string starting at, column 22\)"):
        Trace.load(p)


def test_last_line_without_newline_but_complete_is_fine(tmp_path):
    assert len(Trace.load(_write(tmp_path, HEADER + EV0.rstrip("\n")))) == 1


@pytest.mark.parametrize("header,msg", [
    ("", "empty file (no header line)"),
    ("[]\n", "line 1: header is not a JSON object"),
    ('{"format": "chrome-trace", "version": 1}\n',
     "line 1: not a glassgrad trace: format is 'chrome-trace', expected 'glassgrad-trace'"),
    ('{"version": 1}\n', "line 1: not a glassgrad trace: format is None, expected 'glassgrad-trace'"),
    ('{"format": "glassgrad-trace", "version": 2, "meta": {}}\n',
     "line 1: trace format version 2 is newer than this glassgrad reads (version 1); upgrade glassgrad to "
     "open it"),
    ('{"format": "glassgrad-trace", "version": "1"}\n', "line 1: bad format version '1'"),
    ('{"format": "glassgrad-trace", "version": 0}\n', "line 1: bad format version 0"),
    ('{"format": "glassgrad-trace", "version": 1, "meta": []}\n', "line 1: header 'meta' is not a JSON object"),
    ('{"format": "glassgrad-tr', "line 1: truncated: the last line is incomplete (Unterminated string "
                                  "starting at, column 12)"),
])
def test_bad_headers(tmp_path, header, msg):
    p = _write(tmp_path, header)
    with pytest.raises(TraceFormatError) as e:
        Trace.load(p)
    assert str(e.value) == f"{p}: {msg}"


def test_errors_are_value_errors_and_missing_files_are_reported(tmp_path):
    assert issubclass(TraceFormatError, ValueError)
    with pytest.raises(TraceFormatError, match="cannot read trace"):
        Trace.load(tmp_path / "nope.jsonl")
    p = tmp_path / "b.jsonl"
    p.write_bytes(HEADER.encode() + b'{"seq": 0, "text": "\xff"}\n')
    with pytest.raises(TraceFormatError, match="line 2: not UTF-8 text"):
        Trace.load(p)


def test_unknown_kind_is_kept_and_reported(tmp_path):
    t = Trace.load(_write(tmp_path, HEADER + EV0 + _ev(kind="telepathy", level=3)))
    assert t[1]["kind"] == "telepathy" and t[1]["level"] == 3
    assert t.warnings == [(3, "unknown event kind 'telepathy'")]


def test_loading_runs_no_code(tmp_path):
    # a pickle-style payload is just a string to JSON
    evil = _ev(text="__import__('os').system('false')", **{"__reduce__": "os.system"})
    t = Trace.load(_write(tmp_path, HEADER + EV0 + evil))
    assert t[1]["text"].startswith("__import__")


# ---- replay ---------------------------------------------------------------------
def test_replay_starts_from_memory_at_start_and_tracks_categories():
    import gc
    gc.collect()                # earlier tests' cyclic garbage must not be freed while recording
    keep = engine.zeros(10)     # 40 bytes of "input" live before recording
    before = memory.memory_allocated("cpu")
    with record() as tr:
        a = engine.ones(4, requires_grad=True)       # 16 bytes, input
        b = a.exp()                                   # 16 bytes, saved result -> activation
        del b                                         # graph gone: freed
    rows = tr.replay_memory()
    # alloc a, alloc b, b saved (other -> activation), graph dropped (activation -> other), free b
    assert [e["kind"] for e in tr if e["kind"] in ("alloc", "free", "category")] == [
        "alloc", "alloc", "category", "category", "free"]
    assert [(r[1]["cpu"] - before) for r in rows] == [16, 32, 32, 32, 16]
    act = [r[2].get("activation", 0) for r in rows]
    assert act == [0, 0, 16, 0, 0]
    inputs_before = tr.meta["memory_at_start"]["cpu"]["by_category"].get("input", 0)   # keep, and earlier tests'
    assert inputs_before >= 40 and [r[2]["input"] for r in rows] == [inputs_before + 16] * 5
    assert [r[0] for r in rows] == [e["seq"] for e in tr if e["kind"] in ("alloc", "free", "category")]
    assert tr.replay_memory(device="cuda:0") == []
    del keep, a


def test_summary():
    tr, _, _ = _small_step()
    s = tr.summary()
    assert s["events"] == len(tr)
    assert s["kinds"]["execute"] == 5 and s["backward_passes"] == 1
    assert s["ops"] == len(tr.of_kind("op"))
    assert s["nodes"] == 5            # t, mm, relu, mul, sum: t (a view of w) has a node too
    rows = tr.replay_memory()
    peak = max(r[1]["cpu"] for r in rows)
    untouched = {d: m["allocated"] for d, m in tr.meta["memory_at_start"].items() if d != "cpu"}
    assert s["peak_bytes"] == {"cpu": peak, **untouched}   # a GPU holding only a cache stays at 0
    assert rows[[r[0] for r in rows].index(s["peak_seq"]["cpu"])][1]["cpu"] == peak
    assert s["final_bytes"] == rows[-1][1]
    assert s["phases"]["backward"] > 0 and s["warnings"] == 0


def test_every_kind_the_engine_emits_is_known_documented_and_loads(tmp_path):
    from pathlib import Path
    from engine.utils.checkpoint import checkpoint
    engine.manual_seed(0)
    lin = engine.nn.Linear(3, 3)
    opt = engine.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    x = engine.randn(2, 3)
    with record() as tr:
        h = checkpoint(lambda a: lin(a).relu(), x, use_reentrant=False)
        h.register_hook(lambda g: None)
        loss = h.sum()
        loss.backward()
        opt.step()
        with engine.no_grad():
            x.mul_(2)
        engine.save(lin.state_dict(), tmp_path / "m.pt")
        engine.load(tmp_path / "m.pt")
        memory.empty_cache()
        mark("done")
    kinds = {e["kind"] for e in tr}
    assert kinds <= set(KINDS), kinds - set(KINDS)
    assert {"alloc", "free", "category", "op", "leaf", "pack", "unpack", "release", "execute", "accumulate",
            "hook", "version", "backward_begin", "backward_end", "optimizer_step", "checkpoint_enter",
            "checkpoint_exit", "checkpoint_drop", "recompute_begin", "recompute_end", "save", "load",
            "empty_cache", "mark"} <= kinds
    assert {e["phase"] for e in tr} == {"forward", "backward", "recompute", "optimizer"}
    tr.save(tmp_path / "all.jsonl")
    assert Trace.load(tmp_path / "all.jsonl").warnings == []
    doc = (Path(__file__).parents[2] / "docs" / "trace-format.md").read_text().split("## Event kinds")[1]
    for kind, fields in KINDS.items():
        row = [line for line in doc.splitlines() if line.startswith(f"| `{kind}` |")]
        assert len(row) == 1, kind
        for f in fields:
            assert f"`{f}`" in row[0], (kind, f)
