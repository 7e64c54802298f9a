import itertools
import os
import re
import tempfile

import pytest

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mlp_trace.jsonl")


@pytest.fixture
def mlp_trace():
    from engine.trace import Trace

    return Trace.load(FIXTURE)


@pytest.fixture
def fixed_ids(monkeypatch):
    """Make tensor/storage/node ids start at 1, so a run's events are the same in any test order."""
    import engine.events as ev

    monkeypatch.setattr(ev, "new_id", itertools.count(1).__next__)


def _run_lesson(key):
    import gc

    import lessons
    from lessons import _runner
    from tui.gcpause import paused_gc

    gc.collect()  # garbage from earlier tests must not be freed (and recorded) during the lesson
    with paused_gc():
        lr = _runner.run(lessons.get(key))
    # bytes earlier tests left alive are no part of the lesson's picture
    lr.trace.meta.pop("memory_at_start", None)
    return lr


@pytest.fixture
def lesson_run(fixed_ids, monkeypatch):
    from engine.memory import allocator as _allocator

    # a fresh allocator model: the reserved bytes a lesson shows must not depend on earlier tests
    monkeypatch.setattr(_allocator.hook, "models", {})
    return _run_lesson


TMP_NAME = re.compile(re.escape(tempfile.gettempdir()) + r"/(?:tmp|glassgrad-[\w-]+?-)[\w]+")   # mkdtemp names


@pytest.fixture(scope="session")
def recorded_lesson():
    """Each lesson run once for the whole session, as ``lesson_run`` runs it (ids from 1, a fresh
    allocator model), for tests that only look at it (snapshots); temporary folder names in its
    events read ``/tmp/lesson`` so pictures of it do not change from run to run."""
    import engine.events as ev
    from engine.memory import allocator as _allocator

    runs = {}

    def record(key):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ev, "new_id", itertools.count(1).__next__)
            mp.setattr(_allocator.hook, "models", {})
            lr = _run_lesson(key)
        for e in lr.trace.events:
            for k, v in e.items():
                if isinstance(v, str) and TMP_NAME.search(v):
                    e[k] = TMP_NAME.sub("/tmp/lesson", v)
        runs[key] = lr

    def get(key):
        # lessons 1..key, in order: what the earlier ones keep alive (a lesson's text may quote
        # torch.memory.memory_allocated()) is then the same whichever test asks first
        for k in range(1, key + 1):
            if k not in runs:
                record(k)
        return runs[key]
    return get


@pytest.fixture(autouse=True)
def _own_recent_list(monkeypatch, tmp_path):
    """The app remembers opened traces in $GLASSGRAD_HOME: keep the user's list out of tests."""
    monkeypatch.setenv("GLASSGRAD_HOME", str(tmp_path / "glassgrad-home"))


def right_answer_keys(lr, k: int) -> list:
    """The digit keys that answer lesson step k's questions with the run's own answers (NOTE [ Questions ])."""
    keys = []
    for a in lr.steps[k].answers:
        choices = a.question.choices or ("show the answer",)
        keys.append(str(choices.index(a.answer) + 1 if a.answer in choices else 1))
    return keys


def host_screen(model, title: str = "trace"):
    """An app showing ``model`` on a TraceScreen with glassgrad's styles (for Pilot tests of one screen)."""
    from textual.app import App

    from tui.trace_screen import TraceScreen

    class Host(App):
        CSS_PATH = os.path.join(os.path.dirname(__import__("tui").__file__), "glassgrad.tcss")

        def on_mount(self):
            self.push_screen(TraceScreen(model, title=title))

    return Host()


async def allocator_view(pilot):
    """Press ``m`` until the memory panel shows the allocator view (chart -> lifetimes -> holders
    -> allocator); the view."""
    from tui.allocator_view import AllocatorView

    for _ in range(3):
        await pilot.press("m")
    al = pilot.app.screen.query_one(AllocatorView)
    assert al.display
    return al


def residual_blocks(n: int):
    """A recorded forward and backward of ``n`` alike residual blocks (x + tanh(Linear(8, 8)(x))):
    the TraceModel and the index of its ``backward_begin`` event."""
    import engine as torch
    from replay.model import TraceModel

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            return x + torch.tanh(self.lin(x))

    torch.manual_seed(0)
    m = torch.nn.Sequential(*[Block() for _ in range(n)])
    with torch.record() as tr:
        m(torch.randn(2, 8)).sum().backward()
    model = TraceModel.from_trace(tr)
    return model, next(k for k, e in enumerate(model.events) if e.get("kind") == "backward_begin")
