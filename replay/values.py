"""What tensors held, from a trace recorded with ``values=True`` (NOTE [ Value capture ] in
engine/values.py): a summary per tensor, and each parameter's gradient norm after backward.

NOTE [ Gradient health ]
1. A leaf's gradient summary is the newest ``values`` event with ``grad`` true for it at or
   before the event asked about; its name comes from the leaf's ``leaf`` event (a parameter's
   qualified name), else ``tensor <id>``.
2. Flags: "non-finite" when any element is NaN or infinite, "vanishing" when the 2-norm is
   below ``VANISHING`` (1e-7), "exploding" when it is above ``EXPLODING`` (1e3); else "".
"""
from __future__ import annotations

from dataclasses import dataclass

from .memory import events_of, of_kinds

VANISHING = 1e-7
EXPLODING = 1e3


class ValuesIndex:
    """Every forward summary by tensor, built once: ``at(tensor, i)`` is the newest at or before event i."""

    def __init__(self, trace):
        import bisect
        self._bisect = bisect.bisect_right
        self.by_tensor: dict = {}
        for k, e in of_kinds(events_of(trace), ("values",)):
            if not e.get("grad"):
                self.by_tensor.setdefault(e.get("tensor"), []).append((k, e))
        self.n = len(events_of(trace))

    def at(self, tensor, i: int):
        rows = self.by_tensor.get(tensor)
        if not rows:
            return None
        j = self._bisect([k for k, _ in rows], i) - 1
        return rows[j][1] if j >= 0 else None


def summaries(trace, upto: int | None = None) -> dict:
    """{tensor id: its newest forward summary (the event dict)} among events [0, upto]."""
    events = events_of(trace)
    hi = len(events) if upto is None else min(len(events), upto + 1)
    out = {}
    for e in events[:hi]:
        if e.get("kind") == "values" and not e.get("grad"):
            out[e.get("tensor")] = e
    return out


@dataclass
class GradRow:
    name: str
    leaf: int
    norm: float | None
    numel: int
    flag: str
    at: int                # the event index of the summary


def flag_of(e: dict) -> str:
    """Rule 2."""
    if e.get("refused"):
        return "not read"
    if e.get("nan") or e.get("inf"):
        return "non-finite"
    n = e.get("norm")
    if n is None:
        return ""
    return "vanishing" if n < VANISHING else "exploding" if n > EXPLODING else ""


def grad_norms(trace, upto: int | None = None) -> list:
    """Rule 1: one GradRow per leaf whose gradient was summarised, in the order leaves first got one."""
    events = events_of(trace)
    hi = len(events) if upto is None else min(len(events), upto + 1)
    names, rows = {}, {}
    for i, e in enumerate(events[:hi]):
        k = e.get("kind")
        if k == "leaf" and isinstance(e.get("tensor"), dict):
            names[e["tensor"].get("id")] = e["tensor"].get("name") or e.get("name")
        elif k == "values" and e.get("grad"):
            leaf = e.get("leaf")
            name = names.get(leaf)
            rows[leaf] = GradRow(name if name and name != "AccumulateGrad" else f"tensor {leaf}", leaf,
                                 e.get("norm"), e.get("numel", 0), flag_of(e), i)
    return list(rows.values())
