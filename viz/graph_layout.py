"""Where the graph picture puts its nodes: the spine, the side of each node, the connected components.

Pure Python on node ids and edges (no Graphviz); ``graph_dot`` turns the answers into DOT.

NOTE [ Graph picture layout ]
1. The *spine* is the longest chain of grad_fn nodes (a collapsed module box counts
   as one node; AccumulateGrad never does) that ends at an output: the main data
   path from the input down to the loss. Each connected part of the graph (two
   graphs drawn at one step) has its own spine. Ties go to the predecessor built
   first: a layer's data input exists before the layer makes its parameter ops
   (``weight.t()``, a slice of ``in_proj_weight``).
2. Spine nodes (and the output tensor below the last one) share ``group="spineK"``
   and their edges get a heavy ``weight``: Graphviz keeps them on one vertical
   line, so a deep network reads top to bottom instead of drifting right. An
   edge that skips along the spine (a residual connection) is written before the
   others, so (rule 5) it runs down the left, with the inputs, and leaves the
   notes on the right undisturbed.
3. A node off the spine whose consumers are all on one spine (a parameter, its
   TBackward0, the last node of a side branch) is ranked with the spine node just
   above its first consumer and placed left of it (a flat invisible edge
   ``node -> spine``): inputs come in from the left.
4. A saved-tensor note is ranked with the node that keeps it (the topmost spine
   keeper when the spine keeps it, else the first keeper) and placed right of it
   (the edge is written ``keeper -> note``, a flat edge). Its lines to other
   keepers do not constrain ranks. So notes sit on the right, beside their layer.
5. Graphviz may reorder a rank against flat edges while it removes crossings;
   ``ordering=out`` (out-edges keep the order they are written in) keeps it to
   the order rules 3 and 4 ask for in practice. It is a preference, not a proof:
   tests check the positions Graphviz computes.
6. A rank group never mixes nodes of different checkpoint frames (Graphviz cannot
   rank a node with one outside its cluster): such a node is left where Graphviz
   puts it, and a note keeps the plain ``note -> keeper`` edge (above its keeper).
   A spine edge into another frame leaves room (``minlen``) for the new frame's
   side inputs that start at leaves (``weight -> TBackward0 -> addmm`` needs two
   ranks), at least one rank: two frames never share a rank, and no parameter sits
   beside the frame above (frames side by side would push the spine sideways).
7. The legend is not connected to the graph. The picture is packed (``pack``,
   ``packmode="array_tuN"``, ``sortv``): each connected component is laid out on
   its own, the one with most graph nodes first, the legend last, top-aligned in
   one row of N, so the legend sits beside the graph without taking (and
   stretching) one of its ranks.
"""
from __future__ import annotations


def spine(chain: dict, edges, ends: list) -> list:
    """The longest chain (rule 1), top to bottom.

    ``chain``: node id -> sort key (creation order) of the nodes that may be on the spine;
    ``edges``: (src, dst) pairs (src is an input of dst); ``ends``: candidate last nodes in
    preference order (outputs); when none is in ``chain``, any node may end the spine.
    """
    preds: dict = {v: [] for v in chain}
    succs: dict = {v: [] for v in chain}
    for a, b in edges:
        if a in chain and b in chain and a != b:
            preds[b].append(a)
            succs[a].append(b)
    # longest path by Kahn's algorithm; nodes on a cycle (never in a real graph) get no depth
    indeg = {v: len(p) for v, p in preds.items()}
    ready = sorted((v for v, d in indeg.items() if d == 0), key=chain.get)
    depth: dict = {}
    while ready:
        v = ready.pop()
        depth[v] = 1 + max((depth[p] for p in preds[v] if p in depth), default=0)
        for w in succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    cands = [v for v in ends if v in depth] or list(depth)
    if not cands:
        return []
    end = max(cands, key=lambda v: depth[v])       # first of the deepest, in the given order
    out = [end]
    seen = {end}
    v = end
    while True:
        ps = [p for p in preds[v] if p in depth and p not in seen]
        if not ps:
            break
        v = max(ps, key=lambda p: (depth[p], -chain[p]))
        seen.add(v)
        out.append(v)
    out.reverse()
    return out


def spines(chain: dict, edges, ends: list) -> list:
    """One spine per connected part of the chain nodes (several graphs in one picture), largest part first."""
    parts = components(list(chain), [(a, b) for a, b in edges if a in chain and b in chain])
    parts.sort(key=len, reverse=True)
    out = []
    for part in parts:
        sub = {v: chain[v] for v in part}
        out.append(spine(sub, edges, [v for v in ends if v in sub]))
    return out


def positions(spine_list: list) -> dict:
    """Spine node -> (which spine, index from the top)."""
    return {v: (k, i) for k, sp in enumerate(spine_list) for i, v in enumerate(sp)}


def left_anchors(spine_list: list, nodes, edges) -> dict:
    """Rule 3: off-spine node -> the spine node whose rank (and left side) it takes."""
    pos = positions(spine_list)
    cons: dict = {}
    for a, b in edges:
        cons.setdefault(a, []).append(b)
    out = {}
    for v in nodes:
        if v in pos:
            continue
        cs = cons.get(v)
        if not cs or any(c not in pos for c in cs) or len({pos[c][0] for c in cs}) != 1:
            continue
        k, i = min(pos[c] for c in cs)
        if i >= 1:
            out[v] = spine_list[k][i - 1]
    return out


def side_heights(spine_list: list, edges) -> dict:
    """Spine node -> how many ranks its side inputs rooted at leaves need above it (rule 6).

    ``weight -> TBackward0 -> addmm`` needs 2; a side chain that starts at a spine node
    needs none (the spine above already makes room for it).
    """
    pos = positions(spine_list)
    preds: dict = {}
    for a, b in edges:
        preds.setdefault(b, []).append(a)
    memo: dict = {}

    def height(v, depth=0):       # ranks v and its leaf-rooted inputs take; None if a spine node feeds it
        if v in memo:
            return memo[v]
        memo[v] = None            # a cycle (never in a real graph) counts as rooted at the spine
        ps = preds.get(v, [])
        if any(p in pos for p in ps) or depth > 500:
            return None
        hs = [height(p, depth + 1) for p in ps]
        memo[v] = None if any(h is None for h in hs) else 1 + max(hs, default=0)
        return memo[v]

    out = {}
    for v in pos:
        hs = [height(p) for p in preds.get(v, []) if p not in pos]
        out[v] = max((h for h in hs if h is not None), default=0)
    return out


def components(nodes, edges) -> list:
    """Connected components (edge direction ignored), each a list of nodes in the order given."""
    parent = {v: v for v in nodes}

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for a, b in edges:
        if a in parent and b in parent:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra
    groups: dict = {}
    for v in nodes:
        groups.setdefault(find(v), []).append(v)
    return list(groups.values())
