"""Activation functions (engine/ops/nn/activation.py, engine/nn/functional/activation.py,
engine/nn/modules/activation.py).

Values against the formulas, finite-difference gradients in float64, second derivatives for a few,
PyTorch 2.13's exact values and gradients at NaN, +-inf, -0.0 and the threshold points, ``inplace=``
through functions and modules, module reprs, prelu's and rrelu's parameters and noise, and a run on
array_api_strict. Node names and saved tensors are compared with PyTorch in test_saved_tensors.py
(tests/fixtures/torch_reference.json), error messages in test_errors.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
import engine as torch
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, gradcheck, gradgradcheck, matches_numpy

D = engine.float64
nan, inf = float("nan"), float("inf")


def leaf(values, dtype=D):
    return engine.tensor(values, dtype=dtype, requires_grad=True)


def grid(n=13, seed=3):
    """float64 points away from every kink (|x| not near 0, 0.5, 1, 3, 6) for finite differences."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-7.5, 7.5, n)
    for k in (0.0, 0.5, 1.0, 3.0, 6.0):
        a = np.where(np.abs(np.abs(a) - k) < 0.05, a + 0.2, a)
    return a


# ---- values against the formulas -------------------------------------------------------------------
def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


SA, SS = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
FORMULAS = {
    "threshold": (lambda x: F.threshold(x, 0.7, -2.0), lambda a: np.where(a <= 0.7, -2.0, a)),
    "relu6": (lambda x: F.relu6(x), lambda a: np.minimum(np.maximum(a, 0), 6)),
    "hardtanh": (lambda x: F.hardtanh(x, -2.0, 2.5), lambda a: np.clip(a, -2.0, 2.5)),
    "elu": (lambda x: F.elu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a))),
    "selu": (lambda x: F.selu(x), lambda a: SS * np.where(a > 0, a, SA * np.expm1(a))),
    "celu": (lambda x: F.celu(x, 2.0), lambda a: np.maximum(a, 0) + np.minimum(0, 2.0 * np.expm1(a / 2.0))),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda a: np.where(a > 0, a, 0.1 * a)),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), lambda a: np.where(a > 0, a, 0.2 * a)),
    "prelu": (lambda x: F.prelu(x, engine.tensor([-0.3], dtype=D)), lambda a: np.where(a > 0, a, -0.3 * a)),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), lambda a: np.clip(a / 6 + 0.5, 0, 1)),
    "hardswish": (lambda x: F.hardswish(x), lambda a: a * np.clip(a + 3, 0, 6) / 6),
    "softsign": (lambda x: F.softsign(x), lambda a: a / (1 + np.abs(a))),
    "logsigmoid": (lambda x: F.logsigmoid(x), lambda a: np.log(_sig(a))),
    "tanhshrink": (lambda x: F.tanhshrink(x), lambda a: a - np.tanh(a)),
    "hardshrink": (lambda x: F.hardshrink(x, 1.5), lambda a: np.where(np.abs(a) > 1.5, a, 0.0)),
    "softshrink": (lambda x: F.softshrink(x, 1.5), lambda a: np.sign(a) * np.maximum(np.abs(a) - 1.5, 0)),
    "silu": (lambda x: F.silu(x), lambda a: a * _sig(a)),
    "mish": (lambda x: F.mish(x), lambda a: a * np.tanh(np.log1p(np.exp(a)))),
    "glu": (lambda x: F.glu(x.reshape(-1, 1).expand(-1, 2) * engine.tensor([1.0, -0.5], dtype=D), 1),
            lambda a: (a * _sig(-0.5 * a))[:, None]),
    "softmin": (lambda x: F.softmin(x, 0), lambda a: np.exp(-a) / np.exp(-a).sum()),
    "clamp_min": (lambda x: engine.clamp_min(x, -1.2), lambda a: np.maximum(a, -1.2)),
    "clamp_max": (lambda x: x.clamp_max(2.2), lambda a: np.minimum(a, 2.2)),
    "clamp_tensor": (lambda x: engine.clamp(x, engine.full((1,), -2.0, dtype=D), engine.full((1,), 1.5, dtype=D)),
                     lambda a: np.clip(a, -2.0, 1.5)),
}


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_values_match_the_formula(name):
    fn, want = FORMULAS[name]
    a = grid()
    np.testing.assert_allclose(fn(engine.tensor(a, dtype=D)).numpy(), want(a), rtol=1e-13, atol=1e-15)


