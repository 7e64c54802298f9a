"""Memory around each module's forward and backward, checked against the trace's allocations."""
import engine as torch
from replay.memory import Replay, start_of
from replay.module_memory import module_memory


def _run():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    with torch.record() as tr:
        m(x).sum().backward()
    return tr


def test_each_modules_forward_adds_its_outputs_bytes():
    tr = _run()
    rows = {r.module: r for r in module_memory(tr)}
    assert list(rows) == ["", "0", "1", "2"]
    assert rows["0"].post_fwd - rows["0"].pre_fwd == 8 * 32 * 4          # addmm's output (t() is a view)
    assert rows["1"].post_fwd - rows["1"].pre_fwd == 8 * 32 * 4          # relu's output
    for r in rows.values():                                               # allocations minus frees in the span
        lo, hi = r.fwd
        moved = sum(e["bytes"] if e["kind"] == "alloc" else -e["bytes"]
                    for e in tr.events[lo:hi + 1] if e["kind"] in ("alloc", "free"))
        assert r.post_fwd - r.pre_fwd == moved
    lo, hi = rows["2"].fwd                        # layer 0's pre-ReLU output dies as layer 2 starts
    assert [e["bytes"] for e in tr.events[lo:hi + 1] if e["kind"] == "free"] == [8 * 32 * 4]
    assert rows[""].pre_fwd == rows["0"].pre_fwd and rows[""].post_fwd == rows["2"].post_fwd
    for r in rows.values():
        assert r.peak_fwd >= max(r.pre_fwd, r.post_fwd)


def test_backward_figures_follow_the_modules_nodes():
    tr = _run()
    r = Replay(tr.events, start_of(tr.meta))
    rows = {x.module: x for x in module_memory(tr)}
    ev = tr.events
    for name in ("0", "1", "2"):
        row = rows[name]
        b0, b1 = row.bwd
        assert ev[b0]["kind"] == "execute"
        assert row.pre_bwd == r.total[b0 - 1] and row.post_bwd == r.total[b1]
        assert row.peak_bwd == max(r.total[b0 - 1:b1 + 1])
    assert rows["2"].bwd[0] < rows["1"].bwd[0] < rows["0"].bwd[0]        # backward runs the last layer first


def test_a_window_without_the_backward_has_no_backward_figures():
    tr = _run()
    first_bwd = next(i for i, e in enumerate(tr.events) if e["kind"] == "backward_begin")
    rows = module_memory(tr, 0, first_bwd)
    assert rows and all(x.pre_bwd is None and x.bwd is None for x in rows)
