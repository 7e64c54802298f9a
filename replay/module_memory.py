"""Memory around each module's forward and backward, as PyTorch's MemTracker reports it.

NOTE [ Module memory ]
1. A module's ops are the ``op`` events whose ``module`` is its path or below it
   (NOTE [ Module paths ] in engine/events.py). Its forward span, within a window, runs
   from the event after the op before its first op (that op's allocation comes first)
   to its last op; only the first such span in the window counts (one forward).
2. pre-forward is the live total before the span, post-forward after it, peak-forward
   the highest of pre-forward and every live total inside it.
3. Its backward span runs from the first ``execute`` of a node one of its ops made to
   the event before the next ``execute`` (or ``backward_end``) after its last one;
   pre-backward, peak-backward and post-backward are read the same way. A module whose
   nodes never ran in the window has no backward figures (None).
4. Rows come in the order modules first ran; "" is the outermost module.
"""
from __future__ import annotations

from dataclasses import dataclass

from .memory import Replay, events_of, start_of

COLUMNS = ("pre_fwd", "post_fwd", "peak_fwd", "pre_bwd", "peak_bwd", "post_bwd")


@dataclass
class ModuleMemory:
    module: str
    pre_fwd: int
    post_fwd: int
    peak_fwd: int
    pre_bwd: int | None = None
    peak_bwd: int | None = None
    post_bwd: int | None = None
    fwd: tuple = (0, 0)          # event span [lo, hi]
    bwd: tuple | None = None


def _within(path, module) -> bool:
    return path is not None and (module == "" or path == module or path.startswith(module + "."))


def module_memory(trace, lo: int = 0, hi: int | None = None, replay: Replay | None = None) -> list:
    """One ModuleMemory per module that ran an op in events [lo, hi) (rules 1-4)."""
    events = events_of(trace)
    hi = len(events) if hi is None else min(hi, len(events))
    r = replay or Replay(events, start_of(getattr(trace, "meta", None)))
    total = r.total
    ops = [i for i in range(lo, hi) if events[i].get("kind") == "op" and events[i].get("phase") == "forward"]
    paths = []
    for i in ops:
        p = events[i].get("module")
        if p is None:
            continue
        parts = p.split(".") if p else []
        for k in range(len(parts) + 1):
            anc = ".".join(parts[:k])
            if anc not in paths:
                paths.append(anc)
    executes = [i for i in range(lo, hi) if events[i].get("kind") in ("execute", "backward_end")]
    out = []
    for m in paths:
        mine = [k for k, i in enumerate(ops) if _within(events[ops[k]].get("module"), m)]
        if not mine:
            continue
        first = mine[0]
        last = first
        while last + 1 < len(ops) and _within(events[ops[last + 1]].get("module"), m):
            last += 1                                               # rule 1: the first contiguous span
        start = (ops[first - 1] + 1) if first > 0 else lo
        end = ops[last]
        pre = total[start - 1] if start > 0 else sum(r.baseline.values())
        row = ModuleMemory(m, pre, total[end], max([pre] + total[start:end + 1]), fwd=(start, end))
        nodes = {events[ops[k]]["node"]["id"] for k in range(first, last + 1)
                 if isinstance(events[ops[k]].get("node"), dict)}
        runs = [i for i in executes if events[i].get("kind") == "execute" and events[i].get("node") in nodes]
        if runs:
            b0 = runs[0]
            after = [i for i in executes if i > runs[-1]]
            b1 = (after[0] - 1) if after else hi - 1
            row.pre_bwd, row.post_bwd = total[b0 - 1], total[b1]
            row.peak_bwd, row.bwd = max([row.pre_bwd] + total[b0:b1 + 1]), (b0, b1)
        out.append(row)
    return out
