"""TraceModel: prefix arrays of live bytes, node states, which graph is shown (moved from tests/tui)."""
from lessons._facts import live_by_category
from replay.model import TraceModel
from tests.replay.traces import RECORDED


def test_live_bytes_match_a_replay_at_every_event(mlp_file):
    m = TraceModel.from_trace(mlp_file)
    evs = mlp_file.events
    for i in range(0, len(evs), 7):
        want = live_by_category(evs[: i + 1])
        got = {c: b for c, b in m.memory.live_at(i).items() if b}
        assert got == want, i
    assert m.memory.total[m.memory.peak_index] == m.memory.peak_bytes == max(m.memory.total)


def test_incremental_extend_equals_building_at_once(mlp_file):
    whole = TraceModel.from_trace(mlp_file)
    parts = TraceModel()
    for k in range(0, len(mlp_file.events), 10):
        parts.extend(mlp_file.events[k:k + 10])
    assert parts.memory.total == whole.memory.total and parts.memory.peak_index == whole.memory.peak_index
    assert parts.node_events == whole.node_events and set(parts.nodes) == set(whole.nodes)


def test_node_states_follow_the_events(mlp_file):
    m = TraceModel.from_trace(mlp_file)
    relu = next(r for r in m.nodes.values() if r.name == "ReluBackward0")
    ex = relu.executed[0]
    # the node runs until the next node runs (NOTE [ One trace model ] rule 2)
    nxt = next(j for j in range(ex + 1, len(m)) if m.events[j]["kind"] in ("execute", "accumulate", "backward_end"))
    assert m.state(relu.id, relu.created - 1) == "future"
    assert m.state(relu.id, relu.created) == "pending"
    assert m.state(relu.id, ex) == "current"
    assert m.state(relu.id, nxt - 1) == "current"
    assert m.state(relu.id, nxt) == "executed"
    assert relu.saved_bytes() == 5 * 16 * 4
    assert m.saved_state(relu.id, ex - 1) == "kept"
    assert m.saved_state(relu.id, relu.saved[0].released_at) == "released"


def test_stepping_by_node_and_phase(mlp_file):
    m = TraceModel.from_trace(mlp_file)
    i = m.next_node_event(0, 1)
    assert m.events[i]["kind"] in ("op", "leaf", "execute")
    assert m.next_node_event(i, -1) < i or m.next_node_event(i, -1) == i
    b = m.next_phase(0, 1)
    assert m.events[b]["phase"] != m.events[b - 1]["phase"]
    assert m.next_phase(b, -1) == 0


def test_graph_at_shows_the_graph_being_built(mlp_file):
    m = TraceModel.from_trace(mlp_file)
    first_op = next(i for i, e in enumerate(m.events) if e["kind"] == "op" and e["node"])
    assert m.shown(0) == frozenset() or all(m.nodes[n].is_leaf for n in m.shown(0))
    # the graphs shown at the first op: every node they will hold (the panel draws those created by then)
    shown = {n for g in m.view(first_op).graphs for n in g.joins}
    assert m.shown(first_op) <= shown
    names = sorted(m.nodes[n].name for n in shown)
    assert "NllLossBackward0" in names and "AccumulateGrad" in names


def test_memory_live_before_recording_is_the_starting_point():
    events = [{"seq": 0, "t": 0, "phase": "forward", "kind": "free", "storage": 7, "bytes": 64, "device": "cpu",
               "category": "parameter"}]
    m = TraceModel(events, {"memory_at_start": {"cpu": {"allocated": 100, "by_category": {"parameter": 100}}}})
    assert m.memory.live_at(0)["parameter"] == 36
    assert m.memory.total == [36]


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
    assert rec.dropped_at == 1 and rec.dropped_bytes == 16
    assert m.saved_state(5, 2) == "dropped"


# ---- NOTE [ One trace model ]: which graph is shown (rules 6-8)

def _names(m, i):
    return sorted(m.nodes[n].name for n in m.shown(i))


def _index(m, kind, k=0, **match):
    hits = [i for i, e in enumerate(m.events) if e["kind"] == kind and all(e.get(a) == v for a, v in match.items())]
    return hits[k]


