"""The graph at one step, replayed from traces: nodes, edges, saved slots, storages and step states.

Moved from tests/viz/test_graph_state.py: ``GraphState.at(events, step)`` became ``graph_at(TraceModel(events), step)``.
"""
import pytest

import engine as torch
from replay.graph import default_step, graph_at, phase_step
from replay.model import TraceModel
from tests.replay.traces import CKPT


def _at(trace, step=None):
    """The graph a trace (or an event list) shows at ``step`` (None: the last event)."""
    evs = trace.events if hasattr(trace, "events") else list(trace)
    return graph_at(TraceModel(evs, getattr(trace, "meta", None)), step)


def _index(tr, kind, **match):
    for i, e in enumerate(tr.events):
        if e["kind"] == kind and all(e.get(k) == v for k, v in match.items()):
            return i
    raise AssertionError(f"no {kind} event with {match}")


def _by_name(g):
    return {n.name: n for n in g.nodes.values()}


def test_sincos_nodes_edges_and_saved(sincos):
    g = _at(sincos, default_step(sincos))
    n = _by_name(g)
    assert set(n) == {"AccumulateGrad", "SinBackward0", "CosBackward0", "SumBackward0"}
    assert n["SumBackward0"].next == [(n["CosBackward0"].id, 0)]
    assert n["CosBackward0"].next == [(n["SinBackward0"].id, 0)]
    assert n["SinBackward0"].next == [(n["AccumulateGrad"].id, 0)]
    assert n["AccumulateGrad"].kind == "leaf"
    # sin keeps its input (the leaf's own storage), cos keeps sin's output
    (s_sin,), (s_cos,) = n["SinBackward0"].saved, n["CosBackward0"].saved
    assert (s_sin.name, s_sin.bytes, s_sin.shape, s_sin.dtype) == ("self", 12, [3], "float32")
    assert s_sin.storage == n["AccumulateGrad"].tensor["storage"]
    assert s_cos.storage == n["SinBackward0"].output["storage"]
    assert n["SumBackward0"].saved == []
    assert {s.state for s in (s_sin, s_cos)} == {"live"}
    assert [o.name for o in g.output_nodes()] == ["SumBackward0"]
    assert g.counts() == {"nodes": 4, "executed": 0, "current": 0, "pending": 4}


def test_default_step_is_just_before_backward(sincos):
    b = _index(sincos, "backward_begin")
    assert default_step(sincos) == b - 1
    assert default_step(sincos.events[:b]) == b - 1   # no backward: the end


def test_step_states_current_executed_released(sincos):
    i = _index(sincos, "execute", name="CosBackward0")
    g = _at(sincos, i)
    n = _by_name(g)
    assert (n["SumBackward0"].state, n["CosBackward0"].state, n["SinBackward0"].state) == \
        ("executed", "current", "pending")
    assert g.current == n["CosBackward0"].id and g.in_backward
    assert n["CosBackward0"].saved[0].state == "live"
    r = _index(sincos, "release", node=n["CosBackward0"].id)
    g = _at(sincos, r)
    n = _by_name(g)
    assert n["CosBackward0"].saved[0].state == "released"
    assert n["SinBackward0"].saved[0].state == "live"
    # the released activation's storage is freed two events later, the leaf's never
    cos_st = n["CosBackward0"].saved[0].storage
    assert g.storages[cos_st].live
    assert not _at(sincos, r + 2).storages[cos_st].live
    end = _at(sincos)
    assert {x.state for x in end.nodes.values()} == {"executed"}
    assert end.current is None and not end.in_backward
    assert all(s.state == "released" for x in end.nodes.values() for s in x.saved)


def test_phase_step(sincos):
    last_bw = max(i for i, e in enumerate(sincos.events) if e["phase"] == "backward")
    assert phase_step(sincos, "backward") == last_bw
    with pytest.raises(ValueError, match="no events in phase 'recompute'"):
        phase_step(sincos, "recompute")


def test_one_storage_saved_twice_is_one_storage():
    x = torch.randn(4, requires_grad=True)
    with torch.record() as tr:
        y = (x * x).sum()  # noqa: F841 - alive at the end: its graph is drawn
    g = _at(tr)
    mul = _by_name(g)["MulBackward0"]
    assert [s.name for s in mul.saved] == ["other", "self"]  # PyTorch's packing order
    by_st = g.saved_by_storage()
    assert list(by_st) == [x._storage.id]
    assert [s.name for s in by_st[x._storage.id]] == ["other", "self"]


def test_mlp_parameters_named_and_weight_view_shares_storage(mlp_trace):
    tr, model = mlp_trace
    g = _at(tr, default_step(tr))
    leaves = {n.label_name: n for n in g.nodes.values() if n.kind == "leaf"}
    assert set(leaves) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    addmm = sorted((n for n in g.nodes.values() if n.name == "AddmmBackward0"), key=lambda n: n.seq)
    assert [len(a.next) for a in addmm] == [3, 3]
    # the second Linear's AddmmBackward0 keeps mat2 = weight.t(), a view of the parameter's storage
    mat2 = {s.name: s for s in addmm[1].saved}["mat2"]
    assert mat2.storage == model[2].weight._storage.id
    assert g.leaf_storages()[mat2.storage].label_name == "2.weight"
    # the first layer's weight is not saved: its input x does not require grad
    assert "mat2" not in {s.name for s in addmm[0].saved}
    names = sorted(n.name for n in g.nodes.values() if n.kind == "fn")
    assert names == sorted(["TBackward0", "AddmmBackward0", "ReluBackward0", "TBackward0", "AddmmBackward0",
                            "LogSoftmaxBackward0", "NllLossBackward0"])


