"""tan, fmax/fmin, copysign, float_power, logaddexp2, ldexp, nextafter, rsub, gcd/lcm, the bitwise
operations and operators, the aliases and the in-place forms (engine/functions/elementwise/, rows in
engine/ops/elementwise/). Expected values, nodes and messages are PyTorch 2.13's."""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.functions.elementwise.inplace import _TORCH_INPLACE
from tests.checks import BACKENDS, assert_matches, f64, gradcheck, gradgradcheck, on_backend

D = engine.float64
NAN = math.nan


def leaf(values, dtype=engine.float32):
    return engine.tensor(values, dtype=dtype, requires_grad=True)


def grads(out, *inputs):
    out.sum().backward()
    return [t.grad.tolist() if t.grad is not None else None for t in inputs]


# ---- names PyTorch has: none of these may be an AttributeError ----------------------------------------
TORCH_NAMES = """tan tan_ pi e inf nan newaxis rsub positive absolute negative_ fmax fmin copysign float_power
logaddexp2 ldexp ldexp_ nextafter gcd gcd_ lcm lcm_ bitwise_and bitwise_or bitwise_xor bitwise_not
bitwise_left_shift bitwise_right_shift greater greater_equal less less_equal not_equal multiply divide subtract
true_divide negative logical_xor fmod remainder angle frexp conj conj_physical resolve_conj resolve_neg real imag
is_conj is_neg""".split() + list(_TORCH_INPLACE)
TENSOR_NAMES = """tan tan_ isfinite greater greater_equal less less_equal not_equal greater_ greater_equal_ less_
less_equal_ not_equal_ multiply_ divide_ subtract_ true_divide_ negative_ positive absolute absolute_ logical_xor
logical_and_ logical_or_ logical_not_ logical_xor_ eq_ ne_ lt_ le_ gt_ ge_ exp2_ expm1_ log1p_ rsqrt_ reciprocal_
sign_ square_ erf_ erfc_ i0_ clip_ float_power float_power_ fmax fmin copysign copysign_ logaddexp2 ldexp ldexp_
nextafter nextafter_ gcd gcd_ lcm lcm_ bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_and_ bitwise_or_
bitwise_xor_ bitwise_not_ bitwise_left_shift bitwise_right_shift bitwise_left_shift_ bitwise_right_shift_
__lshift__ __rshift__ __rlshift__ __rrshift__ __iand__ __ior__ __ixor__ __ilshift__ __irshift__ __rand__
__rxor__ __ror__ __ipow__ __imod__ __ifloordiv__ fmod_ remainder_ angle frexp conj conj_physical conj_physical_
resolve_conj resolve_neg is_conj is_neg real imag""".split()


def test_pytorch_names_exist():
    assert [n for n in TORCH_NAMES if not hasattr(engine, n)] == []
    assert [n for n in TENSOR_NAMES if not hasattr(engine.Tensor, n)] == []
    assert (engine.pi, engine.e, engine.inf, engine.newaxis) == (math.pi, math.e, math.inf, None)
    assert math.isnan(engine.nan)
    assert engine.ones(3)[engine.newaxis].shape == (1, 3)


# ---- tan ----------------------------------------------------------------------------------------------
def test_tan_keeps_its_result_and_differentiates_twice():
    x = leaf([0.5, -1.0, 2.0])
    y = engine.tan(x)
    assert y.grad_fn.name() == "TanBackward0" and y.grad_fn._saved_result._storage is y._storage
    assert np.allclose(y.tolist(), [0.5463024973869324, -1.5574077367782593, -2.185039758682251])
    assert np.allclose(grads(y, x)[0], [1.2984, 3.4255, 5.7744], atol=1e-4)
    assert engine.tan(engine.tensor([1, 2])).dtype is engine.float32
    gradcheck(engine.tan, [f64(5)])
    gradgradcheck(lambda t: t.tan(), [f64(4)])


def test_tan_in_place_node_version_and_errors():
    x = leaf([0.5, -1.0, 2.0])
    a = x * 1
    v = a._version
    assert a.tan_() is a and a._version == v + 1
    assert a.grad_fn.name() == "TanBackward0" and a.grad_fn._saved_result._storage is a._storage
    a.sum().backward()
    assert np.allclose(x.grad.tolist(), [1.2984, 3.4255, 5.7744], atol=1e-4)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.tan_()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        engine.tensor([1, 2]).tan_()
    b = engine.tensor([0.25])
    assert engine.tan_(b) is b and abs(b.item() - math.tan(0.25)) < 1e-7


