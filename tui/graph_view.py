"""GraphView: the autograd graph at the current step, drawn with box-drawing characters.

Boxes appear as forward creates nodes, light up as backward executes them; the
second line of a box tells what the node saved (and whether it was released or
dropped by checkpointing). Scroll with the mouse wheel or the arrow keys when
focused; click a box to inspect the node.
"""
from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .format import human_bytes
from .graph_layout import layout
from .model import TraceModel


def node_texts(rec, i: int) -> tuple:
    """Two text lines for a node's box at step i."""
    t = rec.tensor or {}
    first = rec.name if not rec.is_leaf else (f"leaf {t['name']}" if t.get("name") else "AccumulateGrad")
    if rec.is_leaf:
        shape = "×".join(str(d) for d in t.get("shape", [])) or "scalar"
        second = f"[{shape}] {'grad ✓' if rec.state(i) in ('executed', 'current') else 'leaf'}"
        return first, second
    st = rec.saved_state(i)
    b = human_bytes(rec.dropped_bytes if st == "dropped" else rec.saved_bytes())
    dropped = f"✗ dropped {b}" if rec.dropped_bytes else "✗ not kept"
    second = {"none": "saves nothing", "kept": f"saved {b}", "released": f"freed {b}",
              "dropped": dropped, "packed": f"packed {b}"}[st]
    if rec.recomputed:
        second = "↻ " + second
    return first, second


MAX_NODES = 400   # more than this and the view lays out the part of the graph around the cursor


class GraphView(ScrollView, can_focus=True):
    """The graph panel (a Line API widget: only visible rows are drawn)."""

    COMPONENT_CLASSES = {
        "graph--edge", "graph--future", "graph--alive", "graph--current", "graph--executed",
        "graph--selected", "graph--dropped", "graph--recomputed", "graph--leaf", "graph--empty",
    }

    index: reactive[int] = reactive(0)
    selected: reactive[int | None] = reactive(None)
    current: reactive[int | None] = reactive(None)   # the node the event at the cursor is about

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
        self._vis, self._vis_at = set(), None

    # -------------------------------------------------------------- layout

    def _ensure_layout(self) -> None:
        nodes, i = self.model.nodes, self.index
        ids = frozenset(n for n in self.model.graph_at(i) if nodes[n].created <= i)  # the graph grows as forward runs
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
        self._vis_at = None
        self.virtual_size = Size(self._lay.width, self._lay.height)

    def _visible(self) -> set:
        if self._vis_at != (self.index, self._key):
            self._vis = {n for n, r in self._recs.items() if r.created <= self.index}
            self._vis_at = (self.index, self._key)
        return self._vis

    def watch_index(self, old: int, new: int) -> None:
        self._ensure_layout()
        self.refresh()

    def watch_selected(self) -> None:
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

    def scroll_to_node(self, nid: int) -> None:
        self._ensure_layout()
        r = self._lay.rects.get(nid) if self._lay else None
        rec = self._recs.get(nid)
        if r and rec is not None and rec.created <= self.index:
            self.scroll_to_region(Region(*r), animate=False, force=True)

    # -------------------------------------------------------------- drawing

    def _style(self, rec) -> Style:
        i = self.index
        st = rec.state(i)
        if rec.id == self.selected and st != "future":
            return self.get_component_rich_style("graph--selected")
        if st == "future":
            return self.get_component_rich_style("graph--future")
        if st == "current" or rec.id == self.current:
            return self.get_component_rich_style("graph--current")
        if rec.saved_state(i) == "dropped" and st != "executed":
            return self.get_component_rich_style("graph--dropped")
        if rec.recomputed and st != "executed":
            return self.get_component_rich_style("graph--recomputed")
        if st == "executed":
            return self.get_component_rich_style("graph--executed")
        if rec.is_leaf:
            return self.get_component_rich_style("graph--leaf")
        return self.get_component_rich_style("graph--alive")

    def render_line(self, y: int) -> Strip:
        self._ensure_layout()
        lay = self._lay
        sx, sy = self.scroll_offset
        width = self.size.width
        row = y + sy
        if lay is None or not lay.rects:
            if y == 0:
                msg = " No graph yet: nodes appear here as forward runs."
                return Strip([Segment(msg[:width], self.get_component_rich_style("graph--empty"))]).extend_cell_length(
                    width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        edge_style = self.get_component_rich_style("graph--edge")
        vis = self._visible()
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
            rec = self._recs[nid]
            bx, by, bw, bh = lay.rects[nid]
            dy = row - by
            inner = bw - 2
            if dy in (0, bh - 1):
                line = ["─"] * inner
                if dy == 0:
                    for x in range(bx + 1, bx + bw - 1):
                        e = lay.arrows.get((x, row))
                        if e and e[0] in vis and e[1] in vis:
                            line[x - bx - 1] = "▼"
                    text = "┌" + "".join(line) + "┐"
                else:
                    for x in range(bx + 1, bx + bw - 1):
                        if lay.edge_char(x, row + 1, vis):
                            line[x - bx - 1] = "┬"
                    text = "└" + "".join(line) + "┘"
            else:
                t = node_texts(rec, i)[dy - 1]
                t = t if len(t) <= inner else t[: inner - 1] + "…"
                text = "│" + t.ljust(inner) + "│"
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
        return Segment(text, self._style(self._recs[owner]))

    def on_click(self, event) -> None:
        if self._lay is None:
            return
        off = event.get_content_offset(self)
        if off is None:
            return
        x = off.x + int(self.scroll_offset.x)
        y = off.y + int(self.scroll_offset.y)
        nid = self._lay.node_at(x, y)
        if nid is not None and self._recs[nid].state(self.index) != "future":
            self.selected = nid
            self.post_message(self.NodeClicked(nid))


def _widest(rec) -> str:
    """The longest text the node's box will ever hold (sets its width, so the layout never moves)."""
    name = node_texts(rec, -1)[0]
    widest = "✗ dropped 999.9 KiB" if rec.region is not None or rec.dropped is not None else "freed 999.9 KiB"
    second = ("↻ " if rec.recomputed else "") + widest
    if rec.is_leaf:
        second = node_texts(rec, 1 << 60)[1]
    return max(name, second, key=len) + " "


__all__ = ["GraphView", "node_texts"]
