"""Memory replay and the memory figures: checked on the plotted data, not on pixels."""
import pytest

import engine as torch
from engine import nn
from viz import memory_plot
from viz.memory_data import CATEGORIES, timeline


def _ev(seq, kind, phase="forward", **f):
    return {"seq": seq, "t": 0.0, "phase": phase, "kind": kind, **f}


SYN = [
    _ev(0, "alloc", storage=1, bytes=1000, device="cpu", category="parameter"),
    _ev(1, "alloc", storage=2, bytes=300, device="cpu", category="other"),
    _ev(2, "category", storage=2, bytes=300, device="cpu", old="other", new="activation"),
    _ev(3, "op", op="relu", inputs=[], output=None, node=None, file="/a/b/train.py", line=9, region=None),
    _ev(4, "alloc", "backward", storage=3, bytes=1000, device="cpu", category="gradient"),
    _ev(5, "free", "backward", storage=2, bytes=300, device="cpu", category="activation"),
    _ev(6, "alloc", "optimizer", storage=4, bytes=2000, device="cpu", category="optimizer"),
    _ev(7, "free", "optimizer", storage=9, bytes=50, device="cpu", category="input"),   # made before recording
]


def test_replay_by_category():
    tl = timeline(SYN)
    assert tl.baseline == {"input": 50}
    assert tl.by_category["parameter"] == [1000] * 8
    assert tl.by_category["activation"] == [0, 0, 300, 300, 300, 0, 0, 0]
    assert tl.by_category["other"] == [0, 300, 0, 0, 0, 0, 0, 0]
    assert tl.by_category["gradient"] == [0, 0, 0, 0, 1000, 1000, 1000, 1000]
    assert tl.by_category["input"] == [50] * 7 + [0]
    assert tl.total == [1050, 1350, 1350, 1350, 2350, 2050, 4050, 4000]
    assert (tl.peak_step, tl.peak_bytes) == (6, 4050)
    assert tl.phases == [(0, 3, "forward"), (4, 5, "backward"), (6, 7, "optimizer")]
    assert tl.reserved is None


def test_peak_cause_names_the_op():
    evs = SYN[:4]
    tl = timeline(evs)
    assert tl.peak_step == 1 and tl.peak_cause == "relu (train.py:9)"


def test_sincos_trace_matches_engine_counts(sincos):
    tl = timeline(sincos.events)          # a bare event list: the inferring replay
    # x (12 B, made before recording) is in the baseline; sin's output becomes an activation
    assert tl.baseline == {"other": 12}
    i = next(k for k, e in enumerate(sincos.events) if e["kind"] == "category" and e["new"] == "activation")
    assert tl.by_category["activation"][i] == 12
    assert tl.by_category["activation"][-1] == 0
    assert tl.by_category["gradient"][-1] == 12        # x.grad
    assert tl.total[-1] == 28                          # x, x.grad and y (the 0-d sum, still referenced)


def test_parameters_made_before_recording_count_from_the_start(mlp_trace):
    tr, model = mlp_trace
    tl = timeline(tr.events)
    nparam = sum(p.numel() * 4 for p in model.parameters())
    assert tl.baseline["parameter"] == nparam == tl.by_category["parameter"][0] == tl.by_category["parameter"][-1]
    assert max(tl.by_category["gradient"]) == nparam
    assert tl.by_category["gradient"][-1] == 0         # zero_grad() set them to None


def test_recorded_trace_starts_from_memory_at_start(mlp_trace):
    tr, _ = mlp_trace
    start = tr.meta.get("memory_at_start") if hasattr(tr, "meta") else None
    if start is None or not hasattr(tr, "replay_memory"):
        pytest.skip("this engine's traces carry no memory_at_start")
    tl, own = timeline(tr), timeline(tr.events)
    # everything alive at the start (this process's other tensors too) is the baseline ...
    assert tl.baseline == {c: b for c, b in start["cpu"]["by_category"].items() if b}
    assert tl.total[0] - own.total[0] == sum(tl.baseline.values()) - sum(own.baseline.values())
    # ... and both replays then move by exactly the same bytes at every event
    for c in CATEGORIES:
        d = [a - b for a, b in zip(tl.by_category[c], own.by_category[c])]
        assert len(set(d)) == 1, c
    seq, live, cats = tr.replay_memory("cpu")[-1]
    assert tl.total[-1] == live["cpu"]


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
    assert list(stacked) == ["parameter", "optimizer", "gradient", "activation", "input", "other"]
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


def test_compare_figure(mlp_trace):
    tr, _ = mlp_trace
    half = tr.events[: len(tr) // 2]
    fig = memory_plot.compare_figure(tr, half, ("full", "half"))
    ax = fig.axes[0]
    a, b = fig.glassgrad_data["timelines"]
    div = fig.glassgrad_data["divisor"]
    assert [round(v * div) for v in _artist(ax, "total:full").get_ydata()] == a.total
    assert [round(v * div) for v in _artist(ax, "total:half").get_ydata()] == b.total
    assert len(_artist(ax, "activation:half").get_ydata()) == len(half)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(l.startswith("full: allocated · peak ") for l in labels)
    assert any("full vs half" in a.get_title() for a in fig.axes)


def test_save_figure(tmp_path):
    fig = memory_plot.memory_figure(SYN)
    out = memory_plot.save_figure(fig, tmp_path / "m.png")
    data = open(out, "rb").read()
    assert data.startswith(b"\x89PNG") and len(data) > 10000
    memory_plot.save_figure(fig, tmp_path / "m.svg")
    assert "<svg" in (tmp_path / "m.svg").read_text()
    with pytest.raises(ValueError, match=r"use a \.png, \.svg or \.pdf"):
        memory_plot.save_figure(fig, tmp_path / "m.gif")