# ---- fmax / fmin ----------------------------------------------------------------------------------------
def test_fmax_fmin_ignore_nan_and_route_gradients_as_pytorch():
    a, b = leaf([1.0, NAN, 2.0, NAN]), leaf([1.0, 3.0, NAN, NAN])
    out = engine.fmax(a, b)
    assert out.grad_fn.name() == "FmaxBackward0"
    assert str(out.tolist()) == "[1.0, 3.0, 2.0, nan]"
    assert grads(out, a, b) == [[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0]]   # a tie goes to self, whole
    a, b = leaf([1.0, NAN, 2.0, NAN]), leaf([1.0, 3.0, NAN, NAN])
    out = a.fmin(b)
    assert out.grad_fn.name() == "FminBackward0" and out.grad_fn._saved_self is a and out.grad_fn._saved_other is b
    assert grads(out, a, b) == [[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0]]
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, NAN])
    assert grads(engine.fmax(x, y), x, y) == [[0.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    assert engine.fmax(engine.tensor([1, 2]), engine.tensor([3, 0])).tolist() == [3, 2]
    assert engine.fmin(engine.tensor([True, False]), engine.tensor([True, True])).tolist() == [True, False]
    mixed = engine.fmax(engine.tensor([1]), engine.tensor([2.5]))
    assert mixed.dtype is engine.float32 and mixed.tolist() == [2.5]
    gradcheck(engine.fmax, [f64(3, 4), f64(4, seed=1)])
    gradgradcheck(lambda a, b: engine.fmin(a, b) * a, [f64(3, 4), f64(4, seed=1)])


def test_fmax_errors():
    with pytest.raises(TypeError, match=r"^fmax\(\): argument 'other' \(position 2\) must be Tensor, not float$"):
        engine.fmax(engine.ones(2), 1.0)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match the size of tensor b \\(3\\)"):
        engine.fmin(engine.ones(2), engine.ones(3))


# ---- copysign -------------------------------------------------------------------------------------------
def test_copysign_values_nodes_and_gradients():
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, NAN])
    out = engine.copysign(x, y)
    node = out.grad_fn
    assert node.name() == "CopysignBackward0" and node._saved_self is x and node._saved_result._storage is out._storage
    assert out.tolist() == [0.5, 1.0, 2.0]
    assert grads(out, x, y) == [[1.0, -1.0, 1.0], [0.0, 0.0, 0.0]]
    z = leaf([0.0, -0.0, 1.0])
    out = engine.copysign(z, engine.tensor([-1.0, 1.0, -0.0]))
    assert [math.copysign(1, v) for v in out.tolist()] == [-1, 1, -1]
    assert grads(out, z) == [[0.0, 0.0, -1.0]]   # nothing where self is 0
    s = x.copysign(-1.0)
    assert s.grad_fn.name() == "CopysignBackward1" and len(s.grad_fn.next_functions) == 1
    assert engine.copysign(engine.tensor([1, 2]), engine.tensor([-1, 1])).tolist() == [-1.0, 2.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        engine.tensor([1]).copysign_(engine.tensor([-3]))
    a = x * 1
    assert a.copysign_(y) is a and a.grad_fn.name() == "CopysignBackward0"
    gradcheck(engine.copysign, [f64(3, 4), f64(4, seed=1)])
    gradgradcheck(lambda t: engine.copysign(t, -2.0), [f64(5)])


# ---- float_power ------------------------------------------------------------------------------------------
def test_float_power_is_a_float64_cast_then_pow():
    x, y = leaf([0.5, 1.0, 2.0]), leaf([1.0, 2.0, 3.0])
    out = engine.float_power(x, y)
    assert out.dtype is D and out.grad_fn.name() == "PowBackward1"
    assert [f.name() for f, _ in out.grad_fn.next_functions] == ["ToCopyBackward0", "ToCopyBackward0"]
    assert out.tolist() == [0.5, 1.0, 8.0]
    s = engine.float_power(x, 3)
    assert s.grad_fn.name() == "PowBackward0" and s.grad_fn._saved_exponent == 3.0
    assert type(s.grad_fn._saved_exponent) is float
    assert engine.float_power(3, x).grad_fn.name() == "PowBackward2"
    assert engine.float_power(engine.tensor([2]), engine.tensor([-1])).tolist() == [0.5]
    with pytest.raises(TypeError, match=r"^float_power\(\) received an invalid combination of arguments"):
        engine.float_power(2, 3)
    with pytest.raises(RuntimeError, match="^the base given to float_power_ has dtype Float but the operation's "
                                           "result requires dtype Double$"):
        engine.ones(2).float_power_(2)
    d = x.double()
    assert d.float_power_(y) is d and d.grad_fn.name() == "PowBackward1" and d.tolist() == [0.5, 1.0, 8.0]
    gradcheck(engine.float_power, [f64(3, low=0.5), f64(3, seed=2)])
    gradgradcheck(lambda t: engine.float_power(t, 2.5), [f64(3, low=0.5)])


def test_number_to_a_tensor_power_has_one_edge():
    for base, want_out, want_grad in ((2.0, [0.5, 1.0, 2.8284], [0.3466, 0.6931, 1.9605]),
                                      (0.0, [math.inf, 1.0, 0.0], [-math.inf, 0.0, 0.0]),
                                      (-2.0, [-0.5, 1.0, NAN], [NAN, NAN, NAN])):
        x = leaf([-1.0, 0.0, 1.5])
        out = base ** x
        assert out.grad_fn.name() == "PowBackward2" and len(out.grad_fn.next_functions) == 1
        assert out.grad_fn._saved_exponent is x and out.grad_fn._saved_self == base
        np.testing.assert_allclose(out.tolist(), want_out, atol=1e-4)
        np.testing.assert_allclose(grads(out, x)[0], want_grad, atol=1e-4)
    assert (2 ** engine.tensor([1, 2])).tolist() == [2, 4] and (2.5 ** engine.tensor([1, 2])).tolist() == [2.5, 6.25]
    gradcheck(lambda t: 1.7 ** t, [f64(5)])
    gradgradcheck(lambda t: engine.pow(0.5, t), [f64(5)])


# ---- logaddexp2, ldexp, nextafter --------------------------------------------------------------------------
def test_logaddexp2_values_and_gradients():
    a = engine.tensor([1.0, 100.0, -100.0, math.inf, -math.inf, math.inf])
    b = engine.tensor([1.0, 0.0, 0.0, math.inf, -math.inf, -math.inf])
    out = engine.logaddexp2(a, b).tolist()
    assert out[:2] == [2.0, 100.0] and abs(out[2] - 1.1381e-30) < 1e-33 and out[3:] == [math.inf, -math.inf,
                                                                                        math.inf]
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, NAN])
    node = engine.logaddexp2(x, y).grad_fn
    assert node.name() == "Logaddexp2Backward0" and node._saved_self is x and node._saved_other is y
    with pytest.raises(NotImplementedError, match="^\"logaddexp2_cpu\" not implemented for 'Long'$"):
        engine.logaddexp2(engine.tensor([1]), engine.tensor([2]))
    gradcheck(engine.logaddexp2, [f64(3, 4), f64(4, seed=1)])
    gradgradcheck(engine.logaddexp2, [f64(3), f64(3, seed=1)])


def test_ldexp_keeps_an_integer_exponent_as_int64():
    x, o = leaf([0.5, -1.0, 2.0]), engine.tensor([1, 2, 3])
    out = engine.ldexp(x, o)
    node = out.grad_fn
    assert node.name() == "LdexpBackward0" and node._saved_other is o and node._saved_result._storage is out._storage
    assert node.next_functions[1][0] is None
    assert out.tolist() == [1.0, -4.0, 16.0]
    assert grads(out, x) == [[2.0, 4.0, 8.0]]
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, 3.0])
    assert np.allclose(grads(engine.ldexp(x, y), x, y)[1], [0.6931, -2.7726, 11.0904], atol=1e-4)
    assert engine.ldexp(engine.tensor([1, 2]), engine.tensor([1, 2])).tolist() == [2.0, 8.0]
    assert engine.ldexp(engine.tensor([1.0], dtype=D), engine.tensor([3])).dtype is D
    with pytest.raises(RuntimeError, match="^ldexp can't be cast to the desired output type Long$"):
        engine.tensor([1]).ldexp_(engine.tensor([3]))
    a = x * 1
    assert a.ldexp_(o) is a and a.grad_fn.name() == "LdexpBackward0" and a.tolist() == [1.0, -4.0, 16.0]
    gradcheck(engine.ldexp, [f64(3, 4), f64(4, seed=1)])
    gradcheck(lambda t: engine.ldexp(t, engine.tensor([[3], [-2], [0]])), [f64(3, 4)])


