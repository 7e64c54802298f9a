"""The embedding, ranking, margin and likelihood losses, pairwise_distance and gumbel_softmax: values,
gradients and node names against a real PyTorch (tests/fixtures/losses_more_reference.json, made by
tests/fixtures/make_losses_more_reference.py), finite differences, reductions and PyTorch's errors."""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, f64, gradcheck, gradgradcheck, matches_numpy

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "fixtures", "losses_more_reference.json"), encoding="utf-8") as _f:
    REF = json.load(_f)
D = engine.float64


def _inputs():
    return [engine.tensor(REF["inputs"][k], dtype=D, requires_grad=True) for k in "xyz"]


def _run(code, R, x, y, z):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(code, {"torch": engine, "F": F, "x": x, "y": y, "z": z, "R": R})


@pytest.mark.parametrize("case", sorted(REF["cases"]))
def test_matches_pytorch(case):
    ref = REF["cases"][case]
    x, y, z = _inputs()
    out = _run(ref["code"], ref["reduction"], x, y, z)
    assert list(out.shape) == ref["shape"]
    np.testing.assert_allclose(out.detach().numpy(), np.array(ref["value"]), rtol=1e-10, atol=1e-12)
    assert out.grad_fn.name() == ref["grad_fn"]
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array(ref["grad_x"]), rtol=1e-9, atol=1e-12)


def W4():
    return engine.tensor([0.5, 1.5, 1.0, 2.0], dtype=D)


