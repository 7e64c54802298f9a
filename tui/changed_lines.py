"""Redraw only the lines of a panel that a step changed (issue #17: a step or jump in under 16 ms)."""
from __future__ import annotations

from textual.geometry import Region

# NOTE [ Redrawing only changed lines ]
# A step changes a few lines of each panel (the event log's two cursor rows, the graph boxes whose
# state changed, the memory legend), but textual redraws every line of a widget whose reactive
# changes or that calls refresh(): each line through its styles cache costs ~0.1 ms, and the
# panels have ~130 lines at 120x40.
#   1. A panel's ``index`` (and the graph's ``current``) is a ``reactive(..., repaint=False)``: its
#      watcher marks what changed with ``refresh(region)``; anything else (a window, a selection,
#      a resize, the model growing, a scroll) still refreshes the whole panel.
#   2. Line API panels (GraphView, EventLog) know which rows a step touches: the log the rows from
#      the old to the new cursor; the graph the boxes whose (style, border, texts) changed, while the
#      layout, the scroll, the size and the selection are those it drew last (``_refresh_boxes``).
#   3. Panels drawn by ``render()`` (MemoryView, Inspector): ``redraw_changed`` renders the new
#      lines at once, compares them with those textual drew last (its ``_render_cache``) and marks
#      only the changed ones dirty; with a refresh already pending, or a new size, it refreshes all.
#   4. tests/tui/test_step_cost.py checks that after steps, jumps, a selection, a window and a
#      resize every panel's lines on screen equal the lines it draws afresh.
#   5. Rule 3 reads textual's private render cache (pinned textual 8.x). A textual without those
#      attributes gets a whole refresh, never a stale line.


def redraw_changed(w) -> None:
    """Rule 3: draw ``w``'s lines now and mark dirty only those that differ from the drawn ones."""
    try:
        _redraw_changed(w)
    except AttributeError:           # rule 5
        w.refresh()


def _redraw_changed(w) -> None:
    cache = w._render_cache
    if not w.is_mounted or w._dirty_regions or cache.size != w.size:
        w.refresh()
        return
    old = cache.lines
    w._layout_cache.clear()          # as refresh() does: render() runs again, not its cached visual
    w._render_content()
    new = w._render_cache.lines
    if len(old) != len(new):
        w.refresh()
        return
    width = w.size.width
    for y, (a, b) in enumerate(zip(old, new)):
        if a != b:
            w.refresh(Region(0, y, width, 1))
    w._dirty_regions.clear()         # those lines are drawn already: no second _render_content
