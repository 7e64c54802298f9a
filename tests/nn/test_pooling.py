"""Max unpooling, LP pooling, 1-D/3-D adaptive max pooling, 3-D adaptive average pooling, the 3-D padding
and Upsampling modules (engine/nn/functional/pooling.py, pooling3d.py, unpooling.py, engine/nn/modules/pooling.py,
engine/ops/nn/pool.py, pool3d.py, unpool.py)."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F

from tests.checks import BACKENDS, f64, gradcheck, matches_numpy


def _bins(n, o):
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def _np_adaptive_3d(x, out, reduce):
    """Loops over PyTorch's adaptive bins: reduce is "max" (values, first-argmax positions) or "mean"."""
    lead, (d, h, w) = x.shape[:-3], x.shape[-3:]
    flat = x.reshape(-1, d, h, w)
    vals = np.empty((flat.shape[0],) + out)
    idx = np.empty((flat.shape[0],) + out, dtype=np.int64)
    for p in range(flat.shape[0]):
        for (i, (z0, z1)), (j, (y0, y1)), (k, (x0, x1)) in itertools.product(
                enumerate(_bins(d, out[0])), enumerate(_bins(h, out[1])), enumerate(_bins(w, out[2]))):
            cell = flat[p, z0:z1, y0:y1, x0:x1]
            if reduce == "mean":
                vals[p, i, j, k] = cell.mean()
                continue
            a = int(np.argmax(cell))
            z, y, xx = np.unravel_index(a, cell.shape)
            vals[p, i, j, k] = cell.reshape(-1)[a]
            idx[p, i, j, k] = ((z0 + z) * h + y0 + y) * w + x0 + xx
    return vals.reshape(lead + out), idx.reshape(lead + out)


# ---- max unpooling -----------------------------------------------------------------------------------
def test_max_unpool2d_puts_each_maximum_back_where_it_was():
    x = f64(2, 3, 4, 6, seed=1)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    u = F.max_unpool2d(out, idx, 2)
    assert tuple(u.shape) == (2, 3, 4, 6) and u.grad_fn.name() == "MaxUnpool2DBackward0"
    assert list(u.grad_fn._saved) == ["indices"] and u.grad_fn._saved_indices is idx
    xs, us = x.detach().numpy(), u.detach().numpy()
    kept = us != 0
    assert kept.sum() == out.numel()                                  # one maximum per window
    np.testing.assert_array_equal(us[kept], xs[kept])                 # at its own place
    np.testing.assert_array_equal(np.sort(us[kept]), np.sort(out.detach().numpy().reshape(-1)))
    assert [f.name() if f else None for f, _ in u.grad_fn.next_functions] == ["MaxPool2DWithIndicesBackward0"]


def test_max_unpool_output_size_padding_and_module():
    x = f64(1, 2, 5, 5, seed=2)
    out, idx = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    assert tuple(F.max_unpool2d(out, idx, 3, 2, 1).shape) == (1, 2, 5, 5)
    u = nn.MaxUnpool2d(3, 2, 1)(out, idx, output_size=[1, 2, 6, 6])
    assert tuple(u.shape) == (1, 2, 6, 6)
    # a flat position in the 5x5 plane is used as it is in the 6x6 one, as PyTorch does
    flat, pos, vals = u.detach().numpy().reshape(2, 36), idx.numpy().reshape(2, -1), out.detach().numpy().reshape(2, -1)
    for c in range(2):
        np.testing.assert_array_equal(flat[c, pos[c]], vals[c])
        assert np.count_nonzero(flat[c]) == len(set(pos[c].tolist()))
    with pytest.raises(ValueError, match=r'invalid output_size "\(9, 9\)" \(dim 0 must be between 3 and 7\)'):
        F.max_unpool2d(out, idx, 3, 2, 1, output_size=(9, 9))


def test_max_unpool_duplicate_positions_keep_the_later_value_and_both_gradients_read_it():
    x = engine.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=engine.float64, requires_grad=True)
    idx = engine.tensor([[[[0, 5], [5, 15]]]])
    u = F.max_unpool2d(x, idx, 2)
    assert u.detach().numpy().reshape(-1).tolist() == [1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]
    g = engine.arange(16, dtype=engine.float64).reshape(1, 1, 4, 4)
    u.backward(g)
    assert x.grad.tolist() == [[[[0.0, 5.0], [5.0, 15.0]]]]


