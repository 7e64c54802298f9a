"""glassgrad plan in the app: the budget cursor, the layers its plan checkpoints, the mouse, the keys."""
import asyncio

import pytest

from engine.utils.planner import evaluate, plan_from_stats
from replay.words import nbytes
from tui.app import GlassgradApp
from tui.help_screen import HelpScreen
from tui.plan_chart import AXIS, PlanChart
from tui.plan_screen import PlanScreen
from viz.plan import load

SCRIPT = """
import engine as torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(3) for m in (torch.nn.Linear(32, 32), torch.nn.GELU())])
example_input = torch.randn(64, 32)
"""


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    p = tmp_path_factory.mktemp("plan") / "chain6.py"
    p.write_text(SCRIPT)
    return load(str(p))


def all_plans(n, start=0):
    """Every set of disjoint segments [a, b) of layers start..n-1 (each layer stored or in one segment;
    for n layers the Fibonacci number F(2n + 1): 233 for 6)."""
    if start >= n:
        yield []
        return
    yield from all_plans(n, start + 1)                 # layer ``start`` stored
    for b in range(start + 1, n + 1):                  # or a segment [start, b)
        for rest in all_plans(n, b):
            yield [(start, b)] + rest


def brute_force(stats, budget):
    """(cost, peak) of the cheapest plan within budget, by evaluating every plan."""
    return min((c, p) for p, c in (evaluate(stats, segs) for segs in all_plans(len(stats))) if p <= budget)


def app(planned, **kw):
    return GlassgradApp("screen", first_screen=PlanScreen(planned, **kw))


async def test_the_budget_cursor_changes_the_checkpointed_layers_as_the_optimiser_and_brute_force_say(planned):
    stats = planned.stats
    assert len(stats) == 6 and len(list(all_plans(6))) == 233 and len(planned.curve) >= 3
    async with app(planned).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        seen = []
        for k in range(len(planned.curve)):
            budget = planned.curve[k][0]
            assert s.cursor == k and s.budget() == budget
            best = plan_from_stats(stats, budget)          # the planner's own choice
            layers = sorted({t for a, b in best.segments for t in range(a, b)})
            assert s.checkpointed() == layers
            peak, cost, _ = s.chosen()
            assert (cost, peak) == brute_force(stats, budget) == (best.cost, best.peak_bytes)
            side = s.query_one("#plan-layers").render()
            rows = [line for line in str(side).splitlines() if line[:2].strip().isdigit()]
            assert [int(r[:2]) for r in rows if "✓" in r] == layers
            assert f"budget {nbytes(budget)}" in str(s.query_one("#status").render())
            seen.append(tuple(layers))
            await pilot.press("right")
        assert seen[0] == () and len(set(seen)) == len(seen)   # each step right checkpoints something new
        assert s.cursor == len(planned.curve) - 1              # the cursor stops at the lowest peak
        await pilot.press("home")
        assert s.cursor == 0 and s.checkpointed() == []
        await pilot.press("end")
        assert s.cursor == len(planned.curve) - 1
        await pilot.press("left")
        assert s.cursor == len(planned.curve) - 2


async def test_a_click_on_the_chart_picks_the_nearest_plan(planned):
    async with app(planned).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        chart = s.query_one(PlanChart)
        for k in (len(planned.curve) - 1, 1, 0):
            col, row = chart.cell(*planned.curve[k][:2])
            await pilot.click(PlanChart, offset=(1 + AXIS + col, 1 + row))   # inside the border
            assert s.cursor == k and chart.cursor == k


async def test_a_budget_starts_the_cursor_on_the_cheapest_plan_within_it_and_keys_help_and_quit(planned):
    budget = planned.curve[2][0] + 1
    async with app(planned, budget=budget).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        assert s.cursor == 2
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        await pilot.press("escape")
        assert pilot.app.screen is s
        await pilot.press("q")
    assert pilot.app.return_code == 0


def test_the_chart_draws_every_named_plan_and_the_cursor(planned):
    from textual.app import App

    class Host(App):
        def compose(self):
            yield PlanChart(planned)

    async def run():
        async with Host().run_test(size=(60, 20)) as pilot:
            text = pilot.app.query_one(PlanChart).render().plain
            assert "◆" in text and "N" in text and "E" in text and "extra forward" in text
            top = max(p for p, _, _ in planned.curve + list(planned.marks.values()))
            assert text.splitlines()[0].lstrip().startswith(nbytes(top) + "┤")
    asyncio.run(run())


def test_glassgrad_plan_opens_the_screen_in_a_terminal_and_prints_with_text(tmp_path, monkeypatch, capsys):
    from tui import cli

    script = tmp_path / "chain.py"
    script.write_text(SCRIPT)
    opened = []
    monkeypatch.setattr(GlassgradApp, "run", lambda self: opened.append(self.first_screen))
    monkeypatch.setattr(cli, "interactive", lambda: True)
    assert cli.main(["plan", str(script), "--segments", "0:2,3:5"]) == 0
    s = opened[0]
    assert isinstance(s, PlanScreen) and s.planned.marks["this run"][2] == [(0, 2), (3, 5)]
    assert s.planned.marks["this run"][:2] == evaluate(s.planned.stats, [(0, 2), (3, 5)])
    assert not (tmp_path / "chain-plan.png").exists()        # the app writes a picture only with --png
    assert cli.main(["plan", str(script), "--text", "--png", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    assert len(opened) == 1 and out.startswith("6 layers; one forward costs") and "none (this run)" in out
