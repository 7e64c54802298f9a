"""GraphView: the autograd graph at the current step, drawn with box-drawing characters.

It draws the graph ``replay.model.TraceModel`` shows at the cursor (NOTE [ One trace
model ]), the same nodes in the same states as the Graphviz picture (``w``). Boxes appear
as forward creates nodes, light up as backward executes them; the second line of a box
tells what the node saved (and whether it was released or dropped by checkpointing).
Leaves are on top and the loss at the bottom, as the pictures draw it. Three zoom levels
(NOTE [ Graph zoom ] in graph_zoom.py) and folded module groups (NOTE [ Folded module groups ]
in graph_folds.py) fit a real model; drag or scroll to pan, click a box to inspect it.
"""
from __future__ import annotations

import textwrap

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from replay.model import TraceModel
from replay.words import nbytes, shape

from . import graph_overview
from .graph_folds import GROUP, Folds, box_texts, instance, is_group, widest
from .graph_layout import layout
from .graph_marks import marks_in_view
from .graph_rows import Rows
from .graph_zoom import (
    BOXES,
    LEVEL_WORDS,
    NAMES,
    PAN_X,
    SCALES,
    WHOLE,
    cells,
    compact_label,
    level_after,
)
from .kept_styles import KeptStyles

_SAVED_WORDS = {"none": "saves nothing", "kept": "saved {b}", "released": "freed {b}", "packed": "packed {b}",
                "recomputed": "saved {b}"}


def node_texts(model: TraceModel, nid, i: int) -> tuple:
    """Two text lines for a node's box at step i."""
    rec = model.nodes[nid]
    if rec.kind == "missing":
        return rec.name, "built before recording"
    t = rec.tensor or {}
    if rec.is_leaf:
        first = f"leaf {t['name']}" if t.get("name") else "AccumulateGrad"
        return first, f"{shape(t.get('shape'), 'box')} {'grad ✓' if model.state(nid, i) in ('executed', 'current') else 'leaf'}"
    if model.freed(nid, i):     # shown only when the learner keeps freed nodes (f)
        return rec.name, f"✝ freed {nbytes(rec.saved_bytes())}" if rec.saved else "✝ freed"
    st = model.saved_state(nid, i)
    if st == "dropped":
        second = f"✗ dropped {nbytes(rec.dropped_bytes)}" if rec.dropped_bytes else "✗ not kept"
    else:
        second = _SAVED_WORDS[st].format(b=nbytes(rec.saved_bytes()))
    if model.recomputed(nid, i):
        second = "↻ " + second
    return rec.name, second


def panel_nodes(model: TraceModel, i: int, keep_freed: bool = False) -> dict:
    """What the panel draws at step i: {node id: (state, the box's two lines)}; the layout's input."""
    return {nid: (model.state(nid, i), node_texts(model, nid, i)) for nid in model.shown(i, keep_freed)}


def box_style(model: TraceModel, nid, i: int, selected=None, current=None, lit=frozenset()) -> str:
    """The component class a node's box is drawn with at step i (``lit``: the nodes a holders row
    lights, NOTE [ Graph marks ] rule 5)."""
    st = model.state(nid, i)
    if nid == selected and st != "future":
        return "graph--selected"
    if model.freed(nid, i):
        return "graph--freed"
    if st == "future":
        return "graph--future"
    if st == "current" or nid == current:
        return "graph--current"
    if nid in lit:
        return "graph--lit"
    if model.saved_state(nid, i) == "dropped" and st != "executed":
        return "graph--dropped"
    if model.recomputed(nid, i) and st != "executed":
        return "graph--recomputed"
    if st == "executed":
        return "graph--executed"
    rec = model.nodes[nid]
    return "graph--leaf" if rec.is_leaf else "graph--missing" if rec.kind == "missing" else "graph--pending"


