"""The examples run unchanged as scripts (``import engine as torch``) and learn."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, str(ROOT / "examples" / script)], capture_output=True, text=True,
                         env=env, cwd=str(ROOT), timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_train_mlp_loss_falls():
    out = _run("train_mlp.py")
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", out)]
    accs = [float(v) for v in re.findall(r"accuracy (\d+\.\d+)", out)]
    assert len(losses) == 7, out
    assert losses[-1] < 0.25 * losses[0], out
    assert accs[-1] >= 0.9, out


def test_train_mlp_imports_engine_as_torch():
    src = (ROOT / "examples" / "train_mlp.py").read_text()
    assert "import engine as torch  # `import torch` works the same" in src
    assert "import torch\n" not in src
