"""`glassgrad view --text` reads a trace through its index: the summary a full read gives, the kinds
counted from the index's column, a GPU run's pool line found without reading every event."""
import pytest

from engine.trace import Trace
from engine.trace_head import has_index
from tests.replay.test_scale_views import GPU
from tests.replay.traces import RECORDED
from tui import cli


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize("name", list(RECORDED))
def test_the_summary_of_an_opened_trace_is_the_loaded_ones(tmp_path, name):
    p = tmp_path / "t.jsonl"
    RECORDED[name]().save(p)
    assert cli.summary(Trace.open(p), "t") == cli.summary(Trace.load(p), "t")


def test_a_gpu_runs_pool_line_and_the_index_left_for_next_time(tmp_path, capsys):
    p = tmp_path / "gpu.jsonl"
    Trace(GPU, meta={}).save(p)
    text = cli.summary(Trace.load(p), "gpu.jsonl")
    assert "cuda:0 at the peak" in text
    assert cli.cmd_view(str(p), text=True) == 0
    assert capsys.readouterr().out.strip() == text
    assert has_index(p)
    assert cli.cmd_view(str(p), text=True) == 0 and capsys.readouterr().out.strip() == text
