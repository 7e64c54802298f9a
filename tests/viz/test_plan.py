"""``glassgrad plan``: the planner's curve for a script's chain, its marks, and a budget's plan."""
import math

import pytest

from viz.plan import main, marks

SCRIPT = """
import engine as torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(16, 16), torch.nn.Tanh())])
example_input = torch.randn(256, 16)
"""


@pytest.fixture()
def script(tmp_path):
    p = tmp_path / "chain.py"
    p.write_text(SCRIPT)
    return p


def test_the_curve_starts_at_the_plain_run_and_the_marks_use_the_cost_model(script, capsys, tmp_path):
    assert main([str(script), "--png", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("8 layers; one forward costs")
    assert lines[2].strip().endswith("0.0%  none")              # the first point: nothing checkpointed
    assert "every layer" in out and "extra forward 100.0%" in out
    assert "sqrt(n): 3 segments" in out
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_marks_agree_with_the_planners_evaluate(script):
    import runpy

    from engine.utils.planner import evaluate, measure, sequential_plan
    g = runpy.run_path(str(script))
    stats = measure(g["model"], g["example_input"])
    mk = marks(stats)
    assert mk["none"][:2] == evaluate(stats, [])
    assert mk["every layer"][1] == sum(s.cost for s in stats)
    k = round(math.sqrt(len(stats)))
    assert mk[f"sqrt(n): {k} segments"][2] == sequential_plan(len(stats), k)


def test_a_budget_prints_the_cheapest_plan_within_it(script, capsys, tmp_path):
    assert main([str(script), "--budget", "10", "--png", str(tmp_path / "c.png")]) == 1
    assert "no checkpointing plan keeps the step within 10 bytes" in capsys.readouterr().out
    assert main([str(script), "--budget", str(10 ** 9), "--png", str(tmp_path / "c.png")]) == 0
    assert "checkpoint none of 8 layers" in capsys.readouterr().out


def test_a_script_without_the_variables_is_told_what_to_name(tmp_path, capsys):
    p = tmp_path / "empty.py"
    p.write_text("x = 1\n")
    assert main([str(p)]) == 2
    assert "defines no model and no example_input" in capsys.readouterr().err
    assert main([str(tmp_path / "nope.py")]) == 2
