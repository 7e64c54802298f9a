"""The autograd graph as Graphviz DOT, with a legend, written in pure Python.

``graph_picture(trace, step=...)`` draws the graph a ``replay.model.TraceModel`` shows at
one step (``graph_source`` turns a ``replay.graph.Graph`` into DOT text);
``make_dot(tensor)`` draws a live tensor's graph (as torchviz does). Both return a
:class:`GraphPicture` with ``.source``, ``.render(path)`` and ``_repr_svg_()``. Styles are
listed once, in ``STYLES``, and the legend is built from the same table, so every style on
the picture is explained beside it.
"""
from __future__ import annotations

import re

from replay import words
from replay.graph import Graph, default_step, graph_at
from replay.model import TraceModel

from . import graph_layout as layout
from .dot_text import quote as _q
from .module_groups import alike_line, assign_modules, collapsed_instances, totals
from .picture import FORMATS, INSTALL_HINT, GraphPicture, GraphvizNotFound  # noqa: F401  (their home is picture.py)

# style name -> (node attributes, legend text, legend swatch: (fill, cell style, text))
STYLES = {
    "pending": ({"fillcolor": "#eeeeee"}, "grad_fn node: backward has not reached it yet",
                ("#eeeeee", "rounded", "MulBackward0")),
    "current": ({"fillcolor": "#ffca28", "penwidth": "3", "color": "#d84315"},
                "the node backward is running now", ("#ffca28", "rounded", "RUNNING NOW")),
    "executed": ({"fillcolor": "#a5d6a7"}, "backward has run this node",
                 ("#a5d6a7", "rounded", "executed")),
    "recomputed": ({"peripheries": "2", "color": "#8e24aa"},
                   "recomputed: rebuilt in backward by checkpointing (double purple border)",
                   ("#ffffff", "rounded", "recomputed")),
    "missing": ({"style": "rounded,dotted", "fillcolor": "#ffffff"},
                "node built before recording began (only its name is known)", ("#ffffff", "dotted", "?")),
    "leaf": ({"fillcolor": "#bbdefb", "color": "#1565c0"},
             "leaf tensor (parameter: its name) with its AccumulateGrad; green once the gradient is stored",
             ("#bbdefb", "rounded", "0.weight")),
    "output": ({"shape": "ellipse", "style": "filled", "fillcolor": "#b2ebf2"},
               "output tensor (backward starts here)", ("#b2ebf2", "rounded", "loss")),
    "saved": ({"shape": "note", "style": "filled", "fillcolor": "#ffcc80", "color": "#e65100"},
              "saved for backward: a storage some nodes keep (views of one storage drawn once)",
              ("#ffcc80", "solid", "saved 12 B")),
    "released": ({"shape": "note", "style": "dashed", "fillcolor": "#ffffff", "color": "#9e9e9e",
                  "fontcolor": "#757575"}, "saved tensor already released by backward",
                 ("#ffffff", "dashed", "released")),
    "dropped": ({"shape": "note", "style": "dashed,bold", "fillcolor": "#ffffff", "color": "#c62828",
                 "fontcolor": "#c62828"}, "activation dropped by checkpointing (not kept in forward)",
                ("#ffffff", "dashed", "dropped 12 B")),
    "module": ({"shape": "box3d", "style": "filled"}, "repeated module instance collapsed into one box "
               "(fill shows its backward progress; --expand-modules draws every node)",
               ("#eeeeee", "solid", "blocks.3")),
    "region": ({}, "checkpoint region (purple dashed frame)", ("#ffffff", "dashed", "region")),
}
EDGE_LEGEND = [
    ("#444444", "solid", "graph edge: data flows down the arrows in forward; gradients flow up them"),
    ("#e65100", "dashed", "a node keeps this saved tensor (grey dotted once released)"),
]

_STATE_FILL = {"pending": "#eeeeee", "current": "#ffca28", "executed": "#a5d6a7"}


def _attrs(d: dict) -> str:
    return ", ".join(f"{k}={_q(v)}" for k, v in d.items())


