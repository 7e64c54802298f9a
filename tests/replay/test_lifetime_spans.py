"""Lifetimes in one pass over the events they need, and their spans as arrays
(NOTE [ A pass over some kinds ], NOTE [ Lifetime spans ])."""
import dataclasses

import numpy as np
import pytest

from engine.trace import Trace
from replay.event_stream import stream
from replay.holders import holders
from replay.lifetimes import alive_at, bands, lifetimes
from replay.model import TraceModel
from tests.replay.traces import RECORDED


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _rows(lts):
    return [dataclasses.astuple(lt) for lt in lts]


@pytest.mark.parametrize("name", list(RECORDED))
def test_an_opened_trace_gives_the_lifetimes_of_the_loaded_one(tmp_path, name):
    p = tmp_path / "t.jsonl"
    RECORDED[name]().save(p)
    loaded, opened = Trace.load(p), TraceModel.from_trace(Trace.open(p))
    assert _rows(lifetimes(opened)) == _rows(lifetimes(loaded))


@pytest.mark.parametrize("name", list(RECORDED))
def test_events_made_from_the_columns_read_as_the_parsed_ones(tmp_path, name):
    p = tmp_path / "t.jsonl"
    RECORDED[name]().save(p)
    events = Trace.load(p).events
    kinds = ("alloc", "free", "category", "release", "backward_end", "op")
    got = list(stream(TraceModel.from_trace(Trace.open(p)), kinds, parse=("op",)))
    want = [(i, e) for i, e in enumerate(events) if e["kind"] in kinds]
    assert [i for i, _ in got] == [i for i, _ in want]
    for (i, made), (_, e) in zip(got, want):
        for key, v in made.items():
            assert e.get(key) == v, (i, key)
        if e["kind"] != "op":
            for key in ("storage", "bytes", "device", "category", "old", "new"):
                assert made.get(key) == e.get(key), (i, key)


def _reference_bands(lts, lo, hi, n):
    alive = [lt for lt in lts if lt.overlap(lo, hi) > 0]
    alive.sort(key=lambda lt: (-lt.bytes, -lt.overlap(lo, hi), lt.start))
    return sorted(alive[:n], key=lambda lt: lt.start), alive[n:]


@pytest.mark.parametrize("name", ["training loop", "checkpoint, non-reentrant", "two graphs alive"])
def test_spans_answer_as_each_lifetime_does(name):
    tr = RECORDED[name]()
    lts = lifetimes(tr)
    n = len(tr.events)
    for i in range(-1, n + 1):
        assert [lt.storage for lt in alive_at(lts, i)] == \
            [lt.storage for lt in sorted((lt for lt in lts if lt.alive_at(i)), key=lambda lt: (-lt.bytes, lt.start))]
        assert holders(lts, i, by="module") == holders(list(lts), i, by="module")
    for lo, hi in ((0, n), (0, 1), (n // 3, n // 2), (n // 2, n), (n - 1, n)):
        for k in (1, 3, 12):
            b = bands(lts, lo, hi, k)
            top, rest = _reference_bands(lts, lo, hi, k)
            assert [lt.storage for lt in b.top] == [lt.storage for lt in top]
            assert [lt.storage for lt in b.rest] == [lt.storage for lt in rest]
            points = list(range(lo, hi))
            assert b.rest_bytes_over(points) == [sum(lt.bytes for lt in rest if lt.alive_at(i)) for i in points]


def test_the_step_function_of_the_last_positions_is_kept_and_a_new_one_made_for_others():
    lts = lifetimes(RECORDED["training loop"]())
    sp = bands(lts, 0, 1).spans
    n = max(lt.end or lt.start for lt in lts) + 2
    evens, odds = np.arange(0, len(lts), 2), np.arange(1, len(lts), 2)
    first = sp.steps(evens)
    assert sp.steps(evens) is first                       # kept: no second sort
    for pos in (evens, odds, evens):                      # another pos is worked out, not answered from the kept one
        want = [sum(lts[k].bytes for k in pos.tolist() if lts[k].alive_at(i)) for i in range(-1, n)]
        assert sp.bytes_at(pos, list(range(-1, n))) == want
    assert sp.steps(evens) is not first