def test_nextafter_steps_one_ulp_with_pytorch_gradients():
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, NAN])
    out = engine.nextafter(x, y)
    assert out.tolist()[:2] == [0.5000000596046448, -0.9999999403953552] and math.isnan(out.tolist()[2])
    assert out.grad_fn.name() == "NextafterBackward0"
    assert grads(out, x, y) == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    one = engine.tensor([1.0], dtype=D)
    assert engine.nextafter(one, engine.tensor([2.0], dtype=D)).item() == np.nextafter(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="^\"nextafter_cpu\" not implemented for 'Long'$"):
        engine.nextafter(engine.tensor([1]), engine.tensor([2]))
    with pytest.raises(TypeError, match=r"^nextafter\(\): argument 'other' \(position 2\) must be Tensor, not float"):
        engine.nextafter(one, 1.0)


# ---- rsub, positive, absolute, negative ------------------------------------------------------------------------
def test_rsub_nodes_alpha_and_errors():
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, 3.0])
    out = engine.rsub(x, y, alpha=2)
    assert out.grad_fn.name() == "RsubBackward0" and out.grad_fn._saved_alpha == 2
    assert out.tolist() == [0.0, 4.0, -1.0]
    assert grads(out, x, y) == [[-2.0, -2.0, -2.0], [1.0, 1.0, 1.0]]
    s = engine.rsub(x, 2.0, alpha=3)
    assert s.grad_fn.name() == "RsubBackward1" and s.tolist() == [0.5, 5.0, -4.0]
    assert engine.rsub(engine.tensor([1, 2]), 2.5).tolist() == [1.5, 0.5]
    with pytest.raises(TypeError, match=r"^rsub\(\) received an invalid combination of arguments - got \(int, "):
        engine.rsub(2, x)
    with pytest.raises(RuntimeError, match="^Subtraction, the `-` operator, with two bool tensors is not supported"):
        engine.rsub(engine.tensor([True]), engine.tensor([True]))
    gradcheck(lambda a, b: engine.rsub(a, b, alpha=0.5), [f64(3, 4), f64(4, seed=1)])


def test_positive_absolute_negative():
    x = leaf([0.5, -1.0])
    assert engine.positive(x) is x and x.positive() is x and +x is x
    with pytest.raises(RuntimeError, match="^The `\\+` operator, on a bool tensor is not supported.$"):
        +engine.tensor([True])
    assert engine.absolute(x).grad_fn.name() == "AbsBackward0"
    with pytest.raises(NotImplementedError, match="\"abs_cpu\" not implemented for 'Bool'"):
        engine.tensor([True]).absolute_()
    a = x * 1
    assert a.absolute_() is a and a.tolist() == [0.5, 1.0] and a.grad_fn.name() == "AbsBackward0"
    n = x * 1
    assert engine.negative_(n) is n and n.grad_fn.name() == "NegBackward0" and n.tolist() == [-0.5, 1.0]
    with pytest.raises(RuntimeError, match="^Negation, the `-` operator, on a bool tensor is not supported"):
        engine.tensor([True]).negative_()


# ---- fmod and remainder ----------------------------------------------------------------------------------------
def test_fmod_and_remainder_nodes_values_and_gradients():
    x, y = leaf([5.5, -5.5, 3.0, -0.0]), leaf([2.0, 2.0, -2.0, 1.0])
    f = engine.fmod(x, y)
    assert f.grad_fn.name() == "FmodBackward1" and f.grad_fn._saved_self is x and f.grad_fn._saved_other is y
    assert f.tolist() == [1.5, -1.5, 1.0, 0.0] and math.copysign(1, f.tolist()[3]) == -1
    assert grads(f, x, y) == [[1.0, 1.0, 1.0, 1.0], [-2.0, 2.0, 1.0, 0.0]]
    x, y = leaf([5.5, -5.5, 3.0, -0.0]), leaf([2.0, 2.0, -2.0, 1.0])
    r = x % y
    assert r.grad_fn.name() == "RemainderBackward1" and r.tolist() == [1.5, 0.5, -1.0, 0.0]
    assert math.copysign(1, r.tolist()[3]) == -1                      # -0.0 stays, as PyTorch's
    assert grads(r, x, y) == [[1.0, 1.0, 1.0, 1.0], [-2.0, 3.0, 2.0, 0.0]]
    only_x = engine.fmod(leaf([1.0]), engine.tensor([2.0])).grad_fn
    assert only_x._saved_self is None and only_x._saved_other is None   # self's gradient needs neither
    assert engine.fmod(x, 2.5).grad_fn.name() == "FmodBackward0" and (x % 2.5).grad_fn.name() == "RemainderBackward0"
    big = engine.tensor([5.0, -5.0, math.inf, 3.0])
    den = engine.tensor([0.0, math.inf, 2.0, math.inf])
    assert str(engine.remainder(big, den).tolist()) == "[nan, inf, nan, 3.0]"
    assert str(engine.fmod(big, den).tolist()) == "[nan, -5.0, nan, 3.0]"
    i = engine.tensor([5, -5])
    assert engine.fmod(i, engine.tensor([3, 3])).tolist() == [2, -2] and (i % 3).tolist() == [2, 1]
    assert engine.fmod(i, 1.5).tolist() == [0.5, -0.5] and (7 % engine.tensor([3, -3])).tolist() == [1, -2]
    for bad in (lambda: engine.fmod(i, engine.tensor([0, 3])), lambda: i % 0):
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            bad()
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        engine.tensor([5]).fmod_(1.5)
    with pytest.raises(TypeError, match=r"^fmod\(\) received an invalid combination of arguments - got \(float, "):
        engine.fmod(2.0, x)
    a = engine.tensor([5, -5])
    b = a
    a %= 3
    assert a is b and a.tolist() == [2, 1]
    c = engine.tensor([5.0])
    d = c
    c //= 2
    assert c is d and c.tolist() == [2.0]
    m = x * 1
    assert m.remainder_(y) is m and m.grad_fn.name() == "RemainderBackward1"
    m = x * 1
    assert m.fmod_(y) is m and m.grad_fn.name() == "FmodBackward1"
    gradcheck(engine.fmod, [f64(3, 4), f64(4, low=0.5, seed=1)])
    gradcheck(engine.remainder, [f64(3, 4), f64(4, low=0.5, seed=1)])
    gradgradcheck(lambda a, b: engine.remainder(a, b) * a, [f64(3, 4), f64(4, low=0.5, seed=1)])


