"""F.ctc_loss and nn.CTCLoss (engine/nn/functional/likelihood_loss.py, engine/nn/modules/loss.py,
engine/ops/nn/ctc.py)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, gradcheck, matches_numpy


def _brute_force(lp, target, blank):
    """-log of the summed probability of every path whose collapse (merge repeats, drop blanks) is target."""
    t_len, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t_len):
        collapsed = [k for k, _ in itertools.groupby(path) if k != blank]
        if collapsed == list(target):
            total += math.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -math.log(total) if total else math.inf


def _logits(t, n, c, seed):
    rng = np.random.default_rng(seed)
    return engine.tensor(rng.standard_normal((t, n, c)), dtype=engine.float64, requires_grad=True)


@pytest.mark.parametrize("blank", [0, 2])
def test_loss_is_the_sum_over_all_alignments(blank):
    logits = _logits(5, 3, 3, seed=1)
    lp = F.log_softmax(logits, 2)
    targets = [[1, 1], [0 if blank else 2, 1], [1, 0]]
    in_len, tg_len = [5, 4, 5], [2, 2, 1]
    got = F.ctc_loss(lp, engine.tensor(targets), engine.tensor(in_len), engine.tensor(tg_len), blank=blank,
                     reduction="none")
    lps = lp.detach().numpy()
    want = [_brute_force(lps[:in_len[b], b], targets[b][:tg_len[b]], blank) for b in range(3)]
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-10)
    node = got.grad_fn
    assert node.name() == "CtcLossBackward0"
    assert node._saved_log_probs._storage is lp._storage and node._saved_result._storage is got._storage
    assert tuple(node._saved_result1.shape) == (3, 5, 5)                    # (N, T, 2 max S + 1)
    assert node._saved_input_lengths == (5, 4, 5) and node._saved_blank == blank


def test_reductions_targets_layouts_and_the_unbatched_form():
    lp = F.log_softmax(_logits(6, 2, 5, seed=2), 2)
    padded, flat = engine.tensor([[1, 2, 2], [3, 1, 0]]), engine.tensor([1, 2, 2, 3, 1])
    lens = (engine.tensor([6, 5]), engine.tensor([3, 2]))
    none = F.ctc_loss(lp, padded, *lens, reduction="none")
    np.testing.assert_allclose(F.ctc_loss(lp, flat, *lens, reduction="none").detach().numpy(),
                               none.detach().numpy(), rtol=1e-12)
    per = none.detach().numpy()
    assert F.ctc_loss(lp, padded, *lens).item() == pytest.approx(float(np.mean(per / [3, 2])), rel=1e-12)
    assert F.ctc_loss(lp, padded, (6, 5), [3, 2], reduction="sum").item() == pytest.approx(float(per.sum()))
    mean = F.ctc_loss(lp, padded, *lens)
    assert mean.grad_fn.name() == "MeanBackward0" and mean.grad_fn.next_functions[0][0].name() == "DivBackward0"
    one = F.ctc_loss(lp[:, 0], engine.tensor([1, 2, 2]), 6, 3, reduction="none")
    assert tuple(one.shape) == () and one.item() == pytest.approx(float(per[0]), rel=1e-12)


def test_impossible_alignments_and_zero_infinity():
    logits = _logits(3, 2, 4, seed=3)
    lp = F.log_softmax(logits, 2)
    t, lens = engine.tensor([[1, 1, 2], [2, 3, 0]]), (engine.tensor([3, 3]), engine.tensor([3, 2]))
    loss = F.ctc_loss(lp, t, *lens, reduction="none")                      # 1, 1 needs a blank between: 4 steps
    assert math.isinf(loss[0].item()) and math.isfinite(loss[1].item())
    safe = F.ctc_loss(lp, t, *lens, reduction="none", zero_infinity=True)
    assert safe.grad_fn.name() == "WhereBackward0" and safe[0].item() == 0.0
    safe.sum().backward()
    g = logits.grad.numpy()
    assert np.all(g[:, 0] == 0.0) and np.all(np.isfinite(g)) and np.any(g[:, 1] != 0.0)


@pytest.mark.parametrize("reduction,zero_infinity", [("mean", False), ("sum", False), ("none", True)])
def test_gradients_through_log_softmax(reduction, zero_infinity):
    t, lens = engine.tensor([[1, 2, 2], [3, 1, 0]]), (engine.tensor([5, 2]), engine.tensor([3, 1]))

    def fn(logits):
        return F.ctc_loss(F.log_softmax(logits, 2), t, *lens, reduction=reduction, zero_infinity=zero_infinity)
    gradcheck(fn, [_logits(5, 2, 4, seed=4)])


def test_log_probs_gradient_is_pytorchs_and_times_past_the_input_get_none():
    """The gradient at log_probs is exp(lp) - (occupancy): the logits' gradient (NOTE [ CTC loss ] 4)."""
    lp = F.log_softmax(_logits(4, 1, 3, seed=5), 2).detach().requires_grad_()
    F.ctc_loss(lp, engine.tensor([[1]]), engine.tensor([3]), engine.tensor([1]), reduction="sum").backward()
    g = lp.grad.numpy()
    np.testing.assert_allclose(g[:3].sum(-1), 0.0, atol=1e-12)             # each step's column sums to zero
    assert np.all(g[3] == 0.0)
    with pytest.raises(RuntimeError, match="_ctc_loss_backward"):
        out = F.ctc_loss(lp, engine.tensor([[1]]), engine.tensor([3]), engine.tensor([1]))
        (gl,) = engine.autograd.grad(out, lp, create_graph=True)


def test_module_and_errors():
    assert repr(nn.CTCLoss()) == "CTCLoss()"
    loss = nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)
    assert (loss.blank, loss.reduction, loss.zero_infinity) == (4, "sum", True)
    lp = F.log_softmax(_logits(5, 2, 4, seed=6), 2)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, engine.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2), blank=4)
    with pytest.raises(RuntimeError, match=r"Expected input_lengths to have value at most 5, but got value 6"):
        F.ctc_loss(lp, engine.tensor([[1, 2], [1, 1]]), (5, 6), (2, 2))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        nn.CTCLoss(reduction="avg")


def _run_all():
    logits = engine.tensor(np.random.default_rng(7).standard_normal((6, 3, 5)), requires_grad=True)
    lp = F.log_softmax(logits, 2)
    t = engine.tensor([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    outs = [F.ctc_loss(lp, t, engine.tensor([6, 5, 6]), engine.tensor([3, 2, 3]), reduction="none"),
            F.ctc_loss(lp, t, engine.tensor([6, 2, 6]), engine.tensor([3, 2, 0]), zero_infinity=True)]
    (outs[0].sum() + 2 * outs[1]).backward()
    return outs + [logits.grad]


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    matches_numpy(backend, _run_all)


def exercise_ctc_ops():
    """Runs the ctc_loss row once (for test_every_table_op_is_exercised)."""
    lp = F.log_softmax(_logits(4, 1, 3, seed=8), 2)
    F.ctc_loss(lp, engine.tensor([[1, 2]]), engine.tensor([4]), engine.tensor([2]))
