"""Traces for the replay tests: the pictures' recorded traces and the app's fixture file."""
import os

import pytest

from tests.viz.conftest import ckpt_trace, mlp_trace, sincos, stack_trace  # noqa: F401  (the same traces)

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tui", "fixtures", "mlp_trace.jsonl")


@pytest.fixture
def mlp_file():
    """The app's fixture trace: a small MLP's forward and backward, then ``del loss`` (tests/tui/make_fixture.py)."""
    from engine.trace import Trace

    return Trace.load(FIXTURE)
