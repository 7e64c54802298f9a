"""The real glassgrad command in a real terminal (tmux): it starts, draws its panels, and quits on q."""
import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

GLASSGRAD = os.path.join(os.path.dirname(sys.executable), "glassgrad")

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (bootstrap.sh test installs it)"),
    pytest.mark.skipif(not os.path.exists(GLASSGRAD), reason="the glassgrad command is not installed (pip install -e .)"),
]


def _tmux(session, *args, check=False, **kw):
    """tmux on a server of the test's own (-L): sessions on the shared server can impose their size."""
    return subprocess.run(["tmux", "-L", session, *args], check=check, **kw)


def _capture(session):
    return _tmux(session, "capture-pane", "-t", session, "-p", capture_output=True, text=True).stdout


def _wait_for(session, *texts, timeout=30.0):
    """The screen once every one of ``texts`` is on it (the app draws panel by panel)."""
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = _capture(session)
        if all(t in screen for t in texts):
            return screen
        time.sleep(0.05)
    raise AssertionError(f"{texts!r} never all appeared; the screen was:\n{screen}")


def test_glassgrad_lesson_1_in_tmux(tmp_path):
    session = f"gg-{uuid.uuid4().hex[:8]}"
    # COLUMNS and LINES the pane may inherit would override the window's 100×30 (shutil.get_terminal_size)
    env = f"env -u COLUMNS -u LINES TERM=xterm-256color GLASSGRAD_HOME={tmp_path} CI="
    _tmux(session, "new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c", str(tmp_path),
          f"{env} {GLASSGRAD} lesson 1; echo EXITED-$?; sleep 30", check=True)
    try:
        screen = _wait_for(session, "Step 1/4", "Graph · autograd nodes", "Memory · live bytes", "Events", "Quit")
        assert "Lesson 1 · Your first graph" in screen and "? help" in screen.splitlines()[0]
        assert "CosBackward0" in screen and "saved 16 B" in screen
        _tmux(session, "send-keys", "-t", session, "]", check=True)
        screen = _wait_for(session, "Step 2/4", "run SumBackward0")
        assert "│ backward │" in screen
        _tmux(session, "send-keys", "-t", session, "q", check=True)
        _wait_for(session, "EXITED-0")
    finally:
        _tmux(session, "kill-server", capture_output=True)