def test_new_graph_after_backward():
    w = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        for _ in range(2):
            loss = (w.exp() * 2).sum()
            loss.backward()
    g = _at(tr)
    assert g.iteration == 1
    assert sorted(n.name for n in g.nodes.values()) == ["AccumulateGrad", "ExpBackward0", "MulBackward0",
                                                         "SumBackward0"]
    first_exp = _at(tr, default_step(tr))
    assert first_exp.iteration == 0
    assert _by_name(first_exp)["ExpBackward0"].id != _by_name(g)["ExpBackward0"].id


def test_a_node_whose_last_reference_died_leaves_the_picture():
    """NOTE [ One trace model ] rule 9: ``del q`` kills the nodes; their saved bytes go with them."""
    big = torch.randn(100, requires_grad=True)
    with torch.record() as tr:
        q = big.exp().exp()
        keep = (big * 2).sum()   # noqa: F841 - a second graph that stays alive
        del q
    m = TraceModel(tr.events, tr.meta)
    frees = [i for i, e in enumerate(tr.events) if e["kind"] == "node_free"]
    exps = [n for n in m.nodes.values() if n.name == "ExpBackward0"]
    assert len(exps) == 2 and all(n.freed_at in frees for n in exps)
    before, end = min(n.freed_at for n in exps) - 1, len(m) - 1
    assert {n.id for n in exps} <= m.shown(before)
    assert not {n.id for n in exps} & m.shown(end)
    assert {"MulBackward0", "SumBackward0"} <= {m.nodes[n].name for n in m.shown(end)}
    kept = graph_at(m, end, keep_freed=True)
    assert all(kept.nodes[n.id].freed and {s.state for s in kept.nodes[n.id].saved} == {"released"} for n in exps)


def test_node_built_before_recording_is_a_placeholder():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    with torch.record() as tr:
        y.sum()
    g = _at(tr)
    exp = _by_name(g)["ExpBackward0"]
    assert exp.kind == "missing"


def test_checkpoint_region_dropped_and_recomputed():
    g = _at(CKPT, 3)
    r = g.regions[7]
    assert r.nodes == [2, 3] and r.dropped_bytes == 16 and not r.recomputed
    assert [s.state for s in g.nodes[3].saved] == ["dropped"]
    assert g.saved_by_storage() == {}
    g = _at(CKPT)
    assert g.regions[7].recomputed
    assert g.nodes[2].recomputed and g.nodes[3].recomputed and not g.nodes[4].recomputed
    assert 12 not in g.nodes and 13 not in g.nodes          # matched onto the forward nodes
    assert g.nodes[3].saved[0].state == "recomputed" and g.nodes[3].saved[0].storage == 212
    assert g.nodes[3].state == "current"


def test_real_checkpoint_non_reentrant(ckpt_trace):
    tr = ckpt_trace(False)
    g = _at(tr, default_step(tr))
    (r,) = g.regions.values()
    names = [g.nodes[i].name for i in r.nodes]
    assert names == ["ReluBackward0", "TBackward0", "AddmmBackward0", "ReluBackward0"]
    relu1, _, addmm, relu2 = (g.nodes[i] for i in r.nodes)
    # relu's result and addmm's mat1 are one dropped storage (counted once); relu2's result another
    assert relu1.saved[0].state == addmm.saved[0].state == relu2.saved[0].state == "dropped"
    assert relu1.saved[0].dropped_storage == addmm.saved[0].dropped_storage
    assert r.dropped_bytes == 2 * 5 * 16 * 4
    mat2 = {s.name: s for s in addmm.saved}["mat2"]           # the weight is kept: not dropped
    assert mat2.state == "live" and g.leaf_storages()[mat2.storage].label_name == "2.weight"
    assert not any(g.nodes[i].recomputed for i in r.nodes)
    end = _at(tr)
    assert end.regions[r.id].recomputed and all(end.nodes[i].recomputed for i in r.nodes)
    assert all(sl.state == "released" for i in r.nodes for sl in end.nodes[i].saved)
    assert {n.state for n in end.nodes.values()} == {"executed"}


def test_real_checkpoint_reentrant(ckpt_trace):
    tr = ckpt_trace(True)
    g = _at(tr, default_step(tr))
    assert "CheckpointFunctionBackward" in {n.name for n in g.nodes.values()}
    assert not any(n.name == "ReluBackward0" for n in g.nodes.values())   # forward ran without grad
    # reentrant: the recompute built a graph of its own, freed once its backward ran (rule 9)
    assert not any(n.recomputed for n in _at(tr).nodes.values())
    end = graph_at(TraceModel(tr.events, tr.meta), None, keep_freed=True)
    rec = sorted(n.name for n in end.nodes.values() if n.recomputed)
    assert rec == ["AddmmBackward0", "ReluBackward0", "ReluBackward0", "TBackward0"]
    assert all(n.freed for n in end.nodes.values() if n.recomputed)
    assert not end.in_backward and {n.state for n in end.nodes.values() if n.kind == "fn"} == {"executed"}