def _shape(dims) -> str:
    return words.shape(dims, "tuple")


def _html(s: str) -> str:
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _node_style(name: str, **extra) -> dict:
    a = dict(STYLES[name][0])
    a.update(extra)
    return a


# ------------------------------------------------------------------ labels
def _fn_label(n) -> str:
    lines = [n.name]
    if n.output is not None:
        o = n.output
        lines.append((f"{n.op} -> " if n.op else "") + f"{_shape(o.get('shape', []))} {words.kind(o)}")
    w = words.where(n.file, n.line)
    if w:
        lines.append(w)
    if n.state == "current":
        lines.append("RUNNING NOW")
    if n.recomputed:
        lines.append("recomputed")
    return "\n".join(lines)


def _leaf_label(n) -> str:
    t = n.tensor or {}
    name = t.get("name") or "leaf tensor"
    lines = [name, f"{_shape(t.get('shape', []))} {words.kind(t)} · {words.nbytes(t.get('bytes', 0))}",
             "AccumulateGrad"]
    if n.state == "current":
        lines.append("RUNNING NOW")
    if n.state in ("current", "executed"):
        lines.append("grad accumulated")
    return "\n".join(lines)


def _slot_line(slot, nodes) -> str:
    owner = nodes[slot.node].name if slot.node in nodes else f"node {slot.node}"
    return f"{owner}._saved_{slot.name} · {_shape(slot.shape)} {slot.dtype}"


# ------------------------------------------------------------------ the DOT
_SPINE_WEIGHT = 100
_NOTE_EDGE = {"live": 'style=dashed, color="#e65100", dir=none',
              "released": 'style=dotted, color="#9e9e9e", dir=none',
              "dropped": 'style=dashed, color="#c62828", dir=none'}


