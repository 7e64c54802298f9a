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
