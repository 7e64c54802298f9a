"""Two runs side by side: aligned phases, both peaks, and the graph nodes that differ.

NOTE [ Two runs ]
1. Each trace is cut into its runs of one phase (``phase_runs``). The k-th run of a phase in
   one trace is aligned with the k-th run of that phase in the other (the first forward with
   the first forward, the second backward with the second backward). Runs left over in one
   trace are named in ``unaligned``.
2. ``map_index(i)`` takes an event index of trace A to trace B: the same fraction of the way
   through the aligned run (a run present only in A maps to the start of B's next run).
3. Peaks: each trace's live-bytes peak and activation peak (NOTE [ Memory replay ] rule 6),
   and the per-category bytes at each live peak with their difference (B - A).
4. Graph: the forward nodes of each trace, in order, compared by name with a longest common
   subsequence: nodes only in A, only in B, and pairs whose saved bytes differ.
5. Traces of different programs still compare: nothing raises; ``notes`` says what does not
   align (different phase sequences, few common nodes).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .memory import Replay, events_of, phase_runs, start_of
from .words import nbytes


@dataclass
class Diff:
    a_len: int
    b_len: int
    pairs: list                                  # [((lo, hi, phase) of A, (lo, hi, phase) of B)]
    unaligned: list                              # ["A: backward #2", ...]
    peaks: dict                                  # {"A"/"B": {"live": (i, bytes), "activation": (i, bytes), "by_category": {}}}
    category_delta: dict                         # {category: B - A at the live peaks}
    only_a: list = field(default_factory=list)   # node names, forward order
    only_b: list = field(default_factory=list)
    saved_delta: list = field(default_factory=list)   # [(name, a bytes, b bytes)]
    notes: list = field(default_factory=list)

    def map_index(self, i: int) -> int:
        """Rule 2."""
        for (alo, ahi, _), (blo, bhi, _) in self.pairs:
            if alo <= i <= ahi:
                f = 0.0 if ahi == alo else (i - alo) / (ahi - alo)
                return blo + round(f * (bhi - blo))
        later = [b for (alo, _, _), b in self.pairs if alo > i]
        return later[0][0] if later else max(0, self.b_len - 1)


def _runs_by_phase(events) -> dict:
    out: dict = {}
    for run in phase_runs(events):
        out.setdefault(run[2], []).append(run)
    return out


def _forward_nodes(events) -> list:
    return [e["node"] for e in events if e.get("kind") == "op" and e.get("phase") == "forward"
            and isinstance(e.get("node"), dict)]


def _lcs(a: list, b: list) -> list:
    """Index pairs of a longest common subsequence of a and b (by equality)."""
    n, m = len(a), len(b)
    if n * m > 4_000_000:                       # too big for the table: match a common prefix and suffix
        k = 0
        while k < min(n, m) and a[k] == b[k]:
            k += 1
        j = 0
        while j < min(n, m) - k and a[n - 1 - j] == b[m - 1 - j]:
            j += 1
        return [(x, x) for x in range(k)] + [(n - j + x, m - j + x) for x in range(j)]
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for x in range(n - 1, -1, -1):
        for y in range(m - 1, -1, -1):
            dp[x][y] = dp[x + 1][y + 1] + 1 if a[x] == b[y] else max(dp[x + 1][y], dp[x][y + 1])
    out, x, y = [], 0, 0
    while x < n and y < m:
        if a[x] == b[y]:
            out.append((x, y))
            x, y = x + 1, y + 1
        elif dp[x + 1][y] >= dp[x][y + 1]:
            x += 1
        else:
            y += 1
    return out


def _peaks(trace, events) -> dict:
    r = Replay(events, start_of(getattr(trace, "meta", None)))
    return {"live": (r.peak_index, r.peak_bytes), "activation": (r.act_peak_index, r.act_peak_bytes),
            "by_category": {c: b for c, b in r.live_at(r.peak_index).items() if b}}


def diff(a, b) -> Diff:
    """Compare trace ``a`` with trace ``b`` (rules 1-5)."""
    ea, eb = events_of(a), events_of(b)
    ra, rb = _runs_by_phase(ea), _runs_by_phase(eb)
    pairs, unaligned = [], []
    for phase in dict.fromkeys(list(ra) + list(rb)):
        xs, ys = ra.get(phase, []), rb.get(phase, [])
        pairs += list(zip(xs, ys))
        unaligned += [f"A: {phase} #{k + 1}" for k in range(len(ys), len(xs))]
        unaligned += [f"B: {phase} #{k + 1}" for k in range(len(xs), len(ys))]
    pairs.sort(key=lambda p: p[0][0])
    pa, pb = _peaks(a, ea), _peaks(b, eb)
    cats = dict.fromkeys(list(pa["by_category"]) + list(pb["by_category"]))
    delta = {c: pb["by_category"].get(c, 0) - pa["by_category"].get(c, 0) for c in cats}
    na, nb = _forward_nodes(ea), _forward_nodes(eb)
    names_a, names_b = [n.get("name") for n in na], [n.get("name") for n in nb]
    common = _lcs(names_a, names_b)
    ia, ib = {x for x, _ in common}, {y for _, y in common}
    saved = []
    for x, y in common:
        sa = sum(s.get("bytes", 0) for s in na[x].get("saved", []))
        sb = sum(s.get("bytes", 0) for s in nb[y].get("saved", []))
        if sa != sb:
            saved.append((names_a[x], sa, sb))
    d = Diff(len(ea), len(eb), pairs, unaligned, {"A": pa, "B": pb}, delta,
             [names_a[x] for x in range(len(na)) if x not in ia],
             [names_b[y] for y in range(len(nb)) if y not in ib], saved)
    seq_a = [p for _, _, p in phase_runs(ea)]
    seq_b = [p for _, _, p in phase_runs(eb)]
    if seq_a != seq_b:
        d.notes.append(f"the phases differ: A runs {' → '.join(seq_a) or 'nothing'}, "
                       f"B runs {' → '.join(seq_b) or 'nothing'}; aligned {len(pairs)} runs by order")
    if na and nb and len(common) < 0.5 * max(len(na), len(nb)):
        d.notes.append(f"few forward nodes in common ({len(common)} of {len(na)} and {len(nb)}): "
                       "these look like different programs")
    return d


def summary(d: Diff, a_name: str = "A", b_name: str = "B") -> list:
    """The comparison in lines of text (``glassgrad diff``)."""
    out = [f"A = {a_name} ({d.a_len} events), B = {b_name} ({d.b_len} events)"]
    for who in ("A", "B"):
        p = d.peaks[who]
        out.append(f"{who}: live-bytes peak {nbytes(p['live'][1])} at event #{p['live'][0]}, "
                   f"activation peak {nbytes(p['activation'][1])} at event #{p['activation'][0]}")
    diff_live = d.peaks["B"]["live"][1] - d.peaks["A"]["live"][1]
    out.append(f"B - A at the live peaks: {'+' if diff_live >= 0 else '-'}{nbytes(abs(diff_live))}")
    for c, v in d.category_delta.items():
        if v:
            out.append(f"  {c:<11} {'+' if v >= 0 else '-'}{nbytes(abs(v))}")
    out.append(f"aligned phase runs: {len(d.pairs)}" + (f"; unaligned: {', '.join(d.unaligned)}" if d.unaligned else ""))
    if d.only_a or d.only_b:
        out.append(f"nodes only in A ({len(d.only_a)}): {', '.join(d.only_a[:12])}{' …' if len(d.only_a) > 12 else ''}")
        out.append(f"nodes only in B ({len(d.only_b)}): {', '.join(d.only_b[:12])}{' …' if len(d.only_b) > 12 else ''}")
    else:
        out.append("the forward graphs have the same nodes")
    for name, sa, sb in d.saved_delta[:12]:
        out.append(f"  {name} saves {nbytes(sa)} in A, {nbytes(sb)} in B")
    out += [f"note: {n}" for n in d.notes]
    return out