# ---- angle, frexp, the complex API on real tensors --------------------------------------------------------------
def test_angle_of_real_numbers():
    x = leaf([-1.5, 0.0, -0.0, 2.0, NAN])
    out = engine.angle(x)
    assert out.grad_fn.name() == "AngleBackward0" and out.grad_fn._saved_self is x
    pi32 = float(np.float32(math.pi))
    assert str(out.tolist()) == f"[{pi32}, 0.0, 0.0, 0.0, nan]"
    assert grads(out, x) == [[0.0] * 5]
    assert engine.tensor([-1, 0, 2]).angle().dtype is engine.float32


@pytest.mark.parametrize("dtype", [engine.float32, engine.float64])
def test_frexp_matches_numpy_and_differentiates(dtype):
    np_dt = np.float32 if dtype is engine.float32 else np.float64
    rng = np.random.default_rng(3)
    vals = np.concatenate([rng.standard_normal(50) * 10.0 ** rng.integers(-30, 30, 50),
                           [8.0, -0.3, 0.0, -0.0, 1.0, 0.5, 1e-40, 3.4e38, np.inf, -np.inf, np.nan]]).astype(np_dt)
    m, e = engine.frexp(engine.tensor(vals, dtype=dtype))
    wm, we = np.frexp(vals)
    np.testing.assert_array_equal(m.numpy(), wm)
    np.testing.assert_array_equal(e.numpy()[np.isfinite(vals)], we[np.isfinite(vals)])
    assert e.dtype is engine.int64 and tuple(engine.frexp(engine.tensor([3.0]))) is not None
    assert repr(engine.frexp(engine.tensor([3.0]))).startswith("torch.return_types.frexp(\nmantissa=tensor([0.7500])")
    y = leaf([8.0, -0.3], dtype)
    mant, ex = y.frexp()
    assert mant.grad_fn.name() == "FrexpBackward0" and mant.grad_fn._saved_exponent._storage is ex._storage
    assert grads(mant, y) == [[0.0625, 2.0]]
    with pytest.raises(RuntimeError, match=r"^torch.frexp\(\) only supports floating-point dtypes$"):
        engine.frexp(engine.tensor([1, 2]))


def test_complex_api_on_real_tensors_is_the_identity():
    x = leaf([1.0, -2.0])
    assert x.conj() is x and engine.conj(x) is x and x.conj_physical() is x and x.resolve_conj() is x
    assert x.resolve_neg() is x and engine.real(x) is x and x.real is x and x.conj_physical_() is x
    assert not x.is_conj() and not x.is_neg() and not engine.is_conj(x)
    with pytest.raises(RuntimeError, match="^imag is not implemented for tensors with non-complex dtypes.$"):
        x.imag


# ---- aliases and in-place arithmetic ---------------------------------------------------------------------------
def test_comparison_aliases_and_isfinite_as_methods():
    a, b = engine.tensor([1.0, 2.0, 3.0]), engine.tensor([2.0, 2.0, 2.0])
    assert a.greater(b).tolist() == [False, False, True] and a.less_equal(b).tolist() == [True, True, False]
    assert a.greater_equal(b).tolist() == [False, True, True] and a.less(b).tolist() == [True, False, False]
    assert a.not_equal(b).tolist() == [True, False, True]
    assert engine.tensor([1.0, math.inf, NAN]).isfinite().tolist() == [True, False, False]
    assert engine.tensor([0.0, 1.0]).logical_xor(engine.tensor([1.0, 1.0])).tolist() == [True, False]


def test_in_place_arithmetic_aliases():
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, 4.0])
    a = x * 1
    assert a.multiply_(y) is a and a.grad_fn.name() == "MulBackward0" and a.tolist() == [0.5, -2.0, 8.0]
    a = x * 1
    assert a.subtract_(y, alpha=2) is a and a.grad_fn._saved_alpha == 2 and a.tolist() == [-1.5, -5.0, -6.0]
    a = x * 1
    assert a.true_divide_(y) is a and a.grad_fn.name() == "DivBackward0" and a.tolist() == [0.5, -0.5, 0.5]
    a = x * 1
    a.divide_(y, rounding_mode="floor")
    assert a.grad_fn.name() == "DivBackward2" and a.grad_fn._saved_rounding_mode == "floor"
    assert a.tolist() == [0.0, -1.0, 0.0]
    a.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and y.grad.tolist() == [0.0, 0.0, 0.0]
    i = engine.tensor([7, -7])
    assert i.div_(2, rounding_mode="trunc") is i and i.tolist() == [3, -3] and i.dtype is engine.int64
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        engine.tensor([1]).true_divide_(2)
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        engine.tensor([1]).multiply_(1.5)
    s = x * 1
    assert s.square_() is s and s.grad_fn.name() == "PowBackward0" and s.grad_fn._saved_exponent == 2
    assert engine.tensor([1, 2]).square_().tolist() == [1, 4]
    p = x * 1
    p **= y
    assert p.grad_fn.name() == "PowBackward1"
    c = engine.tensor([0.5, -1.0, 2.0])
    assert c.clip_(0, 1) is c and c.tolist() == [0.5, 0.0, 1.0]


