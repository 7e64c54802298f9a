"""Traces from outside: every field of every kind validated with its line number; huge numbers,
deep JSON and floods of distinct names refused with a clear message; old traces still open."""
from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

import engine
from engine import trace_schema
from engine.trace import KINDS, Trace, TraceFormatError

HEADER = json.dumps({"format": "glassgrad-trace", "version": 1, "meta": {}}) + "\n"
TI = {"id": 2, "storage": 1, "shape": [2], "dtype": "float32", "bytes": 8, "storage_bytes": 8, "device": "cpu",
      "requires_grad": True, "leaf": True, "grad_fn": None, "name": None}
NI = {"id": 5, "name": "ExpBackward0", "next": [[6, 0, "AccumulateGrad"]],
      "saved": [{"name": "result", "storage": 3, "bytes": 8, "shape": [2], "dtype": "float32", "is_output": True,
                 "packed": False}], "attrs": {}}
# one valid event of every kind (the fields of docs/trace-format.md)
VALID = {
    "alloc": {"storage": 3, "bytes": 8, "device": "cpu", "category": "other", "reserved": 2097152},
    "free": {"storage": 3, "bytes": 8, "device": "cpu", "category": "other", "reserved": 2097152},
    "category": {"storage": 3, "bytes": 8, "device": "cpu", "old": "other", "new": "activation"},
    "empty_cache": {"device": "cpu", "bytes": 0, "reserved": 0},
    "op": {"op": "exp", "inputs": [TI, {"scalar": "2.0"}], "output": TI, "node": NI, "file": "/tmp/x.py", "line": 4,
           "region": None},
    "leaf": {"node": 6, "name": "AccumulateGrad", "tensor": TI},
    "pack": {"node": 5, "name": "result", "storage": 3, "bytes": 8, "hooked": False},
    "unpack": {"node": 5, "name": "result", "storage": 3},
    "release": {"node": 5, "name": "result", "storage": 3, "bytes": 8},
    "node_free": {"node": 5},
    "backward_begin": {"roots": [8], "retain_graph": False, "create_graph": False},
    "backward_end": {"roots": [8]},
    "execute": {"node": 9, "name": "SumBackward0"},
    "accumulate": {"node": 6, "tensor": 2, "storage": 14, "bytes": 8},
    "hook": {"node": 6, "hook_kind": "tensor", "hook": "scale"},
    "version": {"tensor": 2, "storage": 1, "version": 1, "op": "add_"},
    "optimizer_step": {"optimizer": "SGD", "params": 2, "step": 1},
    "checkpoint_enter": {"region": 1, "fn": "block"},
    "checkpoint_exit": {"region": 1},
    "checkpoint_drop": {"region": 1, "node": 5, "name": "result", "storage": 3, "bytes": 8, "kept": False},
    "recompute_begin": {"region": 1},
    "recompute_end": {"region": 1},
    "save": {"path": "m.pt", "bytes": 1000, "tensors": 1, "storages": 1},
    "load": {"path": None, "bytes": 1000, "tensors": 1, "storages": 1},
    "mark": {"text": "step", "step": 1},
    "compile_stage": {"stage": "graph", "nodes": 3, "text": "graph():\n    return x"},
    "values": {"tensor": 4, "storage": 3, "numel": 2, "grad": False},
}
OPTIONAL = {k: [f for f, _ in fs] for k, fs in trace_schema.OPTIONAL.items()}
FIELDS = [(k, f) for k in VALID for f in KINDS[k] if f not in OPTIONAL.get(k, ())]
OPTIONAL_FIELDS = [(k, f) for k, fs in OPTIONAL.items() for f in fs]


def _line(seq, kind, **fields):
    return json.dumps({"seq": seq, "t": 0.5, "phase": "forward", "kind": kind, **fields}) + "\n"


def _load(body: str, name="trace.jsonl"):
    return Trace.loads(HEADER + body, name)


def _refused(body: str) -> str:
    with pytest.raises(TraceFormatError) as e:
        _load(body)
    return str(e.value)


def test_every_kind_is_covered_and_valid_events_load():
    assert sorted(VALID) == sorted(KINDS) == sorted(trace_schema.SPEC)
    tr = _load("".join(_line(i, k, **f) for i, (k, f) in enumerate(VALID.items())))
    assert tr.warnings == [] and len(tr) == len(VALID)
    for k, fields in KINDS.items():      # the validator checks every field the kind has, no other
        checked = [f for f, _ in trace_schema.SPEC[k]] + OPTIONAL.get(k, [])
        assert sorted(checked) == sorted(fields), k


