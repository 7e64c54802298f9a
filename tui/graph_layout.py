"""Lay out an autograd graph as a layered DAG on a character grid (box-drawing characters).

NOTE [ Layered layout on a character grid ]
1. Edges go from a node to its next_functions (loss at the top, leaves at the
   bottom). A node's layer is its longest path from a root (a node nobody
   points to), so every edge points down.
2. An edge spanning several layers passes through one-column dummy nodes, one per
   layer it crosses, drawn as a vertical line.
3. Order within a layer: creation order, then a few barycenter sweeps (down and up)
   to cut crossings. X: left to right, each node pulled towards the mean
   center of its parents, never overlapping its left neighbour.
4. Between two layers is a 3-row channel: down from the parent's bottom, across,
   down into the child. Every cell keeps direction bits (up/down/left/right);
   lines that meet merge into one box-drawing character (├ ┬ ┼ ...).
5. The layout depends only on which nodes are given: the view lays out the nodes
   that exist at the cursor (so the graph grows as forward runs, and stays put
   through backward) and draws each box with its state at the cursor.
6. A ``Scale`` sets the box height, channel rows, gap and box widths: ``FULL`` boxes
   (borders, two lines of text) or ``COMPACT`` one-row boxes over a one-row channel,
   where an edge goes across in the single row between the layers.
7. ``up=True`` mirrors the picture top to bottom, as ``glassgrad render`` draws it:
   leaves on top, the loss at the bottom, the arrow head ▼ on the top border of
   the node that consumes the input (forward's data flow; gradients flow up).
"""
from __future__ import annotations

from dataclasses import dataclass, field

BOX_H = 4          # top border, two text lines, bottom border
CHANNEL = 3
GAP = 2
MIN_W, MAX_W = 12, 30     # 30: the longest grad_fn names (CompiledFunctionBackward) fit whole

U, D, L, R = 1, 2, 4, 8
_CH = {U | D: "│", L | R: "─", D | R: "┌", D | L: "┐", U | R: "└", U | L: "┘", U | D | R: "├",
       U | D | L: "┤", D | L | R: "┬", U | L | R: "┴", U | D | L | R: "┼", U: "│", D: "│", L: "─", R: "─"}


@dataclass(frozen=True)
class Scale:
    """Box and channel sizes of one zoom level (rule 6)."""
    box_h: int = BOX_H
    channel: int = CHANNEL
    gap: int = GAP
    min_w: int = MIN_W
    max_w: int = MAX_W

    @property
    def ystep(self) -> int:
        return self.box_h + self.channel


FULL = Scale()
COMPACT = Scale(box_h=1, channel=1, gap=1, min_w=3, max_w=16)


@dataclass
class Layout:
    width: int = 0
    height: int = 0
    rects: dict = field(default_factory=dict)      # node id -> (x, y, w, h)
    edges: dict = field(default_factory=dict)      # (x, y) -> direction bits
    cell_edges: dict = field(default_factory=dict)  # (x, y) -> [(bits, (parent id, child id))]
    arrows: dict = field(default_factory=dict)     # (x, y) of an arrow head (child's top border) -> edge
    layer_of: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)       # y -> [node ids whose box covers row y]

    def edge_char(self, x, y, visible=None) -> str | None:
        """The character at (x, y); with ``visible`` (a set of node ids) only edges between visible nodes."""
        if visible is None:
            bits = self.edges.get((x, y))
        else:
            bits = 0
            for b, (a, c) in self.cell_edges.get((x, y), ()):
                if a in visible and c in visible:
                    bits |= b
        return _CH.get(bits) if bits else None

    def node_at(self, x, y):
        for nid in self.rows.get(y, ()):
            bx, _, bw, _ = self.rects[nid]
            if bx <= x < bx + bw:
                return nid
        return None


def box_width(label: str, scale: Scale = FULL) -> int:
    return max(scale.min_w, min(scale.max_w, len(label) + 2))


