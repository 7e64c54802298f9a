"""Windows of a trace a learner can pick: a lesson step, a forward, a backward, one checkpoint
region's recompute, one optimizer step; and the peak inside any window.

NOTE [ Windows ]
1. A window is a half-open range of event indices [lo, hi) with a label.
2. Presets, in trace order: each lesson step (``mark`` events with ``text="step"``: from the
   mark to the next one), each run of one phase (``forward #2``, ``backward #1``; a forward
   run whose ops make no graph node, such as ``clip_grad_norm_`` or ``zero_grad`` between
   backward and the optimizer, is ``no-grad work #1``: it is no forward pass), each
   recompute (``recompute_begin`` to its ``recompute_end``, labelled with its region), and
   each optimizer step (from the first event after the previous ``backward_end`` or
   ``optimizer_step`` ... to the ``optimizer_step`` event, inclusive: the update's own
   allocations come before its event).
3. The peak inside a window is the first event of the window with the highest live bytes
   (NOTE [ Memory replay ] rule 6), or the highest of one category.
4. An opened trace (NOTE [ Trace index ]) is never walked: phase runs come from the index's
   phase column, and only the ``mark``, ``recompute_*``, ``backward_end`` and
   ``optimizer_step`` events are read (``of_kinds``); the presets are the ones a walk finds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .event_stream import index_of, phase_runs_of
from .memory import events_of, of_kinds


@dataclass(frozen=True)
class Window:
    label: str
    lo: int
    hi: int

    def __contains__(self, i: int) -> bool:
        return self.lo <= i < self.hi


def presets(trace) -> list:
    """Rule 2 (rule 4 on an opened trace)."""
    events = events_of(trace)
    n = len(events)
    out = []
    marks = [(i, e) for i, e in of_kinds(events, ("mark",)) if e.get("text") == "step"]
    for k, (i, e) in enumerate(marks):
        hi = marks[k + 1][0] if k + 1 < len(marks) else n
        title = e.get("title")
        out.append(Window(f"step {e.get('step', k) + 1}" + (f": {title}" if title else ""), i, hi))
    counts: dict = {}
    makers = _node_makers(trace, events)
    for lo, hi, ph in phase_runs_of(trace, events):
        if ph == "forward" and np.searchsorted(makers, lo) == np.searchsorted(makers, hi, side="right"):
            ph = "no-grad work"
        counts[ph] = counts.get(ph, 0) + 1
        out.append(Window(f"{ph} #{counts[ph]}", lo, hi + 1))
    open_re: dict = {}
    for i, e in of_kinds(events, ("recompute_begin", "recompute_end")):
        if e.get("kind") == "recompute_begin":
            open_re[e.get("region")] = i
        elif e.get("region") in open_re:
            out.append(Window(f"recompute of region {e.get('region')}", open_re.pop(e.get("region")), i + 1))
    last = 0
    for i, e in of_kinds(events, ("backward_end", "optimizer_step")):
        if e.get("kind") == "backward_end":
            last = i + 1
        else:
            out.append(Window(f"{e.get('optimizer', 'optimizer')} step {e.get('step', '')}".strip(), last, i + 1))
            last = i + 1
    return sorted(out, key=lambda w: (w.lo, -(w.hi - w.lo)))


def _node_makers(trace, events) -> np.ndarray:
    """The indices of the op events that made a graph node, in order (from the index's columns on
    an opened trace: rule 4)."""
    idx = index_of(trace)
    if idx is not None:
        return np.flatnonzero(np.isin(idx.kind, idx.codes("op")) & (idx.node >= 0))
    return np.array([i for i, e in of_kinds(events, ("op",)) if e.get("node") is not None], dtype=np.int64)


def peak_in(replay, window: Window, category: str | None = None) -> tuple:
    """Rule 3: (event index, bytes)."""
    return replay.peak_in(window.lo, window.hi, category)


def clamp(lo: int, hi: int, n: int) -> Window:
    """A window the learner chose with two marks, in order and inside the trace."""
    lo, hi = sorted((lo, hi))
    lo = max(0, min(lo, n - 1))
    hi = max(lo + 1, min(hi + 1, n))
    return Window(f"events #{lo}–#{hi - 1}", lo, hi)
