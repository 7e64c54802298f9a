"""Shared test setup: the repository root importable, the engine fixtures, and a clean engine state per test."""
from __future__ import annotations

import gc
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import engine  # noqa: E402
from tests.checks import each_backend, recorded  # noqa: E402,F401  (fixtures for every test)

CORE = os.path.join(ROOT, "tests", "core")


def pytest_collection_modifyitems(config, items):
    """Tests under tests/core/ carry the ``core`` marker: ``pytest -m core`` runs them in seconds."""
    for item in items:
        if str(item.fspath).startswith(CORE + os.sep):
            item.add_marker(pytest.mark.core)


@pytest.fixture(autouse=True, scope="session")
def _own_glassgrad_home(tmp_path_factory):
    """The traces tests open are remembered in a folder of the test run, never in the user's
    ``~/.glassgrad/recent.json`` (the home screen's recent traces)."""
    was = os.environ.get("GLASSGRAD_HOME")
    os.environ["GLASSGRAD_HOME"] = str(tmp_path_factory.mktemp("glassgrad_home"))
    yield
    if was is None:
        os.environ.pop("GLASSGRAD_HOME", None)
    else:
        os.environ["GLASSGRAD_HOME"] = was


@pytest.fixture(autouse=True)
def _engine_defaults():
    """Each test starts with float32 default dtype, the CPU default device and seed 0.

    Earlier tests' cyclic garbage is collected first, so a collection cannot free old
    storages in the middle of a test that checks exact alloc/free event sequences. What
    survives is then frozen (``gc.freeze``), so the next test's collection scans only the
    objects made since: a full collection over the whole heap before every test used to
    be three quarters of the suite's time.
    """
    gc.collect()
    gc.freeze()
    engine.set_default_dtype(engine.float32)
    engine.set_default_device("cpu")
    engine.manual_seed(0)
    yield
    engine.set_default_dtype(engine.float32)
    engine.set_default_device("cpu")


# NOTE [ Pilot's idle wait ]
# 1. Textual's Pilot syncs with the app after every key press by ``wait_for_idle``: it sleeps in
#    slices of ``SLEEP_GRANULARITY`` (1/50 s) until one slice passes with the process using less
#    than ``SLEEP_IDLE`` (1/20 of a slice) of CPU, twice per key.
# 2. The suite presses thousands of keys, so the slices alone added up to a minute of sleeping.
#    Pilot tests run with a 1/200 s slice and the same 1/20 ratio: the app still runs until a
#    slice passes idle, so a key's messages, and the work they queue, are done when ``press``
#    returns.
# 3. Work a key leaves on a timer is not waited for, at any slice length; tests that look at the
#    screen after such work call ``pilot.pause()`` (which also runs the screen's update).
# 4. Snapshot tests (``snap_compare``) keep Textual's own slice: a snapshot pictures one moment,
#    and where a key starts a timed scroll, the moment depends on the slice (lesson 3's later
#    step scrolls its narrative to another row at 1/100 s).
PILOT_SLICE = 1 / 200


@pytest.fixture(autouse=True)
def _short_pilot_idle_slices(request):
    """Pilot's idle-wait slice shortened for tests that loaded Textual (NOTE [ Pilot's idle wait ])."""
    wait = sys.modules.get("textual._wait")
    if wait is None or "snap_compare" in request.fixturenames or not hasattr(wait, "SLEEP_GRANULARITY"):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wait, "SLEEP_GRANULARITY", PILOT_SLICE)
        mp.setattr(wait, "SLEEP_IDLE", PILOT_SLICE / 20)
        yield
