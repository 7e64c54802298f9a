"""Two runs side by side: one aligned timeline, both peaks, and the graph nodes that differ.

NOTE [ Two runs ]
1. Each trace is cut into *steps* (``steps``): runs of one phase keyed by (iteration, phase, k).
   A ``recompute`` run belongs to the backward around it (checkpointing's recompute happens
   inside backward), so a backward with recomputes is one step. A forward run with an ``op``
   event that follows a backward or optimizer step begins the next iteration; k counts the
   steps of that phase within the iteration (the frees after a backward are forward #2).
2. The two key sequences are matched by a longest common subsequence: matched steps are
   aligned pairs, the rest are steps of one trace only (``unaligned``), kept in order.
3. The aligned timeline (``Alignment``) is the steps in order, each as long as its longer
   side. At position t of a step of length L, a side with events lo..hi (n of them) is at
   event lo + floor(t * n / L): both sides start and end a step together and move
   proportionally inside it. A side without that step stays on its last event before it
   (its first event when nothing came before).
4. Peaks: each trace's live-bytes peak and activation peak (NOTE [ Memory replay ] rule 6),
   the per-category bytes at each live peak with their difference (B - A), and the bytes
   each module's ops made that are alive at each live peak (NOTE [ Holders ], ``own``).
5. Graph: the forward nodes of each trace, in order, compared by name with a longest common
   subsequence: nodes only in A, only in B, and pairs whose saved bytes differ (a name that
   occurs more than once in A is numbered in forward order: ``TanhBackward0 #2``). Per trace,
   the forward nodes whose saved tensor checkpointing dropped (``checkpoint_drop`` not kept)
   and the nodes a recompute made.
6. Traces of different programs still compare: nothing raises; ``notes`` says what does not
   align (steps of one trace only, few common nodes); ``summary`` and the app give them as
   "the runs do not align: ...".
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from .event_stream import index_of, phase_runs_of
from .memory import Replay, events_of, of_kinds, phase_runs, start_of
from .words import nbytes

MACRO = {"recompute": "backward"}     # rule 1


def steps(events, trace=None) -> list:
    """Rule 1: [(first, last, (iteration, phase, k))]; an opened ``trace``'s from its index's columns."""
    idx = index_of(trace) if trace is not None else None
    runs = phase_runs_of(trace, events) if idx is not None else phase_runs(events)
    ops = [i for i, _ in of_kinds(events, ("op",))] if idx is None else \
        np.flatnonzero(np.isin(idx.kind, idx.codes("op"))).tolist()
    out, it, seen = [], 0, {}
    for lo, hi, ph in runs:
        ph = MACRO.get(ph, ph)
        if out and out[-1][2][1] == ph:
            out[-1] = (out[-1][0], hi, out[-1][2])
            continue
        k = bisect.bisect_left(ops, lo)
        if (ph == "forward" and any(seen.get(p) for p in ("backward", "optimizer"))
                and k < len(ops) and ops[k] <= hi):
            it, seen = it + 1, {}
        seen[ph] = seen.get(ph, 0) + 1
        out.append((lo, hi, (it, ph, seen[ph] - 1)))
    return out


def step_name(key) -> str:
    it, ph, k = key
    return f"iteration {it + 1} {ph}" + (f" #{k + 1}" if k else "")


@dataclass
class Alignment:
    """Rule 3: ``segments`` = [(A run or None, B run or None, key)], runs as (first, last)."""
    segments: list
    starts: list = field(default_factory=list)    # aligned position where each segment begins
    length: int = 0

    def __post_init__(self):
        pos = 0
        self.starts = []
        for a, b, _ in self.segments:
            self.starts.append(pos)
            pos += max(_n(a), _n(b), 1)
        self.length = pos

    def _seg(self, u: int) -> int:
        return max(0, bisect.bisect_right(self.starts, u) - 1)

    def at(self, u: int) -> tuple:
        """(A event, B event) at aligned position u (clamped)."""
        if not self.segments:
            return 0, 0
        u = max(0, min(u, self.length - 1))
        k = self._seg(u)
        t = u - self.starts[k]
        L = max(_n(self.segments[k][0]), _n(self.segments[k][1]), 1)
        return tuple(self._side(k, s, t, L) for s in (0, 1))

    def _side(self, k, s, t, L) -> int:
        run = self.segments[k][s]
        if run is not None:
            return run[0] + t * _n(run) // L
        for j in range(k - 1, -1, -1):            # held on its last event before
            if self.segments[j][s] is not None:
                return self.segments[j][s][1]
        nxt = next((seg[s] for seg in self.segments[k:] if seg[s] is not None), None)
        return nxt[0] if nxt else 0

    def position(self, side: int, i: int) -> int:
        """The first aligned position where trace ``side`` (0: A, 1: B) is at event i (or the nearest)."""
        best = 0
        for k, seg in enumerate(self.segments):
            run = seg[side]
            if run is None:
                continue
            lo, hi = run
            if i < lo:
                return self.starts[k]
            if i <= hi:
                L = max(_n(seg[0]), _n(seg[1]), 1)
                return self.starts[k] + -(-(i - lo) * L // _n(run))
            best = self.starts[k] + max(_n(seg[0]), _n(seg[1]), 1) - 1
        return best

    def segment_at(self, u: int):
        """The segment (A run, B run, key) that position u falls in."""
        return self.segments[self._seg(max(0, min(u, self.length - 1)))] if self.segments else None


def _n(run) -> int:
    return 0 if run is None else run[1] - run[0] + 1


def align(ea, eb, a=None, b=None) -> Alignment:
    """Rules 1-3 (``a`` and ``b``: the traces, when opened through their indexes)."""
    sa, sb = steps(ea, a), steps(eb, b)
    common = _lcs([k for _, _, k in sa], [k for _, _, k in sb])
    segs, x, y = [], 0, 0
    for cx, cy in common + [(len(sa), len(sb))]:
        segs += [((lo, hi), None, key) for lo, hi, key in sa[x:cx]]
        segs += [(None, (lo, hi), key) for lo, hi, key in sb[y:cy]]
        if cx < len(sa):
            segs.append(((sa[cx][0], sa[cx][1]), (sb[cy][0], sb[cy][1]), sa[cx][2]))
        x, y = cx + 1, cy + 1
    return Alignment(segs)


@dataclass
class Diff:
    a_len: int
    b_len: int
    pairs: list                                  # [((lo, hi, step name) of A, (lo, hi, step name) of B)]
    unaligned: list                              # ["B: iteration 2 forward", ...]
    peaks: dict                                  # {"A"/"B": {"live": (i, bytes), "activation": (i, bytes), "by_category": {}}}
    category_delta: dict                         # {category: B - A at the live peaks}
    only_a: list = field(default_factory=list)   # node names, forward order
    only_b: list = field(default_factory=list)
    saved_delta: list = field(default_factory=list)   # [(name, a bytes, b bytes)]
    notes: list = field(default_factory=list)
    alignment: Alignment | None = None
    modules: dict = field(default_factory=dict)       # {module path: (A bytes, B bytes)} at the live peaks
    dropped: dict = field(default_factory=dict)       # {"A"/"B": [(node name, saved name, bytes)]}
    recomputed: dict = field(default_factory=dict)    # {"A"/"B": [node name]}
    memory: dict = field(default_factory=dict, repr=False)   # {"A"/"B": Replay}

    def map_index(self, i: int) -> int:
        """Trace A's event i taken to trace B (rule 3)."""
        return self.alignment.at(self.alignment.position(0, i))[1]