def test_max_unpool1d_and_3d_invert_their_pooling():
    x1 = f64(2, 3, 8, low=0.1, seed=3)
    o1, i1 = F.max_pool1d(x1, 2, return_indices=True)
    u1 = nn.MaxUnpool1d(2)(o1, i1)
    assert u1.grad_fn.name() == "SqueezeBackward1"
    assert u1.grad_fn.next_functions[0][0].name() == "MaxUnpool2DBackward0"
    np.testing.assert_array_equal(F.max_pool1d(u1, 2).detach().numpy(), o1.detach().numpy())
    x3 = f64(1, 2, 4, 4, 4, low=0.1, seed=4)
    o3, i3 = F.max_pool3d(x3, 2, return_indices=True)
    u3 = nn.MaxUnpool3d(2)(o3, i3)
    assert u3.grad_fn.name() == "MaxUnpool3DBackward0" and tuple(u3.shape) == (1, 2, 4, 4, 4)
    np.testing.assert_array_equal(F.max_pool3d(u3, 2).detach().numpy(), o3.detach().numpy())
    assert repr(nn.MaxUnpool3d(2)) == "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))"
    assert repr(nn.MaxUnpool1d(2, stride=1)) == "MaxUnpool1d(kernel_size=(2,), stride=(1,), padding=(0,))"


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_unpool_gradients(k):
    shape = {1: (2, 6), 2: (1, 2, 4, 4), 3: (1, 2, 2, 4, 4)}[k]
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[k]
    unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[k]
    _, idx = pool(f64(*shape, seed=5), 2, return_indices=True)
    x = f64(*idx.shape, seed=6)
    gradcheck(lambda a: unpool(a, idx, 2), [x])
    _check_double_backward(lambda a: unpool(a, idx, 2), x)


def _check_double_backward(fn, x):
    """A linear op's input gradient is linear in the output gradient ``v``: with ``create_graph=True`` it
    has a graph back to ``v``, and differentiating it again gives the op's gradient at ``v`` (gradcheck)."""
    out = fn(x)
    v = f64(*out.shape, seed=99)
    (gx,) = engine.autograd.grad(out, x, v, create_graph=True)
    assert gx.requires_grad and gx.grad_fn is not None
    gradcheck(lambda w: engine.autograd.grad(fn(x), x, w, create_graph=True)[0], [v])


def test_max_unpool_errors():
    one = engine.ones(1, 1, 2, 2)
    with pytest.raises(RuntimeError, match=r"^Found an invalid max index: 16 \(output volumes are of size 4x4\)$"):
        F.max_unpool2d(one, engine.tensor([[[[0, 1], [4, 16]]]]), 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Float"):
        F.max_unpool2d(one, engine.zeros(1, 1, 2, 2), 2)


# ---- LP pooling --------------------------------------------------------------------------------------
def test_lp_pool_is_the_p_norm_of_each_window():
    x = f64(2, 3, 4, 6, seed=7)
    xs = x.detach().numpy()
    with np.errstate(invalid="ignore"):                               # NumPy's note on the NaNs below
        got = F.lp_pool2d(x, 3, (2, 3)).detach().numpy()
    windows = xs.reshape(2, 3, 2, 2, 2, 3).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 2, 6)
    s = (windows ** 3).sum(-1)
    want = np.where(s > 0, np.abs(s) ** (1 / 3), np.nan)              # a negative sum: a NaN, as PyTorch
    np.testing.assert_allclose(got, want, rtol=1e-12)
    y = F.lp_pool2d(x, 2, 2)
    assert y.grad_fn.name() == "PowBackward0" and y.grad_fn._saved_exponent == 0.5
    np.testing.assert_allclose(y.detach().numpy(),
                               np.sqrt((xs.reshape(2, 3, 2, 2, 3, 2) ** 2).sum((3, 5))), rtol=1e-12)
    inf = F.lp_pool1d(x[0], math.inf, 2)
    np.testing.assert_array_equal(inf.detach().numpy(), np.abs(xs[0]).reshape(3, 4, 3, 2).max(-1))