GRADCHECK = {
    # every differentiable argument, away from hinge corners
    "kl_div": lambda a, b: F.kl_div(a, F.softmax(b, 1), reduction="batchmean"),
    "kl_div_log_target": lambda a, b: F.kl_div(a, F.log_softmax(b, 1), reduction="sum", log_target=True),
    "margin_ranking": lambda a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], engine.tensor([1.0, -1.0, 1.0], dtype=D),
                                                         margin=0.3, reduction="none"),
    "hinge_embedding": lambda a, b: F.hinge_embedding_loss(a, engine.tensor([1.0, -1.0, 1.0, -1.0], dtype=D),
                                                           margin=5.0),
    "cosine_embedding": lambda a, b: F.cosine_embedding_loss(a, b, engine.tensor([1.0, -1.0, 1.0], dtype=D),
                                                             margin=-1.0, reduction="sum"),
    "triplet": lambda a, b: F.triplet_margin_loss(a, b, a * 0.5 + 3.0, margin=20.0, swap=True),
    "triplet_p3": lambda a, b: F.triplet_margin_loss(a, b, b * 2.0, margin=20.0, p=3, reduction="none"),
    "poisson": lambda a, b: F.poisson_nll_loss(a, b.abs(), reduction="sum"),
    "poisson_full": lambda a, b: F.poisson_nll_loss(a.abs() + 0.5, b.abs() * 3 + 1, log_input=False, full=True),
    "gaussian": lambda a, b: F.gaussian_nll_loss(a, b, b.abs() + 0.5, full=True),
    "multilabel_soft_margin": lambda a, b: F.multilabel_soft_margin_loss(a, b.sigmoid(), weight=W4()),
    "multi_margin": lambda a, b: F.multi_margin_loss(a * 3.0, engine.tensor([0, 3, 1]), p=2, margin=0.7,
                                                     weight=W4(), reduction="none"),
    "multilabel_margin": lambda a, b: F.multilabel_margin_loss(a * 3.0, engine.tensor([[3, 0, -1, 1],
                                                                                       [1, 1, 2, -1],
                                                                                       [3, 2, 1, 0]])),
    "soft_margin": lambda a, b: F.soft_margin_loss(a, b.sign().detach(), reduction="sum"),
    "pairwise": lambda a, b: F.pairwise_distance(a, b, p=1.5, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_finite_differences(name):
    a, b = f64(3, 4, seed=1), f64(3, 4, seed=2)
    gradcheck(GRADCHECK[name], [a, b])


@pytest.mark.parametrize("name", ["soft_margin", "multi_margin", "multilabel_margin"])
def test_second_derivatives_of_the_new_rows(name):
    a, b = f64(3, 4, seed=3), f64(3, 4, seed=4)
    gradgradcheck(GRADCHECK[name], [a, b])


def test_kl_div_mean_warns_and_batchmean_divides_by_the_batch():
    x, y = f64(4, 3, seed=5), f64(4, 3, seed=6)
    lp, t = F.log_softmax(x, 1), F.softmax(y, 1).detach()
    with pytest.warns(UserWarning, match=r"^reduction: 'mean' divides the total loss by both the batch size"):
        F.kl_div(lp, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = F.kl_div(lp, t, reduction="sum")
        assert F.kl_div(lp, t, reduction="batchmean").item() == pytest.approx(total.item() / 4)
        assert F.kl_div(lp, t, size_average=False).item() == pytest.approx(total.item())   # legacy: no warning
    assert nn.KLDivLoss(reduction="batchmean")(lp, t).item() == pytest.approx(total.item() / 4)


def test_modules_pass_their_settings():
    x, y, z = _inputs()
    t = engine.tensor([1.0, -1.0, 1.0], dtype=D)
    pairs = [
        (nn.MarginRankingLoss(0.3, reduction="sum")(x[:, 0], y[:, 0], t),
         F.margin_ranking_loss(x[:, 0], y[:, 0], t, 0.3, reduction="sum")),
        (nn.HingeEmbeddingLoss(0.7)(x, y.sign()), F.hinge_embedding_loss(x, y.sign(), 0.7)),
        (nn.CosineEmbeddingLoss(0.1, reduction="none")(x, y, t),
         F.cosine_embedding_loss(x, y, t, 0.1, reduction="none")),
        (nn.TripletMarginLoss(2.0, p=1, swap=True)(x, y, z), F.triplet_margin_loss(x, y, z, 2.0, 1, swap=True)),
        (nn.TripletMarginWithDistanceLoss(margin=2.0)(x, y, z), F.triplet_margin_loss(x, y, z, 2.0)),
        (nn.PoissonNLLLoss(log_input=False, full=True)(x.abs(), y.abs()),
         F.poisson_nll_loss(x.abs(), y.abs(), log_input=False, full=True)),
        (nn.GaussianNLLLoss(full=True)(x, y, z.abs()), F.gaussian_nll_loss(x, y, z.abs(), full=True)),
        (nn.MultiLabelSoftMarginLoss(weight=z[0].abs().detach())(x, (y > 0).double()),
         F.multilabel_soft_margin_loss(x, (y > 0).double(), z[0].abs().detach())),
        (nn.MultiMarginLoss(p=2, margin=0.5)(x, engine.tensor([0, 1, 2])),
         F.multi_margin_loss(x, engine.tensor([0, 1, 2]), 2, 0.5)),
        (nn.MultiLabelMarginLoss(reduction="sum")(x, engine.tensor([[0, -1, 0, 0, 0]] * 3)),
         F.multilabel_margin_loss(x, engine.tensor([[0, -1, 0, 0, 0]] * 3), reduction="sum")),
        (nn.SoftMarginLoss(reduce=False)(x, y.sign()), F.soft_margin_loss(x, y.sign(), reduction="none")),
        (nn.PairwiseDistance(p=3, keepdim=True)(x, y), F.pairwise_distance(x, y, 3, keepdim=True)),
        (nn.CosineSimilarity(dim=0)(x, y), F.cosine_similarity(x, y, dim=0)),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    assert "weight" in dict(nn.MultiMarginLoss(weight=engine.ones(5)).state_dict())


def test_legacy_size_average_and_reduce():
    x, y, _ = _inputs()
    t = y.sign().detach()
    want = F.soft_margin_loss(x, t, reduction="sum").item()
    assert F.soft_margin_loss(x, t, size_average=False).item() == pytest.approx(want)
    assert tuple(F.hinge_embedding_loss(x, t, reduce=False).shape) == (3, 5)
    assert F.poisson_nll_loss(x, y.abs(), size_average=False).item() == pytest.approx(
        F.poisson_nll_loss(x, y.abs(), reduction="sum").item())


def test_multi_margin_passes_no_gradient_at_the_hinge_and_keeps_pytorchs_saved_tensors():
    x = engine.tensor([[0.0, 1.0, 0.0]], dtype=D, requires_grad=True)    # z = 1 - 1 + 0 = 0 exactly at j=0, 2
    out = F.multi_margin_loss(x, engine.tensor([1]))
    out.backward()
    assert out.item() == 0.0 and x.grad.tolist() == [[0.0, 0.0, 0.0]]
    node = F.multi_margin_loss(x, engine.tensor([1]), weight=engine.ones(3, dtype=D)).grad_fn
    assert node._saved_self is x and node._saved_target.tolist() == [1] and node._saved_weight.tolist() == [1.0] * 3
    assert [n is None for n, _ in node.next_functions] == [False]     # only the input gets an edge
    ml = F.multilabel_margin_loss(x, engine.tensor([[2, -1, 0]])).grad_fn
    assert ml._saved_is_target.tolist() == [[0.0, 0.0, 1.0]] and ml._saved_is_target.dtype is D


def test_soft_margin_gradient_stays_finite_for_large_margins():
    x = engine.tensor([800.0, -800.0], dtype=D, requires_grad=True)
    F.soft_margin_loss(x, engine.tensor([1.0, -1.0], dtype=D), reduction="sum").backward()
    assert x.grad.tolist() == [-0.0, 0.0]


def test_pairwise_distance_adds_eps_and_broadcasts():
    a, b = engine.tensor([1.0, 2.0]), engine.tensor([1.0, 2.0])
    assert F.pairwise_distance(a, b).item() == pytest.approx(math.sqrt(2) * 1e-6, rel=1e-5)
    x, v = f64(4, 3, seed=7), f64(3, seed=8)
    got = F.pairwise_distance(x, v, p=1)
    want = np.abs(x.detach().numpy() - v.detach().numpy() + 1e-6).sum(1)
    np.testing.assert_allclose(got.detach().numpy(), want)
    assert F.pairwise_distance(x, v).grad_fn.next_functions[0][0].name() == "AddBackward1"


def test_gumbel_softmax_draws_from_the_device_generator():
    logits = f64(4, 6, seed=9)
    engine.manual_seed(3)
    soft = F.gumbel_softmax(logits, tau=0.5)
    engine.manual_seed(3)
    again = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_array_equal(soft.detach().numpy(), again.detach().numpy())
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(4))
    assert soft.grad_fn.name() == "SoftmaxBackward0"
    engine.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    assert hard.grad_fn.name() == "AddBackward0"
    h = hard.detach().numpy()
    np.testing.assert_array_equal(h, np.eye(6)[soft.detach().numpy().argmax(-1)])
    # straight through: the gradient is the soft sample's
    w = f64(4, 6, seed=10, requires_grad=False)
    (g_hard,) = engine.autograd.grad((hard * w).sum(), [logits])
    (g_soft,) = engine.autograd.grad((soft * w).sum(), [logits])
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(logits, eps=1e-5)


def test_gumbel_softmax_samples_follow_the_softmax_of_the_logits():
    engine.manual_seed(0)
    logits = engine.tensor([[0.0, 1.0, 2.0]]).expand(4000, 3)
    counts = F.gumbel_softmax(logits, hard=True).sum(0).numpy() / 4000
    want = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(counts, want, atol=0.03)


X4 = "engine.randn(4, 5)"


@pytest.mark.parametrize("code, exc, message", [
    ("F.multi_margin_loss(x, engine.tensor([0, 1, 2, 3]), p=3)", ValueError, "only p == 1 and p == 2 supported"),
    ("F.multi_margin_loss(x, engine.tensor([0, 1, 2]))", RuntimeError,
     "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). "
     "Expected target size [4], but got [3]. Input has shape [4, 5]."),
    ("F.multi_margin_loss(x, engine.tensor([0, 1, 2, 5]))", RuntimeError, "target out of range"),
    ("F.multi_margin_loss(x, engine.tensor([0, 1, 2, 3]), weight=engine.ones(4))", RuntimeError,
     "inconsistent weight size, expected 5 but got [4]"),
    ("F.multi_margin_loss(x, engine.tensor([0, 1, 2, 3]), weight=engine.ones(1, 5))", ValueError,
     "weight must be one-dimensional"),
    ("F.multi_margin_loss(engine.randn(2, 3, 4), engine.tensor([0, 1]))", RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]"),
    ("F.multi_margin_loss(x, engine.tensor([0.0, 1.0, 2.0, 3.0]))", RuntimeError,
     "expected scalar type Long but found Float"),
    ("F.multi_margin_loss(x, engine.tensor([0, 1, 2, 3]), weight=engine.ones(5, requires_grad=True))", RuntimeError,
     "The function 'multi_margin_loss' is not differentiable with respect to argument 'weight'. This input cannot "
     "have requires_grad True."),
    ("F.multilabel_margin_loss(x, engine.zeros(4, 4, dtype=engine.int64))", RuntimeError,
     "inconsistent target size: [4, 4] for input of size: [4, 5]"),
    ("F.multilabel_margin_loss(x, engine.full((4, 5), 7))", RuntimeError, "argument #2 'target' is out of range"),
    ("F.soft_margin_loss(x, engine.ones(4, 4))", RuntimeError,
     "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 1"),
    ("F.kl_div(x, engine.rand(4, 4))", RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1"),
    ("F.kl_div(x, engine.rand(4, 5), reduction='x')", ValueError, "x is not a valid value for reduction"),
    ("F.margin_ranking_loss(engine.randn(3), engine.randn(3), engine.ones(3, 1))", RuntimeError,
     "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: torch.Size([3]), "
     "input2: torch.Size([3]), target: torch.Size([3, 1]) "),
    ("F.cosine_embedding_loss(x, x, engine.ones(4, 1))", RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    ("F.cosine_embedding_loss(engine.randn(5), engine.randn(5), engine.ones(4))", RuntimeError,
     "1D target tensor expects 2D input tensors, but found inputs with sizes [5] and [5]."),
    ("F.cosine_embedding_loss(x, x, engine.tensor(1.0))", RuntimeError,
     "0D target tensor expects 1D input tensors, but found inputs with sizes [4, 5] and [4, 5]."),
    ("F.triplet_margin_loss(x, x[0], x)", RuntimeError,
     "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: "
     "anchor 2D, positive 1D, and negative 2D inputs"),
    ("F.triplet_margin_loss(x, x, x, margin=0)", ValueError, "margin must be greater than 0, got 0"),
    ("F.triplet_margin_with_distance_loss(x, x, x, margin=0)", ValueError, "margin must be greater than 0, got 0"),
    ("F.poisson_nll_loss(x, x, reduction='x')", ValueError, "x is not a valid value for reduction"),
    ("F.gaussian_nll_loss(x, x, -engine.ones(4, 5))", ValueError, "var has negative entry/entries"),
    ("F.gaussian_nll_loss(x, x, engine.ones(3))", ValueError, "var is of incorrect size"),
    ("F.gaussian_nll_loss(x, x, engine.ones(4, 5), reduction='x')", ValueError, "x is not valid"),
    ("F.multilabel_soft_margin_loss(x, x, reduction='x')", ValueError, "x is not valid"),
    ("F.pairwise_distance(engine.randn(4, 3), engine.randn(4, 5))", RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"),
    ("nn.TripletMarginLoss(margin=0)", ValueError,
     "TripletMarginLoss: expected margin to be greater than 0, got 0 instead"),
    ("nn.MultiMarginLoss(weight=engine.ones(2, 2))", ValueError,
     "MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"),
])
def test_errors(code, exc, message):
    with pytest.raises(exc) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")     # kl_div's 'mean' warning comes first, as in PyTorch
        eval(code, {"engine": engine, "F": F, "nn": nn, "x": engine.randn(4, 5)})
    assert str(info.value) == message


def exercise_loss_ops():
    """One differentiable call of each new loss row (tests/ops/test_ops_grad.py checks that every table
    op is exercised)."""
    x, y, _ = _inputs()
    for out in (F.soft_margin_loss(x, y.sign().detach()), F.multi_margin_loss(x, engine.tensor([0, 1, 2])),
                F.multilabel_margin_loss(x, engine.tensor([[0, -1, 0, 0, 0]] * 3)),
                F.cosine_embedding_loss(x, y, engine.tensor([1.0, -1.0, 1.0], dtype=D))):
        out.backward()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_other_backends_match_numpy(name, backend):
    def run():
        a, b = f64(3, 4, seed=11), f64(3, 4, seed=12)
        out = GRADCHECK[name](a, b)
        out.backward(engine.ones_like(out))
        return out, a.grad, b.grad

    matches_numpy(backend, run)


def test_mse_loss_gradient_with_the_broadcast_mistake():
    """(N, 1) against (N,) broadcasts to (N, N): the mean divides by N*N, so each input element's
    gradient is N * 2 * diff / (N*N) (PyTorch: 0.5 for ones(4, 1) against zeros(4), not 2.0)."""
    x = engine.ones(4, 1, requires_grad=True)
    with pytest.warns(UserWarning):
        loss = engine.nn.functional.mse_loss(x, engine.zeros(4))
    loss.backward()
    assert loss.item() == 1.0
    np.testing.assert_allclose(x.grad.numpy(), np.full((4, 1), 0.5))
    a = engine.randn(3, 1, dtype=engine.float64, requires_grad=True)
    b = engine.randn(3, dtype=engine.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradcheck(lambda p, q: engine.nn.functional.mse_loss(p, q), [a, b])


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss",
                                  "binary_cross_entropy_with_logits"])
def test_a_mean_reduced_loss_over_an_empty_batch_is_nan_with_an_empty_gradient(name):
    """As PyTorch: the mean of nothing is nan, and backward gives an empty gradient (it raised
    ZeroDivisionError from the backward formula; found by tools/fuzz)."""
    x = engine.zeros(0, requires_grad=True)
    loss = getattr(F, name)(x, engine.zeros(0))
    loss.backward()
    assert math.isnan(loss.item()) and tuple(x.grad.shape) == (0,)


@pytest.mark.parametrize("code, exc, message", [
    ("F.soft_margin_loss(engine.tensor(0.5), engine.tensor([1.0]))", RuntimeError,
     "output with shape [] doesn't match the broadcast shape [1]"),
    ("F.soft_margin_loss(engine.ones(2, 1), engine.ones(2))", RuntimeError,
     "output with shape [2, 1] doesn't match the broadcast shape [2, 2]"),
    ("F.cross_entropy(engine.ones(3, 4), engine.zeros(3, 1, dtype=engine.long))", RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    ("F.nll_loss(engine.ones(4), engine.zeros(2, dtype=engine.long))", ValueError,
     "For 1D input, 1D target must have size 1, but got target size: 2"),
    ("F.nll_loss(engine.ones(2, 4), engine.tensor(1))", ValueError,
     "Expected input batch_size (2) to match target batch_size (0)."),
    ("F.nll_loss(engine.ones(3, 4), engine.zeros(2, 1, dtype=engine.long))", ValueError,
     "Expected input batch_size (3) to match target batch_size (2)."),
    ("F.cross_entropy(engine.ones(3), engine.tensor([0, 1, 2]))", RuntimeError,
     "Expected floating point type for target with class probabilities, got Long"),
])
def test_target_shapes_pytorch_refuses(code, exc, message):
    """Messages recorded from PyTorch 2.13 (found by tools/fuzz)."""
    with pytest.raises(exc) as e:
        eval(code, {"engine": engine, "F": F})
    assert str(e.value) == message


@pytest.mark.parametrize("code, value, dtype, shape", [
    ("F.soft_margin_loss(engine.tensor([[0.5, -1.0]]), engine.tensor([1.0, -1.0]), reduction='none')",
     [[0.4740769863128662, 0.3132616877555847]], "float32", [1, 2]),
    ("F.nll_loss(engine.tensor([0.25, -0.5, 1.0]), engine.tensor([1]))", 0.5, "float32", []),
    ("F.cross_entropy(engine.tensor([0.25, -0.5, 1.0]), engine.tensor([2]), reduction='none')", 0.5279757380485535,
     "float32", []),
    ("F.huber_loss(engine.tensor([1.0, -2.0]), engine.tensor([0.5, 0.0], dtype=engine.float64))", 0.8125, "float32", []),
    ("F.mse_loss(engine.tensor(-0.75, dtype=engine.float64), engine.tensor([[-2.125], [0.375]]), reduction='sum')",
     3.15625, "float64", []),
    ("F.cross_entropy(engine.zeros(0, 3, 3), engine.zeros(0, 3, dtype=engine.long))", math.nan, "float32", []),
])
def test_loss_values_dtypes_and_shapes_are_pytorchs(code, value, dtype, shape):
    """Recorded from PyTorch 2.13: huber keeps the input's dtype, mse promotes as if both were broadcast
    (a 0-d float64 input with a float32 target gives float64), a one-element 1-D target of a 1-D input
    is a class index, and an empty batch with a spatial dim is nan (found by tools/fuzz)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = eval(code, {"engine": engine, "F": F})
    assert list(out.shape) == shape and out.dtype.name == dtype
    got = out.tolist()
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(got)
    else:
        np.testing.assert_allclose(np.array(got), np.array(value), rtol=1e-6)


@pytest.mark.parametrize("reduction, value", [("mean", "nan"), ("sum", "-0.0")])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_with_probabilities_over_an_empty_batch(reduction, value, smoothing):
    """As PyTorch: the mean is ``-(sum().fill_(nan))`` (NegBackward0) and backward gives an empty gradient
    (it raised ZeroDivisionError from the backward formula; found by tools/fuzz)."""
    x = engine.zeros(0, 3, dtype=engine.float64, requires_grad=True)
    loss = F.cross_entropy(x, engine.zeros(0, 3, dtype=engine.float64), label_smoothing=smoothing,
                           reduction=reduction)
    loss.backward()
    assert str(loss.item()) == value and loss.grad_fn.name() == "NegBackward0" and tuple(x.grad.shape) == (0, 3)


@pytest.mark.parametrize("xd, td, reduction, weight", [
    ("float32", "float64", "mean", False), ("float64", "float32", "sum", False), ("float64", "float32", "none", False),
    ("float64", "int64", "mean", False), ("float64", "float32", "mean", True)])
def test_huber_loss_of_two_dtypes_computes_and_refuses_the_backward_as_pytorch(xd, td, reduction, weight):
    """PyTorch writes the loss in the input's dtype and its backward kernel refuses the pair:
    ``Found dtype Double but expected Float`` (found by tools/fuzz)."""
    names = {"float32": "Float", "float64": "Double", "int64": "Long"}
    x = engine.tensor([1.0, -0.5], dtype=getattr(engine, xd), requires_grad=True)
    t = engine.tensor([0, 2], dtype=getattr(engine, td))
    kw = {"weight": engine.ones(2, dtype=x.dtype)} if weight else {}
    loss = F.huber_loss(x, t, reduction=reduction, **kw)
    assert loss.dtype is x.dtype and loss.sum().item() == pytest.approx(
        {"mean": 1.25, "sum": 2.5, "none": 2.5}[reduction])
    with pytest.raises(RuntimeError) as e:
        loss.sum().backward()
    assert str(e.value) == f"Found dtype {names[td]} but expected {names[xd]}"
    same = F.huber_loss(x, t.to(x.dtype), reduction=reduction)
    same.sum().backward()
    assert x.grad.tolist() == pytest.approx({"mean": [0.5, -0.5], "sum": [1.0, -1.0], "none": [1.0, -1.0]}[reduction])


def test_embedding_max_norm_renormalises_the_rows_it_reads_in_place():
    """PyTorch 2.13 (recorded): rows over max_norm are scaled to it in weight itself (version 1), rows
    not read stay, and the gradient counts each use."""
    F = engine.nn.functional
    w = engine.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], requires_grad=True)
    y = F.embedding(engine.tensor([0, 1, 0]), w, max_norm=1.0)
    y.sum().backward()
    assert [[round(v, 5) for v in r] for r in w.tolist()] == [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]]
    assert w.grad.tolist() == [[2.0, 2.0], [1.0, 1.0], [0.0, 0.0]] and w._version == 1
    e = engine.nn.Embedding(3, 2, max_norm=1.0)
    assert e(engine.tensor([2])).norm().item() <= 1.0 + 1e-6
