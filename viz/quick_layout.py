"""A graph picture that always finishes: glassgrad's own layered layout, when Graphviz takes too long.

NOTE [ Pictures that always finish ]
1. ``render`` gives Graphviz's ``dot`` a time budget (``--time-budget``; by default 10 s,
   less for large graphs: ``viz.picture.default_budget``). Past it, ``dot`` is stopped and the picture is drawn here instead, with a note on it
   saying so and how to give Graphviz longer.
2. The layout is linear in the graph's size: a node's rank is its depth from the graph's
   outputs (the longest path, found in one pass over a topological order), a leaf sits one
   rank under its first consumer, nodes keep the order they were made in within a rank,
   and edges are straight lines. Shared weights
   and long chains, which make Graphviz's crossing minimisation slow, cost nothing extra.
3. SVG is written directly; PNG and PDF by Graphviz's ``neato -n2`` with every node pinned
   where the layout put it (no layout work), or with matplotlib when that fails.
4. A graph over ``MAX_NODES`` nodes is refused with what to do instead (an earlier
   ``--step``, a ``--phase``, or the DOT text with a .dot file name).
"""
from __future__ import annotations

import html

from .dot_text import quote as _q

MAX_NODES = 20000
BOX_W, BOX_H, GAP_X, GAP_Y = 150, 26, 16, 30
COLORS = {"fn": "#eeeeee", "leaf": "#cfe2f3", "missing": "#f4cccc"}


def layout(state) -> dict:
    """Rule 2: {node id: (rank, position in rank)}."""
    nodes = state.nodes
    if len(nodes) > MAX_NODES:
        raise ValueError(f"the graph has {len(nodes):,} nodes, too many to draw (at most {MAX_NODES:,}): choose an "
                         "earlier --step or a --phase, or write the DOT text with a .dot file name")
    children = {i: [c for c, _ in n.next if c in nodes] for i, n in nodes.items()}
    indeg = dict.fromkeys(nodes, 0)
    for kids in children.values():
        for c in kids:
            indeg[c] += 1
    order = [i for i in nodes if indeg[i] == 0]
    rank = dict.fromkeys(order, 0)
    k = 0
    while k < len(order):                         # Kahn's order: each node after all its consumers
        i = order[k]
        k += 1
        for c in children[i]:
            rank[c] = max(rank.get(c, 0), rank[i] + 1)
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
    for i in nodes:                               # a cycle cannot happen in autograd; stay total anyway
        rank.setdefault(i, 0)
    first_user: dict = {}
    for i in order:                               # a leaf (a shared weight) sits under its first consumer
        for c in children[i]:
            if nodes[c].kind == "leaf":
                first_user[c] = min(first_user.get(c, rank[i]), rank[i])
    for c, r in first_user.items():
        rank[c] = r + 1
    rows: dict = {}
    for i in sorted(nodes, key=lambda i: (rank[i], nodes[i].kind == "leaf", nodes[i].seq)):
        rows.setdefault(rank[i], []).append(i)
    return {i: (r, x) for r, ids in rows.items() for x, i in enumerate(ids)}


def _label(n) -> str:
    name = n.label_name if n.kind == "leaf" else n.name
    return name if len(name) <= 22 else name[:21] + "…"


