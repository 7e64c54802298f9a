"""glassgrad run follows the worker's file by offset (NOTE [ A followed run ]) and ends on the saved trace's index."""
import sys

import pytest

from engine.trace import Trace
from engine.trace_index import FOLLOW_CACHE, FollowedEvents
from replay.index import FollowedNode
from replay.model import TraceModel
from replay.model_cache import SavedNodes
from tests.replay.test_scale import same_answers
from tui.app import GlassgradApp

SCRIPT = ("import engine as torch\n"
          "w = torch.ones(3, 3, requires_grad=True)\n"
          "for _ in range(30):\n"
          "    (w.sin() @ torch.ones(3, 2)).relu().sum().backward()\n")


async def _finish(pilot, seen: list):
    for _ in range(200):
        await pilot.pause(0.1)
        s = pilot.app.screen
        seen.append((type(s.model.events), len(s.model.events)))
        if s.finished:
            return s
    raise AssertionError("the run did not finish")


async def test_a_followed_run_ends_on_its_saved_trace_opened_through_its_index(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "loop.py"
    script.write_text(SCRIPT)
    out = tmp_path / "run.jsonl"
    interval = sys.getswitchinterval()
    app = GlassgradApp("run", script=str(script), out=str(out))
    seen: list = []
    async with app.run_test(size=(100, 30)) as pilot:
        s = await _finish(pilot, seen)
        m = s.model
        assert s.title_text == "run loop.py (finished)"
        assert issubclass(m._node, FollowedNode) and m.index is not None    # followed, then settled
        saved = TraceModel.from_trace(Trace.load(str(out)))
        same_answers(m, saved)
        assert s.index == len(m) - 1 and m.events[s.index] == saved.events[-1]
        await pilot.press("left", "left")                 # the panels read the events they show from the file
        assert s.index == len(m) - 3
    assert seen[0][0] is FollowedEvents and not (tmp_path / "run.jsonl.part").exists()
    assert sys.getswitchinterval() == pytest.approx(interval)     # the reader's long interval given back
    again = TraceModel.from_trace(Trace.open(str(out)))   # the folded model was saved beside the index
    assert isinstance(again.nodes, SavedNodes)
    same_answers(again, saved)


async def test_the_app_answers_keys_while_it_saves_the_model_and_finishes_the_save_when_it_quits(tmp_path, monkeypatch):
    """NOTE [ A saved model ] rule 4: the model is read a slice a tick after the run ends; quitting
    before the last slice finishes the save."""
    import os

    from replay import model_cache
    from tui import model_saver

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(model_cache, "SLICE", 1)
    monkeypatch.setattr(model_saver, "BUDGET", 0.0)      # one slice a tick
    script = tmp_path / "loop.py"
    script.write_text(SCRIPT)
    for quit_early in (False, True):
        out = tmp_path / f"run{int(quit_early)}.jsonl"
        app = GlassgradApp("run", script=str(script), out=str(out))
        async with app.run_test(size=(100, 30)) as pilot:
            s = await _finish(pilot, [])
            saver, path = app.saver, model_cache.path_of(s.model.index)
            assert saver is not None and not saver.done and not os.path.exists(path)
            at = s.index
            await pilot.press("left")                     # answered while the model is being read
            assert s.index == at - 1 and not saver.done
            if not quit_early:
                for _ in range(400):
                    if saver.done:
                        break
                    await pilot.pause(0.02)
                assert saver.done and saver.written and os.path.exists(path)
        assert saver.done and saver.written and os.path.exists(path)
        again = TraceModel.from_trace(Trace.open(str(out)))
        assert isinstance(again.nodes, SavedNodes) and not again.index is None
        same_answers(again, TraceModel.from_trace(Trace.load(str(out))))


async def test_a_failed_run_keeps_its_events_readable_and_opens_at_the_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "bad.py"
    script.write_text(SCRIPT + "torch.ones(2, 3) @ torch.ones(4, 5)\n")
    out = tmp_path / "run.jsonl"
    app = GlassgradApp("run", script=str(script), out=str(out))
    async with app.run_test(size=(100, 30)) as pilot:
        s = await _finish(pilot, [])
        assert s.title_text.startswith("run bad.py (failed: RuntimeError at bad.py:5)")
        events = Trace.load(str(out)).events
        assert len(s.model) == len(events) and list(s.model.events) == events
        assert len(s.model.events._cache) <= max(FOLLOW_CACHE, 4096)
