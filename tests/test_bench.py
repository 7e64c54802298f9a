"""``python -m bench --quick --reps 1`` runs every section to its table (timings are not judged here,
so one timed repetition a measurement is enough)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_section_prints_its_table_without_an_error_row():
    from bench.registry import discover

    sections = discover()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    # its own process group: past the timeout, the sections' own child processes are stopped too
    proc = subprocess.Popen([sys.executable, "-m", "bench", "--quick", "--reps", "1"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    res = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout
    for s in sections.values():
        assert f"== {s.title}" in out, f"section {s.name} printed no table"
    assert "\n  error " not in out, out
    assert "glassgrad / NumPy" in out and "us/op" in out
    assert out.rstrip().endswith(("goal(s) missed", "all goals met"))
