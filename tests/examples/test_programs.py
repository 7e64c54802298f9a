"""The gallery (examples/programs/): ordinary PyTorch programs print PyTorch's numbers on glassgrad.

What each program prints on PyTorch is in tests/fixtures/programs/<program>.json (recorded from
PyTorch 2.13 on the CPU by tests/fixtures/programs/make_programs_reference.py, which runs the same
files unchanged). Here each program runs through glassgrad with ``import torch`` aliased (NOTE
[ import torch inside glassgrad run ] in tui/torch_alias.py): in this process, or as
``glassgrad run`` does, in the record worker. The words of every line must be the same and every
number the same within float32 tolerance.
"""
from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import re
import runpy
import subprocess

import pytest

from engine.trace import Trace
from tui.record_worker import command
from tui.torch_alias import torch_alias

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "examples", "programs")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "programs")
NAMES = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(PROGRAMS, "*.py")))
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")

# Losses are printed with 6 decimals: float32 agreement plus the rounding of the print.
RTOL, ATOL = 1e-5, 2e-6
# mixed_precision trains in bfloat16: its first loss (the forward pass) is PyTorch's to float32
# tolerance; later ones follow gradients rounded to bfloat16, where a last-bit float32 difference
# in cross_entropy's backward lands on the other side of a bfloat16 rounding tie (one bfloat16
# step, 2**-8 relative, in a handful of entries), so they agree to bfloat16 tolerance.
LOOSER = {"mixed_precision": 2e-3}


def reference(name: str) -> list:
    with open(os.path.join(FIXTURES, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)["stdout"]


def run_in_process(name: str) -> list:
    out = io.StringIO()
    with torch_alias(), contextlib.redirect_stdout(out):
        runpy.run_path(os.path.join(PROGRAMS, f"{name}.py"), run_name="__main__")
    return out.getvalue().splitlines()


def assert_same_output(name: str, got: list, want: list) -> None:
    assert len(got) == len(want), (got, want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert NUMBER.sub("#", g) == NUMBER.sub("#", w), (k, g, w)
        rtol = RTOL if k == 0 else LOOSER.get(name, RTOL)
        for a, b in zip(NUMBER.findall(g), NUMBER.findall(w)):
            assert abs(float(a) - float(b)) <= ATOL + rtol * abs(float(b)), (k, g, w)


def test_every_program_has_pytorchs_record():
    assert len(NAMES) == 8
    assert sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(FIXTURES, "*.json"))) \
        == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_program_is_plain_pytorch(name):
    with open(os.path.join(PROGRAMS, f"{name}.py"), encoding="utf-8") as f:
        src = f.read()
    assert "\nimport torch\n" in src
    assert "engine" not in src and "glassgrad" not in src.split('"""', 2)[2]


@pytest.mark.parametrize("name", [n for n in NAMES if n != "gcn"])
def test_program_prints_pytorchs_numbers(name):
    want = reference(name)
    got = run_in_process(name)
    assert_same_output(name, got, want)
    losses = [float(m) for m in re.findall(r"loss (\d+\.\d+)", "\n".join(got))]
    assert len(losses) >= 4 and losses[-1] < losses[0]         # the programs learn


def test_glassgrad_run_of_a_program_records_its_trace_even_with_pytorch_installed(tmp_path):
    """gcn.py through the record worker, with a stand-in ``torch`` package first on the path: the
    run's ``import torch`` is glassgrad's all the same (rule 1), and the trace is written."""
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the installed torch was imported')\n")
    out = tmp_path / "gcn.jsonl"
    argv, env = command(os.path.join(PROGRAMS, "gcn.py"), str(out))
    env["PYTHONPATH"] = os.pathsep.join([str(fake.parent), env["PYTHONPATH"]])
    res = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=str(tmp_path), timeout=120,
                         check=False)
    assert res.returncode == 0, res.stderr
    assert_same_output("gcn", res.stdout.splitlines(), reference("gcn"))
    tr = Trace.load(str(out))
    kinds = {e["kind"] for e in tr.events}
    assert {"op", "backward_begin", "backward_end", "alloc"} <= kinds
    with open(os.path.join(PROGRAMS, "gcn.py"), encoding="utf-8") as f:
        line = next(k for k, text in enumerate(f, start=1) if "torch.sparse.mm(" in text)
    at_line = [e["op"] for e in tr.events
               if e["kind"] == "op" and e.get("line") == line and e["file"].endswith("gcn.py")]
    epochs = sum(1 for text in reference("gcn") if text.startswith("epoch "))
    assert at_line.count("sparse.mm") == 2 * epochs          # two graph convolutions an epoch