def svg(state, note: str) -> str:
    """Rule 3: the picture as an SVG document."""
    pos = layout(state)
    width = (max((x for _, x in pos.values()), default=0) + 1) * (BOX_W + GAP_X) + GAP_X
    height = (max((r for r, _ in pos.values()), default=0) + 1) * (BOX_H + GAP_Y) + GAP_Y + 40

    def xy(i):
        r, x = pos[i]
        return GAP_X + x * (BOX_W + GAP_X), 40 + r * (BOX_H + GAP_Y)

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="Helvetica" '
            f'font-size="11">'), f'<text x="{GAP_X}" y="18" font-size="12">{html.escape(note)}</text>']
    for i, n in state.nodes.items():
        x0, y0 = xy(i)
        for c, _ in n.next:
            if c in pos:
                x1, y1 = xy(c)
                out.append(f'<line x1="{x0 + BOX_W / 2}" y1="{y0 + BOX_H}" x2="{x1 + BOX_W / 2}" y2="{y1}" '
                           'stroke="#666" stroke-width="0.8"/>')
    for i, n in state.nodes.items():
        x0, y0 = xy(i)
        out.append(f'<rect x="{x0}" y="{y0}" width="{BOX_W}" height="{BOX_H}" rx="5" '
                   f'fill="{COLORS.get(n.kind, "#eeeeee")}" stroke="#424242"/>')
        out.append(f'<text x="{x0 + 6}" y="{y0 + 17}">{html.escape(_label(n))}</text>')
    out.append("</svg>")
    return "\n".join(out)


def positioned_dot(state, note: str) -> str:
    """The layout as DOT with every node pinned (``pos="x,y!"``), for ``neato -n2``: no layout work."""
    pos = layout(state)
    lines = ["digraph quick {", f'  graph [splines=line, label={_q(note)}, labelloc=t, fontname=Helvetica];',
             '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10, width=2.0, height=0.3, '
             'fixedsize=true, color="#424242"];', '  edge [arrowsize=0.5, color="#666666"];']
    for i, n in state.nodes.items():
        r, x = pos[i]
        lines.append(f'  n{i} [label={_q(_label(n))}, fillcolor="{COLORS.get(n.kind, "#eeeeee")}", '
                     f'pos="{x * (BOX_W + GAP_X)},{-r * (BOX_H + GAP_Y)}!"];')
    for i, n in state.nodes.items():
        for c, _ in n.next:
            if c in pos:
                lines.append(f"  n{i} -> n{c};")
    lines.append("}")
    return "\n".join(lines)


def draw(state, note: str, path: str, fmt: str, timeout: float = 60.0) -> None:
    """Rule 3: PNG/PDF through Graphviz's ``neato -n2`` on the pinned layout (no layout work); through
    matplotlib when that is not available."""
    import shutil
    import subprocess
    exe = shutil.which("neato")
    if exe is not None:
        try:
            done = subprocess.run([exe, "-n2", f"-T{fmt}", "-o", path], input=positioned_dot(state, note).encode(),
                                  capture_output=True, timeout=timeout, check=False)
            if done.returncode == 0:
                return
        except subprocess.TimeoutExpired:
            pass
    _draw_matplotlib(state, note, path, fmt)


def _draw_matplotlib(state, note: str, path: str, fmt: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch
    pos = layout(state)
    cols = max((x for _, x in pos.values()), default=0) + 1
    rows = max((r for r, _ in pos.values()), default=0) + 1
    fig = plt.figure(figsize=(min(200, max(9.0, 1.6 * cols + 1)), min(200, 0.55 * rows + 1)), dpi=72)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(-0.5, cols)
    ax.set_ylim(rows + 0.5, -1.2)
    ax.axis("off")
    ax.text(0, -0.8, note, fontsize=10)
    from matplotlib.collections import LineCollection, PatchCollection
    segs = [((x + 0.45, r + 0.3), (pos[c][1] + 0.45, pos[c][0]))
            for i, n in state.nodes.items() for (r, x) in [pos[i]] for c, _ in n.next if c in pos]
    ax.add_collection(LineCollection(segs, colors="#666666", linewidths=0.6))
    boxes = [FancyBboxPatch((pos[i][1], pos[i][0]), 0.9, 0.3, boxstyle="round,pad=0.02") for i in state.nodes]
    ax.add_collection(PatchCollection(boxes, facecolors=[COLORS.get(n.kind, "#eeeeee") for n in state.nodes.values()],
                                      edgecolors="#424242", linewidths=0.6))
    for i, n in state.nodes.items():
        r, x = pos[i]
        ax.text(x + 0.04, r + 0.2, _label(n), fontsize=7)
    fig.savefig(path, format=fmt)
    plt.close(fig)
