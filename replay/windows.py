"""Windows of a trace a learner can pick: a lesson step, a forward, a backward, one checkpoint
region's recompute, one optimizer step; and the peak inside any window.

NOTE [ Windows ]
1. A window is a half-open range of event indices [lo, hi) with a label.
2. Presets, in trace order: each lesson step (``mark`` events with ``text="step"``: from the
   mark to the next one), each run of one phase (``forward #2``, ``backward #1``), each
   recompute (``recompute_begin`` to its ``recompute_end``, labelled with its region), and
   each optimizer step (from the first event after the previous ``backward_end`` or
   ``optimizer_step`` ... to the ``optimizer_step`` event, inclusive: the update's own
   allocations come before its event).
3. The peak inside a window is the first event of the window with the highest live bytes
   (NOTE [ Memory replay ] rule 6), or the highest of one category.
"""
from __future__ import annotations

from dataclasses import dataclass

from .memory import events_of, phase_runs


@dataclass(frozen=True)
class Window:
    label: str
    lo: int
    hi: int

    def __contains__(self, i: int) -> bool:
        return self.lo <= i < self.hi


def presets(trace) -> list:
    """Rule 2."""
    events = events_of(trace)
    n = len(events)
    out = []
    marks = [i for i, e in enumerate(events) if e.get("kind") == "mark" and e.get("text") == "step"]
    for k, i in enumerate(marks):
        hi = marks[k + 1] if k + 1 < len(marks) else n
        title = events[i].get("title")
        out.append(Window(f"step {events[i].get('step', k) + 1}" + (f": {title}" if title else ""), i, hi))
    counts: dict = {}
    for lo, hi, ph in phase_runs(events):
        counts[ph] = counts.get(ph, 0) + 1
        out.append(Window(f"{ph} #{counts[ph]}", lo, hi + 1))
    open_re: dict = {}
    for i, e in enumerate(events):
        k = e.get("kind")
        if k == "recompute_begin":
            open_re[e.get("region")] = i
        elif k == "recompute_end" and e.get("region") in open_re:
            out.append(Window(f"recompute of region {e.get('region')}", open_re.pop(e.get("region")), i + 1))
    last = 0
    for i, e in enumerate(events):
        k = e.get("kind")
        if k == "backward_end":
            last = i + 1
        elif k == "optimizer_step":
            out.append(Window(f"{e.get('optimizer', 'optimizer')} step {e.get('step', '')}".strip(), last, i + 1))
            last = i + 1
    return sorted(out, key=lambda w: (w.lo, -(w.hi - w.lo)))


def peak_in(replay, window: Window, category: str | None = None) -> tuple:
    """Rule 3: (event index, bytes)."""
    return replay.peak_in(window.lo, window.hi, category)


def clamp(lo: int, hi: int, n: int) -> Window:
    """A window the learner chose with two marks, in order and inside the trace."""
    lo, hi = sorted((lo, hi))
    lo = max(0, min(lo, n - 1))
    hi = max(lo + 1, min(hi + 1, n))
    return Window(f"events #{lo}–#{hi - 1}", lo, hi)