@pytest.mark.parametrize("kind,field", OPTIONAL_FIELDS)
def test_optional_fields_are_checked_when_present(kind, field):
    ev = dict(VALID[kind], **{field: 5 if field in ("module", "refused") else "x"})   # a value wrong for the field
    assert _refused(_line(0, kind, **ev)).startswith(f"trace.jsonl: line 2: {kind} event: field '{field}' must be ")
    ev.pop(field)
    assert _load(_line(0, kind, **ev)).warnings == []


@pytest.mark.parametrize("kind,field", FIELDS)
def test_every_field_is_checked(kind, field):
    good = _line(0, "mark", text="first")
    ev = dict(VALID[kind])
    ev[field] = {"not": "this"}                       # wrong for every field of every kind
    msg = _refused(good + _line(1, kind, **ev))
    assert msg.startswith(f"trace.jsonl: line 3: {kind} event: field '{field}' must be ")
    assert msg.endswith(", got {'not': 'this'}") or "got {'not': 'this'}" in msg
    del ev[field]
    assert _refused(good + _line(1, kind, **ev)) == f"trace.jsonl: line 3: {kind} event: missing '{field}'"


@pytest.mark.parametrize("kind,patch,msg", [
    ("save", {"bytes": -5}, "save event: field 'bytes' must be a non-negative integer, got -5"),
    ("alloc", {"bytes": 1 << 63}, f"alloc event: field 'bytes' must be a non-negative integer, got {1 << 63}"),
    ("alloc", {"category": "hacked"}, ("alloc event: field 'category' must be one of parameter, gradient, "
                                      "activation, optimizer, input, other, got 'hacked'")),
    ("pack", {"hooked": 1}, "pack event: field 'hooked' must be true or false, got 1"),
    ("backward_begin", {"roots": [1, -2]}, ("backward_begin event: field 'roots' must be a list of non-negative "
                                           "integers, got [1, -2]")),
    ("op", {"inputs": [dict(TI, dtype=None)]}, ("op event: field 'inputs' must be a tensor_info whose 'dtype' is "
                                               "a string, got None")),
    ("op", {"output": dict(TI, shape=[2, -1])}, ("op event: field 'output' must be a tensor_info with a 'shape' "
                                                "(a list of at most 64 non-negative integers), got ")),
    ("op", {"node": dict(NI, next=[[6, 0]])}, ("op event: field 'node' must be a node_info whose 'next' is a list "
                                              "of [node id or null, input_nr, node name or null], got [[6, 0]]")),
    ("op", {"node": dict(NI, saved=[dict(NI["saved"][0], bytes="8")])},
     "op event: field 'node' must be a node_info whose 'saved.bytes' is a non-negative integer, got '8'"),
    ("op", {"line": -1}, "op event: field 'line' must be a non-negative integer or null, got -1"),
    ("leaf", {"tensor": dict(TI, device=7)}, ("leaf event: field 'tensor' must be a tensor_info whose 'device' is "
                                             "a device name")),
])
def test_bad_values_are_named_with_line_and_value(kind, patch, msg):
    body = _line(0, "mark", text="a") + _line(1, "mark", text="b") + _line(2, kind, **{**VALID[kind], **patch})
    got = _refused(body)
    assert got.startswith(f"trace.jsonl: line 4: {msg}")


def test_non_finite_time_refused():
    assert _refused('{"seq": 0, "t": NaN, "phase": "forward", "kind": "mark", "text": "a"}\n') == \
        "trace.jsonl: line 2: field 't' must be a finite number, got nan"


# ---- what Python cannot hold ---------------------------------------------------------------


def test_integer_of_5001_digits_refused():
    body = _line(0, "mark", text="a") + '{"seq": 1, "t": 0.1, "phase": "forward", "kind": "alloc", "storage": ' \
        + "9" * 5001 + ', "bytes": 8, "device": "cpu", "category": "other"}\n'
    import sys
    assert _refused(body) == (f"trace.jsonl: line 3: an integer has more than {sys.get_int_max_str_digits()} "
                              "digits; a trace's numbers are ids, counts and byte sizes")


def test_json_nested_100k_deep_refused():
    deep = "[" * 100_000 + "]" * 100_000
    body = _line(0, "mark", text="a") + '{"seq": 1, "t": 0.1, "phase": "forward", "kind": "mark", "text": "x", ' \
        '"deep": ' + deep + "}\n"
    assert _refused(body) == "trace.jsonl: line 3: JSON nested too deep to read; a trace's values nest a few levels"