# ---- finite differences, float64 -------------------------------------------------------------------
GRAD = {
    **{name: fn for name, (fn, _) in FORMULAS.items()},
    "glu_dim0": lambda x: F.glu(x.reshape(-1, 1).expand(-1, 4).reshape(-1, 2) * 0.7, 0),
    "prelu_weight": None,       # below: the gradient reaches the weight too
    "softmax2d": lambda x: nn.Softmax2d()(x[:12].reshape(3, 2, 2)),
    "elu_inplace": lambda x: F.elu(x * 1.0, 0.7, inplace=True),
    "celu_inplace": lambda x: F.celu(x * 1.0, 2.0, inplace=True),
    "selu_inplace": lambda x: F.selu(x * 1.0, inplace=True),
    "threshold_inplace": lambda x: F.threshold(x * 1.0, 0.7, -2.0, inplace=True),
    "hardswish_inplace": lambda x: F.hardswish(x * 1.0, inplace=True),
    "rrelu_eval_inplace": lambda x: F.rrelu(x * 1.0, inplace=True),
    "relu_inplace": lambda x: F.relu(x * 1.0, inplace=True),
}


@pytest.mark.parametrize("name", sorted(n for n in GRAD if GRAD[n] is not None))
def test_gradients_match_finite_differences(name):
    gradcheck(GRAD[name], [leaf(grid())])


def test_prelu_gradient_reaches_the_weight_per_channel():
    x = leaf(grid(24).reshape(2, 3, 4))
    w = leaf([0.25, -0.5, 1.5])
    gradcheck(F.prelu, [x, w])
    gradcheck(lambda x, w: F.prelu(x, w), [leaf(grid(6)), leaf([0.4])])


def test_clamp_tensor_bounds_get_gradients():
    x = leaf(grid(8).reshape(2, 4))
    lo, hi = leaf([-3.2, -1.1, 0.2, -5.0]), leaf([[2.7], [-0.4]])
    gradcheck(lambda x, lo, hi: engine.clamp(x, lo, hi), [x, lo, hi])
    gradcheck(lambda x, lo: engine.clamp(x, min=lo), [x, lo])
    gradcheck(lambda x, hi: engine.clamp_max(x, hi), [x, hi])
    gradcheck(lambda x, lo: x.clamp_min(lo), [x, lo])


@pytest.mark.parametrize("name", ["celu", "logsigmoid", "glu", "hardswish", "softsign", "mish", "selu_inplace"])
def test_second_derivatives(name):
    gradgradcheck(GRAD[name], [leaf(grid(7))])


def test_prelu_second_derivative():
    gradgradcheck(F.prelu, [leaf(grid(6).reshape(2, 3)), leaf([0.25, -0.5, 1.5])])


