"""The graph panel's overview: the whole graph scaled into the panel, one mark per node, with the
part the normal view shows outlined (NOTE [ Graph overview ]).

NOTE [ Graph overview ]
1. ``v`` toggles it. Each box of the layout becomes one ``■`` at its centre scaled by the panel's
   size (width and height scaled separately, never enlarged), coloured as its box would be
   (current, executed, recomputed...). Several boxes in one cell show the most important
   style (current, then selected, then the rest).
2. The viewport of the normal view is drawn as a ``┌ ┐ └ ┘`` frame in the same scale, so the
   learner sees where the detailed view is.
3. A click in the overview centres the normal view on that point and leaves the overview.
"""
from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

RANK = {"graph--current": 0, "graph--selected": 1}


def scale(lay, width: int, height: int) -> tuple:
    """Layout cells per panel cell, never below 1 (rule 1)."""
    return max(1.0, lay.width / max(1, width)), max(1.0, lay.height / max(1, height))


def grid(view, width: int, height: int) -> dict:
    """{(col, row): style name} of every node's mark."""
    lay = view._lay
    fx, fy = scale(lay, width, height)
    out = {}
    for nid, (x, y, w, h) in lay.rects.items():
        cell = (min(width - 1, int((x + w / 2) / fx)), min(height - 1, int((y + h / 2) / fy)))
        style = view._style_name(nid)
        if cell not in out or RANK.get(style, 9) < RANK.get(out[cell], 9):
            out[cell] = style
    return out


def frame(view, width: int, height: int) -> dict:
    """{(col, row): char} of the normal view's outline (rule 2)."""
    lay = view._lay
    fx, fy = scale(lay, width, height)
    sx, sy = view.scroll_offset
    vw, vh = view.scrollable_content_region.size
    x0, y0 = int(sx / fx), int(sy / fy)
    x1, y1 = min(width - 1, int((sx + vw) / fx)), min(height - 1, int((sy + vh) / fy))
    out = {}
    for x in range(x0, x1 + 1):
        out[(x, y0)] = out[(x, y1)] = "─"
    for y in range(y0, y1 + 1):
        out[(x0, y)] = out[(x1, y)] = "│"
    out[(x0, y0)], out[(x1, y0)], out[(x0, y1)], out[(x1, y1)] = "┌", "┐", "└", "┘"
    return out


def render_line(view, y: int, width: int, height: int, marks: dict, outline: dict) -> Strip:
    segs = []
    edge = view.get_component_rich_style("graph--edge")
    for x in range(width):
        style = marks.get((x, y))
        if style is not None:
            segs.append(Segment("■", view.get_component_rich_style(style)))
        else:
            segs.append(Segment(outline.get((x, y), " "), edge))
    return Strip(segs, width)


def point(view, col: int, row: int, width: int, height: int) -> tuple:
    """The layout cell under an overview cell (rule 3)."""
    fx, fy = scale(view._lay, width, height)
    return int(col * fx), int(row * fy)
