"""PlanChart: the planner's trade-off curve in characters (x = extra forward, y = peak bytes).

NOTE [ The curve in characters ]
1. The plot area is the widget less a left axis (``AXIS`` columns: the peak's bytes), a
   bottom axis line, its labels and the key (wrapped between its items). x runs from 0 to the largest extra
   cost shown (the curve's and the marks'), y from the lowest peak to the highest.
2. The Pareto front is joined point to point by a braille line (2 x 4 dots a cell);
   each plan on the front is a ``●``, the named plans are letters (N none, E every layer,
   √ sqrt(n) segments, T this run) and the budget cursor's plan is ``◆`` on a highlight.
   A later mark in that order takes the cell of an earlier one; the cursor wins over all.
3. ``point_at(x, y)``: a click picks the front's plan nearest the clicked cell (columns
   and rows weigh alike).
"""
from __future__ import annotations

import itertools

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from replay.words import nbytes

AXIS = 10                              # the left axis: a peak's bytes (9 characters at most) and a space
LETTERS = (("none", "N"), ("every layer", "E"), ("sqrt", "√"), ("this run", "T"))
SHORT = {"N": "none", "E": "every layer", "√": "√n segments", "T": "this run"}
DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))   # braille bit of (row, column) in a cell


def letter(name: str) -> str:
    return next((ch for key, ch in LETTERS if name.startswith(key)), "?")


class PlanChart(Widget, can_focus=True):
    """Rules 1-3; ``cursor`` is an index into ``planned.curve``."""

    COMPONENT_CLASSES = {"plan--front", "plan--point", "plan--mark", "plan--cursor", "plan--axis"}
    cursor: reactive[int] = reactive(0)

    class Picked(Message):
        def __init__(self, k: int) -> None:
            super().__init__()
            self.k = k

    def __init__(self, planned, **kw) -> None:
        super().__init__(**kw)
        self.planned = planned

    # ---- geometry (rule 1)
    def _area(self) -> tuple:
        w, h = self.size.width, self.size.height
        return max(1, w - AXIS), max(1, h - 2 - len(self.key_lines(w)))

    def _bounds(self) -> tuple:
        pl = self.planned
        pts = [(p, c) for p, c, _ in pl.curve] + [(p, c) for p, c, _ in pl.marks.values()]
        peaks = [p for p, _ in pts]
        return max(c for _, c in pts) or 1.0, min(peaks), max(peaks)

    def cell(self, peak, cost) -> tuple:
        """(column, row) in the plot area of a plan; row 0 is the top (the highest peak)."""
        pw, ph = self._area()
        xmax, lo, hi = self._bounds()
        col = round(cost / xmax * (pw - 1))
        row = 0 if hi == lo else round((hi - peak) / (hi - lo) * (ph - 1))
        return col, row

    def point_at(self, x: int, y: int) -> int:
        """Rule 3: x, y relative to the widget's content."""
        cx, cy = x - AXIS, y
        return min(range(len(self.planned.curve)),
                   key=lambda k: abs(self.cell(*self.planned.curve[k][:2])[0] - cx)
                   + abs(self.cell(*self.planned.curve[k][:2])[1] - cy))

    def on_click(self, event) -> None:
        at = event.get_content_offset(self)
        if self.planned.curve and at is not None:
            self.post_message(self.Picked(self.point_at(at.x, at.y)))

    # ---- drawing (rule 2)
    def _braille(self, pw, ph) -> dict:
        pts = sorted((c, p) for p, c, _ in self.planned.curve)
        xmax, lo, hi = self._bounds()
        dots: dict = {}

        def dot(px, py):
            cell = (px // 2, py // 4)
            dots[cell] = dots.get(cell, 0) | DOTS[py % 4][px % 2]

        def sub(c, p):
            return (round(c / xmax * (pw * 2 - 1)),
                    0 if hi == lo else round((hi - p) / (hi - lo) * (ph * 4 - 1)))

        for (c0, p0), (c1, p1) in itertools.pairwise(pts):
            (x0, y0), (x1, y1) = sub(c0, p0), sub(c1, p1)
            n = max(abs(x1 - x0), abs(y1 - y0), 1)
            for s in range(n + 1):
                dot(x0 + round((x1 - x0) * s / n), y0 + round((y1 - y0) * s / n))
        return dots

    def render(self) -> Text:
        pl = self.planned
        w, h = self.size.width, self.size.height
        if not pl.curve or w < AXIS + 8 or h < 5:
            return Text("no plan to draw" if not pl.curve else "too small", style="dim")
        pw, ph = self._area()
        grid = [[(" ", None)] * pw for _ in range(ph)]
        front = self.get_component_rich_style("plan--front")
        for (cx, cy), bits in self._braille(pw, ph).items():
            if 0 <= cx < pw and 0 <= cy < ph:
                grid[cy][cx] = (chr(0x2800 + bits), front)
        point = self.get_component_rich_style("plan--point")
        for p, c, _ in pl.curve:
            cx, cy = self.cell(p, c)
            grid[cy][cx] = ("●", point)
        mark = self.get_component_rich_style("plan--mark")
        for name, (p, c, _) in pl.marks.items():
            cx, cy = self.cell(p, c)
            grid[cy][cx] = (letter(name), mark)
        k = max(0, min(self.cursor, len(pl.curve) - 1))
        cx, cy = self.cell(*pl.curve[k][:2])
        grid[cy][cx] = ("◆", self.get_component_rich_style("plan--cursor"))
        axis = self.get_component_rich_style("plan--axis")
        xmax, lo, hi = self._bounds()
        labels = {0: nbytes(hi), ph - 1: nbytes(lo)}
        out = Text(no_wrap=True, overflow="crop")
        for r in range(ph):
            out.append(f"{labels.get(r, ''):>{AXIS - 1}}"[-(AXIS - 1):], axis)
            out.append("┤" if r in labels else "│", axis)
            for ch, st in grid[r]:
                out.append(ch, st)
            out.append("\n")
        out.append(" " * (AXIS - 1) + "└" + "─" * pw + "\n", axis)
        right = f"{pl.pct(xmax):.0f}%"
        mid = "extra forward"
        gap = max(1, pw - 2 - len(right) - len(mid))
        out.append(" " * AXIS + "0%" + " " * (gap // 2) + mid + " " * (gap - gap // 2) + right + "\n", axis)
        out.append("\n".join(self.key_lines(w)), axis)
        return out

    def key_lines(self, width: int) -> list:
        """The key under the chart, wrapped between its items."""
        items = ["◆ budget", "● optimal"] + [f"{letter(n)} {SHORT.get(letter(n), n)}" for n in self.planned.marks]
        lines = [""]
        for it in items:
            if lines[-1] and len(lines[-1]) + 2 + len(it) > width:
                lines.append("")
            lines[-1] += ("  " if lines[-1] else "") + it
        return [ln[:width] for ln in lines]
