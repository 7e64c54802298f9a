"""Storage lifetimes, who holds the bytes, and the allocator's segments, each checked against an
independent count of the same trace's events."""
import pytest

import engine as torch
from engine.memory.allocator import CachingAllocatorModel
from engine.utils.checkpoint import checkpoint
from replay.holders import holders
from replay.lifetimes import alive_at, bands, describe, lifetimes
from replay.memory import Replay, start_of
from replay.segments import SegmentsAt, explain, gap


@pytest.fixture(scope="module")
def step():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    x = torch.randn(5, 8)
    with torch.record() as tr:
        h = checkpoint(m[0], x, use_reentrant=False)
        loss = m[2](m[1](h)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    return tr


def test_the_bytes_alive_at_every_event_are_the_replays_live_bytes(step):
    lts = lifetimes(step)
    r = Replay(step.events, start_of(step.meta))
    for i in range(len(step.events)):
        assert sum(lt.bytes for lt in lts if lt.alive_at(i)) == r.total[i], i


def test_each_storage_lives_from_its_alloc_to_its_free(step):
    lts = {lt.storage: lt for lt in lifetimes(step)}
    for i, e in enumerate(step.events):
        if e["kind"] == "alloc":
            assert lts[e["storage"]].start == i and lts[e["storage"]].bytes == e["bytes"]
        elif e["kind"] == "free":
            assert lts[e["storage"]].end == i


def test_why_each_storage_was_freed(step):
    lts = lifetimes(step)
    why = {lt.freed_why for lt in lts}
    assert {"backward released it", "its .grad was cleared (zero_grad or .grad = None)",
            "its last reference died"} <= why
    relu_out = next(lt for lt in lts if lt.made_by == "relu")
    assert relu_out.freed_why == "backward released it"
    assert [s[2] for s in relu_out.saved_by][:1] == ["ReluBackward0"]
    adam = [lt for lt in lts if (lt.made_by or "").startswith("Adam state (step 1)")]
    assert len(adam) == 3 * 4      # step, exp_avg and exp_avg_sq for each of the 4 parameters
    assert "made by relu" in " ".join(describe(relu_out))


def test_a_checkpoint_drop_is_named(step):
    lts = lifetimes(step)
    drops = [e for e in step.events if e["kind"] == "checkpoint_drop" and not e["kept"]]
    dropped = {e["storage"] for e in drops}
    assert all(lt.freed_why == "checkpoint dropped it" for lt in lts if lt.storage in dropped and lt.end is not None)


def test_bands_keep_the_largest_and_sum_the_rest(step):
    lts = lifetimes(step)
    n = len(step.events)
    b = bands(lts, 0, n, n=3)
    assert len(b.top) == 3
    assert min(lt.bytes for lt in b.top) >= max(lt.bytes for lt in b.rest)
    i = n // 2
    assert sum(lt.bytes for lt in b.top if lt.alive_at(i)) + b.rest_bytes_at(i) == \
        sum(lt.bytes for lt in alive_at(lts, i))


def test_holders_rows_add_up_to_the_live_bytes(step):
    lts = lifetimes(step)
    r = Replay(step.events, start_of(step.meta))
    for i in (r.peak_index, len(step.events) - 1):
        for by in ("op", "line", "module"):
            rows = holders(lts, i, by=by)
            own = sum(x.own for x in rows)
            assert own == r.total[i]
            assert sum(x.count for x in rows) == len(alive_at(lts, i))
    rows = holders(lts, r.peak_index, by="op", categories=("parameter",))
    assert sum(x.own for x in rows) == r.live_of("parameter", r.peak_index)
    assert rows == sorted(rows, key=lambda x: -x.total)


def test_holders_module_totals_include_children():
    from replay.lifetimes import Lifetime
    a, b, c = Lifetime(1, 100, "cpu", 0), Lifetime(2, 10, "cpu", 0), Lifetime(3, 1, "cpu", 0)
    a.module, b.module, c.module = "blocks.0.attn", "blocks.0", ""
    rows = {x.name: x for x in holders([a, b, c], 0, by="module")}
    assert (rows["blocks.0"].own, rows["blocks.0"].total) == (10, 110)
    assert (rows[""].own, rows[""].total) == (1, 111)
    with pytest.raises(ValueError, match="by must be one of"):
        holders([a], 0, by="file")


def test_segments_replay_matches_a_fresh_model_and_jumps_back(step):
    seg = SegmentsAt(step, "cpu", every=7)
    lts = lifetimes(step)
    n = len(step.events)
    for i in (n - 1, n // 2, 3, n // 3):
        model = seg.at(i)
        fresh = CachingAllocatorModel("cpu")
        for lt in sorted((x for x in lts if x.before_recording and not x.unseen), key=lambda x: str(x.storage)):
            fresh.malloc(lt.storage, lt.bytes)
        for lt in (x for x in lts if x.unseen):
            fresh.malloc(lt.storage, lt.bytes)
        for e in step.events[:i + 1]:
            if e["kind"] == "alloc":
                fresh.malloc(e["storage"], e["bytes"])
            elif e["kind"] == "free":
                fresh.free(e["storage"])
        assert (model.reserved, model.active, model.requested) == (fresh.reserved, fresh.active, fresh.requested)
        g = gap(model)
        assert g["requested"] == sum(lt.bytes for lt in alive_at(lts, i))
        assert g["requested"] + g["rounding"] + g["cached"] == g["reserved"]
        assert model.active % 512 == 0
    assert explain(gap(seg.at(n - 1))).startswith("reserved 2.00 MiB = tensors")


def test_op_events_carry_the_module_path_and_holders_group_by_it():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)
            self.act = torch.nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x)) + x

    torch.manual_seed(0)
    m = torch.nn.Sequential(Block(), Block(), torch.nn.Linear(8, 2))
    with torch.record() as tr:
        y = m(torch.randn(4, 8))
        z = y.sum()
    ops = [(e["op"], e["module"]) for e in tr.events if e["kind"] == "op"]
    assert ops == [("t", "0.fc"), ("addmm", "0.fc"), ("relu", "0.act"), ("add", "0"),
                   ("t", "1.fc"), ("addmm", "1.fc"), ("relu", "1.act"), ("add", "1"),
                   ("t", "2"), ("addmm", "2"), ("sum", None)]
    lts = lifetimes(tr)
    i = len(tr.events) - 1
    rows = {r.name: r for r in holders(lts, i, by="module")}
    made_in_0 = sum(lt.bytes for lt in lts if lt.alive_at(i) and (lt.module or "").startswith("0"))
    assert rows["0"].total == made_in_0 and rows["0"].own < rows["0"].total
    assert rows["0.act"].own == 4 * 8 * 4                     # the first ReLU's output is alive (saved)
    del y, z


def test_what_an_op_makes_only_to_keep_for_backward_is_made_by_that_op():
    """NOTE [ Storage lifetimes ] 5: LayerNorm's mean and rstd are no op's output; layer_norm packed them."""
    ln = torch.nn.LayerNorm(8)
    with torch.record() as tr:
        x = torch.randn(4, 8, requires_grad=True)    # data made inside the trace: not layer_norm's
        y = ln(x)
    packs = {e["storage"]: e["name"] for e in tr.events if e["kind"] == "pack"}
    out = next(e for e in tr.events if e["kind"] == "op")["output"]["storage"]
    by_sid = {lt.storage: lt for lt in lifetimes(tr)}
    kept = [sid for sid, name in packs.items() if name.startswith("result") and sid != out]
    assert len(kept) == 2
    for sid in kept:
        assert by_sid[sid].made_by == f"layer_norm (kept for backward: {packs[sid]})"
        assert by_sid[sid].bytes == 4 * 4           # one float per row
    assert by_sid[out].made_by == "layer_norm"
    assert by_sid[x._storage.id].made_by is None
    del y
