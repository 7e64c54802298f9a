"""Textual's strips without the reference cycle ``Strip.divide`` makes (NOTE [ Strips without a cycle ]).

NOTE [ Strips without a cycle ]
1. textual's ``Strip.divide(cuts)`` keeps its answer in a cache on the strip. Cut only at its
   own end, the answer is ``[the strip]``, so the strip holds itself: textual's compositor
   divides every line it puts on screen that way, and each such strip (with its seven caches
   and its segments) is then freed only by the cyclic collector, ~2,000 objects a step that
   pile up in the oldest generation (NOTE [ GC between keys ] in tui/gcpause.py).
2. ``patch()`` wraps ``divide``: that one answer, ``[self]``, is given without keeping it (it
   costs nothing to make again); any other cut goes to textual's own ``divide``, cache and all.
   Every answer is what textual gives; reference counting frees a dropped strip at once.
3. The app module calls it once at import; calling it again does nothing, and a textual whose
   ``Strip`` has no ``divide`` is left as it is (pinned textual 8.x).
"""
from __future__ import annotations

from textual.strip import Strip


def patch() -> bool:
    """Rule 2, once; True when ``Strip.divide`` is (now) the wrapped one."""
    own = getattr(Strip, "divide", None)
    if own is None:
        return False
    if getattr(own, "_no_cycle", False):
        return True

    def divide(self, cuts):
        length = self.cell_length
        cuts = [cut for cut in cuts if cut <= length]
        if cuts == [length]:
            return [self]
        return own(self, cuts)

    divide._no_cycle = True
    divide.__doc__ = own.__doc__
    Strip.divide = divide
    return True
