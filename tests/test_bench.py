"""``python -m bench --quick`` runs every section to its table (timings are not judged here)."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_section_prints_its_table_without_an_error_row():
    from bench.registry import discover

    sections = discover()
    res = subprocess.run([sys.executable, "-m", "bench", "--quick"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))))
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout
    for s in sections.values():
        assert f"== {s.title}" in out, f"section {s.name} printed no table"
    assert "\n  error " not in out, out
    assert "glassgrad / NumPy" in out and "us/op" in out
    assert out.rstrip().endswith(("goal(s) missed", "all goals met"))