# ---- PyTorch 2.13 at NaN, +-inf, -0.0 and the threshold points --------------------------------------
# for v in X: x = torch.tensor([v], dtype=torch.float64, requires_grad=True); y = <code>; y.sum().backward()
# -> (y.item(), x.grad.item()) per point: PyTorch's scalar kernels (see NOTE [ Activation gradients at NaN ]).
X = [nan, -inf, -7.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf]
EDGES = {
    "relu": ("F.relu(x)",
        [nan, 0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "relu6": ("F.relu6(x)",
        [nan, 0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 6.0],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
    "hardtanh": ("F.hardtanh(x)",
        [nan, -1.0, -1.0, -1.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
    "hardtanh_m1_6": ("F.hardtanh(x, -1.0, 6.0)",
        [nan, -1.0, -1.0, -1.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 6.0],
        [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
    "threshold": ("F.threshold(x, 1.0, -5.0)",
        [nan, -5.0, -5.0, -5.0, -5.0, -5.0, -5.0, -5.0, -5.0, -5.0, 3.0, 6.0, inf],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
    "elu": ("F.elu(x)",
        [nan, -1.0, -0.999088118034446, -0.950212931632136, -0.632120558828558, -0.393469340287367, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [1.0, 0.0, 0.000911881965555, 0.049787068367864, 0.367879441171442, 0.606530659712633, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "selu": ("F.selu(x)",
        [nan, -1.758099340847377, -1.756496161764805, -1.670568728767112, -1.111330737812563, -0.691758187802871, -0.0, 0.0, 0.52535049367774, 1.05070098735548, 3.152102962066441, 6.304205924132883, inf],
        [1.05070098735548, 0.0, 0.001603179082572, 0.087530612080265, 0.646768603034814, 1.066341153044505, 1.758099340847377, 1.758099340847377, 1.05070098735548, 1.05070098735548, 1.05070098735548, 1.05070098735548, 1.05070098735548]),
    "celu": ("F.celu(x, 2.0)",
        [nan, -2.0, -1.939605233155363, -1.55373967970314, -0.786938680574733, -0.44239843385719, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [1.0, 0.0, 0.030197383422319, 0.22313016014843, 0.606530659712633, 0.778800783071405, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "leaky_relu": ("F.leaky_relu(x, 0.2)",
        [nan, -inf, -1.4, -0.6, -0.2, -0.1, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "rrelu_eval": ("F.rrelu(x)",
        [nan, -inf, -1.604166666666667, -0.6875, -0.229166666666667, -0.114583333333333, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [0.229166666666667, 0.229166666666667, 0.229166666666667, 0.229166666666667, 0.229166666666667, 0.229166666666667, 0.229166666666667, 0.229166666666667, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "prelu": ("F.prelu(x, torch.tensor([0.25], dtype=torch.float64))",
        [nan, -inf, -1.75, -0.75, -0.25, -0.125, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "hardsigmoid": ("F.hardsigmoid(x)",
        [nan, 0.0, 0.0, 0.0, 0.333333333333333, 0.416666666666667, 0.5, 0.5, 0.583333333333333, 0.666666666666667, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 0.16666667163372, 0.16666667163372, 0.16666667163372, 0.16666667163372, 0.16666667163372, 0.16666667163372, 0.0, 0.0, 0.0]),
    "hardswish": ("F.hardswish(x)",
        [nan, nan, -0.0, -0.0, -0.333333333333333, -0.208333333333333, -0.0, 0.0, 0.291666666666667, 0.666666666666667, 3.0, 6.0, inf],
        [1.0, 0.0, 0.0, 0.0, 0.166666666666667, 0.333333333333333, 0.5, 0.5, 0.666666666666667, 0.833333333333333, 1.0, 1.0, 1.0]),
    "hardshrink": ("F.hardshrink(x, 0.5)",
        [nan, -inf, -7.0, -3.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 3.0, 6.0, inf],
        [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]),
    "softshrink": ("F.softshrink(x, 0.5)",
        [nan, -inf, -6.5, -2.5, -0.5, -0.0, -0.0, 0.0, 0.0, 0.5, 2.5, 5.5, inf],
        [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]),
    "softsign": ("F.softsign(x)",
        [nan, nan, -0.875, -0.75, -0.5, -0.333333333333333, -0.0, 0.0, 0.333333333333333, 0.5, 0.75, 0.857142857142857, nan],
        [nan, nan, 0.015625, 0.0625, 0.25, 0.444444444444444, 1.0, 1.0, 0.444444444444444, 0.25, 0.0625, 0.020408163265306, nan]),
    "logsigmoid": ("F.logsigmoid(x)",
        [nan, -inf, -7.000911466453775, -3.048587351573742, -1.313261687518223, -0.974076984180107, -0.693147180559945, -0.693147180559945, -0.474076984180107, -0.313261687518223, -0.048587351573742, -0.00247568513773, 0.0],
        [nan, 1.0, 0.999088948805599, 0.952574126822433, 0.731058578630005, 0.622459331201854, 0.5, 0.5, 0.377540668798145, 0.268941421369995, 0.047425873177567, 0.002472623156635, 0.0]),
    "tanhshrink": ("F.tanhshrink(x)",
        [nan, -inf, -6.000001663056056, -2.00494524631327, -0.238405844044235, -0.03788284273999, 0.0, 0.0, 0.03788284273999, 0.238405844044235, 2.00494524631327, 5.000012288349204, inf],
        [nan, 1.0, 0.999996673890655, 0.99013396283456, 0.580025658385974, 0.213552267034073, 0.0, 0.0, 0.213552267034073, 0.580025658385974, 0.99013396283456, 0.999975423452595, 1.0]),
    "silu": ("F.silu(x)",
        [nan, nan, -0.006377358360805, -0.1422776195327, -0.268941421369995, -0.188770334399073, -0.0, 0.0, 0.311229665600927, 0.731058578630005, 2.8577223804673, 5.985164261060192, inf],
        [nan, nan, -0.005460497066452, -0.08810410601517, 0.072329488128513, 0.260038812697348, 0.5, 0.5, 0.739961187302652, 0.927670511871487, 1.088104106015169, 1.012326432591525, nan]),
    "mish": ("F.mish(x)",
        [nan, nan, -0.006380263409574, -0.145647461275625, -0.303401461374109, -0.22074377465173, -0.0, 0.0, 0.375245211304895, 0.86509838826731, 2.986535004967958, 5.999926634065252, inf],
        [nan, nan, -0.005465886861315, -0.093393114532321, 0.059216755877395, 0.289510677913512, 0.6, 0.6, 0.886424375357727, 1.049036220099792, 1.021106910929444, 1.00013414050621, nan]),
    "softplus": ("F.softplus(x)",
        [nan, 0.0, 0.000911466453774, 0.048587351573742, 0.313261687518223, 0.474076984180107, 0.693147180559945, 0.693147180559945, 0.974076984180107, 1.313261687518223, 3.048587351573742, 6.00247568513773, inf],
        [nan, 0.0, 0.000911051194401, 0.047425873177567, 0.268941421369995, 0.377540668798145, 0.5, 0.5, 0.622459331201855, 0.731058578630005, 0.952574126822433, 0.997527376843365, 1.0]),
    "abs": ("torch.abs(x)",
        [nan, inf, 7.0, 3.0, 1.0, 0.5, 0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [0.0, -1.0, -1.0, -1.0, -1.0, -1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "clamp": ("torch.clamp(x, -1.0, 3.0)",
        [nan, -1.0, -1.0, -1.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 3.0, 3.0],
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
    "clamp_min": ("torch.clamp_min(x, -1.0)",
        [nan, -1.0, -1.0, -1.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "clamp_max": ("torch.clamp_max(x, 3.0)",
        [nan, -inf, -7.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 3.0, 3.0],
        [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
    "maximum": ("torch.maximum(x, torch.zeros_like(x))",
        [nan, 0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, inf],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "minimum": ("torch.minimum(x, torch.zeros_like(x))",
        [nan, -inf, -7.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0]),
}


def _same(got, want, what, zero_sign=True):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaN at {got} vs {want}"
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-12, atol=1e-15, err_msg=what)
    zero = ok & (want == 0)
    assert not zero_sign or np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), f"{what}: sign of zero"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # NumPy's note on inf * 0 and the like
@pytest.mark.parametrize("name", sorted(EDGES))
def test_nan_inf_and_boundaries_as_pytorch(name, each_backend):
    code, want_y, want_g = EDGES[name]
    x = leaf(X)
    y = eval(code, {"F": F, "torch": torch, "x": x})
    y.sum().backward()
    # maximum/minimum: on a tie of 0.0 and -0.0 PyTorch's scalar loop keeps the first, its vector loop and
    # NumPy the second; glassgrad leaves that to the array library
    _same(y.detach().cpu().numpy(), want_y, f"{name} value", zero_sign=name not in ("maximum", "minimum"))
    _same(x.grad.cpu().numpy(), want_g, f"{name} gradient")


def test_maximum_minimum_nan_and_ties_as_pytorch(each_backend):
    # torch.maximum(x, y) with x = [nan, 1, 0, -0.], y = [0, nan, -0., 0]: both sides get all of the
    # gradient at a NaN (no comparison holds), half each on a tie
    for f in (engine.maximum, engine.minimum):
        x, y = leaf([nan, 1.0, 0.0, -0.0]), leaf([0.0, nan, -0.0, 0.0])
        out = f(x, y)
        assert np.isnan(out.detach().cpu().numpy()[:2]).all()
        out.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0, 0.5, 0.5] and y.grad.tolist() == [1.0, 1.0, 0.5, 0.5]


def test_clamp_nan_bounds_and_tensor_bound_ties_as_pytorch(each_backend):
    x = leaf([1.0, nan, -2.0])
    assert np.isnan(engine.clamp(x, min=nan).detach().cpu().numpy()).all()     # a NaN bound propagates
    assert np.isnan(engine.clamp(x, max=nan).detach().cpu().numpy()).all()
    assert engine.clamp(x, 2.0, 0.0).detach().cpu().numpy()[[0, 2]].tolist() == [0.0, 0.0]   # min > max gives max
    # torch.clamp(x, mn, mx) with ties at both bounds: the input keeps the gradient, min > max sends it to max
    x = leaf([1.0, -1.0, 0.5, 3.0, nan])
    mn, mx = leaf([1.0, 0.0, 2.0, 0.0, 0.0]), leaf([2.0, -0.5, 0.0, 3.0, 1.0])
    engine.clamp(x, mn, mx).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert mn.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]
    assert mx.grad.tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]


def test_elu_family_float32_values_are_pytorchs_bits(each_backend):
    # x = torch.tensor([-7., -6., -3., -1., -0.5, -1e-3]); F.elu(x), F.selu(x), F.celu(x, 2.0)
    x = engine.tensor([-7.0, -6.0, -3.0, -1.0, -0.5, -1e-3])
    assert F.elu(x).tolist() == [-0.9990881085395813, -0.9975212216377258, -0.9502129554748535, -0.6321205496788025,
                                 -0.39346933364868164, -0.0009995001601055264]
    assert F.selu(x).tolist() == [-1.7564960718154907, -1.7537413835525513, -1.6705687046051025, -1.1113307476043701,
                                  -0.6917581558227539, -0.0017572205979377031]
    assert F.celu(x, 2.0).tolist() == [-1.9396052360534668, -1.900425910949707, -1.5537396669387817,
                                       -0.7869386672973633, -0.44239842891693115, -0.0009997501038014889]


def test_clamp_of_integers_to_a_float_bound_is_float_as_pytorch():
    # torch.clamp(torch.tensor([-1, 2]), min=0.5) -> tensor([0.5, 2.]); clamp_max(..., 1.5) -> [-1., 1.5]
    i = engine.tensor([-1, 2])
    assert engine.clamp(i, min=0.5).tolist() == [0.5, 2.0] and engine.clamp(i, min=0.5).dtype is engine.float32
    assert engine.clamp_max(i, 1.5).tolist() == [-1.0, 1.5] and engine.clamp_min(i, 0.5).dtype is engine.float32
    assert engine.clamp(i, 0, 1).tolist() == [0, 1] and engine.clamp(i, 0, 1).dtype is engine.int64
    assert engine.clamp_min(engine.tensor([True, False]), 0).dtype is engine.int64


def test_inplace_clamp_refuses_a_bound_of_a_higher_kind():
    # torch.tensor([1, 2]).clamp_(0.5), .clamp_min_(0.5), .clamp_max_(torch.tensor([0.5])), torch.tensor([True]).clamp_(0, 1)
    for f, msg in ((lambda: engine.tensor([1, 2]).clamp_(0.5), "Float can't be cast to the desired output type long int"),
                   (lambda: engine.tensor([1, 2]).clamp_min_(0.5), "Float can't be cast to the desired output type long int"),
                   (lambda: engine.tensor([1, 2]).clamp_max_(engine.tensor([0.5])),
                    "Float can't be cast to the desired output type Long"),
                   (lambda: engine.tensor([True]).clamp_(0, 1), "Long can't be cast to the desired output type bool")):
        with pytest.raises(RuntimeError, match=f"^result type {msg}$"):
            f()
    assert engine.tensor([-1, 2]).clamp_(0, 1).tolist() == [0, 1]


def test_negative_zero_forward_values_as_pytorch(each_backend):
    z = engine.tensor([-0.0])
    for f in (engine.relu, F.relu6, F.elu, F.selu, F.celu, F.leaky_relu, F.hardtanh, F.softsign, F.hardswish,
              lambda t: F.threshold(t, -1.0, 5.0), lambda t: engine.clamp_min(t, 0.0), lambda t: t.clamp(0.0, 1.0)):
        assert math.copysign(1.0, f(z).item()) == -1.0
    assert math.copysign(1.0, F.hardshrink(z).item()) == 1.0 and F.hardsigmoid(z).item() == 0.5


# ---- inplace= through functions and modules ---------------------------------------------------------
INPLACE = {
    "relu": (lambda t, ip: F.relu(t, inplace=ip), "ReluBackward0"),
    "relu6": (lambda t, ip: F.relu6(t, inplace=ip), "HardtanhBackward0"),
    "hardtanh": (lambda t, ip: F.hardtanh(t, inplace=ip), "HardtanhBackward0"),
    "threshold": (lambda t, ip: F.threshold(t, 0.1, 2.0, inplace=ip), "ThresholdBackward1"),
    "elu": (lambda t, ip: F.elu(t, inplace=ip), "EluBackward1"),
    "selu": (lambda t, ip: F.selu(t, inplace=ip), "EluBackward1"),
    "celu": (lambda t, ip: F.celu(t, inplace=ip), "CeluBackward1"),
    "leaky_relu": (lambda t, ip: F.leaky_relu(t, inplace=ip), "LeakyReluBackward1"),
    "rrelu": (lambda t, ip: F.rrelu(t, training=True, inplace=ip), "RreluWithNoiseBackward1"),
    "silu": (lambda t, ip: F.silu(t, inplace=ip), "SiluBackward0"),
    "mish": (lambda t, ip: F.mish(t, inplace=ip), "MishBackward0"),
    "hardsigmoid": (lambda t, ip: F.hardsigmoid(t, inplace=ip), "HardsigmoidBackward0"),
    "hardswish": (lambda t, ip: F.hardswish(t, inplace=ip), "HardswishBackward0"),
    "dropout": (lambda t, ip: F.dropout(t, 0.5, inplace=ip), "MulBackward0"),
    "dropout_all": (lambda t, ip: F.dropout(t, 1.0, inplace=ip), "MulBackward0"),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_keyword_writes_into_the_input(name):
    fn, node = INPLACE[name]
    x = leaf([-1.5, -0.2, 0.3, 0.8, 2.0, 7.0])
    engine.manual_seed(0)
    want = fn(x * 1.0, False).detach().numpy()
    a = x * 1.0
    v = a._version
    engine.manual_seed(0)
    out = fn(a, True)
    assert out._storage is a._storage and a._version > v
    assert out.grad_fn.name() == node
    np.testing.assert_array_equal(out.detach().numpy(), want)


MODULES = {
    "ReLU": (nn.ReLU(True), "ReluBackward0"), "ReLU6": (nn.ReLU6(True), "HardtanhBackward0"),
    "Hardtanh": (nn.Hardtanh(inplace=True), "HardtanhBackward0"),
    "Threshold": (nn.Threshold(0.1, 20.0, True), "ThresholdBackward1"), "ELU": (nn.ELU(inplace=True), "EluBackward1"),
    "SELU": (nn.SELU(True), "EluBackward1"), "CELU": (nn.CELU(inplace=True), "CeluBackward1"),
    "LeakyReLU": (nn.LeakyReLU(inplace=True), "LeakyReluBackward1"),
    "RReLU": (nn.RReLU(inplace=True), "RreluWithNoiseBackward1"), "SiLU": (nn.SiLU(True), "SiluBackward0"),
    "Mish": (nn.Mish(True), "MishBackward0"), "Hardsigmoid": (nn.Hardsigmoid(True), "HardsigmoidBackward0"),
    "Hardswish": (nn.Hardswish(True), "HardswishBackward0"),
}


def test_dropout2d_inplace_keyword():
    a = leaf([[[[-1.5, 0.3]], [[2.0, 4.0]]]]) * 1.0
    engine.manual_seed(0)
    out = F.dropout2d(a, 0.5, inplace=True)
    assert out._storage is a._storage and out.grad_fn.name() == "MulBackward0"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_pass_inplace_through(name):
    m, node = MODULES[name]
    a = leaf([-1.5, 0.3, 2.0]) * 1.0
    out = m(a)
    assert out._storage is a._storage and out.grad_fn.name() == node


def test_relu_function_keyword_and_torch_level_names():
    x = engine.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    for name in ("relu_", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "threshold", "threshold_",
                 "hardshrink", "prelu", "clamp_min_", "clamp_max_"):
        assert callable(getattr(engine, name)), name
    t = engine.tensor([-1.0, 0.2, 3.0], dtype=D)
    assert t.hardshrink(0.5).tolist() == [-1.0, 0.0, 3.0]
    assert t.prelu(engine.tensor([0.5], dtype=D)).tolist() == [-0.5, 0.2, 3.0]
    assert t.clamp_min_(0.0) is t and t.clamp_max_(1.0).tolist() == [0.0, 0.2, 1.0]
    assert engine.threshold_(engine.tensor([0.5, 2.0]), 1.0, 9.0).tolist() == [9.0, 2.0]


# ---- modules: reprs, PReLU's parameter, RReLU's noise ------------------------------------------------
REPRS = [
    (nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"),
    (nn.Threshold(0.1, 20, True), "Threshold(threshold=0.1, value=20, inplace=True)"),
    (nn.CELU(), "CELU(alpha=1.0)"), (nn.CELU(2.0, True), "CELU(alpha=2.0, inplace=True)"),
    (nn.Hardsigmoid(True), "Hardsigmoid()"), (nn.Hardswish(True), "Hardswish()"), (nn.Softsign(), "Softsign()"),
    (nn.LogSigmoid(), "LogSigmoid()"), (nn.Tanhshrink(), "Tanhshrink()"), (nn.Hardshrink(), "Hardshrink(0.5)"),
    (nn.Softshrink(0.3), "Softshrink(0.3)"), (nn.GLU(), "GLU(dim=-1)"), (nn.GLU(1), "GLU(dim=1)"),
    (nn.Softmin(), "Softmin(dim=None)"), (nn.Softmin(1), "Softmin(dim=1)"), (nn.Softmax2d(), "Softmax2d()"),
    (nn.PReLU(), "PReLU(num_parameters=1)"), (nn.PReLU(3, 0.1), "PReLU(num_parameters=3)"),
    (nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)"),
    (nn.RReLU(0.1, 0.3, True), "RReLU(lower=0.1, upper=0.3, inplace=True)"),
    (nn.ReLU6(True), "ReLU6(inplace=True)"), (nn.Hardtanh(-2, 2), "Hardtanh(min_val=-2, max_val=2)"),
]


@pytest.mark.parametrize("module,text", REPRS, ids=[t for _, t in REPRS])
def test_module_reprs_as_pytorch(module, text):
    assert repr(module) == text


def test_prelu_module_parameter():
    m = nn.PReLU(3, init=0.1, dtype=D)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert m.weight.dtype is D and m.weight.tolist() == [0.1, 0.1, 0.1] and m.num_parameters == 3
    x = engine.tensor([[[-1.0, 2.0]], [[-3.0, -4.0]], [[5.0, -6.0]]], dtype=D).reshape(1, 3, 2)
    m(x).sum().backward()
    assert m.weight.grad.tolist() == [-1.0, -7.0, -6.0]       # each channel's negative inputs, summed
    node = m(x).grad_fn
    assert node.name() == "PreluKernelBackward0" and tuple(node._saved_weight.shape) == (1, 3, 1)
    assert node._saved_weight._storage is m.weight._storage
    assert node.next_functions[1][0].name() == "ViewBackward0"


def test_rrelu_training_slopes_come_from_the_generator():
    x = leaf(-np.linspace(1.0, 2.0, 200))
    engine.manual_seed(7)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    engine.manual_seed(7)
    assert F.rrelu(x, 0.1, 0.3, training=True).tolist() == y.tolist()
    slopes = (y / x).detach().numpy()
    assert ((slopes >= 0.1) & (slopes <= 0.3)).all() and len(set(slopes.round(12))) > 150
    node = y.grad_fn
    assert node.name() == "RreluWithNoiseBackward0" and node._saved_training is True
    noise = node._saved_noise
    assert noise.nbytes == x.nbytes and noise.requires_grad is False
    np.testing.assert_allclose(noise.numpy(), slopes, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-12)    # the gradient is the noise
    pos = leaf([0.5, nan, 2.0])
    F.rrelu(pos, training=True).sum().backward()
    assert pos.grad.tolist() == [1.0, 1.0, 1.0]                         # noise is 1 where x > 0 and at NaN


def test_rrelu_module_eval_uses_the_mean_slope():
    m = nn.RReLU(0.1, 0.3).eval()
    x = leaf([-2.0, 3.0, nan])
    y = m(x)
    assert y.tolist()[:2] == [-2.0 * 0.2, 3.0] and not m.training
    y.sum().backward()
    assert x.grad.tolist() == [0.2, 1.0, 0.2]           # eval backward is leaky_relu's: NaN > 0 is False


def test_logsigmoid_keeps_its_buffer_and_its_value_is_stable():
    x = leaf([-200.0, -1.0, 0.0, 100.0])
    y = F.logsigmoid(x)
    node = y.grad_fn
    assert node.name() == "LogSigmoidBackward0" and node._saved_self is x
    np.testing.assert_allclose(node._saved_buffer.numpy(), np.exp(-np.abs(x.detach().numpy())))
    np.testing.assert_allclose(y.detach().numpy(), [-200.0, -1.3132616875182228, -math.log(2), -3.720075976020836e-44])


def test_logsigmoid_on_cuda_keeps_an_empty_buffer(monkeypatch):
    """The kernel on CuPy (PyTorch's CUDA kernel returns a 0-element buffer); the gradient recomputes it."""
    from engine.ops.nn import activation
    x = leaf(grid(6))
    want = F.logsigmoid(x).detach().numpy()
    monkeypatch.setattr(activation, "_on_cuda", lambda xp: True)
    node = F.logsigmoid(x).grad_fn
    assert tuple(node._saved_buffer.shape) == (0,) and node._saved_buffer.nbytes == 0
    np.testing.assert_array_equal(F.logsigmoid(x).detach().numpy(), want)
    gradcheck(F.logsigmoid, [x])
    gradgradcheck(F.logsigmoid, [x])


def test_softmin_warns_on_an_implicit_dim():
    x = engine.randn(2, 3)
    with pytest.warns(UserWarning, match="^Implicit dimension choice for softmin has been deprecated"):
        y = F.softmin(x)
    np.testing.assert_allclose(y.numpy(), F.softmax(-x, 1).numpy())
    assert y.grad_fn is None


# ---- errors not in the fixture ---------------------------------------------------------------------
def test_errors_in_pytorchs_words():
    with pytest.raises(RuntimeError, match=r"^Halving dimension must be even, but dimension 0 is size 3$"):
        nn.GLU(0)(engine.randn(3, 2))
    with pytest.raises(RuntimeError, match=r"^Mismatch of parameter numbers and input channel size. Found "
                                           r"parameter numbers = 5 and channel size = 1.$"):
        F.prelu(engine.randn(5), engine.randn(5))
    with pytest.raises(NotImplementedError, match="^\"hardswish_cpu\" not implemented for 'Long'$"):
        nn.Hardswish()(engine.tensor([1, 2]))
    with pytest.raises(ValueError, match="^Softmax2d: expected input to be 3D or 4D, got 5D instead$"):
        nn.Softmax2d()(engine.randn(1, 1, 1, 1, 1))
    with pytest.raises(TypeError, match=r"^clamp_max\(\) received an invalid combination of arguments - got "
                                        r"\(Tensor, NoneType\), but expected one of:\n \* \(Tensor input, Tensor max, "
                                        r"\*, Tensor out = None\)\n \* \(Tensor input, Number max, \*, Tensor out = None\)\n$"):
        engine.clamp_max(engine.randn(2), None)
    b = engine.tensor([True, False])
    with pytest.raises(RuntimeError, match="^Bool inputs not supported for hardtanh$"):
        F.relu6(b)
    with pytest.raises(RuntimeError, match="^Boolean inputs not supported for relu$"):
        F.relu(b)
    assert F.threshold(engine.tensor([1, -2, 3]), 0, 5).tolist() == [1, 5, 3]      # integers are fine here
    assert F.hardshrink(engine.tensor([0.2, -0.9], dtype=D), -0.5).tolist() == [0.2, -0.9]   # as is a negative lambd


# ---- array_api_strict: the same kernels and formulas off NumPy ---------------------------------------
STRICT = {
    "threshold": lambda x: F.threshold(x, 0.1, 2.0), "celu": lambda x: F.celu(x, 2.0),
    "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish, "logsigmoid": F.logsigmoid,
    "hardshrink": F.hardshrink, "softshrink": F.softshrink, "glu": lambda x: F.glu(x, 0),
    "prelu": lambda x: F.prelu(x, engine.tensor([0.3], dtype=D)), "rrelu": lambda x: F.rrelu(x),
    "clamp_tensor": lambda x: engine.clamp(x, x.detach() * 0.0 - 0.5, x.detach() * 0.0 + 0.5),
    "clamp_min": lambda x: engine.clamp_min(x, 0.1), "hardtanh": F.hardtanh, "elu": F.elu, "abs": engine.abs,
    "maximum": lambda x: engine.maximum(x, x.detach().flip(0)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(STRICT))
def test_other_backends_match_numpy(name, backend):
    def run():
        x = leaf(grid(8))
        out = STRICT[name](x)
        out.backward(engine.ones_like(out))
        return [out, x.grad]

    matches_numpy(backend, run)


def exercise_activation_ops():
    """One call of each table op this file covers (tests/ops/test_ops_grad.py checks every op runs)."""
    x = leaf(grid(8))
    outs = [F.threshold(x, 0.1, 2.0), F.threshold(x * 1.0, 0.1, 2.0, inplace=True), F.celu(x),
            F.celu(x * 1.0, inplace=True), F.hardsigmoid(x), F.hardswish(x), F.logsigmoid(x), F.hardshrink(x),
            F.softshrink(x), F.glu(x), F.prelu(x, leaf([0.25])), F.rrelu(x, training=True),
            F.rrelu(x * 1.0, inplace=True), engine.clamp_min(x, 0.1), engine.clamp_max(x, 0.1),
            engine.clamp_min(x, leaf([0.0])), engine.clamp_max(x, leaf([0.0])), engine.clamp(x, leaf([0.0]), leaf([1.0])),
            F.elu(x * 1.0, inplace=True), F.leaky_relu(x * 1.0, inplace=True)]
    sum(o.sum() for o in outs).backward()
