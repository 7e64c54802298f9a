"""Two runs of the same model, with and without checkpointing, compared: the known differences
show, nothing else does."""
import itertools

import pytest

import engine as torch
from engine.utils.checkpoint import checkpoint
from replay.diff import _lcs, diff, module_bytes, steps, summary
from replay.memory import phase_runs
from replay.words import nbytes


def _run(use_ckpt, batch=16):
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32), torch.nn.Tanh())
              for _ in range(3)]
    x = torch.randn(batch, 32)
    with torch.record() as tr:
        h = x
        for b in blocks:
            h = checkpoint(b, h, use_reentrant=False) if use_ckpt else b(h)
        h.sum().backward()
    return tr


@pytest.fixture(scope="module")
def plain_and_ckpt():
    return _run(False), _run(True)


def test_the_same_run_twice_has_no_differences():
    a, b = _run(False), _run(False)
    d = diff(a, b)
    assert d.only_a == d.only_b == [] and d.saved_delta == [] and d.unaligned == [] and d.notes == []
    assert set(d.category_delta.values()) <= {0}
    assert all(d.map_index(i) == i for i in range(len(a.events)))


def test_checkpointing_lowers_the_activation_peak_and_its_recomputes_stay_in_backward(plain_and_ckpt):
    a, b = plain_and_ckpt
    d = diff(a, b)
    assert d.peaks["B"]["activation"][1] < d.peaks["A"]["activation"][1]
    # rule 1: each recompute runs inside backward, so both runs are forward, backward, the frees after it
    assert [k for _, _, k in steps(b.events)] == [(0, "forward", 0), (0, "backward", 0), (0, "forward", 1)]
    assert [p for _, _, p in phase_runs(b.events)].count("recompute") == 3
    assert d.unaligned == [] and d.notes == [] and len(d.pairs) == 3
    assert d.only_a == d.only_b == []          # the same forward nodes in the same order
    assert len(d.recomputed["B"]) == 3 * 6 and d.recomputed["A"] == [] and d.dropped["A"] == []
    lines = summary(d, "plain.jsonl", "ckpt.jsonl")
    assert lines[0].startswith("A = plain.jsonl")
    assert any(line.startswith("B: recomputed 18 nodes: TBackward0 ×6, AddmmBackward0 ×6, TanhBackward0 ×6")
               for line in lines), lines
    # the regions drop alike slots: one entry per slot name, with its count and bytes
    drops = d.dropped["B"]
    by_name = {}
    for n, s, b in drops:
        by_name.setdefault(f"{n}.{s}", []).append(b)
    assert len(drops) > len(by_name) > 0
    said = next(line for line in lines if line.startswith("B: checkpointing dropped"))
    assert said.startswith(f"B: checkpointing dropped {len(drops)} ({nbytes(sum(b for *_, b in drops))}): ")
    for name, bs in by_name.items():
        assert (f"{name} ×{len(bs)} ({nbytes(sum(bs))} in all)" if len(bs) > 1 else f"{name} {nbytes(bs[0])}") in said


def test_alignment_starts_and_ends_each_step_together_and_moves_both_forward(plain_and_ckpt):
    a, b = plain_and_ckpt
    al = diff(a, b).alignment
    for (ra, rb, _), start in zip(al.segments, al.starts):
        n = max(ra[1] - ra[0], rb[1] - rb[0]) + 1
        assert al.at(start) == (ra[0], rb[0]) and al.at(start + n - 1) == (ra[1], rb[1])
    seen = [al.at(u) for u in range(al.length)]
    assert all(x0 <= x1 and y0 <= y1 for (x0, y0), (x1, y1) in itertools.pairwise(seen))
    assert {x for x, _ in seen} == set(range(len(a.events))) and {y for _, y in seen} == set(range(len(b.events)))
    for side, tr in ((0, a), (1, b)):          # position() finds the first position showing an event
        assert all(al.at(al.position(side, i))[side] == i for i in range(len(tr.events)))


def test_a_second_iteration_in_one_trace_only_is_named_and_held():
    one = _run(False)
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.Tanh())
    x = torch.randn(4, 32)
    with torch.record() as two:
        for _ in range(2):
            m(x).sum().backward()
    d = diff(one, two)
    # the first loss is freed when the second forward replaces it: that forward has ops, iteration 2 begins
    assert [k for _, _, k in steps(two.events)] == [(0, "forward", 0), (0, "backward", 0), (1, "forward", 0),
                                                    (1, "backward", 0), (1, "forward", 1)]
    assert d.unaligned == ["A: iteration 1 forward #2", "B: iteration 2 forward", "B: iteration 2 backward",
                           "B: iteration 2 forward #2"]
    assert any("in one trace only" in n for n in d.notes)
    al = d.alignment
    last_a = len(one.events) - 1
    assert all(al.at(u)[0] == last_a for u in range(al.starts[3], al.length))   # A waits on its last event
    assert al.at(al.starts[2])[1] == steps(two.events)[1][1]                      # B waits while A frees


def test_a_smaller_batch_saves_less_in_every_node_that_saves_activations():
    a, b = _run(False, batch=16), _run(False, batch=8)
    d = diff(a, b)
    assert d.saved_delta and all(sb < sa for _, sa, sb in d.saved_delta)
    assert d.category_delta.get("activation", 0) <= 0


def test_map_index_stays_inside_the_aligned_run(plain_and_ckpt):
    a, b = plain_and_ckpt
    d = diff(a, b)
    for (alo, ahi, pa), (blo, bhi, pb) in d.pairs:
        assert pa == pb
        assert blo <= d.map_index((alo + ahi) // 2) <= bhi


def test_module_bytes_at_the_peak_add_up_to_the_live_bytes_there(plain_and_ckpt):
    a, _ = plain_and_ckpt
    d = diff(a, a)
    i, live = d.peaks["A"]["live"]
    assert sum(module_bytes(a, i).values()) == live
    assert {m: x for m, (x, _) in d.modules.items()} == module_bytes(a, i)


def test_different_programs_still_compare_and_say_so():
    a = _run(False)
    with torch.record() as b:
        (torch.ones(3, requires_grad=True) * 2).exp().sum().backward()
    d = diff(a, b)
    assert any("different programs" in n for n in d.notes)
    assert any(line.startswith("the runs do not align: few forward nodes") for line in summary(d))


def test_lcs_finds_a_longest_common_subsequence():
    assert _lcs(list("abcde"), list("axcye")) == [(0, 0), (2, 2), (4, 4)]
    assert _lcs([], list("ab")) == []
