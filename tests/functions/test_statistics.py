"""quantile/nanquantile, cummax/cummin, msort, cov/corrcoef, trapezoid, histogram, inner/ger/vdot, renorm,
the window functions, the random fills, poisson and the small utilities (engine/functions/reduce.py, stats.py,
linalg.py, factories.py, random.py, tensor_info.py).

Values are PyTorch 2.13's (recorded here); graphs and saved tensors are checked against the recorded
fixture by test_saved_tensors.py, error messages by test_errors.py.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
from tests.checks import BACKENDS, f64, gradcheck, gradgradcheck, matches_numpy

NAN = float("nan")


def t64(data, requires_grad=False):
    return engine.tensor(data, dtype=engine.float64, requires_grad=requires_grad)


X = [[0.3, -1.2, 2.5, 0.7], [1.1, 0.4, -0.6, 3.0], [-2.0, 0.9, 0.1, -0.3]]


# ---- quantile ----------------------------------------------------------------------------------
@pytest.mark.parametrize("interpolation, want", [
    ("linear", [0.15, 0.3, -0.47]), ("lower", [-1.2, -0.6, -2.0]), ("higher", [0.3, 0.4, -0.3]),
    ("midpoint", [-0.45, -0.1, -1.15]), ("nearest", [0.3, 0.4, -0.3]),
])
def test_quantile_interpolation_modes(interpolation, want):
    got = engine.quantile(t64(X), 0.3, dim=1, interpolation=interpolation)
    np.testing.assert_allclose(got.numpy(), np.quantile(np.array(X), 0.3, axis=1, method=interpolation))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_quantile_q_tensor_goes_first_and_keepdim():
    q = t64([0.1, 0.5, 0.9])
    out = engine.quantile(t64(X), q, dim=0, keepdim=True)
    assert tuple(out.shape) == (3, 1, 4)
    np.testing.assert_allclose(out.numpy(), np.quantile(np.array(X), [0.1, 0.5, 0.9], axis=0, keepdims=True))
    flat = engine.quantile(t64(X), q)
    np.testing.assert_allclose(flat.numpy(), np.quantile(np.array(X), [0.1, 0.5, 0.9]))
    assert tuple(engine.quantile(t64(X), 0.5, keepdim=True).shape) == (1, 1)
    assert engine.quantile(t64(2.5), 0.3).item() == 2.5


def test_quantile_nan_rows_and_nanquantile():
    xn = t64([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN], [4.0, 1.0, 2.0, 3.0]])
    q = engine.quantile(xn, 0.5, dim=1).tolist()
    assert math.isnan(q[0]) and math.isnan(q[1]) and q[2] == 2.5
    nq = engine.nanquantile(xn, 0.5, dim=1).tolist()
    assert nq[0] == 2.0 and math.isnan(nq[1]) and nq[2] == 2.5
    assert engine.tensor([NAN, 1.0, 2.0]).nanquantile(0.5).item() == 1.5


def test_quantile_graph_and_version_are_pytorchs():
    x = t64(X, requires_grad=True)
    out = engine.quantile(x, 0.3)
    assert out.grad_fn.name() == "SqueezeBackward4" and out._version == 2
    lerp = out.grad_fn.next_functions[0][0]
    assert lerp.name() == "LerpBackward1" and [f.name() for f, _ in lerp.next_functions[:2]] == ["GatherBackward0"] * 2
    assert engine.quantile(x, 0.3, interpolation="lower")._version == 1
    vec = engine.quantile(x, t64([0.2, 0.7]), dim=1)
    assert vec._version == 4 and vec.grad_fn.name() == "SqueezeBackward4"
    assert vec.grad_fn.next_functions[0][0].name() == "TransposeBackward1"


@pytest.mark.parametrize("kw", [dict(q=0.3), dict(q=0.37, dim=1), dict(q=0.6, dim=0, interpolation="midpoint"),
                                dict(q="vec", dim=1, keepdim=True), dict(q=0.5, dim=0, interpolation="nearest")])
def test_quantile_gradients(kw):
    kw = dict(kw)
    if kw["q"] == "vec":
        kw["q"] = t64([0.25, 0.8])
    gradcheck(lambda x: engine.quantile(x, **kw), [f64(3, 4, seed=3)])
    gradcheck(lambda x: engine.nanquantile(x, **kw), [f64(3, 4, seed=4)])


def test_quantile_second_derivative():
    gradgradcheck(lambda x: engine.quantile(x * x, 0.4, dim=1), [f64(3, 4, seed=5)])


# ---- cummax / cummin / msort ------------------------------------------------------------------------
def test_cummax_cummin_ties_and_nan_follow_pytorch():
    r = engine.cummax(t64([1.0, 1, 1, 0, 2, 2]), 0)
    assert type(r).__name__ == "cummax" and r.values.tolist() == [1, 1, 1, 1, 2, 2]
    assert r.indices.tolist() == [0, 1, 2, 2, 4, 5] and r.indices.dtype is engine.int64
    r = engine.cummin(t64([1.0, 1, 1, 2, 0, 0]), 0)
    assert r.indices.tolist() == [0, 1, 2, 2, 4, 5]
    for fn in (engine.cummax, engine.cummin):
        v, i = fn(t64([1.0, NAN, 3, NAN, 0]), 0)
        assert v.tolist()[0] == 1.0 and all(math.isnan(a) for a in v.tolist()[1:])
        assert i.tolist() == [0, 1, 1, 3, 3]
    v, i = engine.cummax(engine.tensor([[3, 1, 4, 1, 5, 9, 2, 6]]), 1)
    assert v.tolist() == [[3, 3, 4, 4, 5, 9, 9, 9]] and i.tolist() == [[0, 0, 2, 2, 4, 5, 5, 5]]
    v, i = engine.tensor(3.0).cummax(0)
    assert v.item() == 3.0 and i.item() == 0 and i.ndim == 0


def test_cummax_keeps_indices_and_routes_gradient():
    x = t64([1.0, 3, 3, 2], requires_grad=True)
    v, i = engine.cummax(x, 0)
    assert v.grad_fn.name() == "CummaxBackward0" and v.grad_fn._saved_indices is i
    assert v.grad_fn._saved_self is x
    v.backward(t64([1.0, 2, 3, 4]))
    assert x.grad.tolist() == [1.0, 2.0, 7.0, 0.0]
    gradcheck(lambda a: engine.cummax(a, 1).values, [f64(3, 5, seed=1)])
    gradcheck(lambda a: engine.cummin(a, 0).values, [f64(4, 3, seed=2)])
    gradgradcheck(lambda a: engine.cummin(a * a, 1).values, [f64(2, 4, seed=6)])


def test_msort_sorts_dim_zero():
    x = t64([[3.0, NAN], [1.0, 2.0]], requires_grad=True)
    out = engine.msort(x)
    assert out.tolist()[0] == [1.0, 2.0] and out.tolist()[1][0] == 3.0 and math.isnan(out.tolist()[1][1])
    assert out.grad_fn.name() == "SortBackward0"
    assert engine.msort(t64(3.0)).item() == 3.0


# ---- cov / corrcoef ---------------------------------------------------------------------------------
def test_cov_matches_numpy_with_weights_and_correction():
    a = np.array(X)
    fw, aw = [1, 2, 1, 3], [0.5, 1.0, 2.0, 0.25]
    np.testing.assert_allclose(engine.cov(t64(X)).numpy(), np.cov(a))
    np.testing.assert_allclose(engine.cov(t64(X), correction=0).numpy(), np.cov(a, ddof=0))
    got = engine.cov(t64(X), correction=2, fweights=engine.tensor(fw), aweights=t64(aw))
    np.testing.assert_allclose(got.numpy(), np.cov(a, ddof=2, fweights=fw, aweights=aw))
    assert engine.cov(t64(X[0])).ndim == 0
    np.testing.assert_allclose(engine.cov(engine.tensor([[3, 1, 4, 1], [5, 9, 2, 6]])).numpy(),
                               np.cov([[3, 1, 4, 1], [5, 9, 2, 6]]), rtol=1e-6)


def test_cov_warns_on_no_degrees_of_freedom():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = engine.cov(engine.randn(2, 1))
    assert [str(w.message) for w in caught] == [
        "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations."]
    assert all(math.isnan(v) or math.isinf(v) for row in out.tolist() for v in row)


def test_corrcoef_values_and_gradients():
    np.testing.assert_allclose(engine.corrcoef(t64(X)).numpy(), np.corrcoef(np.array(X)))
    assert engine.corrcoef(t64(X[0])).item() == 1.0
    gradcheck(lambda a: engine.cov(a, aweights=t64([0.5, 1.0, 2.0, 0.25])), [f64(3, 4, seed=7)])
    gradcheck(engine.corrcoef, [f64(3, 5, seed=8)])


# ---- trapezoid ----------------------------------------------------------------------------------------
def test_trapezoid_family_values():
    a = np.array(X)
    xs = [0.0, 0.5, 2.0, 2.5]
    np.testing.assert_allclose(engine.trapezoid(t64(X)).numpy(), np.trapezoid(a))
    np.testing.assert_allclose(engine.trapz(t64(X), dx=0.5, dim=0).numpy(), np.trapezoid(a, dx=0.5, axis=0))
    np.testing.assert_allclose(engine.trapezoid(t64(X), t64(xs)).numpy(), np.trapezoid(a, xs))
    np.testing.assert_allclose(engine.trapezoid(t64(X), t64(X)).numpy(), np.trapezoid(a, a))
    cum = engine.cumulative_trapezoid(t64(X), t64(xs)).numpy()
    np.testing.assert_allclose(cum[:, -1], np.trapezoid(a, xs))
    assert engine.cumulative_trapezoid(t64(X), dx=2.0, dim=0).shape == (2, 4)
    assert engine.trapezoid(engine.zeros(3, 0)).tolist() == [0.0, 0.0, 0.0]
    assert engine.trapezoid(engine.tensor([1, 2, 4])).item() == 4.5
    gradcheck(lambda y, x: engine.trapezoid(y, x), [f64(3, 4, seed=9), f64(4, seed=10)])
    gradcheck(lambda y: engine.cumulative_trapezoid(y, dx=0.3, dim=0), [f64(3, 4, seed=11)])


# ---- histogram -------------------------------------------------------------------------------------
def test_histogram_counts_edges_weights_and_density():
    h = engine.histogram(t64(X), 5)
    n, e = np.histogram(np.array(X), 5)
    assert type(h).__name__ == "histogram" and h.hist.tolist() == n.tolist()
    np.testing.assert_allclose(h.bin_edges.numpy(), e)
    h = engine.histogram(engine.tensor([1.0, 1.0, 1.0]), 2)
    assert h.hist.tolist() == [0.0, 3.0] and h.bin_edges.tolist() == [0.5, 1.0, 1.5]
    h = engine.histogram(engine.tensor([0.0, 1, 2, 3]), 3, density=True, weight=engine.tensor([1.0, 2, 3, 4]))
    np.testing.assert_allclose(h.hist.numpy(), [0.1, 0.2, 0.7], rtol=1e-6)
    h = engine.histogram(engine.tensor([0.0, 1, 2, 3, 5]), 3, range=(0.0, 3.0))
    assert h.hist.tolist() == [1.0, 1.0, 2.0]
    h = engine.histogram(t64(X), t64([-2.0, -0.5, 0.0, 0.3, 2.0]))
    assert h.hist.tolist() == np.histogram(np.array(X), [-2.0, -0.5, 0.0, 0.3, 2.0])[0].tolist()
    assert h.hist.dtype is engine.float64 and h.hist.grad_fn is None


def test_histogram_of_a_tensor_that_requires_grad_has_no_derivative():
    x = f64(5, seed=24)
    h = engine.histogram(x, 3)
    assert h.hist.grad_fn.name() == "torch::autograd::NotImplemented" and h.hist.grad_fn.next_functions[0][0].variable is x
    with pytest.raises(RuntimeError, match="derivative for aten::histogram is not implemented"):
        h.hist.sum().backward()
    with engine.no_grad():
        assert engine.histogram(x, 3).hist.grad_fn is None


# ---- inner / ger / vdot / renorm -----------------------------------------------------------------------
def test_inner_ger_vdot_values_and_nodes():
    a, b = f64(3, 4, seed=12), f64(2, 5, 4, seed=13)
    np.testing.assert_allclose(engine.inner(a, b).detach().numpy(), np.inner(a.detach().numpy(), b.detach().numpy()))
    v = f64(4, seed=14)
    assert engine.inner(v, v).grad_fn.name() == "ViewBackward0"
    assert engine.inner(a, engine.tensor(2.0, dtype=engine.float64)).grad_fn.name() == "MulBackward0"
    g = engine.ger(v, f64(3, seed=15))
    assert tuple(g.shape) == (4, 3) and g.grad_fn.name() == "MulBackward0"
    d = engine.vdot(v, v)
    assert d.grad_fn.name() == "VdotBackward0" and abs(d.item() - float((v.detach().numpy() ** 2).sum())) < 1e-12
    assert engine.vdot(engine.tensor([1, 2]), engine.tensor([3, 4])).item() == 11
    gradcheck(engine.inner, [f64(3, 4, seed=16), f64(2, 4, seed=17)])
    gradcheck(engine.vdot, [f64(5, seed=18), f64(5, seed=19)])
    gradgradcheck(engine.vdot, [f64(5, seed=18), f64(5, seed=19)])


@pytest.mark.parametrize("p", [1, 2, 3.0, math.inf])
def test_renorm_values_and_gradients(p):
    x = f64(3, 4, seed=20)
    out = engine.renorm(x, p, 0, 0.8).detach().numpy()
    a = x.detach().numpy()
    norms = np.linalg.norm(a, ord=p, axis=1, keepdims=True)
    want = np.where(norms > 0.8, a * (0.8 / (norms + 1e-7)), a)
    np.testing.assert_allclose(out, want)
    gradcheck(lambda t: engine.renorm(t, p, 1, 0.7), [f64(3, 4, seed=21)])


def test_renorm_in_place_and_node():
    x = f64(3, 4, seed=22)
    out = engine.renorm(x, 2, 0, 1.0)
    assert out.grad_fn.name() == "RenormBackward0" and out.grad_fn._saved_self is x
    y = x.detach().clone()
    assert y.renorm_(2, 0, 1.0) is y and y._version == 1
    gradgradcheck(lambda t: engine.renorm(t, 2, 0, 0.5), [f64(2, 3, seed=23)])


# ---- windows ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, args, want", [
    ("hann_window", (5, False), [0.0, 0.5, 1.0, 0.5, 0.0]),
    ("bartlett_window", (5,), [0.0, 0.4, 0.8, 0.8, 0.4]),
    ("blackman_window", (5,), [-2.9802e-08, 2.0077e-01, 8.4923e-01, 8.4923e-01, 2.0077e-01]),
    ("kaiser_window", (5,), [5.2773e-05, 1.0172e-01, 7.9294e-01, 7.9294e-01, 1.0172e-01]),
    ("hamming_window", (5, False, 0.5, 0.3), [0.2, 0.5, 0.8, 0.5, 0.2]),
])
def test_windows_match_pytorch(fn, args, want):
    w = getattr(engine, fn)(*args)
    assert w.dtype is engine.float32
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-4, atol=1e-7)


def test_windows_periodic_dtype_and_requires_grad():
    np.testing.assert_allclose(engine.hann_window(8, dtype=engine.float64).numpy(), np.hanning(9)[:8], atol=1e-15)
    np.testing.assert_allclose(engine.hamming_window(7, False, dtype=engine.float64).numpy(), np.hamming(7))
    np.testing.assert_allclose(engine.blackman_window(7, False, dtype=engine.float64).numpy(), np.blackman(7),
                               atol=1e-15)
    np.testing.assert_allclose(engine.kaiser_window(7, False, beta=5.0, dtype=engine.float64).numpy(),
                               np.kaiser(7, 5.0), rtol=1e-12)
    assert engine.hann_window(0).shape == (0,) and engine.hann_window(1).tolist() == [1.0]
    w = engine.hann_window(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf


# ---- random fills, randint_like, poisson -------------------------------------------------------------
def test_random_fills_draw_from_the_device_generator():
    engine.manual_seed(3)
    a = engine.zeros(1000).exponential_(2.0)
    engine.manual_seed(3)
    b = engine.zeros(1000).exponential_(2.0)
    assert a.tolist() == b.tolist() and a._version == 1
    assert (a.numpy() > 0).all() and abs(a.numpy().mean() - 0.5) < 0.06
    r = engine.zeros(500).random_(2, 5)
    assert set(r.tolist()) == {2.0, 3.0, 4.0}
    assert set(engine.zeros(200, dtype=engine.int64).random_(3).tolist()) == {0, 1, 2}
    assert set(engine.zeros(200, dtype=engine.int64).random_(to=2).tolist()) == {0, 1}
    assert set(engine.zeros(200, dtype=engine.int64).random_(-2, to=0).tolist()) == {-2, -1}
    top = engine.zeros(2000).random_()
    assert top.numpy().min() >= 0 and top.numpy().max() <= 2 ** 24 and top.numpy().max() > 2 ** 20
    assert set(engine.zeros(100, dtype=engine.bool).random_().tolist()) == {False, True}
    g = engine.zeros(2000, dtype=engine.int64).geometric_(0.5)
    assert g.numpy().min() >= 1 and abs(g.numpy().mean() - 2.0) < 0.15
    c = engine.zeros(2000).cauchy_(1.0, 0.5)
    assert abs(float(np.median(c.numpy())) - 1.0) < 0.1
    ln = engine.zeros(2000, dtype=engine.float64).log_normal_(0.0, 0.25)
    assert abs(float(np.log(ln.numpy()).std()) - 0.25) < 0.02


def test_random_float_range_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine.zeros(3).random_(0, 2 ** 25)
    assert str(caught[0].message).startswith("to - 1 is out of bounds [-(2^24), 2^24]. Due to precision "
                                              "limitations float can support")


def test_randint_like_and_poisson():
    r = engine.randint_like(engine.zeros(2, 3), 4)
    assert r.dtype is engine.float32 and set(r.flatten().tolist()) <= {0.0, 1.0, 2.0, 3.0}
    r = engine.randint_like(engine.zeros(50, dtype=engine.int64), 10, 12)
    assert set(r.tolist()) == {10, 11}
    rate = (engine.rand(3, 4) * 4).requires_grad_()
    p = engine.poisson(rate)
    assert p.grad_fn.name() == "PoissonBackward0" and p.dtype is engine.float32
    assert (p.numpy(force=True) == np.round(p.numpy(force=True))).all()
    p.sum().backward()
    assert rate.grad.tolist() == [[0.0] * 4] * 3
    assert engine.poisson(engine.zeros(3)).tolist() == [0.0, 0.0, 0.0]


# ---- small utilities --------------------------------------------------------------------------------
def test_asarray_shares_memory_when_it_can():
    t = engine.tensor([1.0, 2.0])
    assert engine.asarray(t) is t
    assert engine.asarray(t, dtype=engine.float64).dtype is engine.float64
    c = engine.asarray(t, copy=True)
    assert c is not t and c._storage is not t._storage
    n = np.arange(3.0)
    a = engine.asarray(n)
    n[0] = 9.0
    assert a.tolist() == [9.0, 1.0, 2.0] and a.dtype is engine.float64
    assert engine.asarray(n, dtype=engine.float32).tolist() == [9.0, 1.0, 2.0]
    assert engine.asarray([1, 2]).dtype is engine.int64 and engine.asarray(3.5).dtype is engine.float32
    leaf = engine.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copied = engine.asarray(leaf, copy=True)
    assert copied.grad_fn.name() == "CloneBackward0" and "unspecified requires_grad" in str(caught[0].message)
    engine.asarray(t, requires_grad=True)
    assert t.requires_grad


def test_scalar_tensor_and_predicates():
    assert engine.scalar_tensor(3).dtype is engine.float32 and engine.scalar_tensor(3).item() == 3.0
    assert engine.scalar_tensor(2, dtype=engine.int64).dtype is engine.int64
    assert engine.scalar_tensor(engine.tensor(1.5)).item() == 1.5
    assert engine.is_nonzero(engine.tensor([[2.0]])) and not engine.is_nonzero(engine.zeros(1, 1))
    assert not engine.is_signed(engine.tensor([True])) and engine.is_signed(engine.tensor(1))
    assert engine.tensor(1.0).is_signed() and not engine.is_complex(engine.tensor(1.0))
    assert not engine.is_inference(engine.zeros(1))
    with engine.inference_mode():
        assert engine.is_inference(engine.zeros(1))
    assert engine.tensor(1.0).get_device() == -1 and engine.tensor(1.0).is_cpu
    assert engine.typename(engine.tensor(1.0)) == "torch.FloatTensor" and engine.typename(3) == "int"
    assert engine.typename(engine.nn.Linear).endswith("Linear")


def exercise_stats_ops():
    """One call per row of cummax, cummin, vdot, renorm, poisson and histogram (engine/ops/), for
    test_ops_grad.test_every_table_op_is_exercised."""
    x = f64(3, 4, seed=25)
    engine.cummax(x, 1), engine.cummin(x, 0), engine.vdot(x[0], x[1]), engine.renorm(x, 2, 0, 1.0)
    engine.poisson(x.abs()), engine.histogram(x, 3)


# ---- other backends ----------------------------------------------------------------------------------
def _backend_run():
    x = engine.tensor(X, dtype=engine.float64, requires_grad=True)
    outs = [engine.quantile(x, 0.3, dim=1), engine.nanquantile(x, engine.tensor([0.2, 0.9], dtype=engine.float64)),
            engine.cummax(x, 1).values, engine.cummin(x, 0).values, engine.msort(x), engine.corrcoef(x),
            engine.trapezoid(x), engine.cumulative_trapezoid(x, dim=0), engine.inner(x, x), engine.vdot(x[0], x[1]),
            engine.renorm(x, 2, 0, 1.0)]
    grads = engine.autograd.grad([o.sum() for o in outs], [x] * 1)
    wins = [engine.hann_window(6, dtype=engine.float64), engine.kaiser_window(5, dtype=engine.float64),
            engine.bartlett_window(5, dtype=engine.float64), engine.blackman_window(6, dtype=engine.float64)]
    return [*outs, engine.cummax(x, 1).indices.double(), *grads, *wins,
            engine.histogram(x.detach(), 4).hist]


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    matches_numpy(backend, _backend_run)
