"""A big trace's first open shows its start at once and folds the rest in as it is read (NOTE [ A first open ])."""
import gc
import sys
import threading

import pytest

import engine.trace_head as th
import engine.trace_index as ti
import tui.first_open as fo
import tui.lifetimes_work as lw
from engine.trace import Trace
from replay import model_cache
from replay.model import TraceModel
from replay.model_cache import SavedNodes
from tests.replay.test_scale import same_answers
from tests.replay.traces import RECORDED
from tui import cli
from tui.app import GlassgradApp


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(fo, "BIG", 1)                 # every trace without an index is a first open
    monkeypatch.setattr(fo, "PIECE", 2048)            # several pieces
    monkeypatch.setattr(fo, "CHUNK", 40)              # several folds a piece


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    p = tmp_path_factory.mktemp("first_open") / "loop.jsonl"
    RECORDED["training loop"]().save(p)
    return p


def _copy(src, tmp_path, name="t.jsonl"):
    p = tmp_path / name
    p.write_bytes(src.read_bytes())
    return p


async def _until(pilot, cond, what):
    for _ in range(400):
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never: {what}")


async def test_the_start_shows_while_the_rest_is_read_then_the_model_settles_on_the_index(recorded, tmp_path,
                                                                                          monkeypatch):
    p = _copy(recorded, tmp_path)
    assert fo.wanted(str(p))
    interval = sys.getswitchinterval()
    gate, real = threading.Event(), fo.FirstOpen._piece
    handed = []

    def held(self, lines):              # the reader stops after two pieces until the test lets it go on
        if len(handed) == 2:
            gate.wait(10)
        handed.append(len(lines))
        real(self, lines)
    monkeypatch.setattr(fo.FirstOpen, "_piece", held)
    app = GlassgradApp("first_open", trace=str(p), title="t.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        opening = app.first_open
        s = opening.screen
        await _until(pilot, lambda: len(opening.model) == sum(handed[:2]) and opening._shown is not None,
                     "the first pieces folded in")
        total = len(Trace.load(p).events)
        assert 0 < len(opening.model) < total and not opening.done
        assert not gc.isenabled()                   # no full collection stalls a key while reading (rule 7)
        assert s.title_text.startswith("t.jsonl (first open: read ") and s.index == 0
        shown = s.query_one("#inspector")._shown.plain
        assert shown.startswith("event #0 ") and "Nothing recorded" not in shown
        assert not (tmp_path / "t.jsonl.ggidx.npz").exists()
        assert sys.getswitchinterval() == pytest.approx(lw.SWITCH)    # rule 8: no turn taken from a key
        await pilot.press("right")                  # the learner can step while the rest is read
        assert s.index == 1 and s.query_one("#inspector").index == 1
        gate.set()
        await _until(pilot, lambda: opening.done, "the whole file read")
        assert sys.getswitchinterval() == pytest.approx(interval)
        m = opening.model
        assert s.title_text == "t.jsonl" and s.index == 1 and opening.error is None and gc.isenabled()
        assert m.index is not None and len(m) == total          # settled on the index (rule 4)
        same_answers(m, TraceModel.from_trace(Trace.load(p)))
    assert th.has_index(p) and not fo.wanted(str(p))
    again = TraceModel.from_trace(Trace.open(p))              # the next open reads the saved model
    assert isinstance(again.nodes, SavedNodes) and model_cache.path_of(again.index).endswith("t.jsonl.ggmodel.npz")
    same_answers(again, TraceModel.from_trace(Trace.load(p)))


async def test_a_damaged_line_ends_the_reading_and_keeps_what_was_checked(recorded, tmp_path):
    lines = recorded.read_text().splitlines()
    bad_at = len(lines) - 4
    lines[bad_at] = lines[bad_at][:-7]
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    app = GlassgradApp("first_open", trace=str(p), title="bad.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        opening = app.first_open
        await _until(pilot, lambda: opening.done, "the reading ended")
        n = len(opening.model)
        assert isinstance(opening.error, ti._trace.TraceFormatError) and f"line {bad_at + 1}:" in str(opening.error)
        assert opening.screen.title_text == f"bad.jsonl (damaged: only its first {n:,} events are shown)"
        good = Trace.load(recorded).events
        assert 0 < n < bad_at and list(opening.model.events) == good[:n]
        assert any("Cannot read all of bad.jsonl" in x.message for x in app._notifications)
        await pilot.press("end")
        assert opening.screen.index == n - 1
    assert not th.has_index(p)


async def test_leaving_the_app_stops_the_reader(recorded, tmp_path):
    p = _copy(recorded, tmp_path)
    app = GlassgradApp("first_open", trace=str(p), title="t.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        opening = app.first_open
        await _until(pilot, lambda: len(opening.model) > 0, "a first piece")
    assert opening._stop and gc.isenabled()


def test_view_refuses_a_file_that_is_not_a_trace_before_starting_the_app(tmp_path, capsys):
    p = tmp_path / "notes.jsonl"
    p.write_text('{"hello": 1}\n' * 10)
    assert cli.cmd_view(str(p), text=False) == 2
    assert "not a glassgrad trace" in capsys.readouterr().err


def test_the_title_says_how_far_it_read_and_how_long_the_rest_should_take(recorded, tmp_path, monkeypatch):
    p = _copy(recorded, tmp_path)
    opening = fo.FirstOpen(None, str(p), "t.jsonl")
    assert opening._title(0) == "t.jsonl (first open: read 0%)"
    clock = iter([100.0, 100.5, 104.0])
    monkeypatch.setattr(fo.time, "perf_counter", lambda: next(clock))
    opening._started = fo.time.perf_counter()                       # 100.0
    half = opening.size // 2
    assert opening._title(half) == f"t.jsonl (first open: read {100 * half // opening.size}%)"   # within a second
    quarter = opening.size // 4                                     # 4 s for a quarter: about 12 s for the rest
    assert opening._title(quarter) == f"t.jsonl (first open: read {100 * quarter // opening.size}%, about 12 s left)"


async def test_a_recent_trace_opened_from_the_home_screen_is_a_first_open_too(recorded, tmp_path):
    p = _copy(recorded, tmp_path)
    app = GlassgradApp("home", recent=[str(p)], lessons=[])
    async with app.run_test(size=(120, 36)) as pilot:
        app.open_trace(str(p))
        opening = app.first_open
        assert opening is not None and app.screen is opening.screen
        await _until(pilot, lambda: opening.done, "the whole file read")
        assert len(opening.model) == len(Trace.load(p).events) and th.has_index(p)
        bad = tmp_path / "not-a-trace.jsonl"
        bad.write_text('{"format": "other"}\n')
        app.open_trace(str(bad))                      # refused with a notice, the screen stays
        await pilot.pause()
        assert app.screen is opening.screen
        assert any("Cannot open" in x.message and "not a glassgrad trace" in x.message for x in app._notifications)


async def test_a_tick_folds_less_while_the_learner_uses_the_keys(tmp_path, monkeypatch):
    """Rule 1: after a key, a tick folds BUSY_CHUNK events at a time within BUSY_BUDGET; idle, CHUNK
    within FOLD_BUDGET (the budgets made tiny and huge here, so one chunk and everything)."""
    import time

    import engine as torch

    monkeypatch.setattr(fo, "PIECE", 1 << 20)          # one piece: a chunk is never cut short by its end
    monkeypatch.setattr(fo, "BUSY_CHUNK", 10)
    monkeypatch.setattr(fo, "FOLD_BUDGET", 1e-9)     # one chunk a tick: the first screen shows the first
    lin = torch.nn.Linear(4, 4)
    with torch.record() as tr:
        for _ in range(12):
            lin(torch.randn(2, 4)).square().sum().backward()
    p = tmp_path / "t.jsonl"
    tr.save(p)
    assert len(tr) > 4 * fo.CHUNK
    app = GlassgradApp("first_open", trace=str(p), title="t.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        opening = app.first_open
        await _until(pilot, lambda: opening._shown is not None, "the first screen")
        opening._timer.pause()
        await _until(pilot, lambda: any(type(x) is tuple for x in opening._pending), "the whole file parsed")
        assert sum(len(x) for x in opening._pending if type(x) is not tuple) > fo.BUSY_CHUNK + fo.CHUNK
        await pilot.press("right")
        assert time.monotonic() - app.last_input < fo.ACTIVE
        assert fo.budget(app) == (fo.BUSY_BUDGET, fo.BUSY_CHUNK)
        monkeypatch.setattr(fo, "BUSY_BUDGET", 1e-9)
        n = len(opening.model)
        opening._tick()
        assert len(opening.model) == n + fo.BUSY_CHUNK
        app.last_input -= fo.ACTIVE
        assert fo.budget(app) == (fo.FOLD_BUDGET, fo.CHUNK)
        opening._tick()
        assert len(opening.model) == n + fo.BUSY_CHUNK + fo.CHUNK
        opening._timer.resume()
        await _until(pilot, lambda: opening.done, "the whole file read")
