"""MemoryView: live bytes by category over the whole trace, with the current step and the peak."""
from __future__ import annotations

import bisect

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from replay.model import TraceModel
from replay.words import nbytes

from .changed_lines import redraw_changed
from .kept_styles import KeptStyles

EIGHTHS = " ▁▂▃▄▅▆▇█"
SHORT = {"parameter": "param", "gradient": "grad", "activation": "act", "optimizer": "optim"}



NO_MEMORY = ("No memory in this trace: it has no alloc or free events (recorded without them, or cut short "
             "before the first). The graph and the events still replay.")


def no_memory(model) -> bool:
    """True when the trace has events but no byte was ever allocated in it (every memory view says so)."""
    mem = model.memory
    return len(model) > 0 and mem.peak_bytes == 0 and not any(mem.snaps[-1])

def column_starts(lo: int, hi: int, width: int) -> list:
    """First event index of each of ``width`` columns over events [lo, hi) (short ranges repeat events)."""
    n = hi - lo
    return [lo + c * n // width for c in range(width)]


def columns(model: TraceModel, width: int, lo: int = 0, hi: int | None = None) -> list:
    """For each column over events [lo, hi): (event index shown, total bytes), the busiest event of its slice."""
    hi = len(model) if hi is None else hi
    if hi <= lo or width <= 0:
        return []
    starts = column_starts(lo, hi, width)
    out = []
    for c, a in enumerate(starts):
        b = max(a + 1, starts[c + 1] if c + 1 < width else hi)
        seg = model.memory.total[a:b]
        j = max(range(len(seg)), key=seg.__getitem__)
        out.append((a + j, seg[j]))
    return out


def column_of(width: int, i: int, lo: int, hi: int) -> int | None:
    """The column showing event i, or None when i is outside [lo, hi)."""
    if not lo <= i < hi or width <= 0:
        return None
    return bisect.bisect_right(column_starts(lo, hi, width), i) - 1


def wrap_items(widths: list, width: int) -> list:
    """Item indices per line: in order, one space apart, a new line when the next would not fit."""
    lines, used = [[]], 0
    for k, w in enumerate(widths):
        if lines[-1] and used + 1 + w > width:
            lines.append([])
            used = 0
        used += w + (1 if lines[-1] else 0)
        lines[-1].append(k)
    return lines


def _stack(snap, scale: float) -> list:
    """A column's stack: (cumulative height in eighths of a row, category index) per category with bytes."""
    parts, acc = [], 0
    for k, v in enumerate(snap):
        if v > 0:
            acc += v
            parts.append((acc * scale, k))
    return parts


def _cell(parts, lo: float, styles: list) -> tuple:
    """(character, style) of the cell whose bottom is ``lo`` eighths up a column stacked as ``parts``:
    the style of the category covering most of it."""
    ch, st = " ", None
    if parts and parts[-1][0] > lo:
        ch = EIGHTHS[max(1, min(8, int(round(parts[-1][0] - lo))))]
        best, below = -1.0, 0.0
        for edge, k in parts:
            cover = min(edge, lo + 8) - max(below, lo)
            if cover > best:
                best, st = cover, styles[k]
            below = edge
    return ch, st


CATEGORY_CLASSES = ("memory--parameter", "memory--gradient", "memory--activation", "memory--optimizer",
                    "memory--input", "memory--other", "memory--unknown")


def category_style(widget, cat: str):
    """A category's colour (``memory--<cat>`` in glassgrad.tcss, else ``memory--unknown``) on ``widget``."""
    name = f"memory--{cat}"
    return widget.get_component_rich_style(name if name in CATEGORY_CLASSES else "memory--unknown")


class MemoryView(KeptStyles, Widget, can_focus=True):
    """The memory panel: a stacked chart in characters, a legend with the bytes at the cursor.

    The legend reads: live bytes now, the live-bytes peak (▲) and the activation peak (△)
    of what the chart shows (NOTE [ Memory replay ] rule 6), then each category's live bytes. The caching allocator model's reserved bytes at the cursor
    (when the trace carries them) sit on the bottom border, off the chart's scale.
    """

    # colors live in glassgrad.tcss; a category without its own class uses memory--unknown
    COMPONENT_CLASSES = {*CATEGORY_CLASSES, "memory--cursor", "memory--axis", "memory--now", "memory--peak",
                         "memory--reserved"}

    def _cat_style(self, cat):
        return category_style(self, cat)

    index: reactive[int] = reactive(0, repaint=False)   # NOTE [ Redrawing only changed lines ] rule 1
    window: reactive[tuple | None] = reactive(None)   # (lo, hi): show only events [lo, hi); None: the whole run

    class WindowChosen(Message):
        """The learner dragged across the chart: events [lo, hi) (NOTE [ Memory views ] rule 2)."""

        def __init__(self, lo: int, hi: int) -> None:
            super().__init__()
            self.lo, self.hi = lo, hi

    def on_mouse_down(self, event) -> None:
        self._drag_from = event.x
        self.capture_mouse()

    def on_mouse_up(self, event) -> None:
        start = getattr(self, "_drag_from", None)
        self._drag_from = None
        self.release_mouse()
        w = self.size.width
        if start is None or abs(event.x - start) < 2 or w <= 0 or len(self.model) == 0:
            return
        lo, hi = self._range()
        starts = column_starts(lo, hi, w)
        a, b = sorted((max(0, min(w - 1, start)), max(0, min(w - 1, event.x))))
        self.post_message(self.WindowChosen(starts[a], (starts[b + 1] if b + 1 < w else hi)))

    def __init__(self, model: TraceModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self._n = len(model)            # the events drawn: a growing model's, as of the last reload
        self._cols_key = None
        self._cols = []
        self._peak_key = None
        self._peak = (0, 0)
        self._reserved_shown = None
        self._runs_key = None
        self._runs = []

    def reload(self) -> None:
        """The model grew: draw its events now. Until then the chart draws the events it had, so a
        step while a run or a first open folds more in works out no new columns (NOTE [ A first
        open ] rule 3: the panels that draw the whole trace catch up every SHOW_EVERY seconds)."""
        self._n = len(self.model)
        self._cols_key = self._runs_key = None
        lo, hi = self._range()
        if self.size.width > 0 and hi > lo:     # the new columns now, in the catch-up, not in the next key's frame
            self._columns(self.size.width, lo, hi)
        self.sync_reserved()
        self.refresh()

    def on_mount(self) -> None:
        self.sync_reserved()

    def watch_index(self) -> None:
        self.sync_reserved()
        redraw_changed(self)        # NOTE [ Redrawing only changed lines ] rule 3

    def reserved_text(self) -> str:
        """"reserved 2.00 MiB" at the cursor ("reserved 68.00 MiB (cpu + cuda:0)" summing devices),
        or "" when the trace has no reserved figures."""
        m = self.model
        if not m.memory.has_reserved or len(m) == 0:
            return ""
        text = f"reserved {nbytes(m.memory.reserved[m.clamp(self.index)])}"
        devs = sorted(m.memory.reserved_devices)
        return text if len(devs) < 2 else f"{text} ({' + '.join(devs)})"    # NOTE [ Memory replay ] rule 3

    def sync_reserved(self) -> None:
        """Put reserved_text() on the bottom border (only when it changed)."""
        text = self.reserved_text()
        if text == self._reserved_shown:
            return
        self._reserved_shown = text
        color = self.get_component_rich_style("memory--reserved").color
        self.border_subtitle = Text(f" {text} ", style=Style(color=color)) if text else ""

    def _range(self) -> tuple:
        n = self._n
        if self.window is None:
            return 0, n
        lo, hi = self.window
        return max(0, lo), min(n, hi)

    def _columns(self, width, lo, hi):
        key = (width, lo, hi, self._n)
        if key != self._cols_key:
            self._cols = columns(self.model, width, lo, hi)
            self._cols_key = key
        return self._cols

    def peak_in(self, lo, hi, category=None) -> tuple:
        """(event index, bytes) of the live-bytes peak in [lo, hi), or (``category="activation"``) the
        activation peak: NOTE [ Memory replay ] rule 6 (``Replay.peak_in``)."""
        key = (lo, hi, category, self._n)
        if self._peak_key != key:
            self._peak = self.model.memory.peak_in(lo, hi, category)
            self._peak_key = key
        return self._peak

    def _chart_runs(self, cols, chart_h, scale, styles, key) -> list:
        """Per chart row, its runs of equal style ``(start, end, chars, style)`` with every column at its
        own busiest event: kept while ``key`` (width, window, events, height, scale) and the styles hold,
        so a step redraws only the cursor column over them."""
        key = (key, tuple(styles))
        if key == self._runs_key:
            return self._runs
        mem = self.model.memory
        stacks = [_stack(mem.snaps[ev], scale) for ev, _ in cols]
        out = []
        for r in range(chart_h):
            row_lo = (chart_h - 1 - r) * 8  # this row's bottom, in eighths
            cells = [_cell(stacks[c], row_lo, styles) if c < len(stacks) else (" ", None) for c in range(key[0][0])]
            row, start = [], 0  # one run per stretch of equal styles
            for c in range(1, len(cells) + 1):
                if c == len(cells) or cells[c][1] is not cells[start][1]:
                    row.append((start, c, "".join(ch for ch, _ in cells[start:c]), cells[start][1]))
                    start = c
            out.append(row)
        self._runs_key, self._runs = key, out
        return out

    def render(self) -> Text:
        m = self.model
        mem = m.memory
        w, h = self.size.width, self.size.height
        if len(m) == 0 or w < 10 or h < 3:
            return Text("No memory events yet.", style="dim")
        if no_memory(m):
            return Text(NO_MEMORY, style="dim")
        i = m.clamp(self.index)
        lo, hi = self._range()
        if hi <= lo:
            lo, hi = 0, max(1, self._n)
        cols = self._columns(w, lo, hi)
        act_i, act_b = self.peak_in(lo, hi, "activation")
        peak_i, peak_b = self.peak_in(lo, hi)
        legend = self.legend(i, peak_b, act_b, w, max(1, h - 3))
        chart_h = max(1, h - 1 - len(legend))
        top = max(1, peak_b)
        cur_col = column_of(w, i, lo, hi)
        peak_col = column_of(w, peak_i, lo, hi)
        act_col = column_of(w, act_i, lo, hi) if act_b else None
        styles = [self._cat_style(cat) for cat in mem.categories]
        cursor_line = self.get_component_rich_style("memory--cursor")
        cursor_bg = Style(bgcolor=cursor_line.bgcolor)
        scale = chart_h * 8 / top
        runs = self._chart_runs(cols, chart_h, scale, styles, (w, lo, hi, self._n, chart_h, top))
        cur = _stack(mem.snaps[i], scale) if cur_col is not None else None
        text = Text()
        for r, row in enumerate(runs):
            for a, b, chars, st in row:
                if cur is not None and a <= cur_col < b:   # the cursor column is drawn each time
                    ch, cst = _cell(cur, (chart_h - 1 - r) * 8, styles)
                    cst = cursor_line if ch == " " else cst + cursor_bg
                    ch = "│" if ch == " " else ch
                    k = cur_col - a
                    if k:
                        text.append(chars[:k], st)
                    text.append(ch, cst)
                    if k + 1 < len(chars):
                        text.append(chars[k + 1:], st)
                else:
                    text.append(chars, st)
            text.append("\n")
        # axis line: cursor and peak markers
        axis = ["─"] * w
        if act_col is not None:
            axis[act_col] = "△"
        if peak_col is not None:
            axis[peak_col] = "▲"
        if cur_col is not None:
            axis[cur_col] = "┃"
        text.append("".join(axis), self.get_component_rich_style("memory--axis"))
        text.append("\n")
        for k, line in enumerate(legend):
            if k:
                text.append("\n")
            text.append_text(line)
        return text

    def legend_items(self, i: int, peak_b: int, act_b: int, short: bool) -> list:
        """(text, style) per legend entry: live now, the two peaks, each category's live bytes
        (NOTE [ Fitting the screen ] rule 3: ``short`` words, never fewer numbers)."""
        mem = self.model.memory
        peak_style = self.get_component_rich_style("memory--peak")
        items = [([(f"now {nbytes(mem.total[i])}", self.get_component_rich_style("memory--now"))]),
                 [(f"{'▲' if short else '▲peak '}{nbytes(peak_b)}", peak_style)]]
        if act_b:
            items.append([(f"{'△act ' if short else '△act peak '}{nbytes(act_b)}", peak_style)])
        live = mem.live_at(i)
        for cat in mem.categories:
            if live.get(cat):
                items.append([("■", self._cat_style(cat)), (f"{SHORT.get(cat, cat)} {nbytes(live[cat])}", None)])
        return items

    def legend(self, i: int, peak_b: int, act_b: int, width: int, max_lines: int) -> list:
        """The legend as lines (Text) ``width`` wide: the long words when they take at most two lines
        (and ``max_lines``), else the short words on as many lines as they need (the chart above keeps
        at least one row; a line past the panel's bottom is cut)."""
        for short, most in ((False, min(2, max_lines)), (True, max_lines)):
            items = self.legend_items(i, peak_b, act_b, short)
            lines = wrap_items([sum(len(t) for t, _ in it) for it in items], width)
            if len(lines) <= most or short:
                break
        out = []
        for line in lines:
            t = Text(no_wrap=True, overflow="crop")
            for k in line:
                if len(t):
                    t.append(" ")
                for piece, style in items[k]:
                    t.append(piece, style)
            t.truncate(width)
            out.append(t)
        return out