SINGLE = "┌─┐│└┘┬"   # corners, lines and the edge-out mark of a box; DOUBLE: a recomputed node's
DOUBLE = "╔═╗║╚╝╤"
HEAVY = "┏━┓┃┗┛┳"    # a folded module group (NOTE [ Folded module groups ] rule 3)
MAX_NODES = 400   # more than this and the view lays out the part of the graph around the cursor
UP = True         # leaves on top, the loss at the bottom, as the pictures (graph_layout rule 7)
class GraphView(KeptStyles, ScrollView, can_focus=True):
    """The graph panel (a Line API widget: only visible rows are drawn)."""

    COMPONENT_CLASSES = {
        "graph--edge", "graph--future", "graph--pending", "graph--current", "graph--executed",
        "graph--selected", "graph--dropped", "graph--recomputed", "graph--leaf", "graph--missing", "graph--empty",
        "graph--freed", "graph--lit",
    }

    index: reactive[int] = reactive(0, repaint=False)   # NOTE [ Redrawing only changed lines ] rule 1
    selected: reactive[int | str | None] = reactive(None)   # a node id, or a folded group's id
    current: reactive[int | None] = reactive(None, repaint=False)   # the node the event at the cursor is about
    keep_freed: reactive[bool] = reactive(False)       # f: draw dead nodes greyed, not leave them out
    overview: reactive[bool] = reactive(False)         # v: the whole graph scaled into the panel (graph_overview.py)
    zoom: reactive[int] = reactive(BOXES)              # NOTE [ Graph zoom ] in tui/graph_zoom.py
    lit: reactive[frozenset] = reactive(frozenset(), repaint=False)   # a holders row's nodes (NOTE [ Graph marks ] rule 5)

    def watch_overview(self) -> None:
        self._ov = None
        self.refresh()

    class NodeClicked(Message):
        def __init__(self, node_id) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, model: TraceModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.folds = Folds(model)
        self._key = None
        self._lay = None
        self._recs = {}          # node id -> record, of the nodes laid out
        self._drawn = {}         # node id -> the box it is drawn in (itself, or its folded group)
        self._members = {}       # folded group id -> its node ids
        self._labels = {}        # box id -> its name at NAMES
        self._cells = {}         # box id -> (col, row) at WHOLE
        self._at = {}            # (col, row) -> box id at WHOLE
        self._tot = {}
        self._look = None        # the last look_at's arguments, and the scroll it left: rule 6 of
        self._looked_from = None  # NOTE [ Where the graph view looks ] (tui/event_focus.py)
        self._rows = Rows()      # NOTE [ Graph rows ] in graph_rows.py
        self._subtitle = None
        self._drag = None
        self._dragged = False

    # -------------------------------------------------------------- layout

    def _build(self, level: int):
        """(layout, records, node -> box, group members, NAMES labels) of the nodes shown now at ``level``."""
        i = self.index
        ids = self.model.shown(i, self.keep_freed)   # the graph grows as forward runs, nodes leave as they die
        order = sorted(ids, key=lambda n: self.model.nodes[n].created)
        if len(order) > MAX_NODES:  # a huge graph: the nodes created nearest the cursor
            order.sort(key=lambda n: abs(self.model.nodes[n].created - self.index))
            order = sorted(order[:MAX_NODES], key=lambda n: self.model.nodes[n].created)
        recs = {nid: self.model.nodes[nid] for nid in order}
        folded = self.folds.drawn(i, self.keep_freed) if self.folds.folded else {}
        drawn = {nid: folded.get(nid, nid) for nid in order}
        graph: dict = {}
        members: dict = {}
        for nid in order:
            d = drawn[nid]
            graph.setdefault(d, [])
            if d != nid:
                members.setdefault(d, []).append(nid)
        for nid, r in recs.items():     # NOTE [ Folded module groups ] rule 2
            d = drawn[nid]
            for c, _, _ in r.next:
                dc = drawn.get(c)
                if dc is not None and dc != d and dc not in graph[d]:
                    graph[d].append(dc)
        names = {}
        for d in graph:
            if is_group(d):
                names[d] = instance(d)
            else:
                names[d] = compact_label(recs[d])
        if level == BOXES:
            labels = {d: (widest(d, sum(recs[n].kind == "fn" for n in members[d])) if is_group(d)
                          else _widest(recs[d])) for d in graph}
        else:
            labels = names
        return layout(graph, labels, SCALES[level], up=UP), recs, drawn, members, names, len(ids)

    def _ensure_layout(self) -> None:
        i = self.index
        ids = self.model.shown(i, self.keep_freed)
        whole = tuple(self.size) if self.zoom == WHOLE else None
        key = (ids, i if len(ids) > MAX_NODES else None, self.zoom, frozenset(self.folds.folded), whole)
        if key == self._key and self._lay is not None:
            return
        self._key = key
        self._tot = {}
        self._lay, self._recs, self._drawn, self._members, self._labels, n = self._build(self.zoom)
        notes = [f"{MAX_NODES} of {n} nodes, nearest the cursor"] if n > MAX_NODES else []
        if self.zoom == WHOLE:
            w, h = self.size
            self._cells = cells(self._lay, w, h) if w and h else {}
            self._at = {c: d for d, c in self._cells.items()}
            if w and h and len(self._cells) < len(self._lay.rects):
                notes.append(f"{len(self._cells)} of {len(self._lay.rects)} boxes fit")
            self.virtual_size = Size(w, h)
        else:
            self.virtual_size = Size(self._lay.width, self._lay.height)
        if self.zoom != BOXES:
            notes.append(f"zoom: {LEVEL_WORDS[self.zoom]}")
        subtitle = " · ".join(notes)
        if subtitle != self._subtitle:        # setting it redraws the whole panel, even when it is the same
            self._subtitle = self.border_subtitle = subtitle

    def watch_index(self, old: int, new: int) -> None:
        self._tot = {}
        self._ensure_layout()
        self._refresh_boxes()

    def watch_selected(self) -> None:
        self.refresh()

    def watch_keep_freed(self) -> None:
        self._key = None
        self._ensure_layout()
        self.refresh()

    def watch_current(self) -> None:
        self._refresh_boxes()

    def watch_lit(self) -> None:
        self._refresh_boxes()

    def _refresh_boxes(self) -> None:
        """Redraw only the rows whose signature changed since they were drawn (a step leaves most rows as
        they were, a new layout or a scroll often many): NOTE [ Redrawing only changed lines ] rule 2
        (tui/changed_lines.py) and NOTE [ Graph rows ] rule 3."""
        lay = self._lay
        if lay is None or self.zoom == WHOLE or self.overview or not lay.rects:
            self.refresh()
            return
        w = self.size.width
        regions = [Region(0, y, w, n) for y, n in self._rows.changed(self, self.size.height)]
        if regions:
            self.refresh(*regions)          # one refresh: each one clears textual's caches of the panel

    def notify_style_update(self) -> None:
        if hasattr(self, "_rows"):
            self._rows.forget_styles()      # NOTE [ Graph rows ] rule 4
        super().notify_style_update()

    def watch_zoom(self) -> None:
        """Lay out at the new level and keep the selected (else current) box in the middle (rule 4)."""
        self._key = None
        self._ensure_layout()
        self.centre_on(self.selected if self.selected is not None else self.current)
        self.refresh()

    def on_mount(self) -> None:
        self._ensure_layout()

    def reload(self) -> None:
        """The model grew (a streaming run): lay out again."""
        self._key = None
        self._ensure_layout()
        self.refresh()

    def box_of(self, nid):
        """The box node ``nid`` is drawn in now (itself, or its folded group), or None."""
        self._ensure_layout()
        d = nid if is_group(nid) else self._drawn.get(nid)
        return d if d is not None and d in self._lay.rects else None

    def boxes_in_view(self) -> list:
        """The boxes the panel shows now, whole or in part."""
        self._ensure_layout()
        if self.zoom == WHOLE:
            return list(self._cells)
        vw, vh = self.scrollable_content_region.size
        view = Region(*self.scroll_offset, vw, vh)
        return [d for d, r in self._lay.rects.items() if view.overlaps(Region(*r))]

    def look_at(self, nid, around=(), keep=None) -> None:
        """Centre the boxes ``around`` (a recompute's region), else node ``nid``, when they are not all
        on screen; when they do not fit, keep ``nid`` (else ``keep``) whole: NOTE [ Where the graph
        view looks ] rules 3-4 (in tui/event_focus.py)."""
        self._look = (nid, tuple(around), keep)
        self._looked_from = None
        self._ensure_layout()
        lay = self._lay
        if lay is None or self.zoom == WHOLE:
            return
        box = self.box_of(nid) if nid is not None else None
        box = box if box is not None else (self.box_of(keep) if keep is not None else None)
        own = Region(*lay.rects[box]) if box is not None else None
        boxes = [Region(*lay.rects[b]) for b in dict.fromkeys(self.box_of(n) for n in around) if b is not None]
        target = Region.from_union(boxes) if boxes else own
        if target is None:
            return
        vw, vh = self.scrollable_content_region.size
        if vw <= 0 or vh <= 0:           # not laid out yet: on_resize looks once the size is known
            return
        anchor = own or (boxes[0] if boxes else None)   # the region's first node: recomputed first
        view = Region(*self.scroll_offset, vw, vh)
        fits = target.width <= vw and target.height <= vh
        if not (view.contains_region(target) or (not fits and view.contains_region(anchor))):
            # centre the target; when it does not fit, as near the centre as keeps the anchor whole
            x = target.x + target.width // 2 - vw // 2
            y = target.y + target.height // 2 - vh // 2
            x = min(max(x, anchor.right - vw), anchor.x)
            y = min(max(y, anchor.bottom - vh), anchor.y)
            self.scroll_to(max(0, x), max(0, y), animate=False, force=True, immediate=True)
        self._looked_from = tuple(self.scroll_offset)

    def centre_on(self, nid) -> None:
        """Put node (or group) ``nid``'s box in the middle of the panel (NOTE [ Graph zoom ] rule 4)."""
        box = self.box_of(nid) if nid is not None else None
        vw, vh = self.scrollable_content_region.size
        if box is None or self.zoom == WHOLE or vw <= 0 or vh <= 0:
            return
        x, y, w, h = self._lay.rects[box]
        self.scroll_to(max(0, x + w // 2 - vw // 2), max(0, y + h // 2 - vh // 2), animate=False, force=True,
                       immediate=True)

    def zoom_by(self, step: int) -> None:
        """-1 zooms in, +1 out (NOTE [ Graph zoom ] rule 1)."""
        self.overview = False
        self.zoom = level_after(self.zoom, step)

    def fit_whole(self) -> int:
        """``0``: the most detailed level at which the whole graph fits the panel (rule 1); returns it."""
        self.overview = False
        vw, vh = self.scrollable_content_region.size
        level = WHOLE
        for lv in (BOXES, NAMES):
            lay = self._lay if lv == self.zoom else self._build(lv)[0]
            if lay.width <= vw and lay.height <= vh:
                level = lv
                break
        self.zoom = level
        self.scroll_to(0, 0, animate=False, force=True, immediate=True)
        return level

    def pan(self, dx: int, dy: int) -> None:
        """Move the view ``dx`` steps of ``PAN_X`` columns and ``dy`` layers of boxes (rule 4)."""
        sx, sy = self.scroll_offset
        self.scroll_to(sx + dx * PAN_X, sy + dy * SCALES[self.zoom].ystep, animate=False, force=True,
                       immediate=True)

    def toggle_fold(self, nid) -> str | None:
        """Fold or unfold the group of node (or box) ``nid``: its instance, or None when it is in none."""
        inst = self.folds.toggle(nid, self.index, self.keep_freed)
        if inst is not None:
            self._relayout(GROUP + inst if inst in self.folds.folded else nid)
        return inst

    def toggle_all_folds(self) -> bool:
        folded = self.folds.toggle_all(self.index, self.keep_freed)
        self._relayout(self.selected if self.selected is not None else self.current)
        return folded

    def _relayout(self, keep) -> None:
        self._key = None
        self._ensure_layout()
        self.centre_on(keep)
        self.refresh()

    def on_resize(self) -> None:
        if self.zoom == WHOLE:
            self._key = None
            self._ensure_layout()
        if self._look is not None and self._looked_from in (None, tuple(self.scroll_offset)):
            self.look_at(*self._look)      # NOTE [ Where the graph view looks ] rule 6

    def marks_now(self) -> list:
        """The marks the boxes drawn now show (NOTE [ Graph marks ] rule 4)."""
        self._ensure_layout()
        i = self.index
        ids, styles = [], {}
        for d in self._lay.rects:
            for nid in self._members.get(d, (d,)):
                ids.append(nid)
                styles[nid] = self._style_name(d)
        return marks_in_view(self.model, i, ids, styles, ("group",) if self._members else ())

    # -------------------------------------------------------------- one box

    def _totals(self, gid):
        t = self._tot.get(gid)
        if t is None:
            t = self._tot[gid] = self.folds.totals(gid, self.index, self.keep_freed)
        return t

    def _style_name(self, did) -> str:
        """The component class box ``did`` is drawn with (NOTE [ Folded module groups ] rule 3)."""
        if not is_group(did):
            return box_style(self.model, did, self.index, self.selected, self.current, self.lit)
        t = self._totals(did)
        if did == self.selected or self.selected in self._members.get(did, ()):
            return "graph--selected"
        if t.current or self.current in self._members.get(did, ()):
            return "graph--current"
        if self.lit and not self.lit.isdisjoint(self._members.get(did, ())):
            return "graph--lit"
        if t.state == "executed":
            return "graph--executed"
        return "graph--recomputed" if t.recomputed else "graph--pending"

    def _texts(self, did) -> tuple:
        if is_group(did):
            return box_texts(self._totals(did), did)
        return node_texts(self.model, did, self.index)

    def _border(self, did) -> str:
        if is_group(did):
            return DOUBLE if self._totals(did).recomputed else HEAVY
        return DOUBLE if self.model.recomputed(did, self.index) else SINGLE   # NOTE [ Graph marks ] rule 2

    # -------------------------------------------------------------- drawing

    def _style(self, did) -> Style:
        return self.get_component_rich_style(self._style_name(did))

    def render_line(self, y: int) -> Strip:
        self._ensure_layout()
        lay = self._lay
        width = self.size.width
        if self.overview and lay is not None and lay.rects:
            w, h = width, self.size.height
            key = (self._key, self.index, self.selected, self.current, self.lit, w, h, tuple(self.scroll_offset))
            if getattr(self, "_ov", None) is None or self._ov[0] != key:
                self._ov = (key, graph_overview.grid(self, w, h), graph_overview.frame(self, w, h))
            self._rows.drawn.pop(y, None)
            return graph_overview.render_line(self, y, w, h, self._ov[1], self._ov[2])
        if lay is None or not lay.rects:
            self._rows.drawn.pop(y, None)
            gone = len(self.model.shown(self.index, True))
            msg = (f"No live graph: {gone} node{'s' if gone != 1 else ''} freed (f shows them)." if gone
                   else "No graph yet: nodes appear here as forward runs.")
            lines = textwrap.wrap(msg, max(10, width - 1))   # the message wraps on a narrow panel
            if y < len(lines):
                return Strip([Segment(" " + lines[y], self.get_component_rich_style("graph--empty"))]).crop_extend(
                    0, width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        if self.zoom == WHOLE:
            self._rows.drawn.pop(y, None)
            return self._whole_line(y, width)
        return self._rows.strip(self, y)       # NOTE [ Graph rows ]

    def _whole_line(self, y: int, width: int) -> Strip:
        """A row at WHOLE: each box one mark in its colour (NOTE [ Graph zoom ] rule 3)."""
        blank = self.get_component_rich_style("graph--edge")
        segs = []
        for x in range(width):
            did = self._at.get((x, y))
            if did is None:
                segs.append(Segment(" ", blank))
            else:
                segs.append(Segment("▣" if is_group(did) else "■", self._style(did)))
        return Strip(segs, width).crop_extend(0, width, self.rich_style)

    # -------------------------------------------------------------- mouse

    def on_mouse_down(self, event) -> None:
        """A drag on the graph pans it (NOTE [ Graph zoom ] rule 4)."""
        self._dragged = False
        if event.button == 1 and not self.overview and self.zoom != WHOLE:
            self._drag = (event.screen_x, event.screen_y, *self.scroll_offset)
            self.capture_mouse()

    def on_mouse_move(self, event) -> None:
        if self._drag is None:
            return
        x0, y0, sx, sy = self._drag
        dx, dy = event.screen_x - x0, event.screen_y - y0
        if dx or dy:
            self._dragged = True
            self.scroll_to(max(0, sx - dx), max(0, sy - dy), animate=False, force=True, immediate=True)

    def on_mouse_up(self, event) -> None:
        if self._drag is not None:
            self._drag = None
            self.release_mouse()

    def on_click(self, event) -> None:
        if self._lay is None or self._dragged:       # the end of a drag selects nothing
            self._dragged = False
            return
        off = event.get_content_offset(self)
        if off is None:
            return
        if self.overview:                            # NOTE [ Graph overview ] rule 3
            x, y = graph_overview.point(self, off.x, off.y, self.size.width, self.size.height)
            vw, vh = self.scrollable_content_region.size
            self.overview = False
            self.scroll_to(max(0, x - vw // 2), max(0, y - vh // 2), animate=False, force=True)
            return
        if self.zoom == WHOLE:
            did = self._at.get((off.x, off.y))
        else:
            did = self._lay.node_at(off.x + int(self.scroll_offset.x), off.y + int(self.scroll_offset.y))
        if did is not None and (is_group(did) or self.model.state(did, self.index) != "future"):
            self.selected = did
            self.post_message(self.NodeClicked(did))

def _widest(rec) -> str:
    """The longest text the node's box will ever hold (sets its width, so the layout never moves)."""
    if rec.kind == "missing":
        return max(rec.name, "built before recording", key=len) + " "
    t = rec.tensor or {}
    if rec.is_leaf:
        name = f"leaf {t['name']}" if t.get("name") else "AccumulateGrad"
        return max(name, f"{shape(t.get('shape'), 'box')} {'grad ✓' if rec.runs else 'leaf'}", key=len) + " "
    widest = "✗ dropped 999.9 KiB" if rec.region is not None or rec.dropped_at is not None else "freed 999.9 KiB"
    second = ("↻ " if rec.recomputed_at is not None else "") + widest
    return max(rec.name, second, key=len) + " "


__all__ = ["GraphView", "box_style", "node_texts", "panel_nodes"]
