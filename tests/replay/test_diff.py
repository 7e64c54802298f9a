"""Two runs of the same model, with and without checkpointing, compared: the known differences
show, nothing else does."""
import pytest

import engine as torch
from engine.utils.checkpoint import checkpoint
from replay.diff import _lcs, diff, summary


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


def test_checkpointing_lowers_the_activation_peak_and_adds_a_recompute(plain_and_ckpt):
    a, b = plain_and_ckpt
    d = diff(a, b)
    assert d.peaks["B"]["activation"][1] < d.peaks["A"]["activation"][1]
    assert [u for u in d.unaligned if "recompute" in u] == [f"B: recompute #{k}" for k in (1, 2, 3)]
    assert d.only_a == d.only_b == []          # the same forward nodes in the same order
    lines = summary(d, "plain.jsonl", "ckpt.jsonl")
    assert lines[0].startswith("A = plain.jsonl")
    assert any("phases differ" in n for n in d.notes)


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


def test_different_programs_still_compare_and_say_so():
    a = _run(False)
    with torch.record() as b:
        (torch.ones(3, requires_grad=True) * 2).exp().sum().backward()
    d = diff(a, b)
    assert any("different programs" in n for n in d.notes)
    assert summary(d)


def test_lcs_finds_a_longest_common_subsequence():
    assert _lcs(list("abcde"), list("axcye")) == [(0, 0), (2, 2), (4, 4)]
    assert _lcs([], list("ab")) == []
