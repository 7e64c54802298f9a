"""The graph panel's rows at ``BOXES`` and ``NAMES``: what each row shows, and its strip (NOTE [ Graph rows ]).

NOTE [ Graph rows ]
A row of the graph panel (tui/graph_view.py) is a function of the layout's row (its edge
characters, which boxes cross it, where, and the marks on their borders), the horizontal
scroll, the panel's width and the look of each box on it (style, border, texts).
  1. ``Rows.static(lay, row)`` is the layout's part: the row's edges as one string and, left to
     right, ``(x, box id, width, height, row within the box, border marks)`` of each box on it;
     worked out once per layout and row.
  2. A screen row's signature is ``(static part, scroll x, width, looks of its boxes)``, a look
     being what the row shows of the box: ``(style, border)`` on a border row, ``(style, border,
     text)`` on a text row, ``(style, name)`` at ``NAMES``. Two equal signatures draw the same line.
  3. The view records each screen row's signature as it draws it; a step or a jump refreshes
     only the rows whose signature now differs (NOTE [ Redrawing only changed lines ] rule 2),
     in one ``refresh``, and records the new signatures of those rows at once (they will be drawn
     from that state), so a second look before the next frame refreshes nothing again. A new
     layout, a scroll or a selection thus redraws the rows they changed, not every row.
  4. Strips are kept by signature (at most ``KEEP``) and the box looks once per cursor state
     (the layout, the cursor, the selected, current and lit nodes, ``f``), so a row drawn again as it was costs a look-up. The strips hold the panel's styles, so
     ``forget_styles`` empties them when the styles change (a theme, focus: NOTE [ Kept styles ]).
  5. A row's strip is its edges in the edge style and each box in its own style, one segment
     per stretch, cropped to the scroll and padded with the panel's style.
"""
from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from .graph_layout import _CH
from .graph_zoom import fit, fit_name

KEEP = 256


class Rows:
    """Rules 1-4 for one GraphView: its static rows, box looks, drawn signatures and strips."""

    def __init__(self) -> None:
        self._lay = None
        self._gen = 0                 # counts the layouts seen: part of the cursor state of rule 4
        self._static: dict = {}       # row -> rule 1's static part, for self._lay
        self._edges: dict = {}        # row -> [(x, char)] of self._lay
        self._looks = (None, {})      # (cursor state, box id -> look)
        self._strips: dict = {}       # signature -> Strip (rule 4)
        self.drawn: dict = {}         # screen row -> the signature drawn there (rule 3)

    def forget_styles(self) -> None:
        self._strips.clear()

    def _use(self, lay) -> None:
        if lay is not self._lay:
            self._lay, self._static, self._edges = lay, {}, {}
            self._gen += 1
            for (x, y), bits in lay.edges.items():
                if bits:
                    self._edges.setdefault(y, []).append((x, _CH.get(bits)))

    def static(self, lay, row: int) -> tuple:
        """Rule 1: (the row's edges as a string, its boxes) of layout ``lay``."""
        self._use(lay)
        st = self._static.get(row)
        if st is not None:
            return st
        cells = [" "] * lay.width
        for x, ch in self._edges.get(row, ()):
            if ch and 0 <= x < lay.width:
                cells[x] = ch
        boxes = []
        for did in lay.rows.get(row, ()):
            bx, by, bw, bh = lay.rects[did]
            dy = row - by
            marks = ()
            if bh > 1 and dy == 0:
                marks = tuple(x - bx - 1 for x in range(bx + 1, bx + bw - 1) if (x, row) in lay.arrows)
            elif bh > 1 and dy == bh - 1:
                marks = tuple(x - bx - 1 for x in range(bx + 1, bx + bw - 1) if lay.edges.get((x, row + 1)))
            boxes.append((bx, did, bw, bh, dy, marks))
        boxes.sort(key=lambda b: b[0])
        st = self._static[row] = ("".join(cells), tuple(boxes))
        return st

    def _frame(self, view) -> tuple:
        """(layout, scroll x, scroll y, width, box id -> look) of the view now; the looks are kept
        for the cursor state (rule 4)."""
        lay = view._lay
        self._use(lay)
        state = (view._key, view.index, view.selected, view.current, view.lit, view.keep_freed, self._gen)
        if self._looks[0] != state:
            self._looks = (state, {})
        sx, sy = view.scroll_offset
        return lay, sx, sy, view.size.width, self._looks[1]

    def _signature(self, view, frame, y: int) -> tuple:
        """Rule 2 for screen row ``y``."""
        lay, sx, sy, width, looks = frame
        st = self.static(lay, y + sy)
        out = []
        for _, did, _, bh, dy, _ in st[1]:
            lk = looks.get(did)
            if lk is None:
                if bh == 1:
                    lk = (view._style_name(did), view._labels[did])
                else:
                    lk = (view._style_name(did), view._border(did), view._texts(did))
                looks[did] = lk
            if bh > 1:                    # what this row of the box shows: its border, or one line of text
                lk = lk[:2] if dy in (0, bh - 1) else (lk[0], lk[1], lk[2][dy - 1])
            out.append(lk)
        return st, sx, width, tuple(out)

    def strip(self, view, y: int) -> Strip:
        """Screen row ``y``'s strip (rule 5), recorded as drawn (rule 3)."""
        sig = self._signature(view, self._frame(view), y)
        self.drawn[y] = sig
        strip = self._strips.get(sig)
        if strip is None:
            if len(self._strips) >= KEEP:
                self._strips.clear()
            strip = self._strips[sig] = self._draw(view, sig)
        return strip

    def changed(self, view, height: int) -> list:
        """Rule 3: (first row, rows) of each run of screen rows whose signature differs from the drawn
        one. Those rows are drawn again from the state they are compared at, so that state is what
        they hold from now (a second call before they are drawn finds them the same)."""
        frame = self._frame(view)
        runs, start = [], None
        for y in range(height + 1):
            same = True
            if y < height:
                sig = self._signature(view, frame, y)
                same = self.drawn.get(y) == sig
                self.drawn[y] = sig
            if not same and start is None:
                start = y
            elif same and start is not None:
                runs.append((start, y - start))
                start = None
        return runs

    def _draw(self, view, sig) -> Strip:
        (edges, boxes), sx, width, looks = sig
        edge_style = view.get_component_rich_style("graph--edge")     # kept: NOTE [ Kept styles ]
        segs, pos = [], 0
        for (bx, _did, bw, bh, dy, marks), look in zip(boxes, looks):
            if bx > pos:
                segs.append(Segment(edges[pos:bx], edge_style))
            segs.append(Segment(_box_text(look, bw, bh, dy, marks), view.get_component_rich_style(look[0])))
            pos = bx + bw
        if pos < len(edges):
            segs.append(Segment(edges[pos:], edge_style))
        return Strip(segs, len(edges)).crop_extend(sx, sx + width, view.kept_rich_style())


def _box_text(look: tuple, bw: int, bh: int, dy: int, marks: tuple) -> str:
    """Row ``dy`` of a box ``bw`` wide, from the row's look (rule 2): ``[name]`` one row high, else its
    border or its line of text."""
    inner = bw - 2
    if bh == 1:
        return "[" + fit_name(look[1], inner).ljust(inner) + "]"
    b = look[1]
    if dy in (0, bh - 1):
        line = [b[1]] * inner
        for k in marks:
            line[k] = "▼" if dy == 0 else b[6]
        return (b[0] + "".join(line) + b[2]) if dy == 0 else (b[4] + "".join(line) + b[5])
    return b[3] + fit(look[2], inner).ljust(inner) + b[3]
