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


def test_segments_mark_this_run_and_choose_is_the_planners_choice(script, capsys, tmp_path):
    from engine.utils.planner import evaluate, plan_from_stats, sequential_plan
    from viz.plan import load, parse_segments

    assert parse_segments("3", 8) == sequential_plan(8, 3) == [(0, 2), (2, 4)]
    assert parse_segments("0:3,5:8", 8) == [(0, 3), (5, 8)]
    pl = load(str(script), segments="0:3,5:8")
    assert pl.marks["this run"] == (*evaluate(pl.stats, [(0, 3), (5, 8)]), [(0, 3), (5, 8)])
    assert pl.label("none") == "none" and load(str(script)).label("none") == "none (this run)"
    assert pl.names[:2] == ["Linear(16, 16)", "Tanh()"]
    for budget in sorted({p for p, _, _ in pl.curve} | {p + 1 for p, _, _ in pl.curve}):
        best = plan_from_stats(pl.stats, budget)
        assert pl.choose(budget) == (best.peak_bytes, best.cost, best.segments)
    assert pl.choose(pl.curve[-1][0] - 1) is None
    assert main([str(script), "--segments", "0:3,5:8", "--png", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    _, cost, _ = pl.marks["this run"]
    assert any(line.startswith("this run") and f"extra forward {100 * cost / pl.forward:.1f}%" in line
               for line in out.splitlines())
