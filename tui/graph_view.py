"""GraphView: the autograd graph at the current step, drawn with box-drawing characters.

It draws the graph ``replay.model.TraceModel`` shows at the cursor (NOTE [ One trace
model ]), the same nodes in the same states as the Graphviz picture (``w``). Boxes appear
as forward creates nodes, light up as backward executes them; the second line of a box
tells what the node saved (and whether it was released or dropped by checkpointing).
Scroll with the mouse wheel or the arrow keys when focused; click a box to inspect the node.
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

from . import graph_overview

from replay.model import TraceModel
from replay.words import nbytes, shape

from .graph_layout import layout
from .graph_marks import marks_in_view

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


def box_style(model: TraceModel, nid, i: int, selected=None, current=None) -> str:
    """The component class a node's box is drawn with at step i."""
    st = model.state(nid, i)
    if nid == selected and st != "future":
        return "graph--selected"
    if model.freed(nid, i):
        return "graph--freed"
    if st == "future":
        return "graph--future"
    if st == "current" or nid == current:
        return "graph--current"
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
MAX_NODES = 400   # more than this and the view lays out the part of the graph around the cursor


class GraphView(ScrollView, can_focus=True):
    """The graph panel (a Line API widget: only visible rows are drawn)."""

    COMPONENT_CLASSES = {
        "graph--edge", "graph--future", "graph--pending", "graph--current", "graph--executed",
        "graph--selected", "graph--dropped", "graph--recomputed", "graph--leaf", "graph--missing", "graph--empty",
        "graph--freed",
    }

    index: reactive[int] = reactive(0)
    selected: reactive[int | None] = reactive(None)
    current: reactive[int | None] = reactive(None)   # the node the event at the cursor is about
    keep_freed: reactive[bool] = reactive(False)       # f: draw dead nodes greyed, not leave them out
    overview: reactive[bool] = reactive(False)         # v: the whole graph scaled into the panel (graph_overview.py)

    def watch_overview(self) -> None:
        self._ov = None
        self.refresh()

    def _style_name(self, nid) -> str:
        return box_style(self.model, nid, self.index, self.selected, self.current)

    class NodeClicked(Message):
        def __init__(self, node_id: int) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, model: TraceModel, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self._key = None
        self._lay = None
        self._recs = {}
        self._pending_look = None

    # -------------------------------------------------------------- layout

    def _ensure_layout(self) -> None:
        i = self.index
        ids = self.model.shown(i, self.keep_freed)   # the graph grows as forward runs, nodes leave as they die
        key = (ids, i if len(ids) > MAX_NODES else None)
        if key == self._key and self._lay is not None:
            return
        self._key = key
        order = sorted(ids, key=lambda n: self.model.nodes[n].created)
        if len(order) > MAX_NODES:  # a huge graph: the nodes created nearest the cursor
            order.sort(key=lambda n: abs(self.model.nodes[n].created - self.index))
            order = sorted(order[:MAX_NODES], key=lambda n: self.model.nodes[n].created)
            self.border_subtitle = f"{MAX_NODES} of {len(ids)} nodes, nearest the cursor"
        else:
            self.border_subtitle = ""
        recs = {nid: self.model.nodes[nid] for nid in order}
        graph = {nid: [c for c, _, _ in r.next if c is not None] for nid, r in recs.items()}
        labels = {nid: _widest(r) for nid, r in recs.items()}
        self._lay = layout(graph, labels)
        self._recs = recs
        self.virtual_size = Size(self._lay.width, self._lay.height)

    def watch_index(self, old: int, new: int) -> None:
        self._ensure_layout()
        self.refresh()

    def watch_selected(self) -> None:
        self.refresh()

    def watch_keep_freed(self) -> None:
        self._key = None
        self._ensure_layout()
        self.refresh()

    def watch_current(self) -> None:
        self.refresh()

    def on_mount(self) -> None:
        self._ensure_layout()

    def reload(self) -> None:
        """The model grew (a streaming run): lay out again."""
        self._key = None
        self._ensure_layout()
        self.refresh()

    def look_at(self, nid, around=(), keep=None) -> None:
        """Centre the boxes ``around`` (a recompute's region), else node ``nid``, when they are not all
        on screen; when they do not fit, keep ``nid`` (else ``keep``) whole: NOTE [ Where the graph
        view looks ] rules 3-4 (in tui/event_focus.py)."""
        self._ensure_layout()
        lay = self._lay
        if lay is None:
            return
        nid = nid if nid in self._recs and nid in lay.rects else keep
        own = Region(*lay.rects[nid]) if nid in self._recs and nid in lay.rects else None
        boxes = [Region(*lay.rects[n]) for n in around if n in self._recs and n in lay.rects]
        target = Region.from_union(boxes) if boxes else own
        if target is None:
            return
        vw, vh = self.scrollable_content_region.size
        if vw <= 0 or vh <= 0:           # not laid out yet: look once the size is known
            self._pending_look = (nid, tuple(around), keep)
            return
        self._pending_look = None
        anchor = own or (boxes[0] if boxes else None)   # the region's first node: recomputed first
        view = Region(*self.scroll_offset, vw, vh)
        fits = target.width <= vw and target.height <= vh
        if view.contains_region(target) or (not fits and view.contains_region(anchor)):
            return
        # centre the target; when it does not fit, as near the centre as keeps the anchor whole
        x = target.x + target.width // 2 - vw // 2
        y = target.y + target.height // 2 - vh // 2
        x = min(max(x, anchor.right - vw), anchor.x)
        y = min(max(y, anchor.bottom - vh), anchor.y)
        self.scroll_to(max(0, x), max(0, y), animate=False, force=True, immediate=True)

    def on_resize(self) -> None:
        if self._pending_look is not None:
            self.look_at(*self._pending_look)

    def marks_now(self) -> list:
        """The marks the boxes drawn now show (NOTE [ Graph marks ] rule 4)."""
        self._ensure_layout()
        i = self.index
        styles = {nid: box_style(self.model, nid, i, self.selected, self.current) for nid in self._recs}
        return marks_in_view(self.model, i, list(self._recs), styles)

    # -------------------------------------------------------------- drawing

    def _style(self, nid) -> Style:
        return self.get_component_rich_style(box_style(self.model, nid, self.index, self.selected, self.current))

    def render_line(self, y: int) -> Strip:
        self._ensure_layout()
        lay = self._lay
        if self.overview and lay is not None and lay.rects:
            w, h = self.size.width, self.size.height
            key = (self._key, self.index, self.selected, self.current, w, h, tuple(self.scroll_offset))
            if getattr(self, "_ov", None) is None or self._ov[0] != key:
                self._ov = (key, graph_overview.grid(self, w, h), graph_overview.frame(self, w, h))
            return graph_overview.render_line(self, y, w, h, self._ov[1], self._ov[2])
        sx, sy = self.scroll_offset
        width = self.size.width
        row = y + sy
        if lay is None or not lay.rects:
            gone = len(self.model.shown(self.index, True))
            msg = (f"No live graph: {gone} node{'s' if gone != 1 else ''} freed (f shows them)." if gone
                   else "No graph yet: nodes appear here as forward runs.")
            lines = textwrap.wrap(msg, max(10, width - 1))   # the message wraps on a narrow panel
            if y < len(lines):
                return Strip([Segment(" " + lines[y], self.get_component_rich_style("graph--empty"))]).crop_extend(
                    0, width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        edge_style = self.get_component_rich_style("graph--edge")
        vis = self._recs
        cells = [" "] * lay.width
        owner = [None] * lay.width
        for x in range(lay.width):
            ch = lay.edge_char(x, row, vis)
            if ch:
                cells[x] = ch
        i = self.index
        for nid in lay.rows.get(row, ()):
            if nid not in vis:
                continue
            bx, by, bw, bh = lay.rects[nid]
            dy = row - by
            inner = bw - 2
            b = DOUBLE if self.model.recomputed(nid, i) else SINGLE   # NOTE [ Graph marks ] rule 2
            if dy in (0, bh - 1):
                line = [b[1]] * inner
                if dy == 0:
                    for x in range(bx + 1, bx + bw - 1):
                        e = lay.arrows.get((x, row))
                        if e and e[0] in vis and e[1] in vis:
                            line[x - bx - 1] = "▼"
                    text = b[0] + "".join(line) + b[2]
                else:
                    for x in range(bx + 1, bx + bw - 1):
                        if lay.edge_char(x, row + 1, vis):
                            line[x - bx - 1] = b[6]
                    text = b[4] + "".join(line) + b[5]
            else:
                t = node_texts(self.model, nid, i)[dy - 1]
                t = t if len(t) <= inner else t[: inner - 1] + "…"
                text = b[3] + t.ljust(inner) + b[3]
            for k, ch in enumerate(text):
                cells[bx + k] = ch
                owner[bx + k] = nid
        segs = []
        run_text, run_owner = "", object()
        for x in range(lay.width):
            o = owner[x]
            if o != run_owner and run_text:
                segs.append(self._seg(run_text, run_owner, edge_style))
                run_text = ""
            run_owner = o
            run_text += cells[x]
        if run_text:
            segs.append(self._seg(run_text, run_owner, edge_style))
        strip = Strip(segs, lay.width)
        return strip.crop_extend(sx, sx + width, self.rich_style)

    def _seg(self, text, owner, edge_style):
        if owner is None:
            return Segment(text, edge_style)
        return Segment(text, self._style(owner))

    def on_click(self, event) -> None:
        if self._lay is None:
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
        x = off.x + int(self.scroll_offset.x)
        y = off.y + int(self.scroll_offset.y)
        nid = self._lay.node_at(x, y)
        if nid is not None and self.model.state(nid, self.index) != "future":
            self.selected = nid
            self.post_message(self.NodeClicked(nid))


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
