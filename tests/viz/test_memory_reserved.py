"""The reserved line (NOTE [ Drawing reserved memory ]): checked on the plotted data."""
import pytest

import engine as torch
from engine import nn
from replay.memory import timeline
from viz import memory_plot

MiB = 1 << 20


def _ev(seq, kind, phase="forward", **f):
    return {"seq": seq, "t": 0.0, "phase": phase, "kind": kind, **f}


def _artist(ax, gid):
    found = [a for a in ax.lines if a.get_gid() == gid]
    assert len(found) == 1, f"{len(found)} artists {gid}"
    return found[0]


def _plotted(fig, gid):
    """The bytes a reserved line shows, event by event."""
    d = fig.glassgrad_data
    return [round(v * d["reserved_divisor"]) for v in _artist(d["reserved_axes"], gid).get_ydata()]


def _expected(trace, device="cpu"):
    """After each event: the reserved figure of the newest alloc/free/empty_cache event so far."""
    now = trace.meta["memory_at_start"].get(device, {}).get("reserved", 0)
    out = []
    for e in trace.events:
        if e["kind"] in ("alloc", "free", "empty_cache") and e["device"] == device:
            now = e["reserved"]
        out.append(now)
    return out


def _train(hidden, batch):
    """One SGD step recorded on a fresh allocator model (so segment sizes do not depend on other tests)."""
    from engine.memory import allocator as _allocator
    saved, _allocator.hook.models = _allocator.hook.models, {}
    try:
        tr = _record_step(hidden, batch)
    finally:
        _allocator.hook.models = saved
    # what other tests left alive is not this step's: the timeline starts from nothing
    for m in tr.meta.get("memory_at_start", {}).values():
        m["allocated"], m["by_category"] = 0, {}
    return tr


def _record_step(hidden, batch):
    torch.manual_seed(0)
    with torch.record() as tr:
        model = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(batch, 64), torch.randint(0, 10, (batch,))
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        del loss, model, opt, x, y
        torch.memory.empty_cache()
    return tr


@pytest.fixture(scope="module")
def small():
    """An MLP step of a few KiB: the reserved segments are far larger than the live bytes."""
    return _train(16, 4)


@pytest.fixture(scope="module")
def big():
    """An MLP step of several MiB: reserved is within a few times the live peak."""
    return _train(1024, 512)


def test_series_is_the_events_reserved(small, big):
    for tr in (small, big):
        tl = timeline(tr)
        assert tl.reserved == _expected(tr) and len(set(tl.reserved)) > 1
        (ec,) = tr.of_kind("empty_cache")
        assert tl.reserved[ec["seq"]] == ec["reserved"] == 0     # everything freed, then released


def test_small_model_gets_a_reserved_panel(small):
    fig = memory_plot.memory_figure(small)
    d = fig.glassgrad_data
    assert d["reserved_layout"] == "panel"
    rax = d["reserved_axes"]
    assert rax is not fig.axes[0] and len(fig.axes) == 2
    assert _plotted(fig, "reserved") == _expected(small)
    # the live total is drawn in the panel on the reserved scale, so the gap is visible
    assert [round(v * d["reserved_divisor"]) for v in _artist(rax, "total:panel").get_ydata()] == d["timeline"].total
    assert "reserved (caching allocator model)" in [t.get_text() for t in rax.get_legend().get_texts()]
    peak_res, peak_live = max(_expected(small)), d["timeline"].peak_bytes
    (note,) = [t for t in rax.texts if t.get_gid() == "reserved-note"]
    ratio = peak_res / peak_live                      # one decimal under 10x, none above (what a reader needs)
    assert (f"{ratio:.1f}×" if ratio < 10 else f"{ratio:,.0f}×") in note.get_text()
    assert "memory timeline on cpu" in rax.get_title()
    # the stacked chart keeps its own scale: its top is set by the live bytes, not by reserved
    assert fig.axes[0].get_ylim()[1] * d["divisor"] < 2 * peak_live
    assert "reserved" not in [a.get_gid() for a in fig.axes[0].lines]


