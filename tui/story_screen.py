"""StoryScreen: the selected storage's whole story, wrapped to the screen (Enter on a lifetimes band).

NOTE [ A storage's story ]
1. Enter on a band of the lifetimes view (or a click on the band already selected) opens its
   story over the app: what made it and where, its tensors and views, its categories, each
   node that saved it, and when and why it was freed (``replay.lifetimes.describe``), every
   line wrapped, so a story reads whole at 80×24.
2. ↑/↓ tell the story of the band above or below (the view's selection follows); ``g`` goes
   to the event that made the storage and ``f`` to the one that freed it: the story closes and
   the cursor moves there, so the graph shows the op. Escape or Enter closes it.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from replay.lifetimes import describe
from replay.words import nbytes


class StoryScreen(ModalScreen):
    """Rule 1-2 for one LifetimesView; dismissed with the event to go to, or None."""

    BINDINGS = [Binding("escape,enter", "close", "Back"), Binding("up", "move(-1)", "Band", key_display="↑↓"),
                Binding("down", "move(1)", "Next band", show=False), Binding("g", "go('made')", "Go to its making"),
                Binding("f", "go('freed')", "Go to its free")]

    def __init__(self, view, **kw) -> None:
        super().__init__(**kw)
        self.view = view

    def compose(self) -> ComposeResult:
        box = VerticalScroll(id="story-box")
        box.can_focus = False                   # ↑/↓ are the story's keys (rule 2); the wheel scrolls
        with box:
            yield Static(id="story-text")
        yield Footer()

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        lt = self.view.selected_lifetime()
        box = self.query_one("#story-box")
        if lt is None:
            self.query_one("#story-text", Static).update(Text("No band is selected.", style="dim"))
            return
        box.border_title = f"Story · storage {lt.storage}, {nbytes(lt.bytes)}" if not lt.unseen else "Before recording"
        box.border_subtitle = "↑↓ other bands · g made · f freed · esc back"
        text = Text()
        for k, line in enumerate(describe(lt)):
            text.append(("\n" if k else "") + line, style="bold" if k == 0 else None)
        self.query_one("#story-text", Static).update(text)

    def action_move(self, d: int) -> None:
        self.view.action_select(d)
        self._show()

    def action_go(self, which: str) -> None:
        lt = self.view.selected_lifetime()
        at = None if lt is None else (lt.made_at if lt.made_at is not None else lt.start) if which == "made" else lt.end
        if at is None:
            self.notify("It was not freed before the trace ends." if which == "freed" else "No event made it.",
                        timeout=3)
            return
        self.dismiss(at)

    def action_close(self) -> None:
        self.dismiss(None)
