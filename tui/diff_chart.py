"""DiffChart: one trace's live bytes over the two runs' aligned timeline (NOTE [ Two runs ] rule 3).

Both charts of the diff screen share the x axis (aligned positions, ``Alignment.length`` of
them over the width) and the y scale (from ``floor``, the lower of the two runs' smallest
totals, to ``top``, the higher of their live-bytes peaks), so the cursor is the same column
on both and equal heights are equal bytes; starting at the floor keeps what both runs hold
throughout (parameters, inputs) from flattening the difference. A column shows, of the
events its positions reach on this side, the one with the highest total, stacked by
category in the memory panel's colours (the categories above the floor: what
checkpointing saves shows as a thinner activation band). On the axis line ``┃`` is the
cursor, ``▲`` this trace's live-bytes peak, and ``┄`` positions where this trace has no
step of its own (it waits on its last event while the other runs a step it lacks).
"""
from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from .memory_view import CATEGORY_CLASSES, _cell, _stack, category_style


def column_positions(length: int, width: int) -> list:
    """First aligned position of each of ``width`` columns."""
    return [c * length // width for c in range(width)]


class DiffChart(Widget):
    COMPONENT_CLASSES = {"diff--cursor", "diff--axis", "diff--held", "diff--peak", *CATEGORY_CLASSES}
    pos: reactive[int] = reactive(0)

    class Clicked(Message):
        def __init__(self, pos: int) -> None:
            super().__init__()
            self.pos = pos

    def __init__(self, d, side: int, top: int, floor: int = 0, **kw) -> None:
        super().__init__(**kw)
        self.d, self.side, self.floor = d, side, min(floor, top - 1)
        self.top = max(1, top - self.floor)
        self.replay = d.memory["AB"[side]]
        self._key = None
        self._cols: list = []

    def column_of(self, pos: int, width: int) -> int:
        n = self.d.alignment.length
        return max(0, min(width - 1, pos * width // max(1, n))) if n else 0

    def position_of(self, x: int) -> int:
        w = self.size.width
        n = self.d.alignment.length
        return column_positions(n, w)[max(0, min(w - 1, x))] if w and n else 0

    def on_click(self, event) -> None:
        at = event.get_content_offset(self)
        if at is not None:
            self.post_message(self.Clicked(self.position_of(at.x)))

    def columns(self, width: int) -> list:
        """Per column: (event, bytes, held) - this side's event with the highest total it reaches, that
        total, and whether this side has no step of its own there."""
        if self._key == width:
            return self._cols
        al, total = self.d.alignment, self.replay.total
        starts = column_positions(al.length, width) + [al.length]
        out = []
        for c in range(width):
            u0, u1 = starts[c], max(starts[c] + 1, starts[c + 1])
            i0, i1 = al.at(u0)[self.side], al.at(u1 - 1)[self.side]
            seg = al.segment_at(u0)
            part = total[i0:i1 + 1]
            j = i0 + max(range(len(part)), key=part.__getitem__) if len(part) else i0
            out.append((j, part[j - i0] if len(part) else 0, seg is None or seg[self.side] is None))
        self._key, self._cols = width, out
        return out

    def category_style(self, cat: str) -> Style:
        """A category's colour: the memory panel's."""
        return category_style(self, cat)

    def _styles(self) -> list:
        return [self.category_style(c) for c in self.replay.categories]

    def stack(self, event: int, scale: float) -> list:
        """The column of ``event``: ``_stack`` of its live bytes by category, less the floor."""
        off = self.floor * scale
        return [(edge - off, k) for edge, k in _stack(self.replay.snaps[event], scale) if edge > off]

    def render(self) -> Text:
        w, h = self.size.width, self.size.height
        if not self.d.alignment.length or not self.replay.total or w < 4 or h < 2:
            return Text("no events", style="dim")
        cols = self.columns(w)
        rows = h - 1
        scale = rows * 8 / self.top
        cur = self.column_of(self.pos, w)
        styles = self._styles()
        cursor = self.get_component_rich_style("diff--cursor")
        cursor_bg = Style(bgcolor=cursor.bgcolor)
        stacks = [self.stack(i, scale) for i, _, _ in cols]
        text = Text(no_wrap=True, overflow="crop")
        for r in range(rows):
            lo = (rows - 1 - r) * 8
            for c, parts in enumerate(stacks):
                ch, st = _cell(parts, lo, styles)
                if c == cur:
                    text.append("│" if ch == " " else ch, cursor if ch == " " else st + cursor_bg)
                else:
                    text.append(ch, st)
            text.append("\n")
        axis = ["┄" if held else "─" for _, _, held in cols]
        peak = self.d.alignment.position(self.side, self.replay.peak_index)
        axis[self.column_of(peak, w)] = "▲"
        axis[cur] = "┃"
        text.append("".join(axis), self.get_component_rich_style("diff--axis"))
        return text
