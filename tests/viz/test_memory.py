"""The memory figures: checked on the plotted data, not on pixels (the replay's own tests: tests/replay)."""
from pathlib import Path

import pytest

from replay.memory import CATEGORIES
from tests.replay.traces import SYN
from viz import memory_plot


def _artist(ax, gid):
    found = [a for a in list(ax.lines) + list(ax.collections) if a.get_gid() == gid]
    assert found, f"no artist {gid}"
    return found[0]


def test_memory_figure_stacks_to_the_total():
    fig = memory_plot.memory_figure(SYN, step=5)
    ax = fig.axes[0]
    data = fig.glassgrad_data
    assert (data["unit"], data["divisor"]) == ("KiB", 1024)
    tl = data["timeline"]
    total = _artist(ax, "total")
    assert [round(v * 1024) for v in total.get_ydata()] == tl.total
    stacked = data["stacked"]
    assert list(stacked) == list(CATEGORIES)      # the trace format's one category order
    top = stacked["other"]
    assert [round(v * 1024) for v in top] == tl.total
    for c in stacked:                                   # each layer was drawn, with its label
        assert _artist(ax, c) is not None
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "activations (saved for backward)" in labels and "backward phase" in labels
    assert "optimizer step" in labels and "allocated (total)" in labels
    assert sorted(t.get_gid() for t in ax.texts if (t.get_gid() or "").startswith("phase:")) == \
        ["phase:backward", "phase:forward", "phase:optimizer"]
    assert "reserved" not in [a.get_gid() for a in ax.lines]
    peak = _artist(ax, "peak")
    assert list(peak.get_xdata()) == [6] and round(peak.get_ydata()[0] * 1024) == 4050
    assert any("peak 4.0 KiB at event 6" in t.get_text() for t in ax.texts)
    assert list(_artist(ax, "step").get_xdata()) == [5, 5]
    assert ax.get_ylabel() == "live memory (KiB)"


def test_empty_categories_are_left_out(sincos):
    fig = memory_plot.memory_figure(sincos.events)
    assert set(fig.glassgrad_data["stacked"]) == {"gradient", "activation", "other"}


def test_reserved_line_when_the_trace_has_it():
    evs = [dict(e) for e in SYN]
    for e in evs:
        if e["kind"] in ("alloc", "free"):
            e["reserved"] = 2 * 1024 * 1024
    fig = memory_plot.memory_figure(evs)       # 2 MiB over a 4 KiB peak: its own panel above the chart
    assert fig.glassgrad_data["reserved_layout"] == "panel"
    res = _artist(fig.glassgrad_data["reserved_axes"], "reserved")
    assert fig.glassgrad_data["unit"] == "KiB" and fig.glassgrad_data["reserved_divisor"] == 1 << 20
    assert set(res.get_ydata()) == {2.0}


def test_compare_figure_takes_a_bare_event_list(mlp_trace):
    tr, _ = mlp_trace
    half = tr.events[: len(tr) // 2]
    fig = memory_plot.compare_figure(tr, half, ("full", "half"))
    d = fig.glassgrad_data
    a, b = d["timelines"]
    ea, eb = d["events"]
    div = d["divisor"]
    assert set(ea) == set(range(len(tr))) and set(eb) == set(range(len(half)))
    assert [round(v * div) for v in _artist(d["axes"][0], "total:full").get_ydata()] == [a.total[i] for i in ea]
    assert [round(v * div) for v in _artist(d["axes"][1], "total:half").get_ydata()] == [b.total[i] for i in eb]
    assert fig._suptitle.get_text().startswith("memory: full vs half (")
    assert d["axes"][0].get_title(loc="left").startswith("A · full · ")


def test_save_figure(tmp_path):
    fig = memory_plot.memory_figure(SYN)
    out = memory_plot.save_figure(fig, tmp_path / "m.png")
    data = Path(out).read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10000
    memory_plot.save_figure(fig, tmp_path / "m.svg")
    assert "<svg" in (tmp_path / "m.svg").read_text()
    with pytest.raises(ValueError, match=r"use a \.png, \.svg or \.pdf"):
        memory_plot.save_figure(fig, tmp_path / "m.gif")
