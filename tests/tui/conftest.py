import itertools
import os

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


@pytest.fixture
def lesson_run(fixed_ids, monkeypatch):
    import lessons
    from engine.memory import allocator as _allocator
    from lessons import _runner

    # a fresh allocator model: the reserved bytes a lesson shows must not depend on earlier tests
    monkeypatch.setattr(_allocator.hook, "models", {})

    def run(key):
        import gc

        from tui.gcpause import paused_gc

        gc.collect()  # garbage from earlier tests must not be freed (and recorded) during the lesson
        with paused_gc():
            lr = _runner.run(lessons.get(key))
        # bytes earlier tests left alive are no part of the lesson's picture
        lr.trace.meta.pop("memory_at_start", None)
        return lr
    return run


@pytest.fixture(autouse=True)
def _own_recent_list(monkeypatch, tmp_path):
    """The app remembers opened traces in $GLASSGRAD_HOME: keep the user's list out of tests."""
    monkeypatch.setenv("GLASSGRAD_HOME", str(tmp_path / "glassgrad-home"))
