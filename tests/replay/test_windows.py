"""Window presets cover what a learner picks, and the peak inside one is the replay's."""
import engine as torch
from engine.utils.checkpoint import checkpoint
from replay.memory import Replay, start_of
from replay.windows import Window, clamp, peak_in, presets


def _run():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with torch.record() as tr:
        tr.mark("step", step=0, title="train")
        for _ in range(2):
            checkpoint(m, torch.randn(4, 8), use_reentrant=False).sum().backward()
            opt.step()
            opt.zero_grad()
    return tr


def test_presets_name_each_step_phase_recompute_and_optimizer_step():
    tr = _run()
    labels = [w.label for w in presets(tr)]
    assert "step 1: train" in labels
    assert len([lb for lb in labels if lb.startswith("recompute of region ")]) == 2      # one per checkpoint call
    assert {"forward #1", "backward #1", "recompute #1", "backward #2"} <= set(labels)
    assert [lb for lb in labels if lb.startswith("SGD step")] == ["SGD step 1", "SGD step 2"]
    for w in presets(tr):
        assert 0 <= w.lo < w.hi <= len(tr.events)
        if w.label.startswith("SGD step"):
            assert tr.events[w.hi - 1]["kind"] == "optimizer_step"
        if w.label.startswith("recompute of"):
            assert tr.events[w.lo]["kind"] == "recompute_begin" and tr.events[w.hi - 1]["kind"] == "recompute_end"


def test_the_peak_in_a_window_is_the_highest_event_inside_it():
    tr = _run()
    r = Replay(tr.events, start_of(tr.meta))
    for w in presets(tr):
        i, b = peak_in(r, w)
        assert w.lo <= i < w.hi and b == max(r.total[w.lo:w.hi])
        assert r.total.index(b, w.lo, w.hi) == i                  # the first on ties


def test_clamp_orders_and_bounds_two_marks():
    assert clamp(9, 3, 20) == Window("events #3–#9", 3, 10)
    assert clamp(-5, 50, 20) == Window("events #0–#19", 0, 20)
    assert 5 in clamp(3, 9, 20) and 10 not in clamp(3, 9, 20)


def test_ops_between_backward_and_the_optimizer_that_make_no_node_are_no_forward():
    """NOTE [ Windows ] rule 2: clip_grad_norm_ runs in the forward phase but makes no graph node; its
    run is "no-grad work #k", so "forward #k" counts the forward passes, the same on an opened trace."""
    import os
    import tempfile

    from engine.trace import Trace

    torch.manual_seed(0)
    m = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with torch.record() as tr:
        for _ in range(2):
            m(torch.randn(3, 4)).sum().backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
    labels = [w.label for w in presets(tr)]
    assert [lb for lb in labels if lb.startswith(("forward", "no-grad"))] == \
        ["forward #1", "no-grad work #1", "forward #2", "no-grad work #2", "no-grad work #3"]   # #3: the last zero_grad
    for w in presets(tr):
        ops = [e for e in tr.events[w.lo:w.hi] if e["kind"] == "op"]
        if w.label.startswith("no-grad"):
            assert all(e.get("node") is None for e in ops)
        if w.label in ("no-grad work #1", "no-grad work #2"):
            assert any(e.get("name") == "norm" or "norm" in str(e.get("op", "")) for e in ops)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.jsonl")
        tr.save(path)
        opened = Trace.open(path)
        assert [w.label for w in presets(opened.events)] == labels