def test_a_spent_graph_stays_until_the_next_one_starts():
    m = TraceModel.from_trace(RECORDED["training loop"]())
    end = _index(m, "backward_end")
    first = min(g.first for g in m.graphs() if g.first > end)
    assert "MeanBackward0" in _names(m, first - 1)                    # the finished backward stays in view
    assert _names(m, first) == ["AccumulateGrad", "TBackward0"]       # then only the new graph
    assert m.iteration(first - 1) == 0 and m.iteration(first) == 1


def test_a_retained_graph_stays_while_it_lives():
    m = TraceModel.from_trace(RECORDED["retain_graph"]())
    z_end = _index(m, "backward_end", 2)                               # z.backward(retain_graph=True)
    sin = next(n.id for n in m.nodes.values() if n.name == "SinBackward0")
    assert sin in m.shown(len(m) - 1)                                  # z is alive: its graph too, beside z2's
    assert "CosBackward0" in _names(m, len(m) - 1)
    assert m.state(sin, z_end) == "executed"


def test_a_retained_graph_goes_when_its_last_tensor_dies():
    m = TraceModel.from_trace(RECORDED["retain_graph loop"]())
    gs = [g for g in m.graphs() if g.has_fn]
    assert len(gs) == 3
    old, new = gs[0], gs[1]
    assert old.end != float("inf") and new.first < old.end            # the old loss dies after the new forward
    exp0 = min(n for n in old.joins if m.nodes[n].name == "ExpBackward0")
    assert exp0 in m.shown(old.end - 1) and exp0 not in m.shown(old.end)
    assert m.events[old.end]["kind"] in ("free", "node_free")     # its output's storage, or its nodes, died


def test_two_graphs_alive_at_once():
    m = TraceModel.from_trace(RECORDED["two graphs alive"]())
    z_op = next(i for i, e in enumerate(m.events) if e["kind"] == "op" and e["op"] == "mul"
                and i > _index(m, "backward_end"))
    names = _names(m, z_op)
    assert "SinBackward0" in names and "ExpBackward0" not in names     # y2's graph waits for its backward; y1's went
    y2_run = _index(m, "execute", name="SinBackward0")
    assert m.state(next(n for n in m.shown(y2_run) if m.nodes[n].name == "SinBackward0"), y2_run) == "current"


def test_create_graph_joins_the_new_nodes_to_the_graph():
    m = TraceModel.from_trace(RECORDED["create_graph"]())
    built = [n for n in m.nodes.values() if n.kind == "fn" and m.events[n.created]["phase"] == "backward"]
    assert built and all(n.id in m.shown(len(m) - 1) for n in built)
    assert len([g for g in m.graphs() if g.has_fn]) == 1


def test_a_node_built_before_recording_is_a_placeholder():
    events = [
        {"kind": "op", "phase": "forward", "op": "sum", "inputs": [], "output": None, "file": None, "line": None,
         "region": None, "node": {"id": 9, "name": "SumBackward0", "next": [[4, 0, "ExpBackward0"]], "saved": []}},
        {"kind": "backward_begin", "phase": "forward", "roots": [], "retain_graph": False},
        {"kind": "execute", "phase": "backward", "node": 9, "name": "SumBackward0"},
        {"kind": "execute", "phase": "backward", "node": 4, "name": "ExpBackward0"},
        {"kind": "execute", "phase": "backward", "node": 2, "name": "MulBackward0"},
        {"kind": "backward_end", "phase": "backward", "roots": []},
    ]
    m = TraceModel(events)
    assert m.nodes[4].kind == "missing" and m.shown(0) == {9, 4}
    assert m.nodes[2].kind == "missing" and m.shown(4) == {9, 4, 2}
    assert [m.state(n, 5) for n in (9, 4, 2)] == ["executed"] * 3
    assert m.state(4, 3) == "current" and m.current(3) == 4 and m.current(5) is None


def test_a_leaf_no_op_names_is_over_at_once():
    leaf = {"kind": "leaf", "phase": "forward", "node": 3, "name": "AccumulateGrad", "tensor": {"shape": [2]}}
    op = {"kind": "op", "phase": "forward", "op": "exp", "inputs": [], "output": None, "file": None, "line": None,
          "region": None, "node": {"id": 5, "name": "ExpBackward0", "next": [[None, 0, None]], "saved": []}}
    m = TraceModel([leaf, op])
    assert m.shown(0) == {3} and m.shown(1) == {5}
