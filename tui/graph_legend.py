"""GraphLegend: one or a few lines under the graph naming the marks its boxes show now (NOTE [ Graph marks ])."""
from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from .graph_marks import Mark

MORE = "? all marks"


def pack(items: list, width: int, max_lines: int) -> list:
    """Items (plain strings) on lines at most ``width`` wide, in order, one space apart; never split.

    Past ``max_lines`` the last line ends with how many were left out and ``? all marks``.
    Returns a list of lines, each a list of item indices (-1 stands for the "more" note)."""
    lines: list = [[]]
    used = 0
    for k, it in enumerate(items):
        need = len(it) + (1 if lines[-1] else 0)
        if lines[-1] and used + need > width:
            lines.append([])
            used, need = 0, len(it)
        lines[-1].append(k)
        used += need
    if len(lines) <= max_lines:
        return lines
    kept = lines[:max_lines]
    last = kept[-1]
    while last:
        left = len(items) - sum(len(line) for line in kept)
        note = f"+{left} {MORE}"
        if sum(len(items[k]) + 1 for k in last) + len(note) <= width:
            break
        last.pop()
    return kept[:-1] + [last + [-1]]


def item_text(m: Mark) -> str:
    return f"{m.sample} {m.short}" if m.sample.strip() or m.style else m.short


class GraphLegend(Widget):
    """The marks on screen now, each drawn as the graph draws it, then its word."""

    DEFAULT_CSS = "GraphLegend { height: auto; padding: 0 1; }"

    marks: reactive[tuple] = reactive((), layout=True)
    max_lines: reactive[int] = reactive(2, layout=True)

    def __init__(self, graph, **kw) -> None:
        super().__init__(**kw)
        self.graph = graph

    def _lines(self, width: int) -> list:
        marks = list(self.marks)
        if not marks:
            return []
        texts = [item_text(m) for m in marks]
        return [[(marks[k] if k >= 0 else None) for k in line] for line in pack(texts, max(10, width), self.max_lines)]

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self._lines(width))

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="crop")
        lines = self._lines(self.content_size.width or self.size.width)
        left = len(self.marks) - sum(1 for line in lines for m in line if m is not None)
        for n, line in enumerate(lines):
            if n:
                out.append("\n")
            for k, m in enumerate(line):
                if k:
                    out.append(" ")
                if m is None:
                    out.append(f"+{left} {MORE}", style="dim")
                    continue
                if m.style:
                    out.append(m.sample, self.graph.get_component_rich_style(m.style))
                    out.append(" " + m.short)
                else:
                    out.append(m.sample, style="italic")
                    out.append(" " + m.short)
        return out


__all__ = ["GraphLegend", "pack"]