def test_lp_pool_gradients_and_modules():
    x1 = f64(2, 5, low=0.5, seed=8)
    gradcheck(lambda a: F.lp_pool1d(a, 2, 2, stride=1), [x1])
    gradcheck(lambda a: F.lp_pool2d(a, 3, 2), [f64(1, 2, 4, 4, low=0.5, seed=9)])
    gradcheck(lambda a: nn.LPPool3d(2, (1, 2, 2))(a), [f64(1, 2, 2, 4, 4, low=0.5, seed=10)])
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
    assert repr(nn.LPPool1d(1.5, 3, 2)) == "LPPool1d(norm_type=1.5, kernel_size=3, stride=2, ceil_mode=False)"


# ---- adaptive pooling --------------------------------------------------------------------------------
@pytest.mark.parametrize("out", [(2, 3, 2), (3, 1, 4), (1, 5, 3)])
def test_adaptive_3d_pooling_matches_loops_over_the_bins(out):
    x = f64(2, 3, 5, 5, 4, seed=11)
    vals, idx = F.adaptive_max_pool3d(x, out, return_indices=True)
    want_v, want_i = _np_adaptive_3d(x.detach().numpy(), out, "max")
    np.testing.assert_array_equal(vals.detach().numpy(), want_v)
    np.testing.assert_array_equal(idx.numpy(), want_i)
    assert vals.grad_fn.name() == "AdaptiveMaxPool3DBackward0" and vals.grad_fn._saved_result1 is idx
    avg = F.adaptive_avg_pool3d(x, out)
    np.testing.assert_allclose(avg.detach().numpy(), _np_adaptive_3d(x.detach().numpy(), out, "mean")[0],
                               rtol=1e-12)
    assert avg.grad_fn.name() == "AdaptiveAvgPool3DBackward0"


def test_adaptive_max_pool_ties_go_to_the_first_position():
    x = engine.zeros(1, 1, 2, 2, 2)
    assert F.adaptive_max_pool3d(x, 1, return_indices=True)[1].tolist() == [[[[[0]]]]]
    assert F.adaptive_max_pool1d(engine.ones(1, 5), 2, return_indices=True)[1].tolist() == [[0, 2]]


def test_adaptive_pool_none_keeps_a_dim_and_one_is_a_mean():
    x = f64(4, 3, 5, 2, seed=12)
    assert tuple(F.adaptive_max_pool3d(x, (2, None, 1)).shape) == (4, 2, 5, 1)
    assert tuple(nn.AdaptiveAvgPool3d((None, 2, None))(x).shape) == (4, 3, 2, 2)
    m = nn.AdaptiveAvgPool3d(1)(x)
    assert m.grad_fn.name() == "MeanBackward1" and tuple(m.shape) == (4, 1, 1, 1)
    assert repr(nn.AdaptiveMaxPool3d((2, None, 3))) == "AdaptiveMaxPool3d(output_size=(2, None, 3))"


def test_adaptive_max_pool1d_is_the_2d_op_on_a_row():
    x = f64(2, 3, 7, seed=13)
    vals, idx = nn.AdaptiveMaxPool1d(3, return_indices=True)(x)
    xs = x.detach().numpy()
    for j, (a, b) in enumerate(_bins(7, 3)):
        np.testing.assert_array_equal(vals.detach().numpy()[..., j], xs[..., a:b].max(-1))
        np.testing.assert_array_equal(idx.numpy()[..., j], a + xs[..., a:b].argmax(-1))
    assert vals.grad_fn.name() == "SqueezeBackward1"
    assert vals.grad_fn.next_functions[0][0].name() == "AdaptiveMaxPool2DBackward0"
    assert isinstance(F.adaptive_max_pool1d_with_indices(x, 3), tuple)
    assert isinstance(F.max_pool1d_with_indices(x, 2), tuple)


def test_adaptive_pool_gradients():
    gradcheck(lambda a: F.adaptive_max_pool3d(a, (2, 2, 3)), [f64(1, 2, 3, 4, 5, seed=14)])
    gradcheck(lambda a: F.adaptive_avg_pool3d(a, (2, 3, 2)), [f64(2, 3, 4, 3, seed=15)])
    _check_double_backward(lambda a: F.adaptive_avg_pool3d(a, (2, 1, 2)), f64(1, 3, 4, 3, seed=16))
    gradcheck(lambda a: F.adaptive_max_pool1d(a, 3), [f64(2, 7, seed=17)])


