"""Backward rows (NOTE [ Backward rows ] in engine/ops/grad_rows.py): with ``create_graph=True`` the gradient
of tanh, sigmoid, gelu, softplus, elu, celu, logsigmoid, softmax, log_softmax, layer_norm and mse_loss is
one node with PyTorch's name, and its own formula gives the second (and third) derivatives.

The node names are PyTorch 2.13's, read off ``torch.autograd.grad(..., create_graph=True)[0].grad_fn``.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine.autograd import gradcheck, gradgradcheck

X = np.array([[0.3, -1.2, 2.0], [0.45, 0.7, -0.4]])
W = np.array([[0.5, -0.2, 1.0], [1.5, 0.1, -0.8]])

CASES = {   # name: (function of x and w, PyTorch's grad_fn name of the first gradient of x)
    "tanh": (lambda x, w: engine.tanh(x), "TanhBackwardBackward0"),
    "sigmoid": (lambda x, w: engine.sigmoid(x), "SigmoidBackwardBackward0"),
    "gelu": (lambda x, w: F.gelu(x), "GeluBackwardBackward0"),
    "gelu_tanh": (lambda x, w: F.gelu(x, approximate="tanh"), "GeluBackwardBackward0"),
    "softplus": (lambda x, w: F.softplus(x, beta=2, threshold=1), "SoftplusBackwardBackward0"),
    "elu": (lambda x, w: F.elu(x, alpha=0.5), "EluBackwardBackward0"),
    "celu": (lambda x, w: F.celu(x, alpha=2.0), "EluBackwardBackward0"),
    "logsigmoid": (lambda x, w: F.logsigmoid(x), "LogSigmoidBackwardBackward0"),
    "softmax": (lambda x, w: engine.softmax(x, -1), "SoftmaxBackwardDataBackward0"),
    "softmax_dim0": (lambda x, w: engine.softmax(x, 0), "SoftmaxBackwardDataBackward0"),
    "log_softmax": (lambda x, w: F.log_softmax(x, -1), "LogSoftmaxBackwardDataBackward0"),
    "layer_norm": (lambda x, w: F.layer_norm(x, (3,)), "NativeLayerNormBackwardBackward0"),
    "layer_norm_affine": (lambda x, w: F.layer_norm(x, (3,), w[0], w[1]), "NativeLayerNormBackwardBackward0"),
    "mse_loss": (lambda x, w: F.mse_loss(x, w), "MseLossBackwardBackward0"),
    "mse_loss_sum": (lambda x, w: F.mse_loss(x, w, reduction="sum"), "MseLossBackwardBackward0"),
    "mse_loss_none": (lambda x, w: F.mse_loss(x, w, reduction="none"), "MseLossBackwardBackward0"),
}


def _leaves():
    return (engine.tensor(X, dtype=engine.float64, requires_grad=True),
            engine.tensor(W, dtype=engine.float64, requires_grad=True))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_recorded_backward_shows_pytorchs_one_node(name):
    fn, node = CASES[name]
    x, w = _leaves()
    g, = engine.autograd.grad(fn(x, w).sum(), x, create_graph=True)
    assert g.grad_fn.name() == node


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivatives_match_finite_differences(name):
    fn, _ = CASES[name]
    x, w = _leaves()
    if "mse" in name or "affine" in name:
        assert gradgradcheck(fn, [x, w], atol=1e-6)
    else:
        assert gradgradcheck(lambda x: fn(x, None), [x], atol=1e-6)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "gelu", "gelu_tanh", "softplus", "elu", "logsigmoid",
                                  "softmax", "log_softmax", "layer_norm", "mse_loss"])
def test_third_derivatives_match_finite_differences(name):
    """The backward row's own formula, run on tensors, is differentiated once more."""
    fn, _ = CASES[name]
    x, w = _leaves()
    w.requires_grad_(False)

    def first_grad(x):
        return engine.autograd.grad(fn(x, w).sum(), x, create_graph=True)[0]

    assert gradgradcheck(first_grad, [x], atol=1e-6)


def test_the_gradient_values_are_the_formulas_and_the_usual_backward_is_unchanged():
    for name, (fn, _) in CASES.items():
        x, w = _leaves()
        g_graph, = engine.autograd.grad(fn(x, w).sum(), x, create_graph=True)
        x2, w2 = _leaves()
        g_plain, = engine.autograd.grad(fn(x2, w2).sum(), x2)
        np.testing.assert_allclose(g_graph.detach().numpy(), g_plain.numpy(), rtol=1e-13, atol=1e-15, err_msg=name)
        assert gradcheck(lambda x, fn=fn, w=w: fn(x, w.detach()), [x2.detach().requires_grad_()])


def test_second_derivatives_at_the_kink_are_pytorchs():
    """elu and celu take the negative branch's curvature only where x < 0; logsigmoid's is -1/4 at 0
    (PyTorch 2.13: x.grad 0., 0. and -0.25)."""
    for fn, want in ((F.elu, 0.0), (F.celu, 0.0), (F.logsigmoid, -0.25)):
        x = engine.tensor([0.0], dtype=engine.float64, requires_grad=True)
        g, = engine.autograd.grad(fn(x).sum(), x, create_graph=True)
        g.sum().backward()
        assert x.grad.tolist() == [want]


def test_the_mse_target_gradient_is_the_same_row_with_the_two_swapped():
    x, w = _leaves()
    gx, gw = engine.autograd.grad(F.mse_loss(x, w), [x, w], create_graph=True)
    assert gw.grad_fn.name() == gx.grad_fn.name() == "MseLossBackwardBackward0"
    np.testing.assert_allclose(gw.detach().numpy(), -gx.detach().numpy())


def exercise_backward_rows():
    """One create_graph backward through every backward row (for tests/ops/test_ops_grad.py's table check),
    and the einsum rows an empty operand still takes."""
    for fn, _ in CASES.values():
        x, w = _leaves()
        engine.autograd.grad(fn(x, w).sum(), [x, w], create_graph=True, allow_unused=True)
    x = engine.tensor([0.5, -1.0], dtype=engine.float64, requires_grad=True)
    engine.autograd.grad(F.celu(x).sum(), x, create_graph=True)
    engine.einsum("ij,jk->ik", engine.zeros(0, 2, requires_grad=True), engine.ones(2, 3))
    engine.einsum("ii->i", engine.zeros(0, 0, requires_grad=True))
