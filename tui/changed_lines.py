"""Redraw only the lines of a panel that a step changed (issue #17: a step or jump in under 16 ms)."""
from __future__ import annotations

from rich.text import Text
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
#      the old to the new cursor; the graph the rows whose signature (layout row, scroll, width,
#      the looks of its boxes) differs from the one drawn there (``_refresh_boxes``, NOTE [ Graph
#      rows ] in tui/graph_rows.py).
#   3. Panels drawn by ``render()`` (MemoryView, Inspector): ``redraw_changed`` renders the new
#      lines at once, compares them with those textual drew last (its ``_render_cache``) and marks
#      only the changed ones dirty (and the rows past the shorter text's end, when the two have
#      different lengths); with a refresh already pending, or a new size, it refreshes all.
#   4. tests/tui/test_step_cost.py checks that after steps, jumps, a selection, a window and a
#      resize every panel's lines on screen equal the lines it draws afresh.
#   5. Rule 3 reads textual's private render cache (pinned textual 8.x). A textual without those
#      attributes gets a whole refresh, never a stale line.
#   6. Before that, a panel whose ``render()`` gives the same text (characters and spans) as the
#      one its drawn lines came from (the same render cache: no resize or refresh since) has
#      nothing to redraw: the memory chart between two events that move no byte.
#   7. A step moves the graph's ``index`` and ``current`` together: the screen sets ``current``
#      first without its watcher, so the ``index`` watcher compares the rows once, in the new state
#      (each comparison works out every box's looks again, as ``current`` is part of them). When
#      ``index`` does not change, ``current`` is set as usual and its watcher compares them.


def redraw_changed(w) -> None:
    """Rule 3: draw ``w``'s lines now and mark dirty only those that differ from the drawn ones."""
    try:
        _redraw_changed(w)
    except AttributeError:           # rule 5
        w.refresh()


def _redraw_changed(w) -> None:
    cache = w._render_cache
    if not w.display or not w.is_mounted or w._dirty_regions or cache.size != w.size:   # hidden: drawn when shown
        w.__dict__.pop("_drawn_text", None)
        w.refresh()
        return
    text = w.render()                # rule 6: the same text as drawn, nothing to do
    if isinstance(text, Text):
        drawn, now = w.__dict__.get("_drawn_text"), (text.plain, text.spans, cache)
        w.__dict__["_drawn_text"] = now
        if drawn is not None and drawn[2] is cache and drawn[0] == now[0] and drawn[1] == now[1]:
            return
    old = cache.lines
    w._layout_cache.clear()          # as refresh() does: render() runs again, not its cached visual
    w._render_content()
    new = w._render_cache.lines
    width, common = w.size.width, min(len(old), len(new))
    changed = [Region(0, y, width, 1) for y, (a, b) in enumerate(zip(old, new)) if a != b]
    if len(old) != len(new):         # the rows one text has and the other not (blank past the end)
        changed.append(Region(0, common, width, max(len(old), len(new)) - common))
    if changed:
        w.refresh(*changed)          # one refresh: each one clears textual's caches of the widget
    w._dirty_regions.clear()         # those lines are drawn already: no second _render_content
    if isinstance(text, Text):
        w.__dict__["_drawn_text"] = (text.plain, text.spans, w._render_cache)
