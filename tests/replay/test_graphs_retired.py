"""Retired graphs and packed nodes answer as graphs built whole from live nodes (NOTE [ One trace model ]
rule 13, NOTE [ Settled nodes ])."""
import json

import pytest

from replay import graphs_build
from replay.model import TraceModel
from tests.replay.test_follow_bounded import _record_steps
from tests.replay.test_scale import same_answers
from tests.replay.traces import RECORDED


def _whole(events, monkeypatch) -> TraceModel:
    """The model of ``events`` with no graph ever retired: each ``graphs()`` builds every graph from its nodes."""
    with monkeypatch.context() as mp:
        mp.setattr(graphs_build, "retire_waiting", lambda m: m._waiting.clear())
        return TraceModel(events)


def _graphs(m):
    return [(g.first, g.spent, g.died, g.hide, g.hide_kept, g.joins, g.has_fn) for g in m.graphs()]


def _views(m, n):
    out = []
    for i in sorted({0, n // 3, n // 2, n - 2, n - 1} & set(range(n))):
        for keep in (False, True):
            v = m.view(i, keep)
            out.append((v.ids, v.since, v.start, m.iteration(i)))
    return out


@pytest.mark.parametrize("name", list(RECORDED))
def test_graphs_kept_at_each_catch_up_are_those_built_whole(name, monkeypatch):
    events = json.loads(json.dumps(RECORDED[name]().events))
    growing = TraceModel()
    step = max(5, len(events) // 25)
    for k in range(0, len(events), step):
        growing.extend(events[k:k + step])
        n = len(growing)
        whole = _whole(events[:n], monkeypatch)
        assert _graphs(growing) == _graphs(whole), (name, n)
        assert _views(growing, n) == _views(whole, n), (name, n)
        assert {nid: growing.nodes[nid].joins for nid in growing.nodes} == \
            {nid: whole.nodes[nid].joins for nid in whole.nodes}, (name, n)
    same_answers(growing, whole)


def test_a_training_run_retires_each_step_and_packs_its_nodes(monkeypatch):
    events = _record_steps(12)
    m, whole = TraceModel(), _whole(events, monkeypatch)
    for k in range(0, len(events), 97):
        m.extend(events[k:k + 97])
    assert len(m._kept) == 12 and len(whole._kept) == 0            # every step's graph retired but the last open
    assert not m._members and len(m.nodes.live) <= 6 and len(m.nodes) == len(whole.nodes)
    packed = [nid for nid in whole.nodes if nid not in m.nodes.live]
    assert packed and all(m.nodes.freed_at(nid) == whole.nodes[nid].freed_at for nid in packed)
    assert m.nodes[packed[0]] is m.nodes[packed[0]]                # made once while kept
    same_answers(m, whole)
    assert _graphs(m) == _graphs(whole)


def test_a_graph_still_running_backward_is_not_retired():
    events = _record_steps(1)
    end = next(i for i, e in enumerate(events) if e["kind"] == "backward_end")
    m = TraceModel(events[:end])
    assert not m._kept
    m.extend(events[end:])
    assert len(m._kept) == 1 and m._kept[0].spent == end


def test_a_followed_run_with_packed_nodes_is_saved_and_read_back_alike(tmp_path, monkeypatch):
    """NOTE [ A saved model ]: a settled followed model saves its packed nodes' figures as it saves made ones."""
    from engine.trace import Trace
    from replay import model_cache
    from replay.index import settle
    from replay.model_cache import SavedNodes
    from tests.replay.test_follow_bounded import _follow, _write_part

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    events = _record_steps(6)
    part, path = tmp_path / "run.jsonl.part", tmp_path / "run.jsonl"
    _write_part(part, events)
    _write_part(path, events)
    m = _follow(part, piece=1 << 12)
    assert len(m.nodes.live) < len(m.nodes)
    assert settle(m, Trace.open(str(path))) and model_cache.save_beside(m, m.index)
    again = TraceModel.from_trace(Trace.open(str(path)))
    assert isinstance(again.nodes, SavedNodes)
    same_answers(again, _whole(json.loads(json.dumps(events)), monkeypatch))


def test_packed_nodes_are_found_by_id_between_batches_in_two_sorted_runs(monkeypatch):
    """NOTE [ Settled nodes ] rule 5: ids packed since the big sort are found in a run of their own, and
    both runs join once the recent one outgrows RECENT; every id is found, any other is not, at each step."""
    from replay import node_table

    monkeypatch.setattr(node_table, "RECENT", 8)
    events = _record_steps(12)
    m = TraceModel()
    runs_seen = set()
    for k in range(0, len(events), 61):
        m.extend(events[k:k + 61])
        packed = m.nodes._ids.tolist()
        for r, nid in enumerate(packed):
            assert m.nodes._row(nid) == r
        assert m.nodes._row(max(packed, default=0) + 10_000) is None
        if packed:
            runs_seen.add(len(m.nodes._runs))
            assert sum(len(ids) for ids, _ in m.nodes._runs) == len(packed)
    assert runs_seen == {1, 2}              # a recent run was searched, and the runs joined again
