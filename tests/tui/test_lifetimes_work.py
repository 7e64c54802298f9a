"""A big trace's lifetimes are worked out on a thread while the app stays live (NOTE [ Lifetimes on a thread ])."""
import dataclasses
import threading

import pytest

import tui.lifetimes_work as lw
from engine.trace import Trace
from replay.holders import holders
from replay.lifetimes import bands, lifetimes
from replay.model import TraceModel
from tests.replay.traces import RECORDED
from tests.tui.conftest import host_screen
from tui.holders_view import HoldersView
from tui.lifetimes_view import LifetimesView


@pytest.fixture
def opened(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    p = tmp_path / "t.jsonl"
    RECORDED["training loop"]().save(p)
    return TraceModel.from_trace(Trace.open(p))


async def _until(pilot, cond):
    for _ in range(300):
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError("never")


async def test_the_views_say_how_far_it_got_and_keys_work_meanwhile(opened, monkeypatch):
    monkeypatch.setattr(lw, "ON_THREAD", 1)
    gate, real = threading.Event(), lw.lifetimes
    threads = []

    def held(view, progress=None):
        threads.append((threading.current_thread(), view.events))
        gate.wait(10)
        return real(view, progress=progress)
    monkeypatch.setattr(lw, "lifetimes", held)
    app = host_screen(opened)
    async with app.run_test(size=(120, 40)) as pilot:
        s = app.screen
        await pilot.press("m")                        # lifetimes
        lv = s.query_one(LifetimesView)
        await _until(pilot, lambda: lv.work.working)
        assert lv.render().plain.startswith("Working out the storages' lifetimes over ")
        await pilot.press("m")                        # holders: it waits for the same work
        hv = s.query_one(HoldersView)
        assert hv.get_row_at(0)[0].startswith("Working out") and hv.border_subtitle == " working… "
        await pilot.press("right", "right")
        assert s.index == 2                           # the app answered keys meanwhile
        gate.set()
        await _until(pilot, lambda: lv.work.result is not None)
        await pilot.pause()
        want = lifetimes(opened)
        assert [dataclasses.astuple(x) for x in lv.work.result] == [dataclasses.astuple(x) for x in want]
        assert [r.name for r in hv.holder_rows] == [r.name for r in holders(want, 2, by=hv.by, sort=hv.sort_by)]
        await pilot.press("m", "m", "m")              # back round to the lifetimes
        assert lv.current_bands(5).top == bands(want, 0, len(opened), 5).top
    (thread, events), = threads
    assert thread is not threading.main_thread() and events is not opened.events     # a reader of its own
    assert events._cache is not opened.events._cache


def test_a_reader_reads_the_same_events_through_its_own_descriptor(opened):
    ev = opened.events
    first = ev[3]
    r = ev.reader()
    assert len(r) == len(ev) and r[3] == first and r._cache is not ev._cache
    assert list(r) == list(ev)
    r.close()
    assert ev[len(ev) - 1] == Trace.load(ev.path).events[-1]


def test_a_growing_model_gets_its_last_answer_while_the_longer_one_is_worked_out(monkeypatch):
    monkeypatch.setattr(lw, "ON_THREAD", 1)
    gate, real = threading.Event(), lw.lifetimes
    monkeypatch.setattr(lw, "lifetimes", lambda view, progress=None: gate.wait(10) and real(view, progress=progress))
    events = list(RECORDED["training loop"]().events)
    m = TraceModel()
    m.extend(events[:40])
    done = threading.Event()
    work = lw.LifetimesWork(m, lambda fn, *a: fn(*a), done.set)
    assert work.get() is None and work.working            # rule 1: a thread works it out
    gate.set()
    assert done.wait(10)
    first = work.get()
    assert first is not None and work.key == 40
    gate.clear()
    m.extend(events[40:])
    done.clear()
    assert work.get() is first and work.working           # rule 3: the last answer while the longer one is made
    gate.set()
    assert done.wait(10)
    assert [dataclasses.astuple(x) for x in work.get()] == [dataclasses.astuple(x) for x in lifetimes(m)]
    assert work.key == len(events) and not work.working


def test_the_thread_pauses_every_few_hundred_events_under_a_long_switch_interval(monkeypatch):
    """Rule 6: the switch interval is SWITCH while a thread runs and Python's own again after; the
    thread gives the GIL up at each progress call: every PROGRESS_EVERY events of the pass and
    lifetimes of its last loop."""
    import math
    import sys

    import replay.lifetimes as rl
    monkeypatch.setattr(lw, "ON_THREAD", 1)
    gate, real, seen = threading.Event(), lw.lifetimes, []

    def held(view, progress=None):
        seen.append(sys.getswitchinterval())
        gate.wait(10)
        return real(view, progress=progress)
    monkeypatch.setattr(lw, "lifetimes", held)
    sleeps = []
    monkeypatch.setattr(lw.time, "sleep", lambda s: sleeps.append(s))
    monkeypatch.setattr(rl, "PROGRESS_EVERY", 16)          # the trace has a few hundred events
    before = sys.getswitchinterval()
    events = list(RECORDED["training loop"]().events)
    m = TraceModel()
    m.extend(events)
    done = threading.Event()
    work = lw.LifetimesWork(m, lambda fn, *a: fn(*a), done.set)
    assert work.get() is None
    assert sys.getswitchinterval() == pytest.approx(max(lw.SWITCH, before), rel=1e-3)
    gate.set()
    assert done.wait(10)
    assert seen == [pytest.approx(max(lw.SWITCH, before), rel=1e-3)] and sys.getswitchinterval() == before
    streamed = sum(e["kind"] in rl._KINDS for e in events)
    want = math.ceil(streamed / rl.PROGRESS_EVERY) + math.ceil(len(work.get()) / rl.PROGRESS_EVERY)
    assert streamed > 4 * 16 and sleeps == [0] * want
