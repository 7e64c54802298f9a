"""PlanScreen: the checkpointing planner's curve, a budget cursor, and the layers its plan checkpoints.

The cursor is an index into the curve (NOTE [ The planner, visible ] rule 7 in viz/plan.py):
position 0 is the plain run, each step right a lower budget and more recompute. The plan
shown is the planner's cheapest plan within the cursor's budget (``plan_from_stats``).
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from replay.words import nbytes

from .plan_chart import PlanChart, letter


def segment_marks(segments, n: int) -> list:
    """Per layer: the bracket that draws its segment ("┌", "│", "└", "[" for one layer alone, " ")."""
    out = [" "] * n
    for a, b in segments:
        for t in range(a, b):
            out[t] = "[" if b - a == 1 else "┌" if t == a else "└" if t == b - 1 else "│"
    return out


KEYS = [("→ ←  l h", "the budget cursor: the next plan on the curve (lower peak, more recompute) / back"),
        ("home end  g G", "no checkpointing / the lowest peak any one-level plan reaches"),
        ("mouse", "click the chart: the plan nearest the click"),
        ("◆ ●", "the cursor's plan; the optimal plans (the Pareto front, joined)"),
        ("N E √ T", ("no checkpointing; every layer its own segment; checkpoint_sequential's sqrt(n) "
                     "segments; this run (--segments)")),
        ("┌│└ ✓", "the layers the cursor's plan checkpoints, one bracket per segment"),
        ("q  escape", "leave")]


class PlanScreen(Screen):
    BINDINGS = [
        Binding("right,l", "move(1)", "Budget", key_display="←→", priority=True),
        Binding("left,h", "move(-1)", "Back", show=False, priority=True),
        Binding("home,g", "first", "None", key_display="home", show=False, priority=True),
        Binding("end,G", "last", "Lowest peak", key_display="end", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q,escape", "close", "Quit"),
    ]

    cursor: reactive[int] = reactive(0)

    def __init__(self, planned, budget: int | None = None, **kw) -> None:
        super().__init__(**kw)
        self.planned = planned
        if budget is not None:
            fits = [k for k, (p, _, _) in enumerate(planned.curve) if p <= budget]
            self.set_reactive(PlanScreen.cursor, fits[0] if fits else len(planned.curve) - 1)

    def compose(self) -> ComposeResult:
        yield Static(self._status(), id="status")
        with Horizontal(id="plan-main"):
            ch = PlanChart(self.planned, id="plan-chart")
            ch.border_title = "Peak bytes against extra forward"
            yield ch
            with VerticalScroll(id="plan-side"):
                yield Static(self.side_text(), id="plan-layers")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#plan-side").border_title = "The plan · ✓ checkpointed"
        self.query_one(PlanChart).cursor = self.cursor
        self.query_one(PlanChart).focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._update)

    # ---- the plan at the cursor
    def chosen(self) -> tuple:
        """(peak, extra cost, segments): the planner's cheapest plan within the cursor's budget."""
        return self.planned.choose(self.budget())

    def budget(self) -> int:
        return self.planned.curve[self.cursor][0]

    def checkpointed(self) -> list:
        """The layers the chosen plan checkpoints, in order."""
        return sorted({t for a, b in self.chosen()[2] for t in range(a, b)})

    def _status(self) -> str:
        pl = self.planned
        return (f" plan {pl.script.rsplit('/', 1)[-1]} │ {len(pl.stats)} layers │ budget {nbytes(self.budget())} "
                f"(plan {self.cursor + 1} of {len(pl.curve)}) │ ? help")

    def side_text(self) -> Text:
        pl = self.planned
        peak, cost, segments = self.chosen()
        plain = pl.curve[0][0]
        t = Text()
        t.append(f"budget {nbytes(self.budget())}\n", "bold")
        segs = ", ".join(f"[{a}:{b})" for a, b in segments) or "nothing"
        t.append(f"checkpoint {segs}\n")
        t.append(f"peak {nbytes(peak)}\n")
        if segments:
            t.append(f"  {nbytes(plain - peak)} below none\n", "dim")
        t.append(f"extra forward +{pl.pct(cost):.1f}%\n\n")
        on = set(self.checkpointed())
        brackets = segment_marks(segments, len(pl.stats))
        width = max((len(n) for n in pl.names), default=5)
        room = self.query_one("#plan-side").content_size.width - 1 if self.is_mounted else 0
        sizes = room >= 5 + width + 10          # each layer's kept bytes (m_i) when they fit
        for i, name in enumerate(pl.names):
            mark = "✓" if i in on else "·"
            t.append(f"{i:>2} {brackets[i]}{mark} ", "bold #d38cff" if i in on else "dim")
            t.append(f"{name:<{width}}" if sizes else name, "bold" if i in on else "")
            t.append(f" {nbytes(pl.stats[i].m):>9}\n" if sizes else "\n", "dim")
        t.append("\nthe named plans\n", "bold")
        for name, (peak, cost, _) in pl.marks.items():
            t.append(f"{letter(name)} {pl.label(name)}: {nbytes(peak)}, +{pl.pct(cost):.0f}%\n")
        return t

    def watch_cursor(self) -> None:
        if self.is_mounted:
            self._update()

    def _update(self) -> None:
        self.query_one(PlanChart).cursor = self.cursor
        self.query_one("#plan-layers", Static).update(self.side_text())
        self.query_one("#status", Static).update(self._status())

    # ---- actions
    def action_move(self, d: int) -> None:
        self.cursor = max(0, min(len(self.planned.curve) - 1, self.cursor + d))

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = len(self.planned.curve) - 1

    def on_plan_chart_picked(self, event: PlanChart.Picked) -> None:
        self.cursor = event.k

    def action_help(self) -> None:
        from .help_screen import HelpScreen
        self.app.push_screen(HelpScreen(("The planner's curve", KEYS)))

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()
