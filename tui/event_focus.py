"""Which graph node an event is about, and which nodes the graph view should show around it.

NOTE [ Where the graph view looks ]
1. An event about a node (``op``, ``leaf``, ``execute``, ``accumulate``, ``release``, ``pack``,
   ``node_free``...) is about the node its ``node`` field names.
2. A recompute op builds a node that the model merges onto the forward node it repeats
   (NOTE [ One trace model ] rule 4): its events (the op, the saves that node makes) are about
   that forward node, so the cursor lights the box the learner already knows.
3. From a ``recompute_begin`` to its ``recompute_end``, the view looks at the whole checkpoint
   region: its forward nodes shown at the cursor are centred together when they are not all
   on screen. When they do not fit, the view keeps one node whole: the node the event is
   about, else the node the recompute rebuilt last, else the region's first (rebuilt first),
   so stepping through a recompute moves the view with it and never back.
4. Otherwise the view looks at the event's node, centred when it is off screen.
5. An event about no node (an ``alloc``, a ``free``, a mark) keeps in view the node backward is
   running at it, else the newest node shown by then (where forward is), so a jump to a memory
   peak or a lesson step lands on the graph's working end, never on an empty part of it.
6. When the panel's size changes (a legend, the inspector or a lesson's question took or gave
   room), the view looks again at what it last looked at, unless the learner scrolled since:
   the cursor's node stays in view whenever the layout around the graph settles, and a view
   the learner moved by hand stays where they put it.
"""
from __future__ import annotations

import bisect

from replay.memory import of_kinds


def event_node_id(e: dict):
    """The node id an event's ``node`` field names (an op event carries the node's info), or None."""
    n = e.get("node")
    return n.get("id") if isinstance(n, dict) else n


class EventFocus:
    """NOTE [ Where the graph view looks ], over one TraceModel (rebuilt when the model grows)."""

    def __init__(self, model) -> None:
        self.model = model
        self._n = -1
        self._alias: dict = {}        # a recompute op's own node id -> the forward node it rebuilt (rule 2)
        self._spans: list = []        # (begin index, end index, region id) of recomputes (rule 3)
        self._begins: list = []
        self._done: list = []         # spans whose recompute_end arrived
        self._open: dict = {}         # region -> its recompute_begin index, until its recompute_end
        self._seen: dict = {}         # region -> how many of its recompute entries are folded in

    def _sync(self) -> None:
        """Fold in the events added since the last call (a streaming run grows the model)."""
        m = self.model
        if self._n == len(m):
            return
        start, self._n = max(0, self._n), len(m)
        for reg in m.regions().values():
            for j, target in reg.recompute[self._seen.get(reg.id, 0):]:
                own = event_node_id(m.events[j])
                if own is not None and own != target:
                    self._alias[own] = target
            self._seen[reg.id] = len(reg.recompute)
        for j, e in of_kinds(m.events, ("recompute_begin", "recompute_end"), start):
            k = e.get("kind")
            if k == "recompute_begin":
                self._open[e.get("region")] = j
            elif k == "recompute_end" and e.get("region") in self._open:
                self._done.append((self._open.pop(e.get("region")), j, e.get("region")))
        # a recompute still running spans to the newest event
        self._spans = sorted(self._done + [(j, len(m) - 1, r) for r, j in self._open.items()])
        self._begins = [s[0] for s in self._spans]

    def node(self, i: int):
        """The graph node the event at i is about (rules 1-2), or None."""
        self._sync()
        if not 0 <= i < len(self.model):
            return None
        nid = event_node_id(self.model.events[i])
        nid = self._alias.get(nid, nid)
        return nid if nid in self.model.nodes else None

    def region(self, i: int):
        """The checkpoint region whose recompute is running at event i (rule 3), or None."""
        self._sync()
        k = bisect.bisect_right(self._begins, i) - 1
        for b, end, r in reversed(self._spans[max(0, k - 3): k + 1]):   # the innermost first (nesting is rare)
            if b <= i <= end:
                return r
        return None

    def region_anchor(self, i: int):
        """The node a recompute's events not about a node keep in view (rule 3): the forward node
        the region's recompute rebuilt last by event i, else the region's first node (rebuilt first)."""
        r = self.region(i)
        reg = self.model.regions().get(r) if r is not None else None
        if reg is None:
            return None
        done = [nid for j, nid in reg.recompute if j <= i]
        if done:
            return done[-1]
        return reg.nodes[0] if reg.nodes else None

    def nearby(self, i: int):
        """The node an event about no node keeps in view (rule 5), or None."""
        m = self.model
        cur = m.current(i)
        if cur is not None:
            return cur
        shown = [n for n in m.shown(i) if m.nodes[n].created <= i]
        return max(shown, key=lambda n: m.nodes[n].created) if shown else None

    def region_nodes(self, i: int) -> list:
        """The forward nodes of the region recomputing at i that the graph shows at i (rule 3)."""
        r = self.region(i)
        if r is None:
            return []
        reg = self.model.regions().get(r)
        shown = self.model.shown(i)
        return [nid for nid in (reg.nodes if reg else ()) if nid in shown]


__all__ = ["EventFocus", "event_node_id"]
