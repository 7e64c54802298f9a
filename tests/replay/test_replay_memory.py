"""Memory replay (NOTE [ Memory replay ]): live bytes by category after every event (moved from tests/viz/test_memory.py)."""
import pytest

from replay.memory import (CATEGORIES, Replay, by_device, devices, live_after, peaks, reserved_rows, rows,
                           timeline)
from replay.model import TraceModel
from tests.replay.traces import RECORDED, SYN


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


# ---- one implementation: replay.memory agrees with the engine's Trace API on recorded traces

@pytest.fixture(params=sorted(RECORDED))
def recorded(request):
    return RECORDED[request.param]()


def test_rows_agree_with_trace_replay_memory(recorded):
    assert rows(recorded) == recorded.replay_memory()
    for dev in devices(recorded.events) + ["cuda:7"]:
        assert rows(recorded, dev) == recorded.replay_memory(dev)


def test_reserved_rows_and_peaks_agree_with_trace(recorded):
    assert reserved_rows(recorded) == recorded.replay_reserved()
    assert reserved_rows(recorded, "cpu") == recorded.replay_reserved("cpu")
    s = recorded.summary()
    assert peaks(recorded) == {k: s[k] for k in ("peak_bytes", "peak_seq", "final_bytes", "peak_reserved",
                                                 "final_reserved")}


def test_the_app_replay_agrees_with_the_trace_at_every_memory_event(recorded):
    """TraceModel.memory (the app), timeline (the pictures) and Trace.replay_memory: one set of numbers."""
    m = TraceModel.from_trace(recorded)
    tl = timeline(recorded, "cpu")
    at = {seq: (live, cats) for seq, live, cats in recorded.replay_memory()}
    for i, e in enumerate(recorded.events):
        if e["seq"] in at:
            live, cats = at[e["seq"]]
            assert m.memory.total[i] == sum(live.values()) == tl.total[i], i
            assert {c: b for c, b in m.memory.live_at(i).items() if b} == {c: b for c, b in cats.items() if b}, i
    assert by_device(recorded) == {seq: ("cpu", {c: b for c, b in cats.items()})
                                   for seq, _, cats in recorded.replay_memory("cpu")}


def test_live_after_counts_from_nothing():
    assert live_after(SYN) == {"parameter": 1000, "gradient": 1000, "optimizer": 2000, "input": -50}
    assert live_after(SYN[:3]) == {"parameter": 1000, "activation": 300}
    assert live_after(SYN, device="cuda:0") == {}


def test_a_replay_folds_events_in_as_they_come():
    whole = Replay(SYN)
    parts = Replay()
    for e in SYN:
        parts.add(e)
    assert parts.total == whole.total == [1000, 1300, 1300, 1300, 2300, 2000, 4000, 3950]
    assert (whole.peak_index, whole.peak_bytes) == (6, 4000)
    odd = Replay([{"kind": "alloc", "storage": 1, "bytes": 8, "device": "cpu", "category": "scratch"}])
    assert odd.categories[-1] == "scratch" and odd.live_at(0)["scratch"] == 8     # rule 4: a column of its own


def test_categories_come_from_the_trace_format():
    import engine.trace
    assert CATEGORIES == tuple(getattr(engine.trace, "CATEGORIES", CATEGORIES))
    assert set(CATEGORIES) == {"parameter", "gradient", "activation", "optimizer", "input", "other"}


def test_a_start_in_a_category_of_its_own():
    r = Replay(SYN[:1], start={"scratch": 5, "parameter": 7})
    assert r.baseline == {"scratch": 5, "parameter": 7} and r.total == [1012]
    assert r.live_at(0)["scratch"] == 5 and r.live_at(0)["parameter"] == 1007


def test_activation_peak_and_live_bytes_peak_are_two_events():
    """NOTE [ Memory replay ] rule 6: the activation peak (end of forward) is not the live-bytes peak."""
    tl = timeline(SYN)
    assert (tl.act_peak_step, tl.act_peak_bytes) == (2, 300)
    assert (tl.peak_step, tl.peak_bytes) == (6, 4050)
    r = Replay(SYN, start={"input": 50})
    assert r.peak_in() == (6, 4050) and r.peak_in(category="activation") == (2, 300)
    assert r.peak_in(0, 5) == (4, 2350)               # within a window (a lesson step)
    assert r.peak_in(3, 8, "activation") == (3, 300)  # the first event on ties
    assert r.peak_in(5, 8, "activation") == (5, 0)


def _brute_peak(seq, lo, hi):
    seg = seq[lo:hi]
    j = max(range(len(seg)), key=seg.__getitem__)
    return lo + j, seg[j]


def test_a_prefix_peak_read_from_the_running_peak_is_the_first_highest_event(mlp_trace):
    """Rule 6: peak_in(0, hi) of a growing model reads where the running peak last rose (a chart drawing the
    events of its last catch-up asks it each catch-up); the same answer as a pass over the events, for every
    prefix, both peaks, with bytes alive before the first event or none, and after a drop below them."""
    from replay.memory import start_of
    tr = mlp_trace[0]
    traces = [(tr.events, start_of(tr.meta)), (tr.events, {"activation": 4096, "input": 64}),
              (SYN, {"activation": 500}), (SYN, None)]
    for events, start in traces:
        r = Replay(events, start=start)
        act = [sn[r.categories.index("activation")] for sn in r.snaps]
        for hi in range(1, len(r.total) + 1):
            assert r.peak_in(0, hi) == _brute_peak(r.total, 0, hi), hi
            assert r.peak_in(0, hi, "activation") == _brute_peak(act, 0, hi), hi
