"""HomeScreen: the lessons, one line each, and the recently opened traces."""
from __future__ import annotations

import os

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

INTRO = ("glassgrad runs PyTorch-style code for real and records every graph node, saved tensor and byte. "
         "Pick a lesson (Enter), or open a trace: glassgrad view TRACE.jsonl · glassgrad run SCRIPT.py")


class HomeScreen(Screen):
    BINDINGS = [Binding("question_mark", "help", "Help", key_display="?"), Binding("q", "quit", "Quit")]

    def __init__(self, lessons: list, recent: list, **kw) -> None:
        super().__init__(**kw)
        self.lessons = lessons
        self.recent = recent

    def compose(self) -> ComposeResult:
        yield Static(" glassgrad · a glass-box autograd engine", id="status")
        with Vertical(id="home"):
            yield Static(INTRO, id="intro")
            options = [Option(f"{L.number:>2}  {L.title} — {L.summary}", id=f"lesson:{L.number}")
                       for L in self.lessons]
            ol = OptionList(*options, id="lessons")
            ol.border_title = "Lessons (Enter to start)"
            yield ol
            rec = [Option(os.path.basename(p) + f"  ({p})", id=f"trace:{k}") for k, p in enumerate(self.recent)]
            rl = OptionList(*(rec or [Option("none yet: glassgrad run SCRIPT.py --out run.jsonl", disabled=True)]),
                            id="recent")
            rl.border_title = "Recent traces"
            yield rl
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#lessons").focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        kind, _, key = (event.option.id or "").partition(":")
        if kind == "lesson":
            self.app.open_lesson(int(key))
        elif kind == "trace":
            self.app.open_trace(self.recent[int(key)])

    def action_help(self) -> None:
        from .help_screen import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.exit()