def test_json_deeper_than_the_limit_refused_in_marks_attrs_and_meta():
    deep = json.loads("[" * 40 + "]" * 40)
    msg = _refused(_line(0, "mark", text="a", deep=deep))
    assert msg == f"trace.jsonl: line 2: mark event: fields must be JSON nested at most {trace_schema.MAX_DEPTH} deep"
    msg = _refused(_line(0, "op", **dict(VALID["op"], node=dict(NI, attrs={"x": deep}))))
    assert msg.startswith("trace.jsonl: line 2: op event: field 'node' must be JSON nested at most 32 deep")
    with pytest.raises(TraceFormatError, match=r"^t\.jsonl: line 1: header 'meta' must be JSON nested at most 32"):
        Trace.loads(json.dumps({"format": "glassgrad-trace", "version": 1, "meta": {"d": deep}}) + "\n", "t.jsonl")


def test_bad_memory_at_start_refused():
    head = {"format": "glassgrad-trace", "version": 1, "meta": {"memory_at_start": {"cpu": {"allocated": -1}}}}
    with pytest.raises(TraceFormatError, match=r"^t: line 1: header 'meta\.memory_at_start' device 'cpu': field "
                                               r"'allocated' must be a non-negative integer, got -1$"):
        Trace.loads(json.dumps(head) + "\n", "t")


# ---- floods of distinct names ----------------------------------------------------------------


def test_20000_distinct_devices_refused_quickly():
    body = "".join(_line(i, "alloc", storage=i, bytes=8, device=f"cuda:{i}", category="other")
                   for i in range(20_000))
    t0 = time.perf_counter()
    msg = _refused(body)
    assert time.perf_counter() - t0 < 5
    assert msg == (f"trace.jsonl: line {trace_schema.MAX_DEVICES + 2}: more than {trace_schema.MAX_DEVICES} "
                   "distinct devices; a trace names a few (\"cpu\", \"cuda:0\", ...)")


def test_devices_inside_tensor_info_count_too():
    body = "".join(_line(i, "leaf", node=i, name="AccumulateGrad", tensor=dict(TI, device=f"d{i}"))
                   for i in range(100))
    assert _refused(body).startswith(f"trace.jsonl: line {trace_schema.MAX_DEVICES + 2}: more than 64 distinct")


def test_20000_distinct_kinds_refused():
    body = "".join(_line(i, f"kind{i}") for i in range(20_000))
    assert _refused(body) == (f"trace.jsonl: line {trace_schema.MAX_KINDS + 2}: more than "
                              f"{trace_schema.MAX_KINDS} distinct event kinds; a glassgrad trace has a few dozen")


def test_a_few_unknown_kinds_still_only_warn():
    tr = _load(_line(0, "future_kind", x=1) + _line(1, "mark", text="a"))
    assert tr.warnings == [(2, "unknown event kind 'future_kind'")]


# ---- old traces keep opening -----------------------------------------------------------------


@pytest.mark.parametrize("path", [Path(__file__).parents[1] / "tui" / "fixtures" / "mlp_trace.jsonl"])
def test_committed_traces_still_load(path):
    tr = Trace.load(path)
    assert tr.warnings == [] and len(tr) == path.read_text().count("\n") - 1


def test_a_fresh_recording_with_every_common_kind_loads(tmp_path):
    m = engine.nn.Linear(3, 2)
    opt = engine.optim.SGD(m.parameters(), lr=0.1)
    with engine.record(run="fresh") as tr:
        x = engine.randn(4, 3)
        loss = m(x).relu().sum()
        loss.backward()
        opt.step()
        engine.save(m.state_dict(), tmp_path / "m.pt")
        engine.load(tmp_path / "m.pt")
        tr.mark("done", note="ok")
    tr.save(tmp_path / "t.jsonl")
    back = Trace.load(tmp_path / "t.jsonl")
    assert back.warnings == [] and [e["kind"] for e in back.events] == [e["kind"] for e in tr.events]
    kinds = {e["kind"] for e in back.events}
    assert {"alloc", "op", "leaf", "backward_begin", "execute", "accumulate", "optimizer_step", "save", "load",
            "mark"} <= kinds


def test_validation_leaves_the_events_as_written():
    ev = copy.deepcopy(VALID["op"])
    tr = _load(_line(0, "op", **ev))
    assert {k: tr.events[0][k] for k in ev} == ev


def test_device_and_fifo_refused_without_reading(tmp_path):
    with pytest.raises(TraceFormatError, match=r"^/dev/zero: cannot read trace: not a regular file \(a device, "
                                               r"FIFO or socket\)"):
        Trace.load("/dev/zero")
    import os
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    with pytest.raises(TraceFormatError, match=r"t\.jsonl: cannot read trace: not a regular file"):
        Trace.load(fifo)
    assert time.perf_counter() - t0 < 5


def test_integers_beyond_64_bits_in_free_form_fields_refused():
    assert _refused(_line(0, "mark", text="a", big=10 ** 30)) == \
        "trace.jsonl: line 2: mark event: fields must be JSON whose integers fit in 64 bits"