# ---- modules composed of existing ops ----------------------------------------------------------------
def test_3d_padding_modules_are_f_pad():
    x = f64(1, 2, 3, 3, 3, seed=18)
    for mod, mode in ((nn.ReflectionPad3d(1), "reflect"), (nn.ReplicationPad3d((1, 0, 2, 1, 0, 1)), "replicate"),
                      (nn.CircularPad3d(1), "circular")):
        np.testing.assert_array_equal(mod(x).detach().numpy(), F.pad(x, mod.padding, mode).detach().numpy())
    z = nn.ZeroPad3d((1, 0, 0, 0, 0, 2))(x)
    assert tuple(z.shape) == (1, 2, 5, 3, 4) and float(z[:, :, 3:].abs().sum().item()) == 0.0
    assert repr(nn.ZeroPad3d(1)) == "ZeroPad3d((1, 1, 1, 1, 1, 1))"
    with pytest.raises(ValueError, match=r"expected 4D or 5D input \(got 2D input\)"):
        nn.CircularPad3d(1)(engine.zeros(2, 3))


def test_upsampling_modules_and_nll_loss2d():
    x = f64(1, 2, 3, 4, seed=19)
    b = nn.UpsamplingBilinear2d(scale_factor=2)(x)
    np.testing.assert_array_equal(b.detach().numpy(), F.interpolate(x, scale_factor=2, mode="bilinear",
                                                                     align_corners=True).detach().numpy())
    assert b.grad_fn.name() == "UpsampleBilinear2DBackward0"
    n = nn.UpsamplingNearest2d(size=(5, 7))(x)
    assert n.grad_fn.name() == "UpsampleNearest2DBackward0" and tuple(n.shape) == (1, 2, 5, 7)
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = nn.NLLLoss2d()
    assert [w.category for w in caught] == [FutureWarning]
    logp = F.log_softmax(f64(2, 3, 4, 4, seed=20), 1)
    t = engine.tensor(np.random.default_rng(0).integers(0, 3, (2, 4, 4)))
    assert float(loss(logp, t).item()) == float(F.nll_loss(logp, t).item())


# ---- fractional max pooling --------------------------------------------------------------------------
def test_fractional_windows_follow_the_samples():
    from engine.ops.nn.pool import fractional_starts
    # a = (9 - 2) / (4 - 1) = 7/3; starts trunc((i + u) a) - trunc(u a), the last at 9 - 2
    assert fractional_starts([0.0, 0.7], 9, 4, 2, np.float64).tolist() == [[0, 2, 4, 7], [0, 2, 5, 7]]
    x = f64(2, 3, 9, 11, seed=31)
    u = engine.tensor(np.random.default_rng(32).uniform(0, 1, (2, 3, 2)))
    out, idx = F.fractional_max_pool2d(x, (3, 2), output_size=(4, 5), return_indices=True, _random_samples=u)
    xs, us = x.detach().numpy(), u.numpy()
    for b, c in itertools.product(range(2), range(3)):
        rows = fractional_starts(us[b, c, 1:2], 9, 4, 3, np.float64)[0]
        cols = fractional_starts(us[b, c, 0:1], 11, 5, 2, np.float64)[0]
        for i, j in itertools.product(range(4), range(5)):
            win = xs[b, c, rows[i]:rows[i] + 3, cols[j]:cols[j] + 2]
            assert out.detach().numpy()[b, c, i, j] == win.max()
            r, q = np.unravel_index(np.argmax(win), win.shape)
            assert idx.numpy()[b, c, i, j] == (rows[i] + r) * 11 + cols[j] + q
    assert out.grad_fn.name() == "FractionalMaxPool2DBackward0" and out.grad_fn._saved_result1 is idx
    gradcheck(lambda a: F.fractional_max_pool2d(a, 2, output_size=(3, 4), _random_samples=u),
              [f64(2, 3, 5, 6, seed=33)])


def test_fractional_module_ratio_and_default_samples():
    engine.manual_seed(0)
    x = f64(1, 2, 8, 10, seed=34)
    pool = nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert repr(pool) == "FractionalMaxPool2d()" and tuple(pool(x).shape) == (1, 2, 4, 5)
    fixed = nn.FractionalMaxPool2d(2, output_size=3, _random_samples=engine.zeros(1, 2, 2, dtype=engine.float64))
    assert "_random_samples" in dict(fixed.named_buffers())
    np.testing.assert_array_equal(fixed(x).detach().numpy(), fixed(x).detach().numpy())
    with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)


