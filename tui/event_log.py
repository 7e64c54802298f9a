"""EventLog: every event, one per row; only the visible rows are drawn (100k events scroll smoothly)."""
from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from replay.model import TraceModel
from replay.words import event_line

from .kept_styles import KeptStyles

PHASE_MARK = {"forward": "F", "backward": "B", "recompute": "R", "optimizer": "O"}


class EventLog(KeptStyles, ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"log--row", "log--cursor", "log--future", "log--backward", "log--recompute", "log--mark"}

    index: reactive[int] = reactive(0, repaint=False)   # NOTE [ Redrawing only changed lines ] rule 1

    class EventClicked(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, model: TraceModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.virtual_size = Size(60, len(model))

    def reload(self) -> None:
        self.virtual_size = Size(60, len(self.model))
        self.refresh()

    def watch_index(self, old: int, new: int) -> None:
        """Redraw only the rows from ``old`` to ``new`` (the cursor rows and the rows that crossed from
        past to future); a scroll redraws the whole panel itself: NOTE [ Redrawing only changed lines ]
        rule 2 (tui/changed_lines.py)."""
        top = self.scroll_offset.y
        self._keep_in_view()
        if self.scroll_offset.y != top:
            return
        h = self.size.height
        a = max(min(old, new) - int(top), 0)
        b = min(max(old, new) - int(top), h - 1)
        if b >= a:
            self.refresh(Region(0, a, self.size.width, b - a + 1))

    def on_resize(self) -> None:
        self._keep_in_view(center=True)

    def _keep_in_view(self, center: bool = False) -> None:
        """Keep the cursor row off the panel's edges (center it when it would leave)."""
        h = self.scrollable_content_region.height
        if h <= 0:
            return
        top = int(self.scroll_offset.y)
        if center or not top + 1 <= self.index < top + h - 1:
            self.scroll_to(y=max(0, self.index - h // 2), animate=False, force=True)

    def line_text(self, i: int) -> str:
        e = self.model.events[i]
        return f"{i:>6} {PHASE_MARK.get(e.get('phase'), '?')} {event_line(e)}"

    def render_line(self, y: int) -> Strip:
        i = y + int(self.scroll_offset.y)
        width = self.size.width
        if i >= len(self.model):
            return Strip.blank(width, self.kept_rich_style())
        e = self.model.events[i]
        if i == self.index:
            style = self.get_component_rich_style("log--cursor")
        elif e.get("kind") == "mark":
            style = self.get_component_rich_style("log--mark")
        elif i > self.index:
            style = self.get_component_rich_style("log--future")
        elif e.get("phase") == "backward":
            style = self.get_component_rich_style("log--backward")
        elif e.get("phase") == "recompute":
            style = self.get_component_rich_style("log--recompute")
        else:
            style = self.get_component_rich_style("log--row")
        text = self.line_text(i)
        sx = int(self.scroll_offset.x)
        text = text[sx:sx + width].ljust(width)
        return Strip([Segment(text, style)], width)

    def on_click(self, event) -> None:
        off = event.get_content_offset(self)
        if off is None:
            return
        i = off.y + int(self.scroll_offset.y)
        if 0 <= i < len(self.model):
            self.post_message(self.EventClicked(i))