def layout(nodes: dict, labels: dict | None = None, scale: Scale = FULL, up: bool = False) -> Layout:
    """Lay out ``nodes`` {id: [child ids...]} (children = next_functions present in the dict).

    ``labels`` {id: text} sets box widths (default: the id as text). Node order in
    the dict is the creation order. ``scale``: rule 6; ``up``: rule 7. Ids that are
    tuples are reserved for the layout's own dummy nodes.
    """
    BOX_H, CHANNEL, GAP = scale.box_h, scale.channel, scale.gap
    labels = labels or {}
    ids = list(nodes)
    idset = set(ids)
    children = {n: [c for c in nodes[n] if c in idset and c != n] for n in ids}
    parents: dict = {n: [] for n in ids}
    for n in ids:
        for c in children[n]:
            parents[c].append(n)

    # 1. layers by longest path from the roots (Kahn's order over edges)
    indeg = {n: len(parents[n]) for n in ids}
    layer = {n: 0 for n in ids}
    ready = [n for n in ids if indeg[n] == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for c in children[n]:
            layer[c] = max(layer[c], layer[n] + 1)
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if seen < len(ids):  # a cycle should not happen in autograd; keep going without it
        pass

    # 2. dummy nodes for long edges
    edges = []  # (upper, lower) pairs between adjacent layers; dummies are ("d", k)
    dummy_layer = {}
    k = 0
    origin = {}  # dummy -> the original edge it carries
    for n in ids:
        for c in children[n]:
            prev = n
            for lay in range(layer[n] + 1, layer[c]):
                d = ("d", k)
                k += 1
                dummy_layer[d] = lay
                origin[d] = (n, c)
                edges.append((prev, d))
                prev = d
            edges.append((prev, c))
    all_layer = dict(layer)
    all_layer.update(dummy_layer)
    nlayers = max(all_layer.values(), default=-1) + 1
    order = [[] for _ in range(nlayers)]
    creation = {n: i for i, n in enumerate(ids)}
    for n in sorted(all_layer, key=lambda v: (creation.get(v, 1 << 30), str(v))):
        order[all_layer[n]].append(n)
    # roots were created last (the loss): show the newest first in each layer
    for lay in order:
        lay.reverse()
    ups: dict = {}
    downs: dict = {}
    for a, b in edges:
        downs.setdefault(a, []).append(b)
        ups.setdefault(b, []).append(a)

    # 3. barycenter sweeps
    def sweep(rng, nbrs):
        for li in rng:
            pos = {v: i for i, v in enumerate(order[li - 1 if nbrs is ups else li + 1])}
            here = {v: i for i, v in enumerate(order[li])}

            def key(v, pos=pos, here=here):
                ps = [pos[p] for p in nbrs.get(v, ()) if p in pos]
                return (sum(ps) / len(ps) if ps else here[v], here[v])
            order[li].sort(key=key)

    for _ in range(2):
        sweep(range(1, nlayers), ups)
        sweep(range(nlayers - 2, -1, -1), downs)

    # 4. x positions
    width_of = {v: (1 if isinstance(v, tuple) else box_width(labels.get(v, str(v)), scale)) for v in all_layer}
    xs: dict = {}
    for li in range(nlayers):
        cursor = 0
        for v in order[li]:
            ps = [xs[p] + width_of[p] / 2 for p in ups.get(v, ()) if p in xs]
            want = int(sum(ps) / len(ps) - width_of[v] / 2) if ps else cursor
            x = max(cursor, want)
            xs[v] = x
            cursor = x + width_of[v] + GAP
    out = Layout()
    ystep = BOX_H + CHANNEL
    for v, li in all_layer.items():
        y = li * ystep
        if isinstance(v, tuple):
            for yy in range(y, y + BOX_H):
                _bits(out, xs[v], yy, U | D, origin[v])
        else:
            out.rects[v] = (xs[v], y, width_of[v], BOX_H)
            out.layer_of[v] = li
            for yy in range(y, y + BOX_H):
                out.rows.setdefault(yy, []).append(v)
    # 5. edges through the channels
    outs: dict = {}
    ins: dict = {}
    for a, b in edges:
        outs.setdefault(a, []).append(b)
        ins.setdefault(b, []).append(a)

    def ports(v, others, side):
        x0, w = xs[v], width_of[v]
        if w == 1:
            return {o: x0 for o in others}
        srt = sorted(others, key=lambda o: xs[o] + width_of[o] / 2)
        n = len(srt)
        return {o: x0 + 1 + (w - 2) * (i + 1) // (n + 1) for i, o in enumerate(srt)}

    out_port = {v: ports(v, outs[v], "bottom") for v in outs}
    in_port = {v: ports(v, ins[v], "top") for v in ins}
    for a, b in edges:
        own = origin.get(a) or origin.get(b) or (a, b)
        xa, xb = out_port[a][b], in_port[b][a]
        ya = all_layer[a] * ystep + BOX_H  # first channel row
        if CHANNEL == 1:                   # rule 6: across in the one row between the layers
            r0 = r1 = r2 = ya
        else:
            r0, r1, r2 = ya, ya + 1, ya + 2
            _bits(out, xa, r0, U | D, own)
        if xa == xb:
            _bits(out, xa, r1, U | D, own)
        else:
            lo, hi = sorted((xa, xb))
            _bits(out, xa, r1, U | (R if xb > xa else L), own)
            _bits(out, xb, r1, D | (L if xb > xa else R), own)
            for x in range(lo + 1, hi):
                _bits(out, x, r1, L | R, own)
        if CHANNEL != 1:
            _bits(out, xb, r2, U | D, own)
        if not isinstance(b, tuple) and not up:
            out.arrows[(xb, r2 + 1)] = own
        if up and not isinstance(a, tuple):      # rule 7: the head on the consumer's (mirrored) top
            out.arrows[(xa, ya - 1)] = own
    out.width = max((xs[v] + width_of[v] for v in all_layer), default=0) + 1
    out.height = max(nlayers * ystep - CHANNEL, 0)
    return _mirror(out) if up else out


def _mirror(lay: Layout) -> Layout:
    """Rule 7: the same layout upside down (rows reversed, up and down swapped in every line)."""
    last = lay.height - 1
    out = Layout(width=lay.width, height=lay.height, layer_of=lay.layer_of)

    def flip(bits):
        return (bits & (L | R)) | (U if bits & D else 0) | (D if bits & U else 0)
    out.edges = {(x, last - y): flip(b) for (x, y), b in lay.edges.items()}
    out.cell_edges = {(x, last - y): [(flip(b), o) for b, o in v] for (x, y), v in lay.cell_edges.items()}
    out.arrows = {(x, last - y): e for (x, y), e in lay.arrows.items()}
    for nid, (x, y, w, h) in lay.rects.items():
        y2 = last - (y + h - 1)
        out.rects[nid] = (x, y2, w, h)
        for yy in range(y2, y2 + h):
            out.rows.setdefault(yy, []).append(nid)
    return out


def _bits(out: Layout, x, y, bits, owner):
    out.edges[(x, y)] = out.edges.get((x, y), 0) | bits
    out.cell_edges.setdefault((x, y), []).append((bits, owner))


def box_lines(w: int, texts, top_marks=(), bottom_marks=()) -> list:
    """The 4 rows of a box ``w`` wide holding two lines of text; marks are x offsets for ▼ / ┬."""
    inner = w - 2
    top = ["─"] * inner
    bot = ["─"] * inner
    for x in top_marks:
        if 0 < x < w - 1:
            top[x - 1] = "▼"
    for x in bottom_marks:
        if 0 < x < w - 1:
            bot[x - 1] = "┬"
    rows = ["┌" + "".join(top) + "┐"]
    for t in list(texts)[:2] + [""] * (2 - len(list(texts)[:2])):
        t = t if len(t) <= inner else t[: inner - 1] + "…"
        rows.append("│" + t.ljust(inner) + "│")
    rows.append("└" + "".join(bot) + "┘")
    return rows


def to_text(lay: Layout, texts: dict) -> list:
    """Plain-text picture of a layout: ``texts`` {node id: (line1, line2)}."""
    grid = [[" "] * lay.width for _ in range(lay.height)]
    for (x, y), bits in lay.edges.items():
        if 0 <= y < lay.height and 0 <= x < lay.width:
            grid[y][x] = _CH.get(bits, "?")
    for nid, (x, y, w, h) in lay.rects.items():
        tops = [ax - x for (ax, ay) in lay.arrows if ay == y and x <= ax < x + w]
        bots = [ex - x for (ex, ey) in lay.edges if ey == y + h and x <= ex < x + w]
        for dy, row in enumerate(box_lines(w, texts.get(nid, (str(nid), "")), tops, bots)):
            grid[y + dy][x:x + w] = list(row)
    return ["".join(r).rstrip() for r in grid]
