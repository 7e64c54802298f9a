"""replay.nodes: a record's state is its stored event indices compared with the step."""
from replay.nodes import INF, Graph, Node, Region, Slot

INFO = {"name": "result", "storage": 3, "bytes": 16, "shape": [4], "dtype": "float32", "is_output": True,
        "packed": True}


def test_a_slot_is_live_then_released():
    s = Slot(5, INFO)
    s.released_at = 9
    assert [s.state(i) for i in (4, 8, 9, 20)] == ["live", "live", "released", "released"]
    assert s.storage_at(20) == 3 and s.is_output and s.packed


def test_a_dropped_slot_is_recomputed_then_released():
    s = Slot(5, INFO)
    s.dropped, s.dropped_storage = True, 3
    s.recomputed_at, s.recomputed_storage, s.released_at = 10, 7, 12
    assert [s.state(i) for i in (9, 10, 11, 12)] == ["dropped", "recomputed", "recomputed", "released"]
    assert (s.storage_at(9), s.storage_at(10)) == (3, 7)


def test_a_node_keeps_what_happened_to_it():
    n = Node(5, "ReluBackward0", "fn", 4, 4)
    n.dropped_by(2, {"bytes": 16, "kept": False})
    n.dropped_by(3, {"bytes": 64, "kept": True})         # kept: alive anyway, no bytes freed
    n.runs.append(9)
    n.about.append(9)
    assert (n.dropped_at, n.dropped_bytes, n.executed) == (2, 16, [9])
    assert n.event_indices() == [2, 3, 4, 9] and not n.is_leaf
    assert Node(6, "AccumulateGrad", "missing", 1, 1).is_leaf and Node(7, "AccumulateGrad", "leaf", 1, 1).is_leaf
    assert not Node(8, "ExpBackward0", "missing", 1, 1).is_leaf


def test_a_region_counts_each_dropped_storage_once():
    a, b = Node(1, "ReluBackward0", "fn", 1, 1), Node(2, "AddmmBackward0", "fn", 2, 2)
    a.saved, b.saved = [Slot(1, INFO)], [Slot(2, dict(INFO, name="mat1"))]
    for s in a.saved + b.saved:
        s.dropped, s.dropped_storage = True, 3          # relu's result is addmm's mat1: one storage
    r = Region(7)
    r.add(1, a, False)
    r.add(2, b, False)
    r.add(9, Node(12, "ReluBackward0", "fn", 9, 9), True)
    assert r.nodes == [1, 2] and r.drops == [(1, 16)] and r.recompute == [(9, 12)]


def test_a_graph_ends_where_pytorch_frees_it():
    assert Graph(0, 30, INF, {}, True).end == 30 and Graph(0, INF, 12, {}, True).end == 12
    assert Graph(0, INF, INF, {}, True).end == INF