def test_big_model_draws_reserved_on_the_chart(big):
    fig = memory_plot.memory_figure(big)
    d = fig.glassgrad_data
    assert d["reserved_layout"] == "same" and d["reserved_axes"] is fig.axes[0] and len(fig.axes) == 1
    assert d["reserved_divisor"] == d["divisor"] == MiB
    assert _plotted(fig, "reserved") == _expected(big)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "reserved (caching allocator model)" in labels and "allocated (total)" in labels
    assert fig.axes[0].get_ylim()[1] * MiB > max(_expected(big))      # the line fits on the axis


def test_forcing_the_layout(small, big):
    assert memory_plot.memory_figure(big, reserved="panel").glassgrad_data["reserved_layout"] == "panel"
    fig = memory_plot.memory_figure(small, reserved="same")
    assert _plotted(fig, "reserved") == _expected(small)
    fig = memory_plot.memory_figure(small, reserved="off")
    assert fig.glassgrad_data["reserved_layout"] == "off" and len(fig.axes) == 1
    assert "reserved" not in [a.get_gid() for a in fig.axes[0].lines]
    with pytest.raises(ValueError, match="reserved must be one of 'auto', 'same', 'panel', 'off', not 'log'"):
        memory_plot.memory_figure(small, reserved="log")


def test_a_trace_without_reserved_draws_none(small):
    evs = [{k: v for k, v in e.items() if k != "reserved"} for e in small.events]
    fig = memory_plot.memory_figure(evs, reserved="panel")
    assert fig.glassgrad_data["reserved_layout"] == "off" and timeline(evs).reserved is None


def test_bare_event_list_starts_from_the_first_figure():
    evs = [_ev(0, "op", op="x", inputs=[], output=None, node=None, file=None, line=None, region=None),
           _ev(1, "alloc", storage=1, bytes=8, device="cpu", category="other", reserved=2 * MiB),
           _ev(2, "mark", text="not a memory event", reserved=5),
           _ev(3, "alloc", storage=2, bytes=8, device="cuda:0", category="other", reserved=20 * MiB),
           _ev(4, "empty_cache", device="cpu", bytes=2 * MiB, reserved=0)]
    assert timeline(evs, "cpu").reserved == [2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB, 0]
    assert timeline(evs, "cuda:0").reserved == [20 * MiB] * 5


def test_compare_figure_draws_both_reserved_lines(small, big):
    fig = memory_plot.compare_figure(small, big, ("small", "big"))
    d = fig.glassgrad_data
    assert d["reserved_layout"] == "same" and d["reserved_axes"] is None   # big's live peak sets the scale
    for ax, tr, lab, ev in zip(d["axes"], (small, big), ("small", "big"), d["events"]):
        line = _artist(ax, f"reserved:{lab}")         # each run's reserved on its own panel, at the aligned events
        assert [round(v * d["divisor"]) for v in line.get_ydata()] == [_expected(tr)[i] for i in ev]
    labels = [t.get_text() for t in d["axes"][1].get_legend().get_texts()]
    assert "reserved (caching allocator model)" in labels
    half = torch.Trace(small.events[: len(small) // 2], small.meta)
    fig = memory_plot.compare_figure(small, half, ("full", "half"))
    d = fig.glassgrad_data
    assert d["reserved_layout"] == "panel" and d["reserved_axes"] not in d["axes"]
    ea, eb = d["events"]
    assert _plotted(fig, "reserved:full") == [_expected(small)[i] for i in ea]
    assert _plotted(fig, "reserved:half") == [_expected(small)[i] for i in eb]
    legend = [t.get_text() for t in d["reserved_axes"].get_legend().get_texts()]
    assert "full: reserved (caching allocator model)" in legend
    assert fig._suptitle.get_text().startswith("memory: full vs half")


def test_render_command_chooses_the_layout(small, tmp_path, capsys):
    from viz.cli import render_main
    small.save(tmp_path / "run.jsonl")
    for choice, ids in (("auto", {'id="reserved"', 'id="reserved-note"'}), ("same", {'id="reserved"'}),
                        ("off", set())):
        out = tmp_path / f"{choice}.svg"
        assert render_main([str(tmp_path / "run.jsonl"), "--memory", str(out), "--reserved", choice, "-q"]) == 0
        svg = out.read_text()
        assert {i for i in ('id="reserved"', 'id="reserved-note"') if i in svg} == ids, choice
    assert render_main([str(tmp_path / "run.jsonl"), "--memory", str(tmp_path / "x.svg"), "--reserved", "log"]) == 2
    assert "invalid choice: 'log'" in capsys.readouterr().err
