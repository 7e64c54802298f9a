"""The graphs of a TraceModel (NOTE [ One trace model ] rules 6-9, 12, 13): kept as they are folded in.

A model tracks each graph still open (its members, how many of them are not settled, the first
backward that spent it) as events arrive; a graph whose every node settled is retired: its Graph
is made once and kept, its nodes packed (NOTE [ Settled nodes ] in replay/node_table.py). So
``graphs()`` builds only the open graphs again, however many retired before.
"""
from __future__ import annotations

import bisect
from array import array

from .nodes import INF, Graph


def settled(n) -> bool:
    """NOTE [ Settled nodes ] rule 1."""
    return n.freed_at is not None and (not n.mortal or n.died is not None)


def join(m, nid) -> None:
    """A new grad_fn node (or placeholder) ``nid``: a graph of its own until an edge joins it (rule 6)."""
    m._parent[nid] = nid
    m._members[nid] = [nid]
    m._open[nid] = 1


def merged(m, ra, rb) -> None:
    """Root ``rb`` was joined under root ``ra``: its members, open count and spend move there (rule 13)."""
    a, b = m._members.pop(ra, [ra]), m._members.pop(rb, [rb])
    if len(a) < len(b):
        a, b = b, a
    a.extend(b)
    m._members[ra] = a
    m._open[ra] = m._open.pop(ra, 1) + m._open.pop(rb, 1)
    s = m._spent_at.pop(rb, INF)
    if s < m._spent_at.get(ra, INF):
        m._spent_at[ra] = s
    m._waiting.discard(rb)
    if m._open[ra] == 0:
        m._waiting.add(ra)


def spend(m, end, ran) -> None:
    """A backward without retain_graph that ran ``ran`` ended at ``end`` (rule 7)."""
    for nid in ran:
        if nid in m._parent:
            r = m._find(nid)
            if end < m._spent_at.get(r, INF):
                m._spent_at[r] = end


def named(m, n, step: int) -> None:
    """``n``'s edges to leaves count (``step`` 1) or stop counting (-1) as an open graph naming them."""
    namers, live = m._namers, m.nodes.live
    for x, _, _ in n.next:
        if x is not None and (step > 0 or x in namers):
            leaf = live.get(x)
            if leaf is not None and leaf.is_leaf:
                c = namers.get(x, 0) + step
                if c > 0:
                    namers[x] = c
                else:
                    namers.pop(x, None)
                    try_pack_leaf(m, leaf)


def settling(m, n, was: bool) -> None:
    """``n`` changed; if it became settled its graph has one open member less (rule 13)."""
    if was or not settled(n):
        return
    if n.is_leaf:
        try_pack_leaf(m, n)
        return
    if n.id not in m._parent:
        return
    r = m._find(n.id)
    m._open[r] = m._open.get(r, 1) - 1
    if m._open[r] == 0:
        m._waiting.add(r)
        if m._depth[-1][1] == 0:
            retire_waiting(m)


def retire_waiting(m) -> None:
    """Retire the graphs whose members all settled, once no backward runs (rule 13)."""
    for r in sorted(m._waiting):
        if m._parent.get(r) == r and m._open.get(r) == 0:
            retire(m, r)
    m._waiting.clear()


def retire(m, root) -> None:
    """Make the Graph of the settled graph ``root`` once and keep it; its leaves keep where they joined
    it; its nodes are packed (rule 13)."""
    live = m.nodes.live
    ms = [live[x] for x in m._members[root]]
    if any(x.is_leaf for x in ms):
        return                    # a placeholder that became a leaf: left open
    g = graph_of(m, root, ms)
    del m._members[root], m._open[root]
    m._spent_at.pop(root, None)
    kept_joins = m._kept_joins
    for x, j in g.joins.items():
        leaf = live.get(x)
        if leaf is not None and leaf.is_leaf:
            kept_joins.setdefault(x, []).append(j)
            leaf.joins = sorted(kept_joins[x])
    g.pack()
    m._kept.append(g)
    for x in ms:
        del m._parent[x.id]
        x.joins = [x.created]
    for x in ms:
        named(m, x, -1)
        if m._pack:
            m.nodes.pack(x)


def try_pack_leaf(m, leaf) -> None:
    """Pack a settled leaf no open graph names (NOTE [ Settled nodes ] rule 2)."""
    nid = leaf.id
    if (m._pack and leaf.freed_at is not None and nid not in m._namers and nid not in m._unnamed
            and m.nodes.live.get(nid) is leaf):
        leaf.joins = sorted(m._kept_joins.get(nid, ()))
        if m.nodes.pack(leaf):
            m._kept_joins.pop(nid, None)


def graph_of(m, root, ms) -> Graph:
    """The Graph of the members ``ms`` of one graph (rules 6-7, 9)."""
    nodes = m.nodes.live
    joins = {x.id: x.created for x in ms}
    for x in ms:
        for c, _, _ in x.next:
            leaf = nodes.get(c) if c is not None else None
            if leaf is not None and leaf.is_leaf:
                j = leaf.created if leaf.first_namer == x.id else x.created
                joins[c] = min(joins.get(c, j), j)
    mortal = [x for x in ms if x.mortal]
    died = max((x.died for x in mortal), default=None) if all(x.died is not None for x in mortal) else None
    fns = [x for x in ms if x.kind == "fn"]
    if fns and all(x.freed_at is not None for x in fns):     # rule 9: every node of it died
        gone = max(x.freed_at for x in fns)
        died = gone if died is None else min(died, gone)
    return Graph(min(joins.values()), m._spent_at.get(root, INF), INF if died is None else died, joins, bool(fns))


def build(m) -> list:
    """Every graph (rules 6-8): the retired ones as kept, the open ones built now, by start (rule 13)."""
    live = m.nodes.live
    out = list(m._kept)
    fresh = []
    for root, ids in m._members.items():
        ms = [live[x] for x in ids]
        ms = [x for x in ms if not x.is_leaf]
        if ms:
            fresh.append(graph_of(m, root, ms))
    for nid in m._unnamed:      # a leaf no op named: a graph of its own, over at once
        n = live.get(nid)
        if n is None or not n.is_leaf:
            continue
        fresh.append(Graph(n.created, n.created, INF, {nid: n.created}, False))
    out += fresh
    out.sort(key=lambda g: g.first)
    m._firsts = firsts = array("q", [g.first for g in out])
    for g in out:
        g.hide = min(next_start(firsts, g.spent), max(g.died, next_start(firsts, g.first)))
        g.hide_kept = min(next_start(firsts, g.spent), next_start(firsts, g.died))
    joins: dict = {}
    for g in fresh:
        for nid, j in g.joins.items():
            joins.setdefault(nid, []).append(j)
    kept = m._kept_joins
    for nid, js in joins.items():
        n = live.get(nid)
        if n is not None:
            n.joins = sorted(kept.get(nid, []) + js)
    m._graph_roots = set(m._members)          # rule 12
    return out


def next_start(firsts, i):
    """The first graph start after event i (inf when none)."""
    k = bisect.bisect_right(firsts, i) if i != INF else len(firsts)
    return firsts[k] if k < len(firsts) else INF
