"""Strides of clone(), to() and elementwise results (NOTE [ Output layout ] in engine/backend/layout.py).

Expected strides were recorded from PyTorch 2.13 into tests/fixtures/learner_fidelity_reference.json by
tests/fixtures/make_learner_fidelity_reference.py; each case is the same expression run with engine.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine as torch
from engine.backend import layout as L

F = torch.nn.functional
with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "learner_fidelity_reference.json")) as _f:
    REF = json.load(_f)["layout"]
NS = {"torch": torch, "F": F}
INPUTS = {k: eval(v["code"], NS) for k, v in REF["inputs"].items()}


def _id(case):
    return "|".join(case[k] for k in ("x", "a", "b") if k in case) + "|" + case["code"]


def test_inputs_have_pytorchs_strides():
    assert {k: list(t.stride()) for k, t in INPUTS.items()} == {k: v["stride"] for k, v in REF["inputs"].items()}


@pytest.mark.parametrize("case", REF["cases"], ids=_id)
def test_strides_and_contiguity_match_pytorch(case):
    env = dict(NS, **{k: INPUTS[case[k]] for k in ("x", "a", "b") if k in case})
    with np.errstate(divide="ignore", invalid="ignore"):     # 0 / 0 among the cases
        r = eval(case["code"], env)
        # the values are those of the same op on contiguous copies
        plain = eval(case["code"], dict(NS, **{k: INPUTS[case[k]].contiguous() for k in ("x", "a", "b") if k in case}))
    assert (list(r.stride()), r.is_contiguous()) == (case["stride"], case["contiguous"])
    np.testing.assert_array_equal(r.detach().numpy(), plain.detach().numpy())


def test_a_clone_of_a_transposed_tensor_views_back_as_pytorchs():
    a = torch.randn(3, 4)
    assert list(a.t().clone().t().view(-1).shape) == REF["view_after_clone"]


def test_reshape_and_contiguous_still_copy_row_major():
    x = torch.arange(12.).reshape(3, 4).t().requires_grad_()
    c = x.contiguous()
    assert c.is_contiguous() and c.grad_fn.name() == "CloneBackward0"
    r = x.reshape(-1)
    assert r.grad_fn.name() == "UnsafeViewBackward0" and r.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert r.tolist() == [0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
    r.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 4
    assert repr(torch.contiguous_format) == "torch.contiguous_format"


def test_contiguous_inputs_keep_their_bytes_and_events():
    """NOTE 3: a contiguous input takes no new path (no extra copy, the same events as before)."""
    x = torch.ones(3, 4, requires_grad=True)
    with torch.record() as tr:
        y = (x * 2).exp().clone()
    allocs = [e for e in tr.events if e.get("kind") == "alloc"]
    assert len(allocs) == 3 and y.is_contiguous()
    assert all(e["bytes"] == 48 for e in allocs)


def test_iterator_rule_first_operand_wins_and_broadcast_dims_have_no_say():
    # NOTE 2b by hand: a (4, 3) column-major operand first, a row-major one second
    assert L.iterator_strides((4, 3), [((4, 3), (1, 4)), ((4, 3), (3, 1))], False) == (1, 4)
    assert L.iterator_strides((4, 3), [((4, 3), (3, 1)), ((4, 3), (1, 4))], False) == (3, 1)
    # an expanded operand (stride 0) first: the second decides
    assert L.iterator_strides((4, 3), [((4, 3), (1, 0)), ((4, 3), (1, 4))], False) == (1, 4)
    # NOTE 1: a strided slice is made dense in its own order
    assert L.preserved_strides((4, 3), (1, 8)) == (1, 4)
    assert L.preserved_strides((4, 3), (1, 4)) == (1, 4)
