"""Narrative: the lesson's text for the current step, its code, and its checks with the run's numbers."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Markdown, Static


def step_markdown(lr, k: int) -> str:
    r = lr.steps[k]
    lines = [r.narrative().strip(), "", "```python", r.step.source.rstrip(), "```", ""]
    for c in r.checks:
        lines.append(f"- {'✓' if c.ok else '✗'} {c.text}" + (f" — {c.detail}" if c.detail and not c.ok else ""))
    return "\n".join(lines) + "\n"


class Narrative(VerticalScroll, can_focus=True):
    """The lesson panel: step k of n, Markdown text, code and checks."""

    step: reactive[int] = reactive(0)

    def __init__(self, lesson_run, **kw) -> None:
        super().__init__(**kw)
        self.lesson_run = lesson_run

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="narrative-header")
        yield Markdown(step_markdown(self.lesson_run, self.step), id="narrative-body")

    def _header(self) -> str:
        n = len(self.lesson_run.steps)
        title = self.lesson_run.steps[self.step].step.title
        return f"Step {self.step + 1}/{n} · {title}   ([ back · ] next)"

    def watch_step(self, old: int, new: int) -> None:
        if not self.is_mounted:
            return
        self.query_one("#narrative-header", Static).update(self._header())
        self.query_one("#narrative-body", Markdown).update(step_markdown(self.lesson_run, new))
        self.scroll_home(animate=False)
