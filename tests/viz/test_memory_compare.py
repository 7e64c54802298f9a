"""compare_figure: two runs, one panel each, stacked by category on the runs' aligned timeline.

Checked on the plotted data against bytes folded by hand from each trace's own events.
"""
import re
from pathlib import Path

import pytest

import engine as torch
from engine import nn
from engine.utils.checkpoint import checkpoint
from replay.diff import steps
from replay.memory import CATEGORIES
from viz import memory_plot

NAMES = ("plain.jsonl", "ckpt.jsonl")


def _run(ckpt: bool, iterations: int = 2):
    """``iterations`` SGD steps of a small MLP; with ``ckpt`` its two halves run under checkpoint."""
    torch.manual_seed(0)
    first = nn.Sequential(nn.Linear(8, 16), *[m for _ in range(5) for m in (nn.Tanh(), nn.Linear(16, 16))], nn.Tanh())
    last = nn.Linear(16, 4)
    opt = torch.optim.SGD([*first.parameters(), *last.parameters()], lr=0.1, momentum=0.9)
    x = torch.randn(5, 8)
    with torch.record() as tr:
        for _ in range(iterations):
            h = x
            for block in (first[:6], first[6:]):    # one segment at a time is recomputed in backward
                h = checkpoint(block, h, use_reentrant=False) if ckpt else block(h)
            last(h).sum().backward()
            opt.step()
            opt.zero_grad()
    return tr


@pytest.fixture(scope="module")
def pair():
    return _run(False), _run(True)


def by_hand(trace) -> list:
    """{category: live bytes} after each event, from memory_at_start and the alloc/free/category events."""
    live = dict.fromkeys(CATEGORIES, 0)

    def add(c, b):
        live[c if c in live else "other"] += b
    for dev in (trace.meta.get("memory_at_start") or {}).values():
        for c, b in (dev.get("by_category") or {}).items():
            add(c, b)
    out = []
    for e in trace.events:
        if e["kind"] == "alloc":
            add(e["category"], e["bytes"])
        elif e["kind"] == "free":
            add(e["category"], -e["bytes"])
        elif e["kind"] == "category":
            add(e["old"], -e["bytes"])
            add(e["new"], e["bytes"])
        out.append(dict(live))
    return out


def _artist(ax, gid):
    found = [a for a in list(ax.lines) + list(ax.collections) + list(ax.patches) if a.get_gid() == gid]
    assert found, f"no artist {gid}"
    return found


def test_each_panel_stacks_its_runs_bytes_at_the_aligned_positions(pair):
    fig = memory_plot.compare_figure(*pair, NAMES)
    d = fig.glassgrad_data
    div = d["divisor"]
    assert len(d["axes"]) == 2 and d["axes"][0].get_shared_y_axes().joined(*d["axes"])
    for side, (tr, lab, ax) in enumerate(zip(pair, NAMES, d["axes"])):
        ev = d["events"][side]
        assert len(ev) == d["alignment"].length
        assert ev == sorted(ev) and set(ev) == set(range(len(tr)))     # every event, in order
        live = by_hand(tr)
        lower = [0.0] * len(ev)
        stacked = d["stacked"]["AB"[side]]
        assert list(stacked) == [c for c in CATEGORIES if any(live[i][c] for i in ev)]
        for c, upper in stacked.items():
            assert [round((u - lo) * div) for u, lo in zip(upper, lower)] == [live[i][c] for i in ev], c
            _artist(ax, f"{c}:{lab}")
            lower = upper
        totals = [sum(live[i].values()) for i in ev]
        assert [round(v * div) for v in _artist(ax, f"total:{lab}")[0].get_ydata()] == totals
        other = by_hand(pair[1 - side])
        assert [round(v * div) for v in _artist(ax, f"other:{lab}")[0].get_ydata()] == \
            [sum(other[i].values()) for i in d["events"][1 - side]]
        assert ax.get_title(loc="left").startswith(f"{'AB'[side]} · {lab} · {len(tr):,} events · peak ")


def test_both_runs_start_and_end_each_step_together(pair):
    d = memory_plot.compare_figure(*pair, NAMES).glassgrad_data
    sa, sb = steps(pair[0].events), steps(pair[1].events)
    assert [k for *_, k in sa] == [k for *_, k in sb]          # the checkpointed run recomputes inside backward
    ea, eb = d["events"]
    for (lo_a, hi_a, _), (lo_b, hi_b, _) in zip(sa, sb):
        assert eb[ea.index(lo_a)] == lo_b
        assert len(ea) - 1 - ea[::-1].index(hi_a) == len(eb) - 1 - eb[::-1].index(hi_b)