def _forward_nodes(events) -> list:
    return [e["node"] for _, e in of_kinds(events, ("op",)) if e.get("phase") == "forward"
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


def _replay(trace, events) -> Replay:
    """The trace's live bytes: an opened trace's from its model (its index's columns, NOTE [ A model
    from an index ]), any other's folded from its events."""
    if index_of(trace) is not None and hasattr(trace, "meta"):
        from .model import TraceModel
        return TraceModel.from_trace(trace).memory
    return Replay(events, start_of(getattr(trace, "meta", None)))


def _peaks(r: Replay) -> dict:
    return {"live": (r.peak_index, r.peak_bytes), "activation": (r.act_peak_index, r.act_peak_bytes),
            "by_category": {c: b for c, b in r.live_at(r.peak_index).items() if b}}


def module_bytes(trace, i: int) -> dict:
    """Rule 4: {module path: bytes alive after event i that its ops made} ("" for the top level)."""
    from .holders import holders
    from .lifetimes import lifetimes
    return {r.name: r.own for r in holders(lifetimes(trace), i, by="module") if r.own}


def checkpoint_nodes(events) -> tuple:
    """Rule 5: ([(node name, saved name, bytes)] dropped by checkpointing, [node names made by a recompute])."""
    found = [e for _, e in of_kinds(events, ("op", "checkpoint_drop"))]     # by the index when opened
    names = {e["node"]["id"]: e["node"].get("name") for e in found
             if e.get("kind") == "op" and isinstance(e.get("node"), dict)}
    dropped = [(names.get(e.get("node"), "?"), e.get("name"), e.get("bytes", 0)) for e in found
               if e.get("kind") == "checkpoint_drop" and not e.get("kept")]
    made = [e["node"].get("name") for e in found if e.get("kind") == "op" and e.get("phase") == "recompute"
            and isinstance(e.get("node"), dict)]
    return dropped, made


def diff(a, b) -> Diff:
    """Compare trace ``a`` with trace ``b`` (rules 1-6)."""
    ea, eb = events_of(a), events_of(b)
    al = align(ea, eb, a, b)
    pairs = [((x[0], x[1], step_name(k)), (y[0], y[1], step_name(k))) for x, y, k in al.segments if x and y]
    unaligned = [f"{'A' if x else 'B'}: {step_name(k)}" for x, y, k in al.segments if not (x and y)]
    ra, rb = _replay(a, ea), _replay(b, eb)
    pa, pb = _peaks(ra), _peaks(rb)
    cats = dict.fromkeys(list(pa["by_category"]) + list(pb["by_category"]))
    delta = {c: pb["by_category"].get(c, 0) - pa["by_category"].get(c, 0) for c in cats}
    na, nb = _forward_nodes(ea), _forward_nodes(eb)
    names_a, names_b = [n.get("name") for n in na], [n.get("name") for n in nb]
    common = _lcs(names_a, names_b)
    ia, ib = {x for x, _ in common}, {y for _, y in common}
    saved, seen = [], {}
    for x, y in common:
        sa = sum(s.get("bytes", 0) for s in na[x].get("saved", []))
        sb = sum(s.get("bytes", 0) for s in nb[y].get("saved", []))
        seen[names_a[x]] = seen.get(names_a[x], 0) + 1
        if sa != sb:
            many = names_a.count(names_a[x]) > 1
            saved.append((names_a[x] + (f" #{seen[names_a[x]]}" if many else ""), sa, sb))
    d = Diff(len(ea), len(eb), pairs, unaligned, {"A": pa, "B": pb}, delta,
             [names_a[x] for x in range(len(na)) if x not in ia],
             [names_b[y] for y in range(len(nb)) if y not in ib], saved, alignment=al,
             memory={"A": ra, "B": rb})
    ma = module_bytes(a, ra.peak_index) if ea else {}
    mb = module_bytes(b, rb.peak_index) if eb else {}
    d.modules = {m: (ma.get(m, 0), mb.get(m, 0)) for m in dict.fromkeys(list(ma) + list(mb))}
    for who, evs in (("A", ea), ("B", eb)):
        d.dropped[who], d.recomputed[who] = checkpoint_nodes(evs)
    if unaligned:
        d.notes.append(f"{', '.join(unaligned[:6])}{' …' if len(unaligned) > 6 else ''} "
                       f"{'is' if len(unaligned) == 1 else 'are'} in one trace only; {len(pairs)} steps aligned")
    if na and nb and len(common) < 0.5 * max(len(na), len(nb)):
        d.notes.append(f"few forward nodes in common ({len(common)} of {len(na)} and {len(nb)}): "
                       "these look like different programs")
    return d


def _signed(v: int) -> str:
    return f"{'+' if v >= 0 else '-'}{nbytes(abs(v))}"


def _names(xs: list, k: int = 12) -> str:
    return ", ".join(xs[:k]) + (" …" if len(xs) > k else "")


def dropped_lines(dropped: list) -> list:
    """``Diff.dropped`` of one run as one entry per slot name, in first-seen order: ``Node.slot 48 B``,
    or ``Node.slot ×12 (768.0 KiB in all)`` for a slot every region dropped alike."""
    groups: dict = {}
    for n, s, b in dropped:
        count, total = groups.get((n, s), (0, 0))
        groups[(n, s)] = (count + 1, total + b)
    return [f"{n}.{s} {nbytes(t)}" if c == 1 else f"{n}.{s} ×{c} ({nbytes(t)} in all)" for (n, s), (c, t) in groups.items()]


def counted(names: list) -> list:
    """``names`` once each, in first-seen order, with ``×N`` where a name came N > 1 times."""
    counts: dict = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [n if c == 1 else f"{n} ×{c}" for n, c in counts.items()]


def summary(d: Diff, a_name: str = "A", b_name: str = "B") -> list:
    """The comparison in lines of text (``glassgrad diff``)."""
    out = [f"A = {a_name} ({d.a_len} events), B = {b_name} ({d.b_len} events)"]
    for who in ("A", "B"):
        p = d.peaks[who]
        out.append(f"{who}: live-bytes peak {nbytes(p['live'][1])} at event #{p['live'][0]}, "
                   f"activation peak {nbytes(p['activation'][1])} at event #{p['activation'][0]}")
    out.append(f"B - A at the live peaks: {_signed(d.peaks['B']['live'][1] - d.peaks['A']['live'][1])}")
    for c, v in d.category_delta.items():
        if v:
            out.append(f"  {c:<11} {_signed(v)}")
    moved = [(m, a, b) for m, (a, b) in d.modules.items() if a != b]
    if moved:
        out.append("by module at the live peaks (bytes its ops made, still alive):")
        out += [f"  {m or '(top level)':<16} {nbytes(a):>10} {nbytes(b):>10}  {_signed(b - a)}" for m, a, b in moved[:12]]
    out.append(f"aligned steps: {len(d.pairs)}" + (f"; unaligned: {', '.join(d.unaligned)}" if d.unaligned else ""))
    if d.only_a or d.only_b:
        out.append(f"nodes only in A ({len(d.only_a)}): {_names(d.only_a)}")
        out.append(f"nodes only in B ({len(d.only_b)}): {_names(d.only_b)}")
    else:
        out.append("the forward graphs have the same nodes")
    for name, sa, sb in d.saved_delta[:12]:
        out.append(f"  {name} saves {nbytes(sa)} in A, {nbytes(sb)} in B")
    for who in ("A", "B"):
        if d.dropped.get(who):
            total = nbytes(sum(b for _, _, b in d.dropped[who]))
            out.append(f"{who}: checkpointing dropped {len(d.dropped[who])} ({total}): {_names(dropped_lines(d.dropped[who]))}")
        if d.recomputed.get(who):
            out.append(f"{who}: recomputed {len(d.recomputed[who])} nodes: {_names(counted(d.recomputed[who]))}")
    out += [f"the runs do not align: {n}" for n in d.notes]
    return out
