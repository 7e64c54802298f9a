"""``(i, event)`` of the kinds one pass needs, an opened trace's read through its index.

NOTE [ A pass over some kinds ]
1. ``stream(trace, kinds, parse)`` yields, in order, the events whose kind is in ``kinds``.
   Of a list (or any sequence without an index) it reads every event.
2. Of a trace opened through its index (NOTE [ Trace index ] in engine/trace_index.py) it
   finds them by the kind column and parses from its line only an event whose kind is in
   ``parse``; any other it makes from the columns: ``kind`` and ``phase`` always, and
   ``storage``, ``bytes``, ``device``, ``category`` (alloc, free), ``old`` and ``new``
   (category) where the column holds one. A key the column has no value for is left out,
   so ``e.get(key, default)`` reads as on the parsed event.
3. Such a pass reads a fifth to a third of a training trace's lines, and a line is what a
   pass over a million events pays for most (about 10 us).
4. ``progress(done, total)`` is called every :data:`EVERY` events yielded.
"""
from __future__ import annotations

import numpy as np

from engine.trace_schema import CATEGORIES, PHASES

from .memory import events_of, phase_runs

EVERY = 8192


def index_of(trace):
    """The index (NOTE [ Trace index ]) of an opened trace, of its model or of its events; None for
    anything else (an event list, a followed run)."""
    events = events_of(trace)
    for x in (trace, events):
        idx = getattr(x, "index", None)
        if hasattr(idx, "kinds") and hasattr(idx, "phase") and len(idx) == len(events):
            return idx
    return None


def _index(trace):
    """(index, events) of an opened trace whose events can be picked, else (None, None)."""
    idx = index_of(trace)
    events = events_of(trace)
    return (idx, events) if idx is not None and hasattr(events, "pick") else (None, None)


def phase_runs_of(trace, events) -> list:
    """``phase_runs(events)``, from the index's phase column on an opened trace (NOTE [ Windows ] rule 4)."""
    idx = index_of(trace)
    if idx is None:
        return phase_runs(events)
    ph = idx.phase
    n = len(ph)
    if not n:
        return []
    starts = np.flatnonzero(np.r_[True, ph[1:] != ph[:-1]])
    ends = np.r_[starts[1:] - 1, n - 1]
    return [(lo, hi, PHASES[c]) for lo, hi, c in zip(starts.tolist(), ends.tolist(), ph[starts].tolist())]


def stream(trace, kinds, parse=(), progress=None):
    """Rule 1-2: ``(i, event)`` of the events of ``trace`` whose kind is in ``kinds``."""
    idx, events = _index(trace)
    if idx is None:
        events = events_of(trace)
        n = len(events)
        for i, e in enumerate(events):
            if e.get("kind") in kinds:
                yield i, e
            if progress is not None and i % EVERY == 0:
                progress(i, n)
        return
    codes = idx.codes(*kinds)
    pos = np.flatnonzero(np.isin(idx.kind, codes)) if codes else np.zeros(0, dtype=np.int64)
    parsed_codes = idx.codes(*[k for k in kinds if k in parse])
    wanted = np.isin(idx.kind[pos], parsed_codes) if parsed_codes else np.zeros(len(pos), dtype=bool)
    parsed = events.pick(pos[wanted].tolist())
    kind, phase, storage, nbytes = idx.kind, idx.phase, idx.storage, idx.nbytes
    device, cat, cat2, names, devs = idx.device, idx.cat, idx.cat2, idx.kinds, idx.devices
    n = len(pos)
    for k, (i, read) in enumerate(zip(pos.tolist(), wanted.tolist())):
        if read:
            yield next(parsed)
        else:
            name = names[kind[i]]
            e = {"kind": name, "phase": PHASES[phase[i]]}
            s = int(storage[i])
            if s >= 0:
                e["storage"], e["bytes"] = s, int(nbytes[i])
            d = int(device[i])
            if d >= 0:
                e["device"] = devs[d]
            c = int(cat[i])
            if name == "category":
                e["old"] = CATEGORIES[c] if c >= 0 else None
                c2 = int(cat2[i])
                e["new"] = CATEGORIES[c2] if c2 >= 0 else None
            elif c >= 0:
                e["category"] = CATEGORIES[c]
            yield i, e
        if progress is not None and k % EVERY == 0:
            progress(k, n)