class _Builder:
    def __init__(self, state: Graph, collapse: bool, min_repeats: int, legend: bool, title: str | None,
                 total_steps: int | None):
        self.s = state
        self.lines: list[str] = []
        self.region_lines: dict[int, list] = {}   # checkpoint region -> lines inside its frame
        self.where: dict[str, int] = {}           # DOT id -> the checkpoint region it is drawn in
        self.notes: list = []                     # (note id, [(keeper id, edge attrs)]) for NOTE rule 4
        self.order: list[str] = []                # every DOT node id, in the order drawn
        self.used: set[str] = set()
        self.collapse = collapse
        self.min_repeats = min_repeats
        self.legend = legend
        self.title = title
        self.total_steps = total_steps

    def node(self, nid: str, label: str, style: str, region: int | None = None, **extra):
        self.used.add(style)
        self.order.append(nid)
        line = f"  {nid} [label={_q(label)}, {_attrs(_node_style(style, **extra))}];"
        if region is None:
            self.lines.append(line)
        else:
            self.where[nid] = region
            self.region_lines.setdefault(region, []).append(line)

    def build(self) -> str:
        s = self.s
        assign_modules(s)
        self.boxed = collapsed_instances(s, self.min_repeats) if self.collapse else {}
        head = ["digraph autograd {",
                f"  graph [rankdir=TB, fontname=Helvetica, fontsize=12, labelloc=t, nodesep=0.25, "
                f"ranksep=0.35, ordering=out, pack=true, packmode=\"array_tu{{columns}}\", label={_q(self._title())}];",
                '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10, height=0.3, '
                'fillcolor="#eeeeee", color="#424242"];',
                '  edge [color="#444444", arrowsize=0.7];']
        edges = self._edges()
        self.graph_edges = list(edges)
        outs = [n for n in s.output_nodes() if n.output is not None]
        self.spines = layout.spines(self._chain(), edges, [self._id(n.id) for n in outs])
        self.pos = layout.positions(self.spines)
        self.group = {v: f"spine{k}" for v, (k, _i) in self.pos.items()}
        spine_outs: dict = {}      # spine -> the output tensor drawn below it

        self._graph_nodes()
        # collapsed module boxes
        self._module_boxes()
        # graph edges; the spine's are heavy, skips along it come first (NOTE [ Graph picture layout ] rule 2)
        pos = self.pos
        heights = layout.side_heights(self.spines, edges)
        skip = [e for e in edges if e[0] in pos and e[1] in pos and pos[e[0]][0] == pos[e[1]][0]
                and pos[e[1]][1] > pos[e[0]][1] + 1]
        skip_set = set(skip)
        for src, dst in skip + [e for e in edges if e not in skip_set]:
            if src in pos and pos.get(dst) == (pos[src][0], pos[src][1] + 1):
                # a spine edge into another checkpoint frame leaves a rank for the frame's own inputs (rule 6)
                gap = (f", minlen={max(2, heights[dst] + 1)}" if self.where.get(src) != self.where.get(dst)
                       else "")
                self.lines.append(f"  {src} -> {dst} [weight={_SPINE_WEIGHT}{gap}];")
            else:
                self.lines.append(f"  {src} -> {dst};")
        # output tensors
        for n in outs:
            o = n.output
            tid = f"t{o['id']}"
            label = f"{o.get('name') or 'output'}\n{_shape(o.get('shape', []))} {words.kind(o)}"
            k = pos.get(self._id(n.id), (None,))[0]
            on_spine = k is not None and self._id(n.id) == self.spines[k][-1] and k not in spine_outs
            if on_spine:
                spine_outs[k] = tid
            self.node(tid, label, "output", **({"group": self.group[self._id(n.id)]} if on_spine else {}))
            w = f" [weight={_SPINE_WEIGHT}]" if on_spine else ""
            self.lines.append(f"  {self._id(n.id)} -> {tid}{w};")
            edges.append((self._id(n.id), tid))
        self._saved()
        layout_edges = edges + self._ranks()
        self._region_frames()
        # packing order: the graph's components, most graph nodes first, then the legend (rule 7)
        comps = sorted(layout.components(self.order, layout_edges),
                       key=lambda c: -sum(v.startswith(("n", "m_")) for v in c))
        for i, comp in enumerate(comps):
            self.lines.append(f"  {comp[0]} [sortv={i}];")
        if self.legend:
            self.lines.append(self._legend(len(comps)))
        head[1] = head[1].replace("{columns}", str(len(comps) + self.legend), 1)
        return "\n".join(head + self.lines + ["}"]) + "\n"

    def _graph_nodes(self):
        """grad_fn, leaf and placeholder nodes, each in its checkpoint frame when it has one."""
        s = self.s
        for n in sorted(s.nodes.values(), key=lambda n: (n.seq, n.id)):
            if n.id in self.boxed:
                continue
            nid = f"n{n.id}"
            grp = {"group": self.group[nid]} if nid in self.group else {}
            if n.kind == "leaf":
                extra = (dict(STYLES["current"][0]) if n.state == "current" else
                         {"fillcolor": "#a5d6a7"} if n.state == "executed" else {})
                self.node(nid, _leaf_label(n), "leaf", **extra)
            elif n.kind == "missing":
                self.node(nid, f"{n.name}\n(built before recording)", "missing", **grp)
            else:
                extra = dict(grp)
                if n.recomputed:
                    self.used.add("recomputed")
                    extra.update(STYLES["recomputed"][0])
                    if n.state == "current":
                        extra["penwidth"] = "3"
                region = n.region if n.region is not None and n.region in s.regions else None
                self.node(nid, _fn_label(n), n.state, region, **extra)

    def _region_frames(self):
        """One dashed cluster per checkpoint region, holding the lines drawn inside it."""
        s = self.s
        for rid, rl in sorted(self.region_lines.items()):
            r = s.regions[rid]
            txt = f"checkpoint region {rid}\ndropped {words.nbytes(r.dropped_bytes)} in forward"
            if r.recomputed:
                txt += ", recomputed in backward"
            self.used.add("region")
            self.lines.append(f"  subgraph cluster_region_{rid} {{")
            self.lines.append(f'    label={_q(txt)}; style=dashed; color="#8e24aa"; fontcolor="#6a1b9a"; '
                              "fontsize=10;")
            self.lines.extend("  " + x for x in rl)
            self.lines.append("  }")

    def _edges(self) -> list:
        """Graph edges between drawn ids, deduplicated after mapping nodes into boxes, in node order."""
        s = self.s
        seen, out = set(), []
        for n in sorted(s.nodes.values(), key=lambda n: (n.seq, n.id)):
            dst = self._id(n.id)
            for nx, _nr in n.next:
                if nx is None or nx not in s.nodes:
                    continue
                src = self._id(nx)
                if src == dst or (src, dst) in seen:
                    continue
                seen.add((src, dst))
                out.append((src, dst))
        return out

    def _chain(self) -> dict:
        """Drawn ids that may be on the spine (grad_fn nodes and boxes) -> creation order."""
        out: dict = {}
        for n in self.s.nodes.values():
            if n.kind == "leaf" or (n.kind == "missing" and n.name == "AccumulateGrad"):
                continue
            nid = self._id(n.id)
            out[nid] = max(out.get(nid, n.seq), n.seq)
        return out

    def _ranks(self) -> list:
        """Rank groups and flat ordering edges (NOTE [ Graph picture layout ] rules 3, 4, 6); returns the edges."""
        groups: dict[str, list] = {}       # anchor id -> [(member, flat edge or None)]
        flat: list = []
        anchors = layout.left_anchors(self.spines, [i for i in self.order if i.startswith(("n", "m_"))],
                                      self.graph_edges)
        member_of: dict[str, str] = {}
        for v, sp in anchors.items():
            if self.where.get(v) == self.where.get(sp):
                groups.setdefault(sp, []).append(v)
                member_of[v] = sp
                flat.append(f"  {v} -> {sp} [style=invis];")
        pos = self.pos
        for note, keepers in self.notes:
            on_spine = [k for k in keepers if k[0] in pos]
            first = min(on_spine, key=lambda k: pos[k[0]]) if on_spine else keepers[0]
            anchor = member_of.get(first[0], first[0])
            if self.where.get(note) == self.where.get(first[0]) == self.where.get(anchor):
                groups.setdefault(anchor, []).append(note)
                member_of.setdefault(note, anchor)
                flat.append(f"  {first[0]} -> {note} [{first[1]}];")
                rest = [k for k in keepers if k is not first]
                flat.extend(f"  {note} -> {k} [{a}, constraint=false];" for k, a in rest)
            else:
                flat.extend(f"  {note} -> {k} [{a}];" for k, a in keepers)
        for anchor, members in groups.items():
            line = "  {rank=same; " + "; ".join([anchor] + members) + ";}"
            r = self.where.get(anchor)
            (self.lines if r is None else self.region_lines[r]).append(line)
        self.lines.extend(flat)
        return [(v, a) for v, a in member_of.items()] + [(n, k[0]) for n, ks in self.notes for k in ks]

    def _id(self, node_id: int) -> str:
        inst = self.boxed.get(node_id)
        if inst is not None:
            return "m_" + re.sub(r"\W", "_", inst)
        return f"n{node_id}"

    def _title(self) -> str:
        if self.title is not None:
            return self.title
        s = self.s
        c = s.counts()
        leaf_st = s.leaf_storages()
        live = sum(st.bytes for sid, st in s.storages.items()
                   if sid not in leaf_st and any(x.state in ("live", "recomputed") for x in st.slots))
        step = f"step {s.step}" + (f" of {self.total_steps - 1}" if self.total_steps else "")
        where = "backward" if s.in_backward else s.phase
        return (f"autograd graph at {step} ({where}) · {c['nodes']} nodes, {c['executed']} executed · "
                f"saved tensors hold {words.nbytes(live)} beyond the leaves' own storage")

    def _module_boxes(self):
        s = self.s
        members: dict[str, list] = {}
        for nid, inst in self.boxed.items():
            members.setdefault(inst, []).append(s.nodes[nid])
        sig = {inst: tuple(n.name for n in sorted(ns, key=lambda n: n.seq) if n.kind == "fn")
               for inst, ns in members.items()}
        self.alike: dict[tuple, list] = {}       # node sequence -> its instances, for the legend
        for inst, ns in sorted(members.items(), key=lambda kv: min(n.seq for n in kv[1])):
            self.alike.setdefault(sig[inst], []).append(inst)
            t = totals(s, [n.id for n in ns])     # as the app's folded box counts them
            fns_n, run, live, released, dropped, state = t.nodes, t.executed, t.saved, t.released, t.dropped, t.state
            title = f"checkpoint {inst}" if inst.startswith("region ") else f"module {inst}"
            lines = [title,
                     f"collapsed: {_plural(fns_n, 'grad_fn node')} · {_plural(t.params, 'parameter')}",
                     "ops: " + t.ops,
                     f"saved: {words.nbytes(live)} held beyond parameters"
                     + (f", {words.nbytes(released)} released" if released else "")]
            if dropped:
                lines.append(f"checkpointed: {words.nbytes(dropped)} dropped")
            if t.recomputed:
                lines.append("recomputed")
            lines.append(f"backward: {run}/{fns_n} nodes run")
            extra = {"fillcolor": _STATE_FILL[state]}
            if state == "current":
                extra.update(penwidth="3", color="#d84315")
            nid = self._id(ns[0].id)
            if nid in self.group:
                extra["group"] = self.group[nid]
            self.node(nid, "\n".join(lines), "module", **extra)

    def _saved(self):
        s = self.s
        leaf_st = s.leaf_storages()
        for sid, slots in sorted(s.saved_by_storage().items()):
            shown = [sl for sl in slots if sl.node not in self.boxed]
            if not shown:
                continue
            st = s.storages.get(sid)
            held = [sl for sl in shown if sl.state in ("live", "recomputed")]
            lines = [_slot_line(sl, s.nodes) for sl in shown[:4]]
            if len(shown) > 4:
                lines.append(f"... and {len(shown) - 4} more")
            nbytes = st.bytes if st is not None else shown[0].bytes
            leaf = leaf_st.get(sid)
            if leaf is not None:
                lines.append(f"= storage of {leaf.label_name}: no extra bytes")
            else:
                cat = st.category if st is not None else "?"
                lines.append(f"storage {words.nbytes(nbytes)} · {cat}")
            if not held:
                freed = st is not None and not st.live
                lines.append("released · memory freed" if freed else "released · storage still in use")
            if any(sl.state == "recomputed" for sl in shown):
                lines.append("recomputed in backward")
            style = "saved" if held else "released"
            sid_s = f"s{sid}"
            regions = {s.nodes[sl.node].region for sl in shown if sl.node in s.nodes}
            r = regions.pop() if len(regions) == 1 else None
            region = r if r is not None and r in s.regions and leaf is None else None
            extra = dict(STYLES["recomputed"][0]) if any(sl.state == "recomputed" for sl in shown) and held else {}
            if extra:
                self.used.add("recomputed")
            self.node(sid_s, "\n".join(lines), style, region, **extra)
            self.notes.append((sid_s, [(self._id(sl.node), _NOTE_EDGE["live" if sl.state in ("live", "recomputed")
                                                                      else "released"]) for sl in shown]))
        # dropped activations (checkpointing): one box per dropped storage, inside its region;
        # released slots whose storage is unknown (a live graph after backward): one box each
        dropped: dict = {}
        for n in sorted(s.nodes.values(), key=lambda n: n.seq):
            if n.id in self.boxed:
                continue
            for i, sl in enumerate(n.saved):
                if sl.storage is None and sl.state == "released":
                    rid = f"r{n.id}_{i}"
                    self.node(rid, f"{_slot_line(sl, s.nodes)}\nreleased", "released")
                    self.notes.append((rid, [(f"n{n.id}", _NOTE_EDGE["released"])]))
                if sl.state == "dropped":
                    key = f"d{sl.dropped_storage}" if sl.dropped_storage is not None else f"d{n.id}_{i}"
                    dropped.setdefault(key, []).append(sl)
        for did, slots in dropped.items():
            lines = ["dropped by checkpoint"] + [_slot_line(sl, s.nodes) for sl in slots[:4]]
            if len(slots) > 4:
                lines.append(f"... and {len(slots) - 4} more")
            lines.append(f"{words.nbytes(slots[0].bytes)} not kept")
            region = s.nodes[slots[0].node].region
            self.node(did, "\n".join(lines), "dropped", region if region in s.regions else None)
            self.notes.append((did, [(f"n{sl.node}", _NOTE_EDGE["dropped"]) for sl in slots]))

    def _legend(self, sortv: int) -> str:
        order = ["pending", "current", "executed", "recomputed", "missing", "leaf", "output", "saved",
                 "released", "dropped", "module", "region"]
        always = {"pending", "executed", "current", "leaf", "output", "saved", "released"}
        rows = ['<TR><TD COLSPAN="2" BORDER="0"><B>legend</B></TD></TR>']
        for k in order:
            if k not in always and k not in self.used:
                continue
            fill, cstyle, text = STYLES[k][2]
            color = STYLES[k][0].get("color", "#424242")
            rows.append(f'<TR><TD BGCOLOR="{fill}" COLOR="{color}" STYLE="{cstyle}">{_html(text)}</TD>'
                        f'<TD BORDER="0" ALIGN="LEFT">{_html(STYLES[k][1])}</TD></TR>')
        for insts in getattr(self, "alike", {}).values():
            rows.append(f'<TR><TD BORDER="0"></TD><TD BORDER="0" ALIGN="LEFT">{_html(alike_line(insts))}</TD></TR>')
        for color, estyle, text in EDGE_LEGEND:
            arrow = "&#8594;" if estyle == "solid" else "- - -"
            rows.append(f'<TR><TD BORDER="0"><FONT COLOR="{color}" POINT-SIZE="14"><B>{arrow}</B></FONT></TD>'
                        f'<TD BORDER="0" ALIGN="LEFT">{_html(text)}</TD></TR>')
        table = ('<TABLE BORDER="1" COLOR="#9e9e9e" CELLBORDER="1" CELLSPACING="3" CELLPADDING="3">'
                 + "".join(rows) + "</TABLE>")
        return f"  legend [shape=plaintext, style=solid, fontsize=9, sortv={sortv}, label=<{table}>];"


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def graph_source(state: Graph, *, collapse: bool = True, min_repeats: int = 3, legend: bool = True,
                 title: str | None = None, total_steps: int | None = None) -> str:
    """DOT text for a :class:`replay.graph.Graph` (see ``STYLES`` for what each style means)."""
    return _Builder(state, collapse, min_repeats, legend, title, total_steps).build()


def graph_picture(trace, step: int | None = None, *, expand_modules: bool = False, min_repeats: int = 3,
                  legend: bool = True, title: str | None = None) -> GraphPicture:
    """The autograd graph of a trace (a Trace, an event list or a TraceModel) at ``step``.

    The default step is just before the first backward (``replay.graph.default_step``).
    """
    model = trace if isinstance(trace, TraceModel) else TraceModel(
        trace.events if hasattr(trace, "events") else list(trace), getattr(trace, "meta", None))
    n = len(model)
    if step is None:
        step = default_step(model.events)
    elif not -n <= step < n:
        raise IndexError(f"step {step} is out of range: the trace has {n} events (0..{n - 1})")
    elif step < 0:
        step += n
    state = graph_at(model, step if step is not None else -1)
    src = graph_source(state, collapse=not expand_modules, min_repeats=min_repeats, legend=legend, title=title,
                       total_steps=n)
    return GraphPicture(src, state)
