"""Two traces opened through their indexes compare as the loaded ones do (NOTE [ Two runs ] in replay/diff.py)."""
import pytest

from engine.trace import Trace
from replay.diff import diff, summary
from tests.replay.traces import RECORDED


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize("a, b", [("training loop", "training loop"), ("checkpoint, reentrant", "checkpoint, non-reentrant"),
                                  ("retain_graph loop", "training loop"), ("create_graph", "two graphs alive")])
def test_opened_traces_give_the_loaded_ones_diff(tmp_path, a, b):
    pa, pb = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    RECORDED[a]().save(pa)
    RECORDED[b]().save(pb)
    loaded, opened = diff(Trace.load(pa), Trace.load(pb)), diff(Trace.open(pa), Trace.open(pb))
    assert summary(opened) == summary(loaded)
    assert opened.alignment.segments == loaded.alignment.segments
    for who in ("A", "B"):
        assert list(opened.memory[who].total) == list(loaded.memory[who].total)
        assert opened.dropped[who] == loaded.dropped[who] and opened.recomputed[who] == loaded.recomputed[who]
    assert (opened.modules, opened.saved_delta, opened.notes) == (loaded.modules, loaded.saved_delta, loaded.notes)
