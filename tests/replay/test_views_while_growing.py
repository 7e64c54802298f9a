"""Graphs built earlier answer earlier steps while a model grows, as graphs built again would
(NOTE [ One trace model ] rule 12)."""
import pytest

from replay.model import TraceModel
from tests.replay.traces import RECORDED


def _seen(v):
    return v.ids, v.since, v.start, [g.first for g in v.graphs]


@pytest.mark.parametrize("name", list(RECORDED))
def test_views_asked_while_the_model_grows_are_those_of_graphs_built_again(name):
    events = list(RECORDED[name]().events)
    growing = TraceModel()
    step, stale = 11, 0
    for k in range(0, len(events), step):
        growing.extend(events[k:k + step])
        n = len(growing)
        fresh = TraceModel(events[:n])                 # the same events, its graphs built now
        for i in sorted({0, n // 4, n // 3, n // 2, n - 1}):
            stale += growing._graphs_n is not None and i < growing._graphs_n
            for keep in (False, True):
                assert _seen(growing.view(i, keep)) == _seen(fresh.view(i, keep)), (name, n, i, keep)
    assert stale > len(events) // step              # most views were answered by graphs built earlier
    whole = TraceModel(events)
    assert [(g.first, g.spent, g.died, g.hide) for g in growing.graphs()] == \
        [(g.first, g.spent, g.died, g.hide) for g in whole.graphs()] and growing._graphs_n is None


def test_an_edge_joining_two_graphs_built_apart_drops_them():
    m = TraceModel()
    m.graphs()
    m._graph_roots = {1, 2}
    m._graphs = []
    m._parent = {1: 1, 2: 2, 3: 3}
    m._union(3, 1)                                  # a new node joins one old graph: they stand
    assert m._graphs == [] and m._graph_roots == {1, 2}
    m._union(3, 2)                                  # now it joins both: built again when next asked
    assert m._graphs is None and m._graph_roots is None
