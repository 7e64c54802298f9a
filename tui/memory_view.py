"""MemoryView: live bytes by category over the whole trace, with the current step and the peak."""
from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from .format import human_bytes
from .model import TraceModel

EIGHTHS = " ▁▂▃▄▅▆▇█"
SHORT = {"parameter": "param", "gradient": "grad", "activation": "act", "optimizer": "optim"}


def columns(model: TraceModel, width: int) -> list:
    """For each of ``width`` columns: (event index shown, total bytes) — the busiest event of its range."""
    n = len(model)
    if n == 0 or width <= 0:
        return []
    out = []
    for c in range(width):
        lo = c * n // width
        hi = max(lo + 1, (c + 1) * n // width)
        if n <= width:
            lo, hi = min(c, n - 1), min(c, n - 1) + 1
        seg = model.total[lo:hi]
        j = max(range(len(seg)), key=seg.__getitem__)
        out.append((lo + j, seg[j]))
    return out


def column_of(model: TraceModel, width: int, i: int) -> int:
    n = len(model)
    if n == 0:
        return 0
    if n <= width:
        return i
    return min(width - 1, i * width // n)


class MemoryView(Widget, can_focus=True):
    """The memory panel: a stacked chart in characters, a legend with the bytes at the cursor."""

    # colors live in glassgrad.tcss; a category without its own class uses memory--unknown
    COMPONENT_CLASSES = {"memory--parameter", "memory--gradient", "memory--activation", "memory--optimizer",
                         "memory--input", "memory--other", "memory--unknown", "memory--cursor", "memory--axis",
                         "memory--now", "memory--peak"}

    def _cat_style(self, cat):
        name = f"memory--{cat}"
        return self.get_component_rich_style(name if name in self.COMPONENT_CLASSES else "memory--unknown")

    index: reactive[int] = reactive(0)

    def __init__(self, model: TraceModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self._cols_key = None
        self._cols = []

    def reload(self) -> None:
        self._cols_key = None
        self.refresh()

    def _columns(self, width):
        key = (width, len(self.model))
        if key != self._cols_key:
            self._cols = columns(self.model, width)
            self._cols_key = key
        return self._cols

    def render(self) -> Text:
        m = self.model
        w, h = self.size.width, self.size.height
        if len(m) == 0 or w < 10 or h < 3:
            return Text("No memory events yet.", style="dim")
        i = m.clamp(self.index)
        chart_h = max(1, h - 2)
        cols = self._columns(w)
        top = max(1, m.peak_bytes)
        cur_col = column_of(m, w, i)
        peak_col = column_of(m, w, m.peak_index)
        # per column: the stack of categories at the shown event, as cumulative heights in eighths of a row
        scale = chart_h * 8 / top
        stacks = []
        for c, (ev, _) in enumerate(cols):
            snap = m.snaps[i if c == cur_col else ev]
            parts, acc = [], 0
            for k, v in enumerate(snap):
                if v > 0:
                    acc += v
                    parts.append((acc * scale, k))
            stacks.append(parts)
        styles = [self._cat_style(cat) for cat in m.categories]
        cursor_line = self.get_component_rich_style("memory--cursor")
        cursor_bg = Style(bgcolor=cursor_line.bgcolor)
        text = Text()
        for r in range(chart_h):
            lo = (chart_h - 1 - r) * 8  # this row's bottom, in eighths
            row_chars, row_styles = [], []
            for c in range(w):
                parts = stacks[c] if c < len(stacks) else ()
                ch, st = " ", None
                if parts and parts[-1][0] > lo:
                    ch = EIGHTHS[max(1, min(8, int(round(parts[-1][0] - lo))))]
                    # the cell takes the color of the category covering most of it
                    best, below = -1.0, 0.0
                    for edge, k in parts:
                        cover = min(edge, lo + 8) - max(below, lo)
                        if cover > best:
                            best, st = cover, styles[k]
                        below = edge
                if c == cur_col:
                    st = cursor_line if ch == " " else st + cursor_bg
                    ch = "│" if ch == " " else ch
                row_chars.append(ch)
                row_styles.append(st)
            start = 0  # one span per run of equal styles
            for c in range(1, w + 1):
                if c == w or row_styles[c] is not row_styles[start]:
                    text.append("".join(row_chars[start:c]), row_styles[start])
                    start = c
            text.append("\n")
        # axis line: cursor and peak markers
        axis = ["─"] * w
        axis[min(peak_col, w - 1)] = "▲"
        axis[min(cur_col, w - 1)] = "┃"
        text.append("".join(axis), self.get_component_rich_style("memory--axis"))
        text.append("\n")
        live = m.live_at(i)
        legend = Text()
        legend.append(f"now {human_bytes(m.total[i])} ", self.get_component_rich_style("memory--now"))
        legend.append(f"▲peak {human_bytes(m.peak_bytes)} ", self.get_component_rich_style("memory--peak"))
        for cat in m.categories:
            if live.get(cat):
                legend.append("■", self._cat_style(cat))
                legend.append(f"{SHORT.get(cat, cat)} {human_bytes(live[cat])} ")
        legend.truncate(w)
        text.append_text(legend)
        return text
