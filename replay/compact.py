"""Events of a followed run held compactly: one copy of each key and short string for the whole stream.

NOTE [ A followed run's events ]
1. ``json.loads`` makes new key strings for every event, so a run followed event by event
   holds "seq", "phase", "kind", "storage", ... and values such as "forward" or "cpu" once
   per event: about half of what its events weigh.
2. A model folded from a stream (``TraceModel()``, then ``extend``) rebuilds each event's
   dicts with interned keys and interned strings of up to :data:`SHORT` characters (names,
   kinds, devices, dtypes), the same values in less memory. A model made from a whole
   trace keeps the trace's event objects (NOTE [ One trace model ] rule 11).
3. A model following ``glassgrad run`` keeps no event once folded in (NOTE [ A followed run ]
   in replay/index.py); what its nodes and slots keep of them is compact all the same.
"""
from __future__ import annotations

import sys

SHORT = 64


def compact(v, intern=sys.intern):
    """``v`` (a JSON value) with interned keys and short strings (rule 2)."""
    t = type(v)
    if t is dict:
        return {intern(k) if type(k) is str else k: compact(x) for k, x in v.items()}
    if t is list:
        return [compact(x) for x in v]
    if t is str and len(v) <= SHORT:
        return intern(v)
    return v