# ---- other backends: the same results as on NumPy ----------------------------------------------------
def _run_all():
    engine.manual_seed(0)
    x = engine.tensor(np.random.default_rng(21).standard_normal((2, 2, 4, 4, 4)), requires_grad=True)
    o, i = F.max_pool3d(x, 2, return_indices=True)
    u = F.max_unpool3d(o, i, 2)
    am, ai = F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True)
    aa = F.adaptive_avg_pool3d(x, (3, 2, 3))
    lp = F.lp_pool2d(F.relu(x[:, 0]) + 0.1, 2, 2)
    m1 = F.adaptive_max_pool1d(x[0, 0, 0], 3)
    fr = F.fractional_max_pool2d(x[:, :, 0], 2, output_size=(3, 2), _random_samples=engine.full((2, 2, 2), 0.4,
                                                                                               dtype=x.dtype))
    outs = [u, am, ai, aa, lp, m1, fr]
    total = sum((o.sum() for o in outs if o.dtype.is_floating_point), engine.zeros(()))
    total.backward()
    return outs + [x.grad]


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    matches_numpy(backend, _run_all)


def exercise_pool_more_ops():
    """Runs each op-table row of max unpooling, 3-D adaptive and fractional max pooling (engine/ops/nn/) once
    (for test_every_table_op_is_exercised)."""
    x = f64(1, 2, 4, 4, 4, seed=30)
    o2, i2 = F.max_pool2d(x[0], 2, return_indices=True)
    F.max_unpool2d(o2, i2, 2)
    o3, i3 = F.max_pool3d(x, 2, return_indices=True)
    F.max_unpool3d(o3, i3, 2)
    F.adaptive_max_pool3d(x, (2, 3, 2))
    F.adaptive_avg_pool3d(x, (3, 2, 2))
    F.fractional_max_pool2d(x[0], 2, output_size=(3, 3))


@pytest.mark.parametrize("code, message", [   # recorded from PyTorch 2.13 (found by tools/fuzz)
    ("F.max_pool1d(engine.zeros(1, 1, 1), 2, stride=1, ceil_mode=True)", "max_pool1d() Invalid computed output size: 0"),
    ("F.max_pool1d(engine.zeros(1, 1, 1, requires_grad=True), 2, stride=1, ceil_mode=True)",
     "max_pool1d() Invalid computed output size: 0"),
    ("F.max_pool1d(engine.zeros(3, 1), 3, stride=1)", "max_pool1d() Invalid computed output size: -1"),
    ("F.max_pool1d(engine.zeros(3, 1), 3, stride=1, padding=1, dilation=2)",
     "max_pool1d() Invalid computed output size: -1"),
    ("F.max_pool1d(engine.zeros(3, 4), 2, stride=0)", "max_pool1d() stride must be greater than zero, but got 0"),
    ("F.max_pool1d(engine.zeros(3, 4), 2, padding=-1)", "max_pool1d() padding must be non-negative, but got -1"),
    ("F.max_pool1d(engine.zeros(3, 4), 2, padding=2)",
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2"),
    ("F.max_pool1d(engine.zeros(3, 4), 2, dilation=0)", "max_pool1d() dilation must be greater than zero, but got 0"),
    ("F.max_pool1d(engine.zeros(3, 4), 0)", "max_pool1d() kernel_size must be greater than zero, but got 0"),
    # with indices max_pool1d is max_pool2d, whose message shows a negative size as it is
    ("F.max_pool1d(engine.zeros(3, 1), 3, stride=1, return_indices=True)",
     "Given input size: (3x1x1). Calculated output size: (3x1x-1). Output size is too small"),
    ("F.avg_pool1d(engine.zeros(3, 1), 3, stride=1)",
     "Given input size: (3x1x1). Calculated output size: (3x1x-1). Output size is too small"),
    ("F.max_pool2d(engine.zeros(1, 5, 1), (2, 3), stride=1)",
     "Given input size: (1x5x1). Calculated output size: (1x4x-1). Output size is too small"),
])
def test_max_pool1d_checks_are_its_own(code, message):
    with pytest.raises(RuntimeError) as e:
        eval(code, {"engine": engine, "F": F})
    assert str(e.value) == message
    assert F.max_pool1d(engine.zeros(3, 2), 5, stride=1, padding=2).shape == (3, 2)
