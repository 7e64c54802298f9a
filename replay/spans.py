"""Storage lifetimes as arrays, so "alive at i" and "alive in [lo, hi)" cost the same at any length.

NOTE [ Lifetime spans ]
1. ``Spans(lts)`` holds each lifetime's start, end (``END``, past every index, while it is
   alive at the trace's end), bytes and device as NumPy arrays, in the list's order.
2. ``alive(i)`` and ``overlapping(lo, hi)`` give the positions, in that order, of the
   lifetimes alive after event i (``start <= i < end``) and of those alive during some
   event of [lo, hi) (NOTE [ Storage lifetimes ] in replay/lifetimes.py), as
   ``Lifetime.alive_at`` and ``Lifetime.overlap`` answer one at a time.
3. ``bytes_at(pos, points)`` sums the bytes alive after each point: the step function of the
   starts and ends of the lifetimes at ``pos`` (one sort), then a binary search per point.
   The step function of the last ``pos`` asked about is kept (``steps``), so the lifetime
   view's band of the rest costs one search a step, not a sort of every storage in it; the
   key is the ``pos`` array itself (``is``), which a ``Bands`` keeps while it lives.
4. A million-event training trace has about 150,000 storages: a query over the list of
   lifetimes costs tens of milliseconds a step, over the arrays a fraction of one.
"""
from __future__ import annotations

import numpy as np

END = np.iinfo(np.int64).max


class Spans:
    """Rule 1."""

    def __init__(self, lts):
        n = len(lts)
        self.start = np.fromiter((lt.start for lt in lts), dtype=np.int64, count=n)
        self.end = np.fromiter((END if lt.end is None else lt.end for lt in lts), dtype=np.int64, count=n)
        self.bytes = np.fromiter((lt.bytes for lt in lts), dtype=np.int64, count=n)
        self.device = np.array([lt.device for lt in lts], dtype=object)
        self._steps = (None, None)        # (pos, its step function): rule 3

    def _on(self, pos, device):
        return pos if device is None else pos[self.device[pos] == device]

    def alive(self, i: int, device: str | None = None) -> np.ndarray:
        """Rule 2: positions of the lifetimes alive after event ``i``."""
        return self._on(np.flatnonzero((self.start <= i) & (self.end > i)), device)

    def overlapping(self, lo: int, hi: int, device: str | None = None) -> tuple:
        """Rule 2: (positions, events of [lo, hi) each is alive) of those alive in the window."""
        ov = np.minimum(self.end, hi) - np.maximum(self.start, lo)
        pos = self._on(np.flatnonzero(ov > 0), device)
        return pos, ov[pos]

    def steps(self, pos) -> tuple:
        """Rule 3: (events, bytes alive after each) of the lifetimes at ``pos``, kept for the last ``pos``."""
        if self._steps[0] is not pos:
            at = np.concatenate([self.start[pos], self.end[pos]])
            delta = np.concatenate([self.bytes[pos], -self.bytes[pos]])
            order = np.argsort(at, kind="stable")
            self._steps = (pos, (at[order], np.cumsum(delta[order])))
        return self._steps[1]

    def bytes_at(self, pos, points) -> list:
        """Rule 3: bytes of the lifetimes at ``pos`` alive after each of ``points``."""
        if len(pos) == 0:
            return [0] * len(points)
        at, level = self.steps(pos)
        k = np.searchsorted(at, np.asarray(points, dtype=np.int64), side="right") - 1
        return [int(level[j]) if j >= 0 else 0 for j in k]