def test_each_peak_is_marked_where_that_run_reaches_it(pair):
    fig = memory_plot.compare_figure(*pair, NAMES)
    d = fig.glassgrad_data
    div = d["divisor"]
    peak_of = {}
    for side, (tr, lab, ax) in enumerate(zip(pair, NAMES, d["axes"])):
        live = by_hand(tr)
        totals = [sum(s.values()) for s in live]
        acts = [s["activation"] for s in live]
        i, j = totals.index(max(totals)), acts.index(max(acts))        # the first on ties
        ev = d["events"][side]
        assert d["peaks"]["AB"[side]] == (ev.index(i), max(totals))
        marker = _artist(ax, f"peak:{lab}")[0]
        assert list(marker.get_xdata()) == [ev.index(i)] and round(marker.get_ydata()[0] * div) == max(totals)
        assert d["peaks"][f"{'AB'[side]}:activation"] == (ev.index(j), max(acts))
        act = _artist(ax, f"act_peak:{lab}")[0]       # on top of the activation band there
        assert list(act.get_xdata()) == [ev.index(j)]
        assert act.get_ydata()[0] == d["stacked"]["AB"[side]]["activation"][ev.index(j)]
        peak_of[lab] = (max(totals), max(acts))
    (pa, qa), (pb, qb) = peak_of[NAMES[0]], peak_of[NAMES[1]]
    assert qb < qa                                     # checkpointing keeps fewer activations
    assert fig._suptitle.get_text() == (f"memory: plain.jsonl vs ckpt.jsonl ({(pb - pa) / pa * 100:+.0f}% peak, "
                                        f"{(qb - qa) / qa * 100:+.0f}% activation peak)")
    legend = [t.get_text() for t in d["axes"][1].get_legend().get_texts()]
    assert "recompute (checkpointing)" in legend and "the other run's total" in legend
    assert _artist(d["axes"][1], "recompute") and not [p for p in d["axes"][0].patches if p.get_gid() == "recompute"]


def _hatched(ax, n: int) -> list:
    spans = [p for p in ax.patches if p.get_gid() == "held"]
    return [u for u in range(n) if any(p.get_x() < u < p.get_x() + p.get_width() for p in spans)]


def test_a_step_one_run_lacks_is_hatched_and_that_run_waits(pair):
    two, one = pair[0], _run(False, iterations=1)
    fig = memory_plot.compare_figure(two, one, ("two.jsonl", "one.jsonl"))
    d = fig.glassgrad_data
    ea, eb = d["events"]
    n = len(ea)
    second = next(lo for lo, _, key in steps(two.events) if key[0] == 1)     # A's second iteration
    lo_b, _, last_b = steps(one.events)[-1]                                  # B's frees after its step
    assert last_b not in [key for *_, key in steps(two.events)]
    held_b = _hatched(d["axes"][1], n)
    assert held_b == [u for u in range(n) if ea[u] >= second and eb[u] < lo_b]
    assert {eb[u] for u in held_b} == {second - 1}             # B waits on its last event before them
    held_a = _hatched(d["axes"][0], n)
    assert held_a == [u for u in range(n) if eb[u] >= lo_b] and {ea[u] for u in held_a} == {len(two) - 1}
    assert "a step this run lacks (it waits)" in [t.get_text() for t in d["axes"][1].get_legend().get_texts()]


def test_an_empty_trace_still_compares(pair):
    empty = torch.Trace([], {})
    for a, b, change in ((empty, pair[0], ""), (pair[0], empty, " (-100% peak, -100% activation peak)"),
                         (empty, empty, "")):
        fig = memory_plot.compare_figure(a, b, ("a", "b"))
        assert fig._suptitle.get_text() == "memory: a vs b" + change       # no percentage of nothing
        assert fig.glassgrad_data["events"][0 if a is empty else 1] == [0] * fig.glassgrad_data["alignment"].length
    assert not fig.glassgrad_data["peaks"] and fig.glassgrad_data["alignment"].length == 0


def test_the_pictures_colour_categories_as_the_app_does():
    css = (Path(memory_plot.__file__).parents[1] / "tui" / "glassgrad.tcss").read_text()
    app = dict(re.findall(r"MemoryView > \.memory--(\w+)\b[^{]*\{ color: (#[0-9a-f]{6});", css))
    assert {c: app[c] for c in CATEGORIES} == memory_plot.COLORS
