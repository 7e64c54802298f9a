"""Narrative: the lesson's text for the current step, its code, and its checks with the run's numbers.

The text fits its panel (NOTE [ Fitting the screen ] in tui/fit.py): code wraps instead of
running off the edge (glassgrad.tcss), a Markdown table too wide for the panel becomes one
line per row (``narrow_tables``), and the bottom border says when more text is below.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Markdown, Static

MORE_BELOW = " ↓ more (tab, ↓) "


def step_markdown(lr, k: int, width: int | None = None, picked: dict | None = None) -> str:
    """Step k's text, code and checks as Markdown; with ``width``, tables too wide for it as lists.

    A step with questions (NOTE [ Questions ] in lessons/_format.py) first shows the next
    unanswered one with its numbered choices and the code, and nothing the run found; each
    answered one then says whether the pick was right, the run's answer and why."""
    r = lr.steps[k]
    picked = picked or {}
    asked = [(qi, a) for qi, a in enumerate(r.answers)]
    waiting = [(qi, a) for qi, a in asked if qi not in picked]
    lines = []
    for qi, a in asked:
        if qi in picked:
            mine = picked[qi]
            verdict = "right" if mine == a.answer else "not quite"
            lines += [f"**{a.question.text}** You said *{mine}*: {verdict}. The run says **{a.answer}**. {a.why}", ""]
    if waiting:
        qi, a = waiting[0]
        choices = a.question.choices or ("show the answer",)
        lines += ["**Before this step runs, a question:**", "", a.question.text, ""]
        lines += [f"{n}. {c}" for n, c in enumerate(choices, 1)]
        lines += ["", f"*Press 1–{len(choices)} to answer; the run then shows the truth.*", "",
                  "```python", r.step.source.rstrip(), "```", ""]
        text = "\n".join(lines) + "\n"
        return narrow_tables(text, width) if width else text
    hint = focus_line(r.step.focus)
    lines += [r.narrative().strip(), ""] + ([hint, ""] if hint else []) + ["```python", r.step.source.rstrip(), "```", ""]
    for c in r.checks:
        lines.append(f"- {'✓' if c.ok else '✗'} {c.text}" + (f" — {c.detail}" if c.detail and not c.ok else ""))
    text = "\n".join(lines) + "\n"
    return narrow_tables(text, width) if width else text


PLACES = {"peak": "at the live-bytes peak", "activation peak": "at the activation peak"}


def focus_line(focus) -> str:
    """What a step's focus opens in the memory panel, in one line (NOTE [ Memory focus ] in
    lessons/_format.py); "" when it names no view and no window."""
    if focus.view is None and focus.window is None:
        return ""
    parts = [focus.view or "the view shown", PLACES.get(focus.event, "at the step's event")]
    if focus.window is not None:
        parts.append("window: " + ("this step" if focus.window == "step" else f"its {focus.window}"))
    if focus.group is not None or focus.category is not None:
        parts.append(f"rows by {focus.group or 'op'}" + (f", {focus.category} only" if focus.category else ""))
    keys = "m: next view" + (", x: clear the window" if focus.window is not None else "")
    return f"*Memory panel: {', '.join(parts)} ({keys}).*"


def _cells(line: str) -> list:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def narrow_tables(md: str, width: int) -> str:
    """Each Markdown table wider than ``width`` (its widest cells side by side) as a list: a bold line
    naming the columns, then one item per row with its cells joined by `` · ``."""
    lines = md.split("\n")
    out, k = [], 0
    while k < len(lines):
        line = lines[k]
        is_table = (line.lstrip().startswith("|") and k + 1 < len(lines)
                    and set(lines[k + 1].replace("|", "").replace(":", "").replace(" ", "")) == {"-"})
        if not is_table:
            out.append(line)
            k += 1
            continue
        head = _cells(line)
        rows = []
        k += 2
        while k < len(lines) and lines[k].lstrip().startswith("|"):
            rows.append(_cells(lines[k]))
            k += 1
        widths = [max(len(r[c]) if c < len(r) else 0 for r in [head] + rows) for c in range(len(head))]
        if sum(widths) + 3 * len(widths) + 1 <= width * 3 // 2:   # Markdown wraps cells this far
            out.extend([line, "| " + " | ".join("---" for _ in head) + " |"]
                       + ["| " + " | ".join(r) + " |" for r in rows])
            continue
        out.append("**" + " · ".join(head) + "**")
        out.append("")
        out.extend("- " + " · ".join(r) for r in rows)
    return "\n".join(out)


class Narrative(VerticalScroll, can_focus=True):
    """The lesson panel: step k of n, Markdown text, code and checks."""

    step: reactive[int] = reactive(0)

    def __init__(self, lesson_run, **kw) -> None:
        super().__init__(**kw)
        self.lesson_run = lesson_run
        self._width = None
        self.picked: dict = {}          # step -> {question index: the choice picked}

    def pending(self, k: int) -> bool:
        """Step k still has a question to answer before it plays."""
        return len(self.picked.get(k, {})) < len(self.lesson_run.steps[k].answers)

    async def answer(self, n: int) -> bool:
        """Pick choice n (1-based) for the current step's next question; False when none waits."""
        r = self.lesson_run.steps[self.step]
        mine = self.picked.setdefault(self.step, {})
        waiting = [qi for qi in range(len(r.answers)) if qi not in mine]
        if not waiting:
            return False
        a = r.answers[waiting[0]]
        choices = a.question.choices or ("show the answer",)
        if not 1 <= n <= len(choices):
            return False
        mine[waiting[0]] = choices[n - 1] if a.question.choices else "?"
        await self._show(self.step)
        return True

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="narrative-header")
        yield Markdown(step_markdown(self.lesson_run, self.step, self._text_width(), self.picked.get(self.step)),
                       id="narrative-body")

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._more_below, init=False)
        self.watch(self, "virtual_size", self._more_below, init=False)

    def _text_width(self) -> int | None:
        return self.content_region.width or None

    def _header(self) -> str:
        n = len(self.lesson_run.steps)
        title = self.lesson_run.steps[self.step].step.title
        return f"Step {self.step + 1}/{n} · {title}   ([ back · ] next)"

    def _more_below(self, *_) -> None:
        self.border_subtitle = MORE_BELOW if self.scroll_y < self.max_scroll_y - 0.5 else ""

    async def _show(self, k: int) -> None:
        self._width = self._text_width()
        self.query_one("#narrative-header", Static).update(self._header())
        await self.query_one("#narrative-body", Markdown).update(
            step_markdown(self.lesson_run, k, self._width, self.picked.get(k)))

    async def on_resize(self) -> None:
        if self.is_mounted and self._text_width() != self._width:
            await self._show(self.step)
        self.call_after_refresh(self._more_below)

    async def watch_step(self, old: int, new: int) -> None:
        if not self.is_mounted:
            return
        await self._show(new)
        self.scroll_home(animate=False)
        self.call_after_refresh(self._more_below)
