"""engine.nn.init: trunc_normal_, eye_, dirac_, orthogonal_, sparse_ and the deprecated names, against
PyTorch 2.13's algorithms (the same result given the same draws), values and messages."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
import engine.nn as nn
from engine.nn import init
from tests.checks import BACKENDS, assert_matches, on_backend


def err(fn, kind=ValueError):
    with pytest.raises(kind) as e:
        fn()
    return str(e.value)


def test_eye_():
    w = nn.Parameter(engine.empty(2, 3))
    assert init.eye_(w) is w
    assert w.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert w.is_leaf and w.requires_grad
    assert err(lambda: init.eye_(engine.empty(2, 3, 4))) == "Only tensors with 2 dimensions are supported"


def test_dirac_():
    # PyTorch 2.13: nn.init.dirac_(torch.empty(2, 3, 3)) and nn.init.dirac_(torch.empty(4, 2, 3), 2)
    assert init.dirac_(engine.empty(2, 3, 3)).tolist() == [
        [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]
    assert init.dirac_(engine.empty(4, 2, 3), 2).tolist() == [
        [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]
    w = init.dirac_(engine.full((3, 2, 3, 4, 5), 7.0)).numpy()
    assert w.sum() == 2.0 and w[0, 0, 1, 2, 2] == 1.0 and w[1, 1, 1, 2, 2] == 1.0
    x = engine.randn(1, 2, 7, 7)
    conv = nn.Conv2d(2, 2, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    np.testing.assert_array_equal(conv(x).detach().numpy(), x.numpy())    # the identity convolution
    assert err(lambda: init.dirac_(engine.empty(2, 3))) == "Only tensors with 3, 4, or 5 dimensions are supported"
    assert err(lambda: init.dirac_(engine.empty(3, 2, 3), 2)) == "dim 0 must be divisible by groups"


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 3, 2)])
def test_orthogonal_is_pytorchs_qr_of_the_same_draw(shape):
    rows = shape[0]
    cols = int(np.prod(shape)) // rows
    engine.manual_seed(7)
    draw = engine.empty(rows, cols).normal_(0, 1).numpy().astype(np.float64)
    a = draw.T if rows < cols else draw
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    expected = (q.T if rows < cols else q).reshape(shape) * 1.5
    engine.manual_seed(7)
    w = init.orthogonal_(engine.empty(*shape), gain=1.5)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5, atol=1e-6)
    m = w.numpy().reshape(rows, cols) / 1.5
    small = m @ m.T if rows <= cols else m.T @ m
    np.testing.assert_allclose(small, np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_errors_and_empty():
    assert err(lambda: init.orthogonal_(engine.empty(3))) == "Only tensors with 2 or more dimensions are supported"
    e = engine.empty(0, 3)
    assert init.orthogonal_(e) is e


def test_sparse_():
    engine.manual_seed(3)
    w = init.sparse_(engine.empty(5, 4), 0.5, std=2.0)
    zeros = (w.numpy() == 0).sum(axis=0)
    assert zeros.tolist() == [3, 3, 3, 3]                    # ceil(0.5 * 5) per column
    assert err(lambda: init.sparse_(engine.empty(3), 0.1)) == "Only tensors with 2 dimensions are supported"


def _truncated_moments(mean, std, a, b):
    al, be = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)          # noqa: E731
    z = 0.5 * (math.erf(be / math.sqrt(2)) - math.erf(al / math.sqrt(2)))
    m = mean + std * (pdf(al) - pdf(be)) / z
    var = std ** 2 * (1 + (al * pdf(al) - be * pdf(be)) / z - ((pdf(al) - pdf(be)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0),        # most of the mass: redraw outliers
                                          (0.0, 1.0, -0.5, 0.5),
                                          (0.5, 2.0, -3.0, 1.0),
                                          (0.0, 1.0, 2.0, 3.0)])         # a thin tail: uniform proposals
def test_trunc_normal_(mean, std, a, b):
    engine.manual_seed(11)
    w = init.trunc_normal_(engine.empty(40000, dtype=engine.float64), mean, std, a, b).numpy()
    assert w.min() >= a and w.max() <= b
    m, s = _truncated_moments(mean, std, a, b)
    assert abs(w.mean() - m) < 4 * s / math.sqrt(w.size)
    assert abs(w.std() - s) < 0.02 * s


def test_trunc_normal_keeps_float32_bounds_and_warns_far_from_the_interval():
    engine.manual_seed(0)
    w = init.trunc_normal_(engine.empty(5000), std=0.02, a=-0.04, b=0.04)
    assert w.dtype is engine.float32 and float(w.abs().max()) <= np.float32(0.04)
    with pytest.warns(UserWarning, match=r"^mean is more than 2 std from \[a, b\] in nn.init.trunc_normal_. "
                                         r"The distribution of values may be incorrect.$"):
        init.trunc_normal_(engine.empty(3), mean=10.0)


DEPRECATED = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
              "kaiming_normal", "orthogonal", "sparse"]


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_names_warn_and_delegate(name):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (2, 2, 3) if name == "dirac" else (3, 4)
    engine.manual_seed(5)
    want = getattr(init, name + "_")(engine.empty(*shape), *args)
    engine.manual_seed(5)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        got = getattr(init, name)(engine.empty(*shape), *args)
    assert [(r.category, str(r.message), r.filename) for r in rec] == [
        (FutureWarning, f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.", __file__)]
    assert getattr(init, name).__name__ == name
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_zero_element_kaiming_warns_and_gain_of_linear_maps_is_int_one():
    with pytest.warns(UserWarning, match="^Initializing zero-element tensors is a no-op$"):
        init.kaiming_uniform_(engine.empty(0, 3))
    with pytest.warns(UserWarning, match="^Initializing zero-element tensors is a no-op$"):
        init.kaiming_normal_(engine.empty(3, 0))
    for name in ("linear", "conv2d", "conv_transpose3d", "sigmoid"):
        g = init.calculate_gain(name)
        assert g == 1 and type(g) is int
    assert err(lambda: init.calculate_gain("foo")) == "Unsupported nonlinearity foo"


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    def run():
        engine.manual_seed(2)
        return [init.eye_(engine.empty(3, 4, dtype=engine.float64)),
                init.dirac_(engine.empty(4, 2, 3, 3, dtype=engine.float64), 2),
                init.orthogonal_(engine.empty(3, 5, dtype=engine.float64))]
    ref = run()
    with on_backend(backend):
        got = run()
    assert_matches(backend, got[:2], ref[:2])
    o = got[2].detach().cpu().numpy()
    np.testing.assert_allclose(o @ o.T, np.eye(3), atol=1e-12)
