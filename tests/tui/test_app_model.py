"""TraceModel: prefix arrays of live bytes, node states, which graph is shown."""
from lessons._facts import live_by_category
from tui.model import TraceModel


def test_live_bytes_match_a_replay_at_every_event(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    evs = mlp_trace.events
    for i in range(0, len(evs), 7):
        want = live_by_category(evs[: i + 1])
        got = {c: b for c, b in m.live_at(i).items() if b}
        assert got == want, i
    assert m.total[m.peak_index] == m.peak_bytes == max(m.total)


def test_incremental_extend_equals_building_at_once(mlp_trace):
    whole = TraceModel.from_trace(mlp_trace)
    parts = TraceModel()
    for k in range(0, len(mlp_trace.events), 10):
        parts.extend(mlp_trace.events[k:k + 10])
    assert parts.total == whole.total and parts.peak_index == whole.peak_index
    assert parts.node_events == whole.node_events and set(parts.nodes) == set(whole.nodes)


def test_node_states_follow_the_events(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    relu = next(r for r in m.nodes.values() if r.name == "ReluBackward0")
    ex = relu.executed[0]
    assert relu.state(relu.created - 1) == "future"
    assert relu.state(relu.created) == "alive"
    assert relu.state(ex) == "current"
    assert relu.state(ex + 1) == "executed"
    assert relu.saved_bytes() == 5 * 16 * 4
    assert relu.saved_state(ex - 1) == "kept"
    assert relu.saved_state(relu.released["result"]) == "released"


def test_stepping_by_node_and_phase(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    i = m.next_node_event(0, 1)
    assert m.events[i]["kind"] in ("op", "leaf", "execute")
    assert m.next_node_event(i, -1) < i or m.next_node_event(i, -1) == i
    b = m.next_phase(0, 1)
    assert m.events[b]["phase"] != m.events[b - 1]["phase"]
    assert m.next_phase(b, -1) == 0


def test_graph_at_shows_the_graph_being_built(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    first_op = next(i for i, e in enumerate(m.events) if e["kind"] == "op" and e["node"])
    assert m.graph_at(0) == frozenset() or all(m.nodes[n].is_leaf for n in m.graph_at(0))
    shown = m.graph_at(first_op)
    names = sorted(m.nodes[n].name for n in shown)
    assert "NllLossBackward0" in names and "AccumulateGrad" in names


def test_memory_live_before_recording_is_the_starting_point():
    events = [{"seq": 0, "t": 0, "phase": "forward", "kind": "free", "storage": 7, "bytes": 64, "device": "cpu",
               "category": "parameter"}]
    m = TraceModel(events, {"memory_at_start": {"cpu": {"allocated": 100, "by_category": {"parameter": 100}}}})
    assert m.live_at(0)["parameter"] == 36
    assert m.total == [36]


def test_a_checkpoint_drop_before_its_op_marks_the_node():
    node = {"id": 5, "name": "ReluBackward0", "next": [], "saved": [{"name": "result", "storage": None,
                                                                      "bytes": 0, "shape": [4], "dtype": "float32",
                                                                      "is_output": True, "packed": True}]}
    events = [
        {"kind": "checkpoint_enter", "phase": "forward", "region": 1, "fn": "f"},
        {"kind": "checkpoint_drop", "phase": "forward", "region": 1, "node": 5, "name": "result", "storage": 3,
         "bytes": 16, "kept": False},
        {"kind": "op", "phase": "forward", "op": "relu", "inputs": [], "output": None, "node": node,
         "file": None, "line": None, "region": 1},
    ]
    m = TraceModel(events)
    rec = m.nodes[5]
    assert rec.dropped == 1 and rec.dropped_bytes == 16
    assert rec.saved_state(2) == "dropped"


def test_event_lines_say_what_happened():
    from tui.format import event_line, human_bytes

    assert human_bytes(12) == "12 B" and human_bytes(2048) == "2.0 KiB" and human_bytes(3 << 20) == "3.00 MiB"
    assert event_line({"kind": "execute", "name": "SinBackward0", "node": 4}) == "run SinBackward0 (node 4)"
    assert event_line({"kind": "checkpoint_drop", "name": "result", "node": 9, "bytes": 1024, "kept": False}) == \
        "checkpoint: result of node 9 dropped, 1.0 KiB freed"
    assert event_line({"kind": "release", "name": "self", "node": 3, "bytes": 16}) == "release self of node 3 (16 B)"
    assert event_line({"kind": "brand_new", "x": 1}) == "brand_new x=1"