def test_div_with_a_rounding_mode_is_divbackward2_and_floordiv_is_floor_divide():
    x, y = leaf([5.5, -5.5]), leaf([2.0, 2.0])
    out = engine.div(x, y, rounding_mode="trunc")
    assert out.grad_fn.name() == "DivBackward2" and out.tolist() == [2.0, -2.0]
    assert out.grad_fn._saved_rounding_mode == "trunc" and out.grad_fn._saved_self is x
    assert grads(out, x, y) == [[0.0, 0.0], [0.0, 0.0]]
    s = engine.div(x, 2, rounding_mode="floor")
    assert s.tolist() == [2.0, -3.0] and [f is None for f, _ in s.grad_fn.next_functions] == [False, True]
    assert [f is None for f, _ in engine.div(2.0, y, rounding_mode="floor").grad_fn.next_functions] == [True, False]
    with pytest.raises(RuntimeError, match="^div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                         "found 'round'$"):
        engine.div(x, 2, rounding_mode="round")
    f = x // 2
    assert f.grad_fn.name() == "torch::autograd::NotImplemented" and f.tolist() == [2.0, -3.0]
    with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide is not implemented$"):
        f.sum().backward()
    assert (engine.tensor([7, -7]) // 2).tolist() == [3, -4] and (7 // engine.tensor([2, -2])).tolist() == [3, -4]
    assert engine.div(engine.tensor([7, -7]), 2, rounding_mode="trunc").tolist() == [3, -3]


def test_floor_division_rounds_as_pytorch():
    a = engine.tensor([1.0, -1.0, 7.5, -7.5, 5.0, 0.0, -0.0, 1.0, math.inf, 3.0, 1e30])
    b = engine.tensor([0.1, 0.1, 2.0, 2.0, 0.0, 3.0, 3.0, -0.0, 2.0, math.inf, 1e-30])
    want = "[9.0, -10.0, 3.0, -4.0, inf, 0.0, -0.0, -inf, nan, 0.0, inf]"
    assert str((a // b).tolist()) == want and str(engine.div(a, b, rounding_mode="floor").tolist()) == want
    c = a.clone()
    assert str(c.div_(b, rounding_mode="floor").tolist()) == want
    assert (engine.tensor([1.0]) // 0.1).tolist() == [9.0] and (1.0 // engine.tensor([0.1])).tolist() == [9.0]
    signs = engine.div(engine.tensor([0.0, -0.0]), engine.tensor([-3.0, -3.0]), rounding_mode="floor").tolist()
    assert [math.copysign(1, v) for v in signs] == [-1, 1]


def test_every_torch_in_place_function_matches_its_method():
    args = {"logit_": (), "xlogy_": (engine.tensor([2.0, 3.0]),), "nan_to_num_": (), "clamp_": (0.1, 0.6),
            "clip_": (0.1, 0.6), "gcd_": (engine.tensor([4, 6]),), "lcm_": (engine.tensor([4, 6]),),
            "ldexp_": (engine.tensor([1, 2]),)}
    for name in _TORCH_INPLACE:
        ints = name in ("gcd_", "lcm_")
        base = [6, 4] if ints else [0.25, 0.5]
        a, b = engine.tensor(base), engine.tensor(base)
        assert getattr(engine, name)(a, *args.get(name, ())) is a, name
        getattr(b, name)(*args.get(name, ()))
        np.testing.assert_equal(a.tolist(), b.tolist(), err_msg=name)
        assert a._version == 1, name
    with pytest.raises(TypeError, match=r"^sin_\(\): argument 'input' \(position 1\) must be Tensor, not float$"):
        engine.sin_(1.0)


@pytest.mark.parametrize("method", ["exp2_", "expm1_", "log1p_", "rsqrt_", "reciprocal_", "sign_", "erf_", "erfc_",
                                    "i0_", "tan_"])
def test_unary_in_place_forms_show_the_out_of_place_node(method):
    x = leaf([0.5, 0.25, 2.0], D)
    out_of_place = getattr(x, method[:-1])()
    a = x * 1
    v = a._version
    assert getattr(a, method)() is a and a._version == v + 1
    assert a.grad_fn.name() == out_of_place.grad_fn.name()
    np.testing.assert_allclose(a.tolist(), out_of_place.tolist())
    (ga,) = engine.autograd.grad(a.sum(), x)
    (gb,) = engine.autograd.grad(out_of_place.sum(), x)
    np.testing.assert_allclose(ga.tolist(), gb.tolist())
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(x, method)()


# ---- comparisons and logical ops in place ------------------------------------------------------------------------
def test_comparisons_in_place_keep_the_dtype_and_give_zero_gradients():
    x, y = leaf([0.5, -1.0, 2.0]), leaf([0.5, 2.0, NAN])
    for name, want in (("eq_", [1.0, 0.0, 0.0]), ("ne_", [0.0, 1.0, 1.0]), ("lt_", [0.0, 1.0, 0.0]),
                       ("le_", [1.0, 1.0, 0.0]), ("gt_", [0.0, 0.0, 0.0]), ("ge_", [1.0, 0.0, 0.0]),
                       ("greater_", [0.0, 0.0, 0.0]), ("less_equal_", [1.0, 1.0, 0.0]),
                       ("not_equal_", [0.0, 1.0, 1.0])):
        a = x * 1
        v = a._version
        assert getattr(a, name)(y) is a and a.dtype is engine.float32 and a.tolist() == want, name
        assert a._version == v + 1
        node = {"greater_": "Gt", "less_equal_": "Le", "not_equal_": "Ne"}.get(name, name[0].upper() + name[1])
        assert a.grad_fn.name() == f"{node}Backward1" and len(a.grad_fn.next_functions) == 2
        b = x * 1
        getattr(b, name)(1.0)
        assert b.grad_fn.name() == f"{node}Backward0" and len(b.grad_fn.next_functions) == 1
    a = x * 1
    a.eq_(y)
    assert grads(a, x, y) == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert engine.tensor([1, 2]).eq_(1.0).tolist() == [1, 0]
    assert engine.tensor([True, False]).eq_(engine.tensor([0.5, 0.0])).tolist() == [False, True]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.eq_(y)
    with pytest.raises(RuntimeError, match=r"^output with shape \[3\] doesn't match the broadcast shape \[2, 3\]$"):
        engine.ones(3).eq_(engine.ones(2, 3))


def test_logical_ops_in_place_leave_the_history_alone():
    x = leaf([0.5, -1.0, 0.0])
    a = x * 1
    node = a.grad_fn
    assert a.logical_and_(engine.tensor([1.0, 0.0, 1.0])) is a and a.tolist() == [1.0, 0.0, 0.0]
    assert a.grad_fn is node and a._version == 1       # as PyTorch: no node, the old history stays
    assert x.logical_not_() is x and x.tolist() == [0.0, 0.0, 1.0] and x.is_leaf and x.requires_grad
    assert engine.tensor([2, 0, 1]).logical_or_(engine.tensor([0, 0, 1])).tolist() == [1, 0, 1]
    assert engine.tensor([1.0, 0.0]).logical_xor_(engine.tensor([1.0, 1.0])).tolist() == [0.0, 1.0]
    with pytest.raises(TypeError, match=r"^logical_and_\(\): argument 'other' \(position 1\) must be Tensor, not "
                                        "float$"):
        engine.ones(2).logical_and_(1.0)
    e = leaf([0.5, 1.0]).exp()
    e.logical_not_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


# ---- integer-only ops -------------------------------------------------------------------------------------------
def test_gcd_lcm_values():
    assert engine.gcd(engine.tensor([12, -18, 0, 5, -7]), engine.tensor([8, 12, 0, 0, 14])).tolist() == [4, 6, 0, 5, 7]
    assert engine.lcm(engine.tensor([4, -6, 0, -4]), engine.tensor([6, 4, 5, 6])).tolist() == [12, 12, 0, 12]
    assert engine.gcd(engine.tensor([2 ** 62]), engine.tensor([2 ** 61])).tolist() == [2 ** 61]
    assert engine.gcd(engine.tensor([[12], [9]]), engine.tensor([8, 6])).tolist() == [[4, 6], [1, 3]]
    a = engine.tensor([12, 18])
    assert a.gcd_(engine.tensor([8, 4])) is a and a.tolist() == [4, 2] and a._version == 1
    assert engine.lcm_(a, engine.tensor([3, 3])).tolist() == [12, 6]
    with pytest.raises(NotImplementedError, match="^\"gcd_cpu\" not implemented for 'Float'$"):
        engine.gcd(engine.ones(2), engine.ones(2))
    with pytest.raises(NotImplementedError, match="^\"lcm_cpu\" not implemented for 'Bool'$"):
        engine.lcm(engine.tensor([True]), engine.tensor([True]))
    with pytest.raises(TypeError, match=r"^gcd\(\): argument 'other' \(position 2\) must be Tensor, not int$"):
        engine.gcd(engine.tensor([4]), 2)


def test_bitwise_ops_and_operators():
    i, j = engine.tensor([12, -3]), engine.tensor([10, 7])
    assert (i & j).tolist() == [8, 5] and engine.bitwise_and(i, j).tolist() == [8, 5]
    assert (i | j).tolist() == [14, -1] and (i ^ j).tolist() == [6, -6] and (~i).tolist() == [-13, 2]
    assert (1 & engine.tensor([3, 3])).tolist() == [1, 1] and (1 | engine.tensor([3, 2])).tolist() == [3, 3]
    assert (1 ^ engine.tensor([3, 3])).tolist() == [2, 2]
    t, f = engine.tensor([True, False]), engine.tensor([True, True])
    assert (t & f).tolist() == [True, False] and (t ^ f).tolist() == [False, True] and (~t).tolist() == [False, True]
    assert (t & 1).dtype is engine.int64 and (t & True).dtype is engine.bool
    assert engine.bitwise_and(t, engine.tensor([3, 3])).tolist() == [1, 0]
    a = engine.tensor([3, 5])
    b = a
    a &= engine.tensor([1, 1])
    assert a is b and a.tolist() == [1, 1] and a._version == 1
    a |= 6
    a ^= 2
    a <<= 1
    assert a is b and a.tolist() == [10, 10]
    a >>= 2
    assert a is b and a.tolist() == [2, 2] and a._version == 5
    assert engine.tensor([5, 3]).bitwise_not_().tolist() == [-6, -4]
    with pytest.raises(RuntimeError, match="^result type Long can't be cast to the desired output type Bool$"):
        engine.tensor([True, False]).bitwise_and_(engine.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        engine.tensor([5, 3]).bitwise_and_(1.5)


def test_shifts_follow_pytorch_past_the_word_size():
    v = engine.tensor([1, -8])
    assert (v << 2).tolist() == [4, -32] and (v >> 2).tolist() == [0, -2]
    assert (v << -1).tolist() == [0, 0] and (v << 64).tolist() == [0, 0] and (v << 63).tolist() == [-2 ** 63, 0]
    assert (v >> 64).tolist() == [0, -1] and (v >> -1).tolist() == [0, -1]
    assert (v >> engine.tensor([63, 63])).tolist() == [0, -1]
    assert (2 << engine.tensor([1, 2])).tolist() == [4, 8] and (64 >> engine.tensor([1, 2])).tolist() == [32, 16]
    assert (engine.tensor([True]) << 1).tolist() == [2]
    assert engine.tensor([5, 3]).bitwise_left_shift_(1).tolist() == [10, 6]


@pytest.mark.parametrize("code, kind, message", [
    ("engine.ones(2) & engine.ones(2)", NotImplementedError, "\"bitwise_and_cpu\" not implemented for 'Float'"),
    ("engine.tensor([1]) & 1.5", NotImplementedError, "\"bitwise_and_cpu\" not implemented for 'Float'"),
    ("engine.ones(2) | engine.ones(2)", NotImplementedError, "\"bitwise_or_cpu\" not implemented for 'Float'"),
    ("engine.ones(2) ^ engine.ones(2)", NotImplementedError, "\"bitwise_xor_cpu\" not implemented for 'Float'"),
    ("~engine.ones(2)", TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors"),
    ("engine.bitwise_not(engine.ones(2))", NotImplementedError, "\"bitwise_not_cpu\" not implemented for 'Float'"),
    ("engine.ones(2) << 1", NotImplementedError, "\"lshift_cpu\" not implemented for 'Float'"),
    ("engine.ones(2, dtype=engine.float64) >> 1", NotImplementedError, "\"rshift_cpu\" not implemented for 'Double'"),
    ("engine.tensor([True]) << engine.tensor([True])", NotImplementedError,
     "\"lshift_cpu\" not implemented for 'Bool'"),
])
def test_integer_only_errors(code, kind, message):
    with pytest.raises(kind) as info:
        eval(code)
    assert str(info.value) == message


# ---- every backend gives NumPy's answer ----------------------------------------------------------------------------
CASES = {
    "tan": lambda a, b: engine.tan(a * 0.5),
    "tan_": lambda a, b: (a * 0.5).tan_(),
    "fmax": lambda a, b: engine.fmax(a, b[0]),
    "fmin_nan": lambda a, b: engine.fmin(a, engine.where(b > 0.5, engine.tensor(math.nan, dtype=D), b)),
    "copysign": lambda a, b: engine.copysign(a, b),
    "copysign_number": lambda a, b: engine.copysign(a * b, -0.0),
    "float_power": lambda a, b: engine.float_power(a.abs() + 0.5, b),
    "logaddexp2": lambda a, b: engine.logaddexp2(a, b),
    "ldexp": lambda a, b: engine.ldexp(a, engine.tensor([1, -2, 0, 3])) * b,
    "nextafter": lambda a, b: engine.nextafter(a, b),
    "rsub": lambda a, b: engine.rsub(a, b, alpha=2),
    "rsub_number": lambda a, b: engine.rsub(a * b, 1.5),
    "pow_number_base": lambda a, b: 1.5 ** a + 0.0 ** b,
    "fmod": lambda a, b: engine.fmod(a * 3, b) + engine.fmod(a, -0.7),
    "remainder": lambda a, b: (a * 3) % b + a % 0.7,
    "angle_frexp": lambda a, b: engine.angle(a) * b + engine.frexp(a * 100).mantissa * b,
    "eq_": lambda a, b: (a * b).ge_(0.0) + (a * 1).lt_(b) * b,
    "div_floor_": lambda a, b: (a * 3).div_(b, rounding_mode="floor") + a,
    "floor_divide": lambda a, b: (a.detach() * 3 // b.detach()) * b + (1.0 // b.detach()) * a
    + (a.detach() / 0.1 // 0.1) * b,
}
INTEGER_CASES = {
    "gcd": lambda i, j: engine.gcd(i, j),
    "lcm": lambda i, j: engine.lcm(i, j),
    "and_or_xor_not": lambda i, j: (i & j) + (i | j) * 3 + (i ^ j) * 5 + ~i,
    "shifts": lambda i, j: (i << (j % 70 - 3)) + (i >> (j % 70 - 3)),
    "bool_ops": lambda i, j: ((i > 0) & (j > 0)) ^ ~(i > j),
    "eq_int": lambda i, j: i.clone().eq_(j),
    "modulo": lambda i, j: engine.fmod(i, j + 100) + engine.remainder(i, j - 100) + i % 7,
}


def _run(fn):
    rng = np.random.default_rng(0)
    a = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    b = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    out = fn(a, b)
    out.backward(engine.ones_like(out))
    return out, [a.grad, b.grad]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_other_backends_match_numpy(name, backend):
    ref_out, ref_grads = _run(CASES[name])
    with on_backend(backend):
        out, got = _run(CASES[name])
    assert_matches(backend, [out, *got], [ref_out, *ref_grads])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(INTEGER_CASES))
def test_integer_ops_on_other_backends(name, backend):
    vals = ([12, -18, 0, 7, 2 ** 40, -5], [8, 12, 0, 0, 2 ** 20, 65])

    def run():
        return INTEGER_CASES[name](engine.tensor(vals[0]), engine.tensor(vals[1]))
    ref = run()
    with on_backend(backend):
        got = run()
    assert_matches(backend, got, ref)
    assert got.tolist() == ref.tolist()


def exercise_elementwise_ops():
    """One call per differentiable row of tan ... the comparisons in place (engine/ops/elementwise/), for
    test_every_table_op_is_exercised."""
    x, y = leaf([0.5, -1.0, 2.0]), leaf([1.0, 2.0, 3.0])
    engine.tan(x), engine.fmax(x, y), engine.fmin(x, y), engine.copysign(x, y), engine.copysign(x, -1.0)
    engine.logaddexp2(x, y), engine.ldexp(x, y), engine.nextafter(x, y), engine.rsub(x, y), engine.rsub(x, 2.0)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        getattr(x * 1, name + "_")(y), getattr(x * 1, name + "_")(1.0)
    (x * 1).div_(y, rounding_mode="trunc"), engine.div(x, y, rounding_mode="floor")
    2.0 ** x
    engine.fmod(x, y), engine.fmod(x, 1.5), engine.remainder(x, y), engine.remainder(x, 1.5)
    engine.angle(x), engine.frexp(x)
    (x * 1).asinh_(), (x * 0.5).atanh_(), (y * 1).acosh_(), 2.0 % y


LERP_SIGNATURES = (" * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                   " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")


@pytest.mark.parametrize("call, message", [
    (lambda: engine.logical_and(engine.tensor([True, False]), 2),
     "logical_and(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: engine.logical_or(1.5, engine.tensor([True])),
     "logical_or(): argument 'input' (position 1) must be Tensor, not float"),
    (lambda: engine.lerp(engine.ones(2), 2, 0.25),
     "lerp() received an invalid combination of arguments - got (Tensor, int, float), but expected one of:\n"
     + LERP_SIGNATURES),
    (lambda: engine.lerp(1.5, engine.ones(2), engine.tensor(0.25)),
     "lerp() received an invalid combination of arguments - got (float, Tensor, Tensor), but expected one of:\n"
     + LERP_SIGNATURES),
])
def test_a_number_where_pytorch_wants_a_tensor_is_a_type_error_in_its_words(call, message):
    """Found by tools/fuzz: these raised AttributeError from inside the kernels."""
    with pytest.raises(TypeError) as err:
        call()
    assert str(err.value) == message


# ---- found by tools/fuzz (issue #16): nodes and refusals as PyTorch 2.13's; literals recorded from it ----
def test_abs_double_backward_is_grad_times_sgn():
    """PyTorch's abs formula is ``grad * self.sgn()``: a create_graph backward shows MulBackward0 over
    SgnBackward0 (sgn is 0 at NaN), and the second derivative is zero."""
    x = leaf([NAN, -1.0, 0.0, 2.0])
    (g,) = engine.autograd.grad(x.abs().sum(), x, create_graph=True)
    assert g.grad_fn.name() == "MulBackward0"
    assert g.grad_fn.next_functions[1][0].name() == "SgnBackward0"
    assert g.tolist() == [0.0, -1.0, 0.0, 1.0]
    g.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0]
    x = leaf([[-2.125, -0.875], [0.75, -1.875]], D)
    y = engine.abs(x) ** 1.5
    (g,) = engine.autograd.grad((y * engine.tensor([[0.5, 5 / 6], [7 / 6, 1.5]], dtype=D)).sum(), x, create_graph=True)
    g.backward(engine.arange(1, 5, dtype=D).reshape(2, 2) / 4)
    np.testing.assert_allclose(g.tolist(), [[-1.093303480283494, -1.1692679333668567],
                                            [1.5155444566227678, -3.080939385966559]], rtol=1e-13)
    np.testing.assert_allclose(x.grad.tolist(), [[0.06431196942844081, 0.33407655239053047],
                                                 [0.7577722283113839, 0.8215838362577491]], rtol=1e-13)


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_asinh_acosh_atanh_in_place_have_no_derivative(name):
    """PyTorch names the in-place node AsinhBackward1 (...) and refuses its backward; the values are
    the out-of-place function's, and without a graph nothing is refused."""
    x = leaf([1.25, 1.5] if name == "acosh" else [0.5, -0.25], D)
    y = x * 1
    assert getattr(y, name + "_")() is y
    assert y.grad_fn.name() == name.capitalize() + "Backward1"
    assert y.tolist() == getattr(engine, name)(x).tolist()
    with pytest.raises(NotImplementedError) as err:
        y.sum().backward()
    assert str(err.value) == f"the derivative for 'inplace version of {name}' is not implemented."
    with pytest.raises(NotImplementedError, match="inplace version of atanh"):
        engine.atanh_(leaf([0.5]) * 1).sum().backward()
    z = x.detach().clone()
    getattr(z, name + "_")()
    assert z.grad_fn is None and z.tolist() == getattr(engine, name)(x).tolist()


def test_remainder_of_a_number_by_a_tensor_has_no_derivative():
    """``n % t`` is PyTorch's remainder(Scalar, Tensor): a NotImplemented node; its backward raises
    (``t % n`` and ``t % t`` keep their gradients)."""
    b = leaf([0.75, -2.0, 1.5])
    for n, want in ((2, [0.5, 0.0, 0.5]), (2.5, [0.25, -1.5, 1.0]), (True, [0.25, -1.0, 1.0]),
                    (-2.25, [-0.0, -0.25, 0.75])):
        y = n % b
        assert (y.tolist(), y.dtype, y.grad_fn.name()) == (want, engine.float32, "torch::autograd::NotImplemented")
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        assert str(err.value) == "derivative for aten::remainder is not implemented"
    y = engine.remainder(-1, b)
    with pytest.raises(RuntimeError, match="^derivative for aten::remainder is not implemented$"):
        y.sum().backward()
    i = engine.tensor([3, -2, 5])
    assert ((7 % i).tolist(), (7 % i).dtype) == ([1, -1, 2], engine.int64)
    assert ((2.5 % i).tolist(), (2.5 % i).dtype) == ([2.5, -1.5, 2.5], engine.float32)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        7 % engine.tensor([0, 1])
    a = leaf([1.5, -2.5])
    (a % leaf([0.75, 2.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError) as err:
        engine.remainder(2, 3)
    assert str(err.value) == (
        "remainder() received an invalid combination of arguments - got (int, int), but expected one of:\n"
        " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor other)\n"
        "      didn't match because some of the arguments have invalid types: (!int!, !int!)\n"
        " * (Tensor input, Number other, *, Tensor out = None)\n")


BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead.")
BOOL_NEG = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
            "the `~` or `logical_not()` operator instead.")


@pytest.mark.parametrize("call, message", [
    (lambda a, m: engine.logaddexp(a, m), BOOL_SUB), (lambda a, m: engine.logaddexp(m, a), BOOL_SUB),
    (lambda a, m: engine.logaddexp(a, m[0]), BOOL_SUB), (lambda a, m: engine.logaddexp2(m, a), BOOL_SUB),
    (lambda a, m: engine.atan2(m, a), BOOL_NEG),
], ids=["logaddexp", "logaddexp_first", "logaddexp_0d", "logaddexp2", "atan2"])
def test_a_bool_operand_fails_in_backward_where_pytorchs_formula_subtracts_or_negates_it(call, message):
    a, m = leaf([0.5, -1.0]), engine.tensor([True, False])
    out = call(a, m)                                   # the forward computes, as PyTorch's
    with pytest.raises(RuntimeError) as err:
        out.sum().backward()
    assert str(err.value) == message


def test_a_bool_operand_pytorchs_formula_does_not_negate_keeps_its_gradient():
    a = leaf([0.5, -1.0])
    engine.atan2(a, engine.tensor([True, False])).sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), [0.800000011920929, 0.0], rtol=1e-6)
    a.grad = None
    engine.logaddexp(a, engine.tensor([1, 0])).sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), [0.3775406777858734, 0.2689414322376251], rtol=1e-6)


def test_a_number_divided_by_a_tensor_is_its_reciprocal_times_the_number():
    """PyTorch's ``Tensor.__rdiv__``: ``self.reciprocal() * other``, so the node is MulBackward0 over
    ReciprocalBackward0 (``t / n`` and ``torch.div(n, t)`` stay DivBackward0)."""
    a = leaf([7.0, 0.1, -3.3], D)
    y = 3 / a
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "ReciprocalBackward0"
    assert y.tolist() == [0.42857142857142855, 30.0, -0.9090909090909092]
    y.backward(engine.tensor([1.0, 2.0, 3.0], dtype=D))
    np.testing.assert_allclose(a.grad.tolist(), [-0.061224489795918366, -600.0, -0.8264462809917356], rtol=1e-14)
    assert ((3 / engine.tensor([3, 0, 5])).tolist(), (True / leaf([2.0])).grad_fn.name()) == \
        ([1.0, math.inf, 0.6000000238418579], "MulBackward0")
    assert ((a / 2.0).grad_fn.name(), engine.div(2, a).grad_fn.name()) == ("DivBackward0", "DivBackward0")


def test_pow_gradients_at_zero_are_pytorchs():
    """PyTorch's pow_backward_self is 0 where the exponent is 0 (not 0 * inf); pow_backward_exponent is
    ``grad * result * log(self)`` with log(0) = -inf, except 0 where self is 0 and the exponent >= 0."""
    a, e = leaf([0.0, 2.0, -1.0]), leaf([0.0, 0.0, 0.0])
    (a ** e).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(e.grad.tolist(), [0.0, 0.6931471824645996, NAN], rtol=1e-6)
    a, e = leaf([0.0, 0.0, 3.0]), leaf([-1.5, 2.0, 0.5])
    (a ** e).sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), [-math.inf, 0.0, 0.28867512941360474], rtol=1e-6)
    np.testing.assert_allclose(e.grad.tolist(), [-math.inf, 0.0, 1.9028522968292236], rtol=1e-6)
    b = leaf([1.5, -2.0, 0.0])
    for base, want in ((2, [1.9605162143707275, 0.1732867956161499, 0.6931471824645996]), (-2, [NAN] * 3),
                       (0, [0.0, -math.inf, 0.0])):
        b.grad = None
        engine.pow(base, b).sum().backward()
        np.testing.assert_allclose(b.grad.tolist(), want, rtol=1e-6)
    x, y = leaf([1.5, 0.5], D), leaf([2.0, 3.0], D)
    gx, gy = engine.autograd.grad((x ** y).sum(), (x, y), create_graph=True)
    assert (gx.grad_fn.name(), gy.grad_fn.name()) == ("WhereBackward0", "MulBackward0")
    (gx.sum() + gy.sum()).backward()
    np.testing.assert_allclose(x.grad.tolist(), [4.716395324324493, 2.730139614580041], rtol=1e-13)
    np.testing.assert_allclose(y.grad.tolist(), [3.0862997205841154, -0.20980375868018375], rtol=1e-13)
