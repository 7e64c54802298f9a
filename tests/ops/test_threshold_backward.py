"""ReLU's backward is PyTorch's threshold_backward: the gradient is cut where the result is <= 0."""
import math

import numpy as np
import pytest

import engine
from engine.backend import gaps as _backend


@pytest.mark.parametrize("dtype", [engine.float32, engine.float64])
def test_relu_gradient_passes_nan_and_cuts_zero(dtype):
    # as PyTorch: NaN <= 0 is false, so a NaN input's gradient passes; at 0 it is cut
    x = engine.tensor([math.nan, -1.0, 0.0, 2.0, -0.0], dtype=dtype, requires_grad=True)
    engine.relu(x).backward(engine.tensor([5.0, 5.0, 5.0, 5.0, 5.0], dtype=dtype))
    assert x.grad.tolist() == [5.0, 0.0, 0.0, 5.0, 0.0]


def test_relu_gradient_keeps_incoming_bits():
    x = engine.tensor([1.0, 2.0, 3.0, -1.0, 4.0], requires_grad=True)
    g = engine.tensor([math.inf, math.nan, -0.0, math.nan, -math.inf])
    engine.relu(x).backward(g)
    got = x.grad.numpy()
    assert np.isposinf(got[0]) and np.isnan(got[1]) and got[3] == 0.0 and np.isneginf(got[4])
    assert got[2] == 0.0 and math.copysign(1.0, got[2]) == -1.0     # -0.0 passes as -0.0
    assert math.copysign(1.0, got[3]) == 1.0                          # a cut NaN becomes +0.0


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_np_threshold_backward_matches_where(dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 17)).astype(dt)
    x[0, :4] = [np.nan, 0.0, -0.0, np.inf]
    g = rng.standard_normal((33, 17)).astype(dt)
    want = np.where(x <= 0.5, dt(0), g)
    got = _backend.np_threshold_backward(g, x, 0.5)
    assert got.dtype == dt and np.array_equal(got, want)
    # a non-contiguous gradient is read through its strides
    gt = np.asfortranarray(g)
    assert np.array_equal(_backend.np_threshold_backward(gt, x, 0.5), want)


def test_relu_gradient_under_create_graph():
    x = engine.tensor([math.nan, -1.0, 0.0, 2.0], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(engine.relu(x).sum(), x, create_graph=True)
    assert g.tolist() == [1.0, 0.0, 0.0, 1.0]


def test_relu_in_place_copies_nothing():
    # ReluBackward0 keeps only its result, so relu_ on a non-leaf writes in place with no snapshot of
    # the old values (an op that keeps its input, such as mul_, does copy it first, as PyTorch)
    x = engine.randn(100, requires_grad=True)
    a = x * 1
    with engine.record() as tr:
        a.relu_()
    assert [e["kind"] for e in tr.events] == ["version", "category", "pack", "op"]
    b = x * 1
    with engine.record() as tr:
        b.mul_(x)
    allocs = [e for e in tr.events if e["kind"] == "alloc"]
    assert len(allocs) == 1 and allocs[0]["bytes"] == 400
    a.sum().backward()
    assert np.array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(np.float32) + 0)
