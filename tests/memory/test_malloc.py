"""NOTE [ Host allocator tuning ]: applied on import on Linux/glibc, skipped when the user opts out."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import engine
from engine.memory import malloc as _malloc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")


def _tuned_in_child(**env) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLASSGRAD_MALLOC"))}
    full.update(env, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    res = subprocess.run([sys.executable, "-c", "import engine.memory.malloc as m, engine; print(m.tuned)"],
                         capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


@pytest.mark.skipif(not GLIBC, reason="host allocator tuning applies to Linux with glibc only")
def test_tuned_on_import_and_opt_outs():
    assert engine is not None
    assert _tuned_in_child() == "True"
    assert _tuned_in_child(GLASSGRAD_MALLOC_TUNING="0") == "False"
    assert _tuned_in_child(MALLOC_TRIM_THRESHOLD_="1000000") == "False"


def test_tune_is_idempotent():
    assert _malloc.tune() == _malloc.tuned
