"""Layers and functions CNN/MLP tutorials use: batch norm, pooling, more activations and losses.

Expected numbers come from PyTorch 2.13 (CPU); the snippet that made each set is in a comment
beside it. Gradients are also checked against finite differences (float64).
"""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import nn

from tests.checks import BACKENDS, assert_matches, gradcheck, gradgradcheck, on_backend

D = engine.float64


def t64(a, requires_grad=False):
    return engine.tensor(np.asarray(a, dtype=np.float64), dtype=D, requires_grad=requires_grad)


def saved(fn, names):
    """{name: (shape, dtype name, bytes) or value} of a node's ``_saved_<name>`` attributes."""
    out = {}
    for name in names:
        v = getattr(fn, "_saved_" + name)
        out[name] = (tuple(v.shape), v.dtype.name, _nbytes(v)) \
            if isinstance(v, engine.Tensor) else v
    return out


def _nbytes(t):
    """The bytes of ``t``'s whole storage (glassgrad's Storage.nbytes is an attribute)."""
    return t.untyped_storage().nbytes


def assert_saved(fn, expected):
    """The node's saved values are ``expected`` (PyTorch's), and it keeps no other tensor."""
    assert saved(fn, expected) == expected
    kept = {n for n, _ in fn.saved_tensors_info}
    assert kept == {n for n, v in expected.items() if isinstance(v, tuple) and len(v) == 3 and
                    isinstance(v[1], str)}


# ---- batch norm ------------------------------------------------------------------------------------
# rng = np.random.default_rng(0); X = rng.standard_normal((4, 3)); X4 = rng.standard_normal((2, 2, 3, 3))
# m = torch.nn.BatchNorm1d(3, momentum=0.3).double(); x = torch.tensor(X, requires_grad=True)
# y = m(x); (y * torch.arange(12.).double().reshape(4, 3)).sum().backward()     # bn1_y, bn1_gx, bn1_gw, bn1_gb
# m(torch.tensor(X * 2 + 1))                        # bn1_rm, bn1_rv, bn1_nbt; then m.eval(): bn1_eval = m(X)
# m = torch.nn.BatchNorm2d(2, momentum=None).double(); for k in range(3): m(x4 * (k + 1) + k)   # bn2_rm, bn2_rv
# m.train(); bn2_y = m(x4)[0, 1]
BN = {"bn1_eval": [[-0.15995, -0.327702, 0.276643], [-0.174513, -0.692575, -0.007307], [0.663814, 0.648018, -1.09221],
                   [-1.132546, -0.771781, -0.333461]],
      "bn1_gb": [18.0, 22.0, 26.0],
      "bn1_gw": [-4.904233, 0.022195, -8.549263],
      "bn1_gx": [[-4.85996, -7.204445, -4.252853], [-1.59314, -2.395304, -0.642211], [3.480938, 2.387005, -3.695283],
                 [2.972162, 7.212744, 8.590348]],
      "bn1_nbt": 2,
      "bn1_rm": [0.354515, 0.230347, 0.368771],
      "bn1_rv": [2.045889, 1.223317, 0.964235],
      "bn1_y": [[0.064226, -0.073833, 1.106048], [0.041329, -0.719994, 0.550899], [1.359411, 1.654088, -1.570186],
                [-1.464965, -0.860261, -0.086761]],
      "bn2_rm": [0.519605, 1.82131],
      "bn2_rv": [2.960567, 4.543013],
      "bn2_y": [[0.996808, -1.121999, -0.061682], [0.513955, -0.330226, -1.203663], [-1.389534, -0.905631, -0.19863]]}


def _bn_inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((4, 3)), rng.standard_normal((2, 2, 3, 3))


def test_batchnorm1d_training_step_values_grads_and_running_stats():
    X, _ = _bn_inputs()
    m = nn.BatchNorm1d(3, momentum=0.3).double()
    x = t64(X, True)
    y = m(x)
    (y * engine.arange(12.0, dtype=D).reshape(4, 3)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), BN["bn1_y"], atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), BN["bn1_gx"], atol=2e-6)
    np.testing.assert_allclose(m.weight.grad.numpy(), BN["bn1_gw"], atol=2e-6)
    np.testing.assert_allclose(m.bias.grad.numpy(), BN["bn1_gb"], atol=2e-6)
    m(t64(X * 2 + 1))
    np.testing.assert_allclose(m.running_mean.numpy(), BN["bn1_rm"], atol=2e-6)
    np.testing.assert_allclose(m.running_var.numpy(), BN["bn1_rv"], atol=2e-6)
    assert m.num_batches_tracked.item() == BN["bn1_nbt"] and m.num_batches_tracked.dtype is engine.int64
    m.eval()
    before = m.running_mean.numpy().copy()
    np.testing.assert_allclose(m(t64(X)).detach().numpy(), BN["bn1_eval"], atol=2e-6)
    assert np.array_equal(m.running_mean.numpy(), before) and m.num_batches_tracked.item() == 2


def test_batchnorm2d_cumulative_average_when_momentum_is_none():
    _, X4 = _bn_inputs()
    m = nn.BatchNorm2d(2, momentum=None).double()
    x4 = t64(X4)
    for k in range(3):
        m(x4 * (k + 1) + k)
    np.testing.assert_allclose(m.running_mean.numpy(), BN["bn2_rm"], atol=2e-6)
    np.testing.assert_allclose(m.running_var.numpy(), BN["bn2_rv"], atol=2e-6)
    np.testing.assert_allclose(m(x4)[0, 1].detach().numpy(), BN["bn2_y"], atol=2e-6)


def test_batchnorm_modules_repr_state_dict_and_flags():
    m = nn.BatchNorm1d(3)
    assert repr(m) == "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [n for n, _ in m.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m.weight.tolist() == [1.0, 1.0, 1.0] and m.bias.tolist() == [0.0, 0.0, 0.0]
    m2 = nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False)
    assert repr(m2) == ("BatchNorm2d(3, eps=1e-05, momentum=None, affine=False, bias=False, "
                        "track_running_stats=False)")
    assert list(m2.state_dict()) == [] and m2.running_mean is None and m2.weight is None
    # without running statistics eval mode still normalises with the batch's
    m2.eval()
    x = engine.randn(4, 3, 2, 2)
    y = m2(x)
    np.testing.assert_allclose(y.mean((0, 2, 3)).numpy(), 0.0, atol=1e-6)
    # a round trip through state_dict keeps the buffers
    a = nn.BatchNorm1d(3)
    a(engine.randn(5, 3))
    b = nn.BatchNorm1d(3)
    b.load_state_dict(a.state_dict())
    assert b.running_mean.tolist() == a.running_mean.tolist() and b.num_batches_tracked.item() == 1


def test_batch_norm_grad_fn_and_saved_tensors_as_pytorch():
    # y = F.batch_norm(x, rm, rv, w, b, training=True) with x 4x3 float32, all of x, w, b requiring grad:
    # NativeBatchNormBackward0 saves eps, input, result1 (mean), result2 (invstd), running_mean (rm itself),
    # running_var, training, weight; the running stats get no edge, and rm's version stays 0
    x = engine.randn(4, 3, requires_grad=True)
    w, b = engine.ones(3, requires_grad=True), engine.zeros(3, requires_grad=True)
    rm, rv = engine.zeros(3), engine.ones(3)
    y = F.batch_norm(x, rm, rv, w, b, training=True)
    fn = y.grad_fn
    assert fn.name() == "NativeBatchNormBackward0" and len(fn.next_functions) == 3
    assert_saved(fn, {"eps": 1e-05, "input": ((4, 3), "float32", 48), "result1": ((3,), "float32", 12),
                         "result2": ((3,), "float32", 12), "running_mean": ((3,), "float32", 12),
                         "running_var": ((3,), "float32", 12), "training": True, "weight": ((3,), "float32", 12)})
    assert fn._saved_running_mean is rm and fn._saved_weight is w and fn._saved_input is x
    assert rm._version == 0 and rv._version == 0
    np.testing.assert_allclose(fn._saved_result1.numpy(), x.detach().numpy().mean(0), atol=1e-6)
    np.testing.assert_allclose(fn._saved_result2.numpy(), 1 / np.sqrt(x.detach().numpy().var(0) + 1e-5), rtol=1e-5)
    # eval: result1/result2 are empty (0 bytes); no affine: weight None, running stats None, two None edges
    e = F.batch_norm(x, rm, rv, w, b, training=False).grad_fn
    assert saved(e, ["result1"])["result1"] == ((0,), "float32", 0) and e._saved_training is False
    n = F.batch_norm(x, None, None, training=True).grad_fn
    assert n._saved_weight is None and n._saved_running_mean is None and n._saved_running_var is None
    assert [f is None for f, _ in n.next_functions] == [False, True, True]


def test_batch_norm_gradcheck_training_and_eval():
    rng = np.random.default_rng(3)
    x = t64(rng.standard_normal((3, 2, 4)), True)
    w, b = t64(rng.standard_normal(2), True), t64(rng.standard_normal(2), True)
    rm, rv = t64([0.1, -0.2]), t64([0.5, 2.0])
    gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b])
    gradcheck(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False), [x, w, b])
    gradgradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b])
    gradgradcheck(lambda x, w: F.batch_norm(x, rm, rv, w, None, training=False), [x, w])


def test_batch_norm_errors_as_pytorch():
    m1, m2 = nn.BatchNorm1d(3), nn.BatchNorm2d(3)
    with pytest.raises(ValueError, match=r"^expected 2D or 3D input \(got 4D input\)$"):
        m1(engine.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"^Expected more than 1 value per channel when training, got input size "
                                         r"torch.Size\(\[1, 3\]\)$"):
        m1(engine.randn(1, 3))
    with pytest.raises(ValueError, match=r"^expected 4D input \(got 3D input\)$"):
        m2(engine.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"^running_mean should contain 4 elements not 3$"):
        m2(engine.randn(2, 4, 3, 3))
    with pytest.raises(RuntimeError, match=r"^weight should contain 4 elements not 3$"):
        F.batch_norm(engine.randn(2, 4), engine.zeros(4), engine.ones(4), engine.ones(3))
    with pytest.raises(RuntimeError, match=r"^running_mean must be defined in evaluation mode$"):
        F.batch_norm(engine.randn(2, 4), None, None, training=False)
    with pytest.raises(RuntimeError, match=r"^running_mean should contain 0 elements not 3$"):
        F.batch_norm(engine.randn(3), engine.zeros(3), engine.ones(3), training=True)
    m3 = nn.BatchNorm1d(2)
    x3 = engine.randn(4, 2, 5)
    y3 = m3(x3)     # (N, C, L): statistics per channel over N and L
    np.testing.assert_allclose(y3.detach().numpy().mean((0, 2)), 0.0, atol=1e-6)
    np.testing.assert_allclose(m3.running_mean.numpy(), 0.1 * x3.numpy().mean((0, 2)), rtol=1e-5, atol=1e-7)
    nb = nn.BatchNorm1d(3, bias=False)
    assert nb.bias is None and list(nb.state_dict()) == ["weight", "running_mean", "running_var", "num_batches_tracked"]


# ---- pooling ---------------------------------------------------------------------------------------
# rng = np.random.default_rng(1); X = rng.standard_normal((1, 2, 5, 5)); for each name, with y = fn(x):
# (y * torch.arange(y.numel()).double().reshape(y.shape)).sum().backward()  -> name: y, name_g: x.grad,
# name_i: the indices. mp: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True);
# mpd: F.max_pool2d(x, 2, 1, dilation=2, return_indices=True); ap: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True);
# apx: F.avg_pool2d(x, (2, 3), (2, 1), (1, 0), count_include_pad=False); aap: F.adaptive_avg_pool2d(x, (3, 2))
POOL = {"aap": [[[[0.331363, 0.19541], [0.075037, -0.163691], [0.228786, -0.290322]],
                 [[-0.309627, 0.386774], [-0.317048, -0.019421], [-0.392974, -0.02274]]]],
        "aap_g": [[[[0.0, 0.0, 0.166667, 0.166667, 0.166667], [0.222222, 0.222222, 0.722222, 0.5, 0.5],
                    [0.222222, 0.222222, 0.555556, 0.333333, 0.333333],
                    [0.888889, 0.888889, 2.055556, 1.166667, 1.166667],
                    [0.666667, 0.666667, 1.5, 0.833333, 0.833333]],
                   [[1.0, 1.0, 2.166667, 1.166667, 1.166667], [1.888889, 1.888889, 4.055556, 2.166667, 2.166667],
                    [0.888889, 0.888889, 1.888889, 1.0, 1.0], [2.555556, 2.555556, 5.388889, 2.833333, 2.833333],
                    [1.666667, 1.666667, 3.5, 1.833333, 1.833333]]]],
        "ap": [[[[0.119625, 0.028626, 0.028989], [0.124792, -0.108729, -0.113936], [0.041234, 0.11006, -0.304838]],
                [[-0.117552, 0.01887, 0.346716], [-0.083967, -0.349055, 0.213659], [-0.197723, -0.17522, 0.049099]]]],
        "ap_g": [[[[0.0, 0.111111, 0.111111, 0.333333, 0.222222], [0.333333, 0.888889, 0.555556, 1.333333, 0.777778],
                   [0.333333, 0.777778, 0.444444, 1.0, 0.555556], [1.0, 2.222222, 1.222222, 2.666667, 1.444444],
                   [0.666667, 1.444444, 0.777778, 1.666667, 0.888889]],
                  [[1.0, 2.111111, 1.111111, 2.333333, 1.222222], [2.333333, 4.888889, 2.555556, 5.333333, 2.777778],
                   [1.333333, 2.777778, 1.444444, 3.0, 1.555556], [3.0, 6.222222, 3.222222, 6.666667, 3.444444],
                   [1.666667, 3.444444, 1.777778, 3.666667, 1.888889]]]],
        "apx": [[[[0.499213, -0.050367, -0.022455], [0.05487, 0.009348, -0.02361], [0.228786, 0.16509, -0.290322]],
                 [[-0.828659, -0.127773, 0.002925], [-0.145134, -0.240245, 0.156712],
                  [-0.392974, -0.26283, -0.02274]]]],
        "apx_g": [[[[0.0, 0.333333, 1.0, 1.0, 0.666667], [0.5, 1.166667, 2.0, 1.5, 0.833333],
                    [0.5, 1.166667, 2.0, 1.5, 0.833333], [1.0, 2.166667, 3.5, 2.5, 1.333333],
                    [1.0, 2.166667, 3.5, 2.5, 1.333333]],
                   [[3.0, 6.333333, 10.0, 7.0, 3.666667], [2.0, 4.166667, 6.5, 4.5, 2.333333],
                    [2.0, 4.166667, 6.5, 4.5, 2.333333], [2.5, 5.166667, 8.0, 5.5, 2.833333],
                    [2.5, 5.166667, 8.0, 5.5, 2.833333]]]],
        "mp": [[[[0.821618, 0.821618, 0.905356], [0.598846, 0.581118, 0.364572], [0.598846, 1.294064, 1.006724]],
                [[2.117839, 2.042772, 2.042772], [2.117839, 2.042772, 2.042772], [0.095483, 0.593748, 0.891167]]]],
        "mp_g": [[[[0.0, 1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 4.0, 5.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0],
                   [9.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 7.0, 8.0, 0.0]],
                  [[0.0, 0.0, 0.0, 0.0, 0.0], [21.0, 0.0, 0.0, 48.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0],
                   [0.0, 0.0, 0.0, 0.0, 0.0], [15.0, 0.0, 0.0, 16.0, 17.0]]]],
        "mp_i": [[[[1, 1, 4], [15, 7, 8], [15, 22, 23]], [[5, 8, 8], [5, 8, 8], [20, 23, 24]]]],
        "mpd": [[[[0.345584, 0.821618, 0.905356], [0.598846, 0.364572, 0.581118], [1.294064, 1.006724, 1.294064]],
                 [[0.663063, 0.213643, 0.217322], [2.117839, 2.042772, 0.646703], [0.663063, 0.593748, 0.891167]]]],
        "mpd_g": [[[[0.0, 1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 5.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0],
                    [3.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 14.0, 7.0, 0.0]],
                   [[0.0, 0.0, 0.0, 10.0, 11.0], [12.0, 0.0, 0.0, 13.0, 14.0], [24.0, 0.0, 0.0, 0.0, 0.0],
                    [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 16.0, 17.0]]]],
        "mpd_i": [[[[0, 1, 4], [15, 8, 7], [22, 23, 22]], [[10, 3, 4], [5, 8, 9], [10, 23, 24]]]]}
POOL_FNS = {
    "mp": lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
    "mpd": lambda x: F.max_pool2d(x, 2, 1, dilation=2, return_indices=True),
    "ap": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    "apx": lambda x: F.avg_pool2d(x, (2, 3), (2, 1), (1, 0), count_include_pad=False),
    "aap": lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
}


@pytest.mark.parametrize("name", sorted(POOL_FNS))
def test_pooling_values_indices_and_grads_as_pytorch(name):
    X = np.random.default_rng(1).standard_normal((1, 2, 5, 5))
    x = t64(X, True)
    y = POOL_FNS[name](x)
    yy = y[0] if isinstance(y, tuple) else y
    (yy * engine.arange(yy.numel(), dtype=D).reshape(tuple(yy.shape))).sum().backward()
    np.testing.assert_allclose(yy.detach().numpy(), POOL[name], atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), POOL[name + "_g"], atol=2e-6)
    if isinstance(y, tuple):
        assert y[1].dtype is engine.int64 and y[1].tolist() == POOL[name + "_i"]
    gradcheck(lambda x: POOL_FNS[name](x), [t64(X, True)])
    # pooling is linear: square its output so the recorded backward has something to differentiate
    gradgradcheck(lambda x: _first(POOL_FNS[name](x)) ** 2, [t64(X, True)])


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def test_pooling_grad_fns_and_saved_tensors_as_pytorch():
    x = engine.randn(2, 3, 6, 6, requires_grad=True)
    y, i = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert_saved(y.grad_fn, {"ceil_mode": False, "dilation": (1, 1), "kernel_size": (3, 3), "padding": (1, 1),
                             "result1": ((2, 3, 3, 3), "int64", 432), "self": ((2, 3, 6, 6), "float32", 864),
                             "stride": (2, 2)})
    assert y.grad_fn._saved_result1.untyped_storage() is i.untyped_storage()
    assert F.max_pool2d(x, 2).grad_fn._saved_stride == ()
    assert_saved(F.avg_pool2d(x, 2, divisor_override=3).grad_fn, {
        "ceil_mode": False, "count_include_pad": True, "divisor_override": 3, "kernel_size": (2, 2),
        "padding": (0, 0), "self": ((2, 3, 6, 6), "float32", 864), "stride": ()})
    a = F.adaptive_avg_pool2d(x, 2).grad_fn
    assert a.name() == "AdaptiveAvgPool2DBackward0"
    assert_saved(a, {"self": ((2, 3, 6, 6), "float32", 864)})
    m = F.adaptive_avg_pool2d(x, (1, 1))
    assert m.grad_fn.name() == "MeanBackward1" and tuple(m.shape) == (2, 3, 1, 1)
    assert tuple(F.adaptive_avg_pool2d(x, (3, None)).shape) == (2, 3, 3, 6)
    u = F.max_pool2d(engine.randn(3, 6, 6, requires_grad=True), 2)    # unbatched (C, H, W)
    assert tuple(u.shape) == (3, 3, 3) and saved(u.grad_fn, ["result1"])["result1"] == ((3, 3, 3), "int64", 216)


def test_pooling_modules_and_shapes():
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True)) == \
        "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"
    x = engine.randn(2, 3, 6, 6)
    assert tuple(nn.MaxPool2d(3, 2, ceil_mode=True)(x).shape) == (2, 3, 3, 3)
    assert tuple(nn.MaxPool2d(3, 2)(x).shape) == (2, 3, 2, 2)
    y, i = nn.MaxPool2d(2, return_indices=True)(x)
    assert tuple(i.shape) == (2, 3, 3, 3)
    assert nn.MaxPool2d(2)(x).grad_fn is None
    assert tuple(nn.AdaptiveAvgPool2d(1)(x).shape) == (2, 3, 1, 1)
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                        nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 2))
    net(x).sum().backward()
    assert all(p.grad is not None for p in net.parameters())


def test_pooling_errors_as_pytorch():
    x = engine.randn(2, 3, 6, 6)
    cases = [
        (lambda: F.max_pool2d(x, 3, padding=2), RuntimeError,
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"),
        (lambda: F.max_pool2d(engine.randn(2, 3), 2), RuntimeError,
         "non-empty 3D or 4D (batch mode) tensor expected for input"),
        (lambda: F.max_pool2d(x, 7), RuntimeError,
         "Given input size: (3x6x6). Calculated output size: (3x0x0). Output size is too small"),
        (lambda: F.avg_pool2d(x, 7), RuntimeError,
         "Given input size: (3x6x6). Calculated output size: (3x0x0). Output size is too small"),
        (lambda: F.max_pool2d(x, 2, stride=0), RuntimeError, "stride should not be zero"),
        (lambda: F.max_pool2d(x, 2, padding=-1), RuntimeError, "pad must be non-negative, but got pad: -1"),
        (lambda: F.max_pool2d(x, (2, 2, 2)), RuntimeError,
         "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as e:
            fn()
        assert str(e.value) == msg


# ---- the same ops on array_api_strict (as tests/backend/test_backends.py runs the op suite) ----------
STRICT = {
    "batch_norm_train": lambda a: F.batch_norm(a.reshape(2, 3, 2), None, None, a[0, :3], a[1, :3], training=True),
    "batch_norm_eval": lambda a: F.batch_norm(a, a[0].detach() * 0.1, a[1].detach().abs() + 1.0, a[2], None),
    "batch_norm_running": lambda a: _bn_running(a),
    "max_pool2d": lambda a: F.max_pool2d(a.reshape(1, 1, 3, 4), 2, 1, 1, ceil_mode=True),
    "avg_pool2d": lambda a: F.avg_pool2d(a.reshape(1, 1, 3, 4), 2, 1, 1, count_include_pad=False),
    "adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a.reshape(1, 3, 4), (2, 3)),
    "adaptive_max_pool2d": lambda a: F.adaptive_max_pool2d(a.reshape(1, 3, 4), (2, 3)),
    "silu": lambda a: F.silu(a),
    "leaky_relu": lambda a: F.leaky_relu(a, 0.2) + F.leaky_relu(a * 1, 0.3, inplace=True),
    "elu": lambda a: F.elu(a, 0.7) + F.elu(a * 1, inplace=True),
    "softplus": lambda a: F.softplus(a * 8, 2, 10),
    "mish": lambda a: F.mish(a),
    "hardtanh": lambda a: F.hardtanh(a, -0.5, 0.7),
    "smooth_l1_huber": lambda a: F.smooth_l1_loss(a, a.flip(0), beta=0.6) + F.huber_loss(a[0], a[1], "none", 0.4),
    "l1": lambda a: F.l1_loss(a, a.T.reshape(3, 4).detach(), reduction="sum"),
    "pad_constant": lambda a: F.pad(a, (1, 2, -1, 1), value=0.5),
    "pad_reflect_replicate": lambda a: F.pad(a.reshape(1, 3, 4), (2, 1), mode="reflect")[..., :4]
    + F.pad(a.reshape(1, 1, 3, 4), (1, 0, 0, 2), mode="replicate")[0, :, 2:, 1:],
    "roll": lambda a: a.roll((1, -1), (0, 1)) + a.roll(5),
    "scatter": lambda a: a.scatter(1, engine.tensor([[3, 0], [1, 2], [2, 0]], device=a.device), a[:, :2] * 2)
    + a.scatter(0, engine.tensor([[2, 0, 1, 0]], device=a.device), 0.5),
    "conv1d": lambda a: F.conv1d(a.reshape(1, 3, 4), a[:, :2].reshape(2, 3, 1) * 1, a[0, :2], padding=1),
    "cosine_normalize": lambda a: F.cosine_similarity(a, a.flip(0)) + F.normalize(a, dim=0)[:, 0],
}


def _bn_running(a):
    rm, rv = engine.zeros(4, dtype=D, device=a.device), engine.ones(4, dtype=D, device=a.device)
    y = F.batch_norm(a, rm, rv, training=True, momentum=0.5)
    return y + rm + rv


def _run_strict(fn):
    a = t64(np.random.default_rng(0).standard_normal((3, 4)), True)
    out = fn(a)
    out.backward(engine.ones_like(out))
    return out, a.grad


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(STRICT))
def test_other_backends_match_numpy(name, backend):
    ref_out, ref_grad = _run_strict(STRICT[name])
    with on_backend(backend):
        out, grad = _run_strict(STRICT[name])
    assert_matches(backend, [out, grad], [ref_out, ref_grad], rtol=1e-10)


def exercise_layer_ops():
    """One call of each table op this file covers (tests/ops/test_ops_grad.py checks every op runs)."""
    for name in sorted(STRICT):
        _run_strict(STRICT[name])
    for mode in ("reflect", "replicate"):
        for k, shape in ((1, (2, 3, 3)), (2, (1, 2, 3, 3)), (3, (1, 2, 3, 3, 3))):
            F.pad(engine.randn(*shape, requires_grad=True), (1, 1) * k, mode=mode).sum().backward()
    m, s = engine.zeros(3, requires_grad=True), engine.ones(3, requires_grad=True)
    for y in (engine.normal(m, 1.0), engine.normal(0.0, s), engine.normal(m, s), engine.bernoulli(m + 0.5),
              sum(engine.std_mean(s * 2.0)), sum(engine.var_mean(s * 2.0))):
        y.sum().backward()


def test_integer_pooling_as_pytorch():
    # x = torch.arange(16).reshape(1, 1, 4, 4) * 3 - 20: integer averages truncate toward zero
    x = engine.arange(16).reshape(1, 1, 4, 4) * 3 - 20
    assert F.avg_pool2d(x, 2).tolist() == [[[[-12, -6], [11, 17]]]]
    assert F.avg_pool2d(x, 3, 1, 1).tolist() == [[[[-5, -7, -5, -2], [-4, -5, -2, 0], [3, 7, 10, 7],
                                                    [5, 8, 10, 7]]]]
    assert F.max_pool2d(x, 2).tolist() == [[[[-5, 1], [19, 25]]]]
    with pytest.raises(NotImplementedError, match="^\"adaptive_avg_pool2d\" not implemented for 'Long'$"):
        F.adaptive_avg_pool2d(x, 2)


# ---- activations -----------------------------------------------------------------------------------
# X = [-25.0, -3.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0]; x = torch.tensor(X, dtype=torch.float64,
# requires_grad=True); y = f(x) (in-place names: y = f(x * 1)); y.backward(torch.arange(1., 11., dtype=torch.float64))
# -> name: (y, x.grad), for f in ACT below
ACT = {"elu": ([-0.7, -0.665149, -0.442484, -0.275429, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0],
               [0.0, 0.069702, 0.772547, 1.698286, 3.5, 6.0, 7.0, 8.0, 9.0, 10.0]),
       "elu_": ([-0.7, -0.665149, -0.442484, -0.275429, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0],
                [0.0, 0.069702, 0.772547, 1.698286, 3.5, 6.0, 7.0, 8.0, 9.0, 10.0]),
       "hardtanh": ([-1.0, -1.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 2.5, 2.5],
                    [0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 7.0, 0.0, 0.0, 0.0]),
       "hardtanh_": ([-1.0, -1.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 2.5, 2.5],
                     [0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 7.0, 0.0, 0.0, 0.0]),
       "leaky_relu": ([-5.0, -0.6, -0.2, -0.1, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0],
                      [0.2, 0.4, 0.6, 0.8, 1.0, 6.0, 7.0, 8.0, 9.0, 10.0]),
       "leaky_relu_": ([-5.0, -0.6, -0.2, -0.1, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0],
                       [0.2, 0.4, 0.6, 0.8, 1.0, 6.0, 7.0, 8.0, 9.0, 10.0]),
       "mish": ([-0.0, -0.145647, -0.303401, -0.220744, 0.0, 0.208001, 0.865098, 2.471392, 12.0, 30.0],
                [-0.0, -0.186786, 0.17765, 1.158043, 3.0, 4.696964, 7.343254, 8.329036, 9.0, 10.0]),
       "mish_": ([-0.0, -0.145647, -0.303401, -0.220744, 0.0, 0.208001, 0.865098, 2.471392, 12.0, 30.0],
                 [-0.0, -0.186786, 0.17765, 1.158043, 3.0, 4.696964, 7.343254, 8.329036, 9.0, 10.0]),
       "relu6": ([0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 2.5, 6.0, 6.0],
                 [0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 7.0, 8.0, 0.0, 0.0]),
       "selu": ([-1.758099, -1.670569, -1.111331, -0.691758, 0.0, 0.31521, 1.050701, 2.626752, 12.608412, 31.52103],
                [0.0, 0.175061, 1.940306, 4.265365, 8.790497, 6.304206, 7.354907, 8.405608, 9.456309, 10.50701]),
       "silu": ([-0.0, -0.142278, -0.268941, -0.18877, 0.0, 0.172333, 0.731059, 2.310355, 11.999926, 30.0],
                [-0.0, -0.176208, 0.216988, 1.040155, 2.5, 3.88668, 6.493694, 8.795209, 9.000608, 10.0]),
       "silu_": ([-0.0, -0.142278, -0.268941, -0.18877, 0.0, 0.172333, 0.731059, 2.310355, 11.999926, 30.0],
                 [-0.0, -0.176208, 0.216988, 1.040155, 2.5, 3.88668, 6.493694, 8.795209, 9.000608, 10.0]),
       "softplus": ([0.0, 0.001238, 0.063464, 0.156631, 0.346574, 0.518744, 1.063464, 2.503358, 12.0, 30.0],
                    [0.0, 0.004945, 0.357609, 1.075766, 2.5, 3.873938, 6.16558, 7.946457, 9.0, 10.0]),
       "softplus_default": ([0.0, 0.048587, 0.313262, 0.474077, 0.693147, 0.854355, 1.313262, 2.57889, 12.000006,
                             30.0],
                            [0.0, 0.094852, 0.806824, 1.510163, 2.5, 3.446655, 5.11741, 7.393135, 8.999945, 10.0])}
ACT_X = [-25.0, -3.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0]
ACT_FNS = {
    "silu": F.silu, "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "elu": lambda x: F.elu(x, 0.7), "selu": F.selu,
    "softplus": lambda x: F.softplus(x, 2, 10), "softplus_default": F.softplus, "mish": F.mish,
    "hardtanh": lambda x: F.hardtanh(x, -1.0, 2.5), "relu6": F.relu6,
    "silu_": lambda x: F.silu(x * 1, inplace=True), "leaky_relu_": lambda x: F.leaky_relu(x * 1, 0.2, inplace=True),
    "elu_": lambda x: F.elu(x * 1, 0.7, inplace=True), "hardtanh_": lambda x: F.hardtanh(x * 1, -1.0, 2.5, True),
    "mish_": lambda x: F.mish(x * 1, inplace=True),
}


@pytest.mark.parametrize("name", sorted(ACT_FNS))
def test_activation_values_and_grads_as_pytorch(name):
    x = t64(ACT_X, True)
    y = ACT_FNS[name](x)
    y.backward(engine.arange(1.0, 11.0, dtype=D))
    want_y, want_g = ACT[name]
    np.testing.assert_allclose(y.detach().numpy(), want_y, atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), want_g, atol=2e-6)
    smooth = t64([-2.0, -0.7, -0.2, 0.4, 0.9, 1.7], True)   # away from kinks, thresholds and clamps
    gradcheck(ACT_FNS[name], [smooth])
    gradgradcheck(lambda x: ACT_FNS[name](x) * x, [smooth])   # (* x: the piecewise-linear ones too)


def test_activation_grad_fns_and_saved_tensors_as_pytorch():
    x = engine.randn(2, 3, requires_grad=True)
    cases = [
        (F.silu(x), "SiluBackward0", {"self": ((2, 3), "float32", 24)}),
        (F.leaky_relu(x), "LeakyReluBackward0", {"negative_slope": 0.01, "self": ((2, 3), "float32", 24)}),
        (F.elu(x, 0.5), "EluBackward0", {"alpha": 0.5, "input_scale": 1, "scale": 1,
                                         "self": ((2, 3), "float32", 24)}),
        (F.selu(x), "EluBackward0", {"alpha": 1.6732632423543772, "input_scale": 1, "scale": 1.0507009873554805,
                                     "self": ((2, 3), "float32", 24)}),
        (F.softplus(x, 2, 10), "SoftplusBackward0", {"beta": 2, "self": ((2, 3), "float32", 24), "threshold": 10}),
        (F.mish(x), "MishBackward0", {"self": ((2, 3), "float32", 24)}),
        (F.hardtanh(x, -0.5, 0.5), "HardtanhBackward0", {"max_val": 0.5, "min_val": -0.5,
                                                         "self": ((2, 3), "float32", 24)}),
        (F.relu6(x), "HardtanhBackward0", {"max_val": 6, "min_val": 0, "self": ((2, 3), "float32", 24)}),
        # in place on a non-leaf: silu_/mish_/hardtanh_ keep (a copy of) the input, leaky_relu_/elu_ the result
        (F.silu(x * 1, inplace=True), "SiluBackward0", {"self": ((2, 3), "float32", 24)}),
        (F.mish(x * 1, inplace=True), "MishBackward0", {"self": ((2, 3), "float32", 24)}),
        (F.hardtanh(x * 1, inplace=True), "HardtanhBackward0", {"max_val": 1.0, "min_val": -1.0,
                                                                "self": ((2, 3), "float32", 24)}),
        (F.leaky_relu(x * 1, inplace=True), "LeakyReluBackward1", {"negative_slope": 0.01,
                                                                   "result": ((2, 3), "float32", 24)}),
        (F.elu(x * 1, inplace=True), "EluBackward1", {"alpha": 1.0, "input_scale": 1,
                                                      "result": ((2, 3), "float32", 24), "scale": 1}),
    ]
    for y, name, want in cases:
        assert y.grad_fn.name() == name
        assert_saved(y.grad_fn, want)
    h = x * 1
    y = F.leaky_relu(h, inplace=True)
    assert y is h and y.grad_fn._saved_result.untyped_storage() is h.untyped_storage() and h._version == 1
    assert F.silu(x * 1, inplace=True).grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_activation_modules_and_errors_as_pytorch():
    reprs = [(nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"), (nn.ELU(), "ELU(alpha=1.0)"),
             (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"), (nn.Mish(), "Mish()"),
             (nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"), (nn.SiLU(), "SiLU()"),
             (nn.SiLU(inplace=True), "SiLU(inplace=True)"),
             (nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
             (nn.ELU(0.5, True), "ELU(alpha=0.5, inplace=True)"),
             (nn.Hardtanh(-2, 2), "Hardtanh(min_val=-2, max_val=2)"),
             (nn.ReLU6(), "ReLU6()"), (nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"),
             (nn.Mish(True), "Mish(inplace=True)"), (nn.SELU(), "SELU()"),
             (nn.ReLU6(inplace=True), "ReLU6(inplace=True)")]
    for m, want in reprs:
        assert repr(m) == want
    x = engine.tensor([-1.0, 0.5])
    h = x * 1
    assert nn.SiLU(inplace=True)(h) is h
    assert nn.LeakyReLU(0.5)(x).tolist() == [-0.5, 0.5]
    with pytest.raises(NotImplementedError, match="^\"silu_cpu\" not implemented for 'Long'$"):
        F.silu(engine.tensor([1, 2]))
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        F.hardtanh(x, 1, -1)
    assert F.hardtanh(engine.tensor([1, -2])).tolist() == [1, -1]
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
        F.silu(engine.ones(2, requires_grad=True), inplace=True)
    y = F.leaky_relu(engine.randn(3, requires_grad=True) * 1, -0.1, inplace=True)
    with pytest.raises(RuntimeError, match="^In-place leakyReLu backward calculation is triggered with a negative "
                                           "slope which is not supported"):
        y.sum().backward()


# ---- losses ----------------------------------------------------------------------------------------
# rng = np.random.default_rng(2); X, T, W = rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4)),
# rng.random((3, 4)); x, t = torch.tensor(X, requires_grad=True), torch.tensor(T, requires_grad=True)
# y = LOSS_FNS[name](x, t); y.backward(ones if 0-d else torch.arange(y.numel()).double().reshape(y.shape))
# -> name: (y, x.grad, t.grad)
LOSS = {"hub_mean": (0.85046,
                     [[0.05, -0.021113, -0.05, -0.05], [0.05, 0.05, -0.05, 0.05], [-0.023254, -0.05, 0.05, -0.05]],
                     [[-0.05, 0.021113, 0.05, 0.05], [-0.05, -0.05, 0.05, -0.05], [0.023254, 0.05, -0.05, 0.05]]),
        "hub_sum": (22.481529,
                    [[0.706931, -0.25335, -1.281085, -2.0], [2.0, 2.0, -0.777674, 2.0],
                     [-0.279044, -1.295681, 1.624564, -1.031617]],
                    [[-0.706931, 0.25335, 1.281085, 2.0], [-2.0, -2.0, 0.777674, -2.0],
                     [0.279044, 1.295681, -1.624564, 1.031617]]),
        "hub_w": (0.417396,
                  [[0.015907, -0.019513, -0.023545, -0.034688], [0.00536, 0.005227, -0.010095, 0.044222],
                   [-0.015808, -0.042462, 0.032222, -0.020327]],
                  [[-0.015907, 0.019513, 0.023545, 0.034688], [-0.00536, -0.005227, 0.010095, -0.044222],
                   [0.015808, 0.042462, -0.032222, 0.020327]]),
        "l1_mean": (1.701934,
                    [[0.083333, -0.083333, -0.083333, -0.083333], [0.083333, 0.083333, -0.083333, 0.083333],
                     [-0.083333, -0.083333, 0.083333, -0.083333]],
                    [[-0.083333, 0.083333, 0.083333, 0.083333], [-0.083333, -0.083333, 0.083333, -0.083333],
                     [0.083333, 0.083333, -0.083333, 0.083333]]),
        "l1_sum": (20.423212, [[1.0, -1.0, -1.0, -1.0], [1.0, 1.0, -1.0, 1.0], [-1.0, -1.0, 1.0, -1.0]],
                   [[-1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]]),
        "l1_w": (1.604184,
                 [[0.050619, -0.147047, -0.074924, -0.11038], [0.017057, 0.016633, -0.032124, 0.14072],
                  [-0.108161, -0.135118, 0.102533, -0.064683]],
                 [[-0.050619, 0.147047, 0.074924, 0.11038], [-0.017057, -0.016633, 0.032124, -0.14072],
                  [0.108161, 0.135118, -0.102533, 0.064683]]),
        "sl1_bcast": (12.720832,
                      [[0.471287, -0.1689, -0.854057, -1.0], [1.0, 1.0, -0.737202, 1.0],
                       [0.594163, -0.210333, 1.0, -0.347943]],
                      [[-2.065451, -0.620767, 0.591259, 0.347943], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
        "sl1_mean": (1.374357,
                     [[0.083333, -0.030161, -0.083333, -0.083333], [0.083333, 0.083333, -0.083333, 0.083333],
                      [-0.033219, -0.083333, 0.083333, -0.083333]],
                     [[-0.083333, 0.030161, 0.083333, 0.083333], [-0.083333, -0.083333, 0.083333, -0.083333],
                      [0.033219, 0.083333, -0.083333, 0.083333]]),
        "sl1_none": ([[0.249875, 0.032093, 0.781085, 4.283737], [2.554126, 2.395517, 0.302388, 1.939887],
                      [0.038933, 0.795681, 1.124564, 0.531617]],
                     [[0.0, -0.25335, -2.0, -3.0], [4.0, 5.0, -4.666041, 7.0], [-2.232349, -9.0, 10.0, -11.0]],
                     [[-0.0, 0.25335, 2.0, 3.0], [-4.0, -5.0, 4.666041, -7.0], [2.232349, 9.0, -10.0, 11.0]])}


def _loss_inputs():
    rng = np.random.default_rng(2)
    return rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4)), rng.random((3, 4))


LOSS_FNS = {
    "l1_mean": lambda x, t, w: F.l1_loss(x, t), "l1_sum": lambda x, t, w: F.l1_loss(x, t, reduction="sum"),
    "l1_w": lambda x, t, w: F.l1_loss(x, t, weight=w),
    "sl1_mean": lambda x, t, w: F.smooth_l1_loss(x, t, beta=0.7),
    "sl1_none": lambda x, t, w: F.smooth_l1_loss(x, t, reduction="none"),
    "sl1_bcast": lambda x, t, w: F.smooth_l1_loss(x, t[:1], reduction="sum", beta=1.5),
    "hub_mean": lambda x, t, w: F.huber_loss(x, t, delta=0.6),
    "hub_sum": lambda x, t, w: F.huber_loss(x, t, reduction="sum", delta=2.0),
    "hub_w": lambda x, t, w: F.huber_loss(x, t, delta=0.6, weight=w),
}


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("name", sorted(LOSS_FNS))
def test_loss_values_and_grads_as_pytorch(name):
    X, T, W = _loss_inputs()
    x, t, w = t64(X, True), t64(T, True), t64(W)
    y = LOSS_FNS[name](x, t, w)
    y.backward(engine.ones_like(y) if y.ndim == 0 else engine.arange(y.numel(), dtype=D).reshape(tuple(y.shape)))
    want_y, want_gx, want_gt = LOSS[name]
    np.testing.assert_allclose(y.detach().numpy(), want_y, atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), want_gx, atol=2e-6)
    np.testing.assert_allclose(t.grad.numpy(), want_gt, atol=2e-6)
    gradcheck(lambda x, t: LOSS_FNS[name](x, t, w), [t64(X, True), t64(T, True)])
    gradgradcheck(lambda x, t: LOSS_FNS[name](x, t, w) * 1.5, [t64(X, True), t64(T, True)])


def test_loss_grad_fns_modules_and_errors_as_pytorch():
    x, t = engine.randn(2, 3, requires_grad=True), engine.randn(2, 3, requires_grad=True)
    for red, enum in (("mean", 1), ("sum", 2), ("none", 0)):
        s = F.smooth_l1_loss(x, t, reduction=red, beta=0.5).grad_fn
        assert s.name() == "SmoothL1LossBackward0"
        assert_saved(s, {"beta": 0.5, "reduction": enum, "self": ((2, 3), "float32", 24),
                         "target": ((2, 3), "float32", 24)})
        h = F.huber_loss(x, t, reduction=red, delta=0.5).grad_fn
        assert h.name() == "HuberLossBackward0"
        assert_saved(h, {"delta": 0.5, "reduction": enum, "self": ((2, 3), "float32", 24),
                         "target": ((2, 3), "float32", 24)})
    # l1_loss is composed: MeanBackward0 / SumBackward0 -> AbsBackward0 (keeps the difference) -> SubBackward0
    m = F.l1_loss(x, t).grad_fn
    assert m.name() == "MeanBackward0" and m.next_functions[0][0].name() == "AbsBackward0"
    assert m.next_functions[0][0].next_functions[0][0].name() == "SubBackward0"
    assert F.l1_loss(x, t, reduction="none").grad_fn.name() == "AbsBackward0"
    assert F.smooth_l1_loss(x, t, beta=0.0).grad_fn.name() == "MeanBackward0"    # beta 0 is l1_loss
    assert [repr(m) for m in (nn.L1Loss(), nn.SmoothL1Loss(beta=0.5), nn.HuberLoss(delta=2.0))] == \
        ["L1Loss()", "SmoothL1Loss()", "HuberLoss()"]
    assert nn.HuberLoss().delta == 1.0 and nn.SmoothL1Loss(beta=0.5).beta == 0.5
    assert nn.L1Loss(reduction="sum")(engine.tensor([1.0, -2.0]), engine.tensor([0.0, 0.0])).item() == 3.0
    with pytest.warns(UserWarning, match=r"^Using a target size \(torch.Size\(\[1, 3\]\)\) that is different to the "
                                         r"input size \(torch.Size\(\[2, 3\]\)\)"):
        F.l1_loss(x, engine.randn(1, 3))
    cases = [
        (lambda: F.smooth_l1_loss(x, t, beta=-1.0), RuntimeError,
         "smooth_l1_loss does not support negative values for beta."),
        (lambda: F.huber_loss(x, t, delta=0.0), RuntimeError, "huber_loss does not support non-positive values for "
                                                                "delta."),
        (lambda: F.l1_loss(x, t, reduction="foo"), ValueError, "foo is not a valid value for reduction"),
        (lambda: F.l1_loss(x, t, weight=engine.ones(3)), ValueError, "Weights and input must have the same size."),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as e:
            fn()
        assert str(e.value) == msg
    with pytest.warns(UserWarning), pytest.raises(RuntimeError) as e:
        F.l1_loss(x, engine.randn(3, 3))
    assert str(e.value) == "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"


# ---- pad, roll, scatter, conv1d, cosine_similarity, normalize, std_mean, var_mean -------------------
# rng = np.random.default_rng(4); X = rng.standard_normal((2, 3, 5)); W = rng.standard_normal((4, 3, 2))
# B = rng.standard_normal(4); Y = rng.standard_normal((2, 3, 5)); x, y = tensors of X, Y requiring grad
# o = MORE_FNS[name](x, y); o.backward(torch.arange(o.numel()).double().reshape(o.shape) / 7)
# -> name: (o, x.grad, y.grad or None)
MORE = {"conv1d": ([[[0.948781, 0.348512, 2.264997], [2.41292, 2.398048, 3.071264], [-1.053367, -0.597451, -0.622224],
                     [0.593222, -1.569273, 2.705805]],
                    [[-1.05448, 2.272038, 0.42872], [2.785221, 0.476392, 1.125832], [0.240183, 0.742717, -1.178678],
                     [2.034524, -2.543598, -0.015198]]],
                   [[[0.0, 1.138002, 0.0, 1.149522, 0.0], [0.0, -1.876526, 0.0, -2.26401, 0.0],
                     [0.0, -1.368755, 0.0, -1.212604, 0.0]],
                    [[0.0, 1.276238, 0.0, 1.287758, 0.0], [0.0, -6.526336, 0.0, -6.91382, 0.0],
                     [0.0, 0.505058, 0.0, 0.661209, 0.0]]],
                   None),
        "conv1d_same": ([[[1.209268, 2.081943, -1.667662, 0.641544, -0.061555],
                          [1.193793, 0.117341, 1.829665, 2.585695, -2.884079],
                          [0.673363, -0.892254, -0.902604, 1.746006, 1.327231],
                          [-2.342542, -2.572348, 1.819959, 2.82682, -2.024938]],
                         [[-1.19492, 1.363261, -0.498985, -0.441617, -2.276386],
                          [3.32697, -3.219653, 1.092175, -0.889263, -3.611715],
                          [0.916374, 1.122841, -0.710669, 0.085081, -0.053912],
                          [7.232663, -3.800429, 2.838646, 0.519944, -0.221858]]],
                        [[[4.081542, 1.70963, 1.72115, 1.73267, 1.744189],
                          [-2.328296, -2.806723, -3.194208, -3.581692, -3.969176],
                          [-1.847935, -2.256085, -2.099933, -1.943782, -1.787631]],
                         [[9.692742, 1.940024, 1.951543, 1.963063, 1.974583],
                          [-11.952901, -10.556406, -10.94389, -11.331375, -11.718859],
                          [-2.603147, 0.866937, 1.023088, 1.179239, 1.33539]]],
                        None),
        "cos": ([[0.078, 0.69348, 0.027444], [0.843808, 0.627499, -0.624079]],
                [[[-0.0, 0.0, 0.0, 0.0, 0.0], [0.008953, 0.019219, 0.011233, 0.001638, 0.053746],
                  [-0.035327, -0.059241, 0.092252, -0.006934, -0.050891]],
                 [[0.028441, 0.045454, 0.022641, -0.03538, 0.01546],
                  [-0.115834, -0.138701, -0.151138, 0.003478, -0.07513],
                  [0.108947, -0.084058, 0.038977, -0.011678, -0.114682]]],
                [[[-0.0, 0.0, 0.0, 0.0, 0.0], [-0.006873, -0.030874, -0.004538, -0.043573, -0.034069],
                  [0.011392, 0.072317, 0.012219, 0.02316, -0.066153]],
                 [[0.002325, -0.08511, -0.009285, 0.036922, -0.032637],
                  [0.001549, 0.00956, 0.08572, -0.00883, 0.130174],
                  [-0.019378, -0.055285, -0.018723, 0.03086, -0.180372]]]),
        "cos_bcast": ([[0.076894, -0.924611, 0.551822, 0.902873, 0.070796],
                       [0.197591, -0.119097, -0.236802, -0.209524, 0.617013]],
                      [[[-0.0, 0.003219, -0.027383, 0.05225, 0.149144],
                        [0.0, -0.029673, 0.015568, -0.006217, 0.153721],
                        [0.0, -0.011384, 0.136568, -0.087043, -0.139064]],
                       [[-0.133263, 0.008797, 0.378022, 0.629172, 0.343384],
                        [0.0583, -0.023157, 0.137775, -1.149182, 0.128602],
                        [-0.184995, -0.418479, 0.525624, 0.104513, -0.052755]]],
                      [[[0.688055, -0.622989, 0.471909, -0.306386, -0.639619],
                        [-0.213625, -0.267063, 0.131388, -0.33781, 0.126605],
                        [-0.360477, -0.079593, -0.214612, 0.981383, -0.444214]],
                       [[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]]),
        "normalize": ([[[-0.940522, -0.102565, 0.978605, 0.363876, -0.735377],
                        [-0.007508, -0.365995, 0.087425, -0.887783, 0.108318],
                        [0.33965, 0.924948, 0.186251, 0.281842, -0.668945]],
                       [[0.75712, -0.943621, 0.750677, -0.388008, -0.322433],
                        [-0.220571, -0.331025, 0.259029, -0.129443, 0.542818],
                        [-0.614912, -0.001518, -0.607773, 0.912521, -0.775491]]],
                      [[[0.651233, 0.151605, -0.226996, 0.30393, -0.277337],
                        [1.035899, 0.744908, 0.552909, 0.466603, 0.654585],
                        [1.826221, 0.311566, 0.933157, 1.077376, 0.410872]],
                       [[1.026543, -0.340839, 1.504826, 4.040615, 0.730903],
                        [0.87101, 0.963218, 2.089592, 4.20345, 1.69788],
                        [0.951514, 1.827247, 2.749223, 2.314353, 0.884564]]],
                      None),
        "normalize_p1": ([[[-0.136051, -0.03647, 0.347276, 0.137587, -0.342616],
                           [-0.00198, -0.237306, 0.056573, -0.612116, 0.092024],
                           [0.056975, 0.381386, 0.076645, 0.12358, -0.361414]],
                          [[0.347604, -0.295591, 0.170012, -0.050905, -0.135887],
                           [-0.198807, -0.203572, 0.11517, -0.03334, 0.449112],
                           [-0.325629, -0.000548, -0.158766, 0.138088, -0.376968]]],
                         [[[-0.008934, 0.020885, 0.068573, 0.098392, 0.110342],
                           [-0.005788, 0.048587, 0.658288, 0.157337, 0.767038],
                           [0.268629, 0.303208, 0.337787, 0.372366, 0.56127]],
                          [[0.33337, 0.349975, 0.377456, 0.394062, 0.416105],
                           [1.051352, 1.094627, 0.766214, 1.181178, 0.852765],
                           [0.139655, 0.16508, 0.190506, 1.207893, 0.241356]]],
                         None),
        "pad_const": ([[[0.5, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, 0.5, 0.5],
                        [0.5, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, 0.5, 0.5],
                        [0.5, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, 0.5, 0.5],
                        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]],
                       [[0.5, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647, 0.5, 0.5],
                        [0.5, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571, 0.5, 0.5],
                        [0.5, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, 0.5, 0.5],
                        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]]],
                      [[[0.142857, 0.285714, 0.428571, 0.571429, 0.714286],
                        [1.285714, 1.428571, 1.571429, 1.714286, 1.857143],
                        [2.428571, 2.571429, 2.714286, 2.857143, 3.0]],
                       [[4.714286, 4.857143, 5.0, 5.142857, 5.285714], [5.857143, 6.0, 6.142857, 6.285714, 6.428571],
                        [7.0, 7.142857, 7.285714, 7.428571, 7.571429]]],
                      None),
        "pad_crop": ([[[-0.174717, 1.663724, 0.659148, -1.641397, 0.0, 0.0],
                       [-0.623464, 0.148632, -1.608188, 0.241772, 0.0, 0.0],
                       [1.575626, 0.316645, 0.510547, -1.493117, 0.0, 0.0]],
                      [[-1.915646, 1.101802, -0.329904, -0.880647, 0.0, 0.0],
                       [-0.672015, 0.380189, -0.110059, 1.482571, 0.0, 0.0],
                       [-0.003081, -0.892056, 0.775872, -2.11806, 0.0, 0.0]]],
                     [[[0.0, 0.0, 0.142857, 0.285714, 0.428571], [0.0, 0.857143, 1.0, 1.142857, 1.285714],
                       [0.0, 1.714286, 1.857143, 2.0, 2.142857]],
                      [[0.0, 2.571429, 2.714286, 2.857143, 3.0], [0.0, 3.428571, 3.571429, 3.714286, 3.857143],
                       [0.0, 4.285714, 4.428571, 4.571429, 4.714286]]],
                     None),
        "pad_reflect1": ([[[1.663724, -0.174717, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, 0.659148,
                            1.663724, -0.174717],
                           [0.148632, -0.623464, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, -1.608188,
                            0.148632, -0.623464],
                           [0.316645, 1.575626, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, 0.510547, 0.316645,
                            1.575626]],
                          [[1.101802, -1.915646, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647, -0.329904,
                            1.101802, -1.915646],
                           [0.380189, -0.672015, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571, -0.110059,
                            0.380189, -0.672015],
                           [-0.892056, -0.003081, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, 0.775872,
                            -0.892056, -0.003081]]],
                         [[[0.285714, 1.857143, 1.714286, 1.714286, 0.857143],
                           [1.714286, 6.142857, 6.0, 4.571429, 2.285714],
                           [3.142857, 10.428571, 10.285714, 7.428571, 3.714286]],
                          [[4.571429, 14.714286, 14.571429, 10.285714, 5.142857],
                           [6.0, 19.0, 18.857143, 13.142857, 6.571429],
                           [7.428571, 23.285714, 23.142857, 16.0, 8.0]]],
                         None),
        "pad_reflect2": ([[[1.575626, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, 0.510547, 0.316645],
                           [-0.623464, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, -1.608188, 0.148632],
                           [-0.174717, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, 0.659148, 1.663724],
                           [-0.623464, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, -1.608188, 0.148632],
                           [1.575626, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, 0.510547, 0.316645],
                           [-0.623464, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, -1.608188, 0.148632]],
                          [[-0.003081, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, 0.775872, -0.892056],
                           [-0.672015, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571, -0.110059, 0.380189],
                           [-1.915646, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647, -0.329904, 1.101802],
                           [-0.672015, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571, -0.110059, 0.380189],
                           [-0.003081, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, 0.775872, -0.892056],
                           [-0.672015, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571, -0.110059, 0.380189]]],
                         [[[2.428571, 4.857143, 6.0, 6.0, 3.0],
                           [10.714286, 21.428571, 24.857143, 24.857143, 12.428571],
                           [4.857143, 9.714286, 12.0, 12.0, 6.0]],
                          [[9.285714, 18.571429, 19.714286, 19.714286, 9.857143],
                           [31.285714, 62.571429, 66.0, 66.0, 33.0],
                           [18.571429, 37.142857, 39.428571, 39.428571, 19.714286]]],
                         None),
        "pad_replicate2": ([[[-0.651791, -0.651791, -0.651791, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397,
                              -1.641397],
                             [-0.651791, -0.651791, -0.651791, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397,
                              -1.641397],
                             [-0.005203, -0.005203, -0.005203, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772,
                              0.241772],
                             [0.235381, 0.235381, 0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117,
                              -1.493117],
                             [0.235381, 0.235381, 0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117,
                              -1.493117],
                             [0.235381, 0.235381, 0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117,
                              -1.493117]],
                            [[2.252729, 2.252729, 2.252729, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647,
                              -0.880647],
                             [2.252729, 2.252729, 2.252729, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647,
                              -0.880647],
                             [-0.656285, -0.656285, -0.656285, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571,
                              1.482571],
                             [-1.829604, -1.829604, -1.829604, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806,
                              -2.11806],
                             [-1.829604, -1.829604, -1.829604, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806,
                              -2.11806],
                             [-1.829604, -1.829604, -1.829604, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806,
                              -2.11806]]],
                           [[[6.857143, 2.428571, 2.714286, 3.0, 6.857143],
                             [11.142857, 3.142857, 3.285714, 3.428571, 7.285714],
                             [64.285714, 17.142857, 17.571429, 18.0, 37.285714]],
                            [[68.571429, 17.857143, 18.142857, 18.428571, 37.714286],
                             [42.0, 10.857143, 11.0, 11.142857, 22.714286],
                             [156.857143, 40.285714, 40.714286, 41.142857, 83.571429]]],
                           None),
        "pad_replicate3": ([[[[-0.651791, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, -1.641397],
                              [-0.651791, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, -1.641397],
                              [-0.005203, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, 0.241772],
                              [0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, -1.493117],
                              [0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, -1.493117],
                              [0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, -1.493117]],
                             [[-0.651791, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, -1.641397],
                              [-0.651791, -0.651791, -0.174717, 1.663724, 0.659148, -1.641397, -1.641397],
                              [-0.005203, -0.005203, -0.623464, 0.148632, -1.608188, 0.241772, 0.241772],
                              [0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, -1.493117],
                              [0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, -1.493117],
                              [0.235381, 0.235381, 1.575626, 0.316645, 0.510547, -1.493117, -1.493117]],
                             [[2.252729, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647, -0.880647],
                              [2.252729, 2.252729, -1.915646, 1.101802, -0.329904, -0.880647, -0.880647],
                              [-0.656285, -0.656285, -0.672015, 0.380189, -0.110059, 1.482571, 1.482571],
                              [-1.829604, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, -2.11806],
                              [-1.829604, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, -2.11806],
                              [-1.829604, -1.829604, -0.003081, -0.892056, 0.775872, -2.11806, -2.11806]]]],
                           [[[28.571429, 15.142857, 15.714286, 16.285714, 34.285714],
                             [20.285714, 10.571429, 10.857143, 11.142857, 23.142857],
                             [84.857143, 43.714286, 44.571429, 45.428571, 93.428571]],
                            [[50.285714, 25.571429, 25.857143, 26.142857, 53.142857],
                             [28.142857, 14.285714, 14.428571, 14.571429, 29.571429],
                             [96.428571, 48.857143, 49.285714, 49.714286, 100.714286]]],
                           None),
        "roll": ([[[1.101802, -0.329904, -0.880647, 2.252729, -1.915646],
                   [0.380189, -0.110059, 1.482571, -0.656285, -0.672015],
                   [-0.892056, 0.775872, -2.11806, -1.829604, -0.003081]],
                  [[1.663724, 0.659148, -1.641397, -0.651791, -0.174717],
                   [0.148632, -1.608188, 0.241772, -0.005203, -0.623464],
                   [0.316645, 0.510547, -1.493117, 0.235381, 1.575626]]],
                 [[[2.571429, 2.714286, 2.142857, 2.285714, 2.428571], [3.285714, 3.428571, 2.857143, 3.0, 3.142857],
                   [4.0, 4.142857, 3.571429, 3.714286, 3.857143]],
                  [[0.428571, 0.571429, 0.0, 0.142857, 0.285714], [1.142857, 1.285714, 0.714286, 0.857143, 1.0],
                   [1.857143, 2.0, 1.428571, 1.571429, 1.714286]]],
                 None),
        "roll_flat": ([[[-0.003081, -0.892056, 0.775872, -2.11806, -0.651791],
                        [-0.174717, 1.663724, 0.659148, -1.641397, -0.005203],
                        [-0.623464, 0.148632, -1.608188, 0.241772, 0.235381]],
                       [[1.575626, 0.316645, 0.510547, -1.493117, 2.252729],
                        [-1.915646, 1.101802, -0.329904, -0.880647, -0.656285],
                        [-0.672015, 0.380189, -0.110059, 1.482571, -1.829604]]],
                      [[[0.571429, 0.714286, 0.857143, 1.0, 1.142857],
                        [1.285714, 1.428571, 1.571429, 1.714286, 1.857143],
                        [2.0, 2.142857, 2.285714, 2.428571, 2.571429]],
                       [[2.714286, 2.857143, 3.0, 3.142857, 3.285714], [3.428571, 3.571429, 3.714286, 3.857143, 4.0],
                        [4.142857, 0.0, 0.142857, 0.285714, 0.428571]]],
                      None),
        "scatter_src": ([[[0.169416, 0.847088, 1.663724, 0.659148, -0.352457],
                          [-0.005203, -0.623464, -0.019613, 0.316479, 0.241772],
                          [0.235381, 1.575626, 0.316645, 0.510547, -1.493117]],
                         [[1.85227, -0.329713, 1.062076, -0.329904, -0.880647],
                          [-0.976435, -0.672015, 0.380189, -1.688529, -1.908939],
                          [-1.829604, -0.003081, -0.892056, 0.775872, -2.11806]]],
                        [[[0.0, 0.0, 0.285714, 0.428571, 0.0], [0.714286, 0.857143, 0.0, 0.0, 1.285714],
                          [1.428571, 1.571429, 1.714286, 1.857143, 2.0]],
                         [[0.0, 0.0, 0.0, 2.571429, 2.714286], [0.0, 3.0, 3.142857, 0.0, 0.0],
                          [3.571429, 3.714286, 3.857143, 4.0, 4.142857]]],
                        [[[0.571429, 0.0, 0.142857, 0.0, 0.0], [1.0, 1.0, 1.142857, 0.0, 0.0],
                          [0.0, 0.0, 0.0, 0.0, 0.0]],
                         [[2.142857, 2.285714, 2.428571, 0.0, 0.0], [3.285714, 3.428571, 2.857143, 0.0, 0.0],
                          [0.0, 0.0, 0.0, 0.0, 0.0]]]),
        "scatter_val": ([[[-0.651791, -3.0, 1.663724, -3.0, -1.641397],
                          [-0.005203, -0.623464, -3.0, -1.608188, 0.241772],
                          [-3.0, 1.575626, 0.316645, 0.510547, -3.0]],
                         [[2.252729, -1.915646, -3.0, -0.329904, -3.0], [-3.0, -3.0, 0.380189, -0.110059, 1.482571],
                          [-1.829604, -0.003081, -0.892056, -3.0, -2.11806]]],
                        [[[0.0, 0.0, 0.285714, 0.0, 0.571429], [0.714286, 0.857143, 0.0, 1.142857, 1.285714],
                          [0.0, 1.571429, 1.714286, 1.857143, 0.0]],
                         [[2.142857, 2.285714, 0.0, 2.571429, 0.0], [0.0, 0.0, 3.142857, 3.285714, 3.428571],
                          [3.571429, 3.714286, 3.857143, 0.0, 4.142857]]],
                        None),
        "std_mean": ([[0.177733, 1.680268, 2.249831, 0.975999, -0.881423],
                      [1.946325, -0.756595, 1.402811, 0.809309, 0.818657]],
                     [[[0.0, 0.068568, 0.354587, 0.421773, 0.196179], [0.0, 0.040982, 0.09397, 0.038703, 0.710039],
                       [0.0, 0.176164, 0.122871, 0.396667, 0.23664]],
                      [[0.872193, 0.10687, 1.114977, 0.330555, 0.725273],
                       [0.377878, 0.656018, 0.757573, 0.545164, 1.555709],
                       [0.178501, 0.951398, 0.12745, 1.409996, 0.290446]]],
                     None),
        "var_mean": ([[[0.014323], [-0.086607], [-0.394624]]],
                     [[[0.0, 0.0, 0.0, 0.0, 0.0], [0.008144, 0.010656, 0.007519, 0.014657, 0.00714],
                       [0.02978, 0.007403, 0.028423, 0.025186, 0.05864]],
                      [[0.0, 0.0, 0.0, 0.0, 0.0], [0.010789, 0.010853, 0.006578, 0.00857, 0.002099],
                       [0.064258, 0.033762, 0.048604, 0.020756, 0.069074]]],
                     None)}


def _more_inputs():
    rng = np.random.default_rng(4)
    return (rng.standard_normal((2, 3, 5)), rng.standard_normal((4, 3, 2)), rng.standard_normal(4),
            rng.standard_normal((2, 3, 5)))


_, _W, _B, _ = _more_inputs()
MORE_FNS = {
    "pad_const": lambda x, y: F.pad(x, (1, 2, 0, 1), value=0.5),
    "pad_crop": lambda x, y: F.pad(x, (-1, 2)),
    "pad_reflect1": lambda x, y: F.pad(x, (2, 3), mode="reflect"),
    "pad_reflect2": lambda x, y: F.pad(x, (1, 2, 2, 1), mode="reflect"),
    "pad_replicate2": lambda x, y: F.pad(x, (3, 1, 1, 2), mode="replicate"),
    "pad_replicate3": lambda x, y: F.pad(x.reshape(1, 2, 3, 5), (1, 1, 1, 2, 1, 0), mode="replicate"),
    "roll": lambda x, y: x.roll((1, -2), (0, 2)),
    "roll_flat": lambda x, y: x.roll(4),
    "scatter_src": lambda x, y: x.scatter(2, engine.tensor([[[4, 0, 1], [2, 2, 3]], [[0, 1, 2], [3, 4, 0]]]),
                                          y[:, :2, :3] * 1),
    "scatter_val": lambda x, y: x.scatter(1, engine.tensor([[[2, 0, 1, 0, 2]], [[1, 1, 0, 2, 0]]]), -3.0),
    "conv1d": lambda x, y: F.conv1d(x, t64(_W), t64(_B), stride=2, padding=1, dilation=2),
    "conv1d_same": lambda x, y: F.conv1d(x, t64(_W), padding="same"),
    "cos": lambda x, y: F.cosine_similarity(x, y, dim=2),
    "cos_bcast": lambda x, y: F.cosine_similarity(x, y[:1], dim=1),
    "normalize": lambda x, y: F.normalize(x, dim=1),
    "normalize_p1": lambda x, y: F.normalize(x, p=1, dim=2),
    "std_mean": lambda x, y: engine.std_mean(x, 1)[0] + engine.std_mean(x, 1)[1] * 2,
    "var_mean": lambda x, y: (engine.var_mean(x, (0, 2), correction=0, keepdim=True)[0]
                              * engine.var_mean(x, (0, 2), correction=0, keepdim=True)[1]),
}


@pytest.mark.parametrize("name", sorted(MORE_FNS))
def test_more_functions_values_and_grads_as_pytorch(name):
    X, _, _, Y = _more_inputs()
    x, y = t64(X, True), t64(Y, True)
    o = MORE_FNS[name](x, y)
    o.backward(engine.arange(o.numel(), dtype=D).reshape(tuple(o.shape)) / 7)
    want_o, want_gx, want_gy = MORE[name]
    np.testing.assert_allclose(o.detach().numpy(), want_o, atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), want_gx, atol=2e-6)
    assert (y.grad is None) == (want_gy is None)
    if want_gy is not None:
        np.testing.assert_allclose(y.grad.numpy(), want_gy, atol=2e-6)
    small_x, small_y = t64(X[:, :, :4] + 0.1, True), t64(Y[:, :, :4], True)
    if name.startswith(("scatter", "roll", "pad", "conv1d")):
        small_x, small_y = t64(X, True), t64(Y, True)
    if name == "scatter_src":   # two writes to one place: the gradient is PyTorch's, not the finite difference's
        small_x, small_y = t64(X, True), t64(Y, True)
        name = "scatter_src_unique"
    fn = MORE_FNS[name] if name in MORE_FNS else _scatter_unique
    gradcheck(fn, [small_x, small_y])
    gradgradcheck(lambda x, y: fn(x, y) * fn(x, y), [small_x, small_y])


def _scatter_unique(x, y):
    return x.scatter(2, engine.tensor([[[4, 0, 1], [2, 1, 3]], [[0, 1, 2], [3, 4, 0]]]), y[:, :2, :3] * 1)


def test_more_grad_fns_and_saved_tensors_as_pytorch():
    x, y = engine.randn(2, 3, requires_grad=True), engine.randn(2, 3, requires_grad=True)
    p = F.pad(x, (1, 2))
    assert p.grad_fn.name() == "ConstantPadNdBackward0" and p.grad_fn.saved_tensors_info == []
    assert p.grad_fn._saved_pad == (1, 2)
    r = F.pad(x.reshape(1, 2, 3), (1, 2), mode="reflect")
    assert r.grad_fn.name() == "ReflectionPad1DBackward0"
    assert_saved(r.grad_fn, {"padding": (1, 2), "self": ((1, 2, 3), "float32", 24)})
    assert F.pad(x.reshape(1, 1, 2, 3), (1, 1, 1, 1), mode="reflect").grad_fn.name() == "ReflectionPad2DBackward0"
    assert F.pad(x.reshape(1, 2, 3), (1, 2), mode="replicate").grad_fn.name() == "ReplicationPad1DBackward0"
    ro = x.roll(1, 1).grad_fn
    assert ro.name() == "RollBackward0" and ro._saved_dims == (1,) and ro._saved_shifts == (1,)
    assert x.roll(1).grad_fn._saved_dims == ()
    idx = engine.tensor([[0, 1, 2], [2, 0, 1]])
    s0 = x.scatter(1, idx, y).grad_fn
    assert s0.name() == "ScatterBackward0" and len(s0.next_functions) == 2 and s0._saved_dim == 1
    assert_saved(s0, {"index": ((2, 3), "int64", 48)})
    s1 = x.scatter(1, idx, 2.0).grad_fn
    assert s1.name() == "ScatterBackward1" and len(s1.next_functions) == 1
    assert_saved(s1, {"index": ((2, 3), "int64", 48)})
    w = engine.randn(4, 3, 2, requires_grad=True)
    c = F.conv1d(engine.randn(2, 3, 5, requires_grad=True), w)
    assert c.grad_fn.name() == "ConvolutionBackward0"
    assert_saved(c.grad_fn, {"input": ((2, 3, 5), "float32", 120), "weight": ((4, 3, 2), "float32", 96)})
    # cosine_similarity: SumBackward1 -> MulBackward0 -> DivBackward0 (x / clamped norm) -> CloneBackward0 ->
    # LinalgVectorNormBackward0, as PyTorch's graph
    cs = F.cosine_similarity(x, y).grad_fn
    assert cs.name() == "SumBackward1" and cs.next_functions[0][0].name() == "MulBackward0"
    div = cs.next_functions[0][0].next_functions[0][0]
    assert div.name() == "DivBackward0" and div.next_functions[1][0].name() == "CloneBackward0"
    assert div.next_functions[1][0].next_functions[0][0].name() == "LinalgVectorNormBackward0"
    assert tuple(div._saved_other.shape) == (2, 1)
    nz = F.normalize(x).grad_fn
    assert nz.name() == "DivBackward0" and nz.next_functions[1][0].name() == "ExpandBackward0"
    clamp = nz.next_functions[1][0].next_functions[0][0]
    assert clamp.name() == "ClampMinBackward0" and clamp._saved_min == 1e-12
    assert F.cosine_similarity(engine.zeros(1, 3), engine.ones(1, 3)).tolist() == [0.0]
    assert F.normalize(engine.zeros(1, 3)).tolist() == [[0.0, 0.0, 0.0]]
    sd, mn = engine.std_mean(x, 1)
    assert sd.grad_fn is mn.grad_fn and sd.grad_fn.name() == "StdMeanBackward0" and tuple(mn.shape) == (2,)
    assert (sd._output_nr, mn._output_nr) == (0, 1) and sd.grad_fn._saved_dim == (1,)
    assert sd.grad_fn._saved_correction == 1 and sd.grad_fn._saved_keepdim is False
    assert sd.grad_fn._saved_result0.tolist() == sd.tolist() and sd.grad_fn._saved_self is x
    v, m = engine.var_mean(x)
    assert v.ndim == 0 and m.ndim == 0 and v.grad_fn.name() == "VarMeanBackward0" and m.grad_fn is v.grad_fn
    assert [name for name, _ in v.grad_fn.saved_tensors_info] == ["self"]


@pytest.mark.parametrize("which", ["std_mean", "var_mean"])
@pytest.mark.parametrize("kw", [dict(dim=1), dict(dim=(0, 2), keepdim=True, correction=0), dict()])
def test_std_mean_var_mean_gradients(which, kw):
    x = engine.tensor(np.random.default_rng(3).standard_normal((2, 3, 4)), dtype=engine.float64, requires_grad=True)
    fn = getattr(engine, which)
    gradcheck(lambda a: fn(a, **kw), [x])                       # both outputs at once
    gradcheck(lambda a: fn(a, **kw)[0], [x])                    # only the spread: the mean's gradient is None
    gradcheck(lambda a: fn(a, **kw)[1] * 3.0, [x])              # only the mean
    gradgradcheck(lambda a: fn(a, **kw)[0] * fn(a, **kw)[1], [x])
    spread = engine.std if which == "std_mean" else engine.var
    s, m = fn(x, **kw)
    np.testing.assert_allclose(s.detach().numpy(), spread(x, **kw).detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(m.detach().numpy(), x.mean(kw.get("dim", tuple(range(3))),
                                                           keepdim=kw.get("keepdim", False)).detach().numpy(), rtol=1e-14)


def test_more_modules_and_errors_as_pytorch():
    assert repr(nn.Conv1d(3, 4, 2)) == "Conv1d(3, 4, kernel_size=(2,), stride=(1,))"
    assert repr(nn.Conv1d(3, 4, 3, stride=2, padding=1, bias=False)) == \
        "Conv1d(3, 4, kernel_size=(3,), stride=(2,), padding=(1,), bias=False)"
    assert tuple(nn.Conv1d(3, 4, 3, padding=1)(engine.randn(2, 3, 7)).shape) == (2, 4, 7)
    assert tuple(nn.Conv1d(3, 4, 3)(engine.randn(3, 7)).shape) == (4, 5)        # unbatched (C, L)
    assert repr(nn.CosineSimilarity()) == "CosineSimilarity()" and nn.CosineSimilarity().dim == 1
    x = engine.randn(2, 3)
    idx = engine.tensor([[0, 1, 2], [2, 0, 1]])
    cases = [
        (lambda: F.pad(x, (1,)), RuntimeError, "Padding length must be divisible by 2"),
        (lambda: F.pad(x, (1, 1, 1, 1, 1, 1)), RuntimeError, "Padding length should be less than or equal to two "
         "times the input dimension but got padding length 6 and input of dimension 2"),
        (lambda: F.pad(x, (-2, -2)), RuntimeError, "narrow(): length must be non-negative."),
        (lambda: F.pad(x.reshape(1, 2, 3), (3, 3), mode="reflect"), RuntimeError, "Argument #4: Padding size should "
         "be less than the corresponding input dimension, but got: padding (3, 3) at dimension 2 of input [1, 2, 3]"),
        (lambda: F.pad(x.reshape(1, 2, 3), (1, 1), mode="foo"), NotImplementedError, "Unrecognised padding mode foo"),
        (lambda: F.pad(x.reshape(1, 2, 3), (1, 1), mode="reflect", value=2.0), RuntimeError,
         "Padding mode \"reflect\" doesn't take in value argument"),
        (lambda: x.scatter(1, idx[0], 1.0), RuntimeError,
         "Index tensor must have the same number of dimensions as self tensor"),
        (lambda: x.scatter(1, idx + 5, 1.0), RuntimeError, "index 5 is out of bounds for dimension 1 with size 3"),
        (lambda: x.scatter(1, idx, engine.randn(1, 2)), RuntimeError, "Expected index [2, 3] to be no larger than "
         "self [2, 3] apart from dimension 1 and to be no larger size than src [1, 2]"),
        (lambda: x.scatter(1, idx, engine.randn(2, 3).double()), RuntimeError,
         "scatter(): Expected self.dtype to be equal to src.dtype"),
        (lambda: x.scatter(0, engine.tensor([[0, 1, 2, 1]]), 1.0), RuntimeError,
         "Expected index [1, 4] to be no larger than self [2, 3] apart from dimension 0"),
        (lambda: x.roll((1, 2), (0,)), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1"),
        (lambda: x.roll((1, 2)), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:0"),
        (lambda: F.conv1d(engine.randn(2, 3, 5), engine.randn(4, 2, 2)), RuntimeError, "Given groups=1, weight of "
         "size [4, 2, 2], expected input[2, 3, 5] to have 2 channels, but got 3 channels instead"),
        (lambda: F.conv1d(engine.randn(2, 3, 5, 5), engine.randn(4, 3, 2)), RuntimeError,
         "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [2, 3, 5, 5]"),
        (lambda: F.cosine_similarity(engine.randn(2, 3), engine.randn(3, 3)), RuntimeError,
         "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as e:
            fn()
        assert str(e.value) == msg
    assert engine.roll(engine.arange(6).reshape(2, 3), -1).tolist() == [[1, 2, 3], [4, 5, 0]]
    assert engine.roll(engine.arange(6).reshape(2, 3), (1, -1), (0, 1)).tolist() == [[4, 5, 3], [1, 2, 0]]
    y = engine.zeros(2, 3)
    assert y.scatter_(1, idx, engine.ones(2, 3) * 2) is y and y.tolist() == [[2.0] * 3] * 2 and y._version == 1


# ---- draws: normal, bernoulli, multinomial (glassgrad's generator; the same seed, the same draws) -----
def test_normal_draws_shapes_seeds_and_zero_gradients():
    engine.manual_seed(7)
    a = engine.normal(engine.zeros(2, 3), 2.0)
    engine.manual_seed(7)
    b = engine.normal(engine.zeros(2, 3), 2.0)
    assert a.tolist() == b.tolist() and a.dtype is engine.float32 and tuple(a.shape) == (2, 3)
    engine.manual_seed(0)
    big = engine.normal(engine.full((20000,), 3.0), engine.full((20000,), 0.5))
    assert abs(big.mean().item() - 3.0) < 0.02 and abs(big.std().item() - 0.5) < 0.02
    assert tuple(engine.normal(2.0, 3.0, size=(4, 5)).shape) == (4, 5)
    assert tuple(engine.normal(engine.zeros(2, 3), engine.ones(3)).shape) == (2, 3)
    m, s = engine.zeros(3, requires_grad=True), engine.ones(3, requires_grad=True)
    y = engine.normal(m, s)
    assert y.grad_fn.name() == "NormalBackward3"
    y.sum().backward()
    assert m.grad.tolist() == [0.0, 0.0, 0.0] and s.grad.tolist() == [0.0, 0.0, 0.0]
    assert engine.normal(m, 2.0).grad_fn.name() == "NormalBackward1"
    assert engine.normal(0.0, s).grad_fn.name() == "NormalBackward2"
    with pytest.raises(RuntimeError, match=r"^normal expects std >= 0.0, but found std -1$"):
        engine.normal(engine.zeros(2), -1.0)
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1$"):
        engine.normal(engine.zeros(2, 3), engine.ones(4))


def test_bernoulli_and_multinomial_draws():
    engine.manual_seed(1)
    p = engine.full((10000,), 0.3)
    b = engine.bernoulli(p)
    assert b.dtype is engine.float32 and set(b.tolist()) <= {0.0, 1.0}
    assert abs(b.mean().item() - 0.3) < 0.02
    engine.manual_seed(1)
    assert engine.bernoulli(p).tolist() == b.tolist()
    assert engine.bernoulli(engine.zeros(5), 1.0).tolist() == [1.0] * 5
    assert engine.ones(4).bernoulli_(0.0).tolist() == [0.0] * 4
    q = engine.full((3,), 0.5, requires_grad=True)
    d = engine.bernoulli(q)
    assert d.grad_fn.name() == "BernoulliBackward0"
    d.sum().backward()
    assert q.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match=r"^Expected p_in >= 0 && p_in <= 1 to be true, but got false\."):
        engine.bernoulli(engine.tensor([1.5]))

    engine.manual_seed(2)
    w = engine.tensor([1.0, 2.0, 7.0])
    draws = engine.multinomial(w, 20000, replacement=True)
    assert draws.dtype is engine.int64 and tuple(draws.shape) == (20000,)
    freq = np.bincount(draws.numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.02)
    rows = engine.multinomial(engine.tensor([[1.0, 1.0, 0.0, 1.0], [0.0, 5.0, 1.0, 0.0]]), 2)
    assert tuple(rows.shape) == (2, 2)
    for r, allowed in zip(rows.tolist(), ({0, 1, 3}, {1, 2})):
        assert len(set(r)) == 2 and set(r) <= allowed      # without replacement: distinct, never a zero weight
    engine.manual_seed(3)
    one = w.multinomial(3).tolist()
    engine.manual_seed(3)
    assert engine.multinomial(w, 3).tolist() == one and sorted(one) == [0, 1, 2]
    cases = [
        (lambda: engine.multinomial(engine.tensor([0.0, 0.0]), 1),
         "invalid multinomial distribution (sum of probabilities <= 0)"),
        (lambda: engine.multinomial(engine.tensor([1.0, -1.0]), 1),
         "probability tensor contains either `inf`, `nan` or element < 0"),
        (lambda: engine.multinomial(engine.tensor([1.0, 1.0]), 3),
         "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
        (lambda: engine.multinomial(engine.tensor([[[1.0, 1.0]]]), 1), "prob_dist must be 1 or 2 dim"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError) as e:
            fn()
        assert str(e.value) == msg


# ---- 1-D pooling: the 2-D ops between UnsqueezeBackward0 and SqueezeBackward1, as PyTorch ------------
# X = np.random.default_rng(5).standard_normal((2, 2, 7)); y = f(x); (y * torch.arange(y.numel()).double()
# .reshape(y.shape)).sum().backward() -> name: (y, x.grad, indices or None); mp1: F.max_pool1d(x, 3, 2, 1,
# ceil_mode=True, return_indices=True); ap1: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False);
# aap1: F.adaptive_avg_pool1d(x, 3); mp1_saved: the inner node's (_saved_stride, _saved_kernel_size) of max_pool1d(x, 2)
POOL1 = {"aap1": ([[[-0.791551, 0.436043, 0.231035], [0.532916, 0.224741, -0.197192]],
                   [[-0.53765, -0.625403, -0.610202], [-0.033046, 0.216687, -0.356633]]],
                  [[[0.0, 0.0, 0.333333, 0.333333, 1.0, 0.666667, 0.666667],
                    [1.0, 1.0, 2.333333, 1.333333, 3.0, 1.666667, 1.666667]],
                   [[2.0, 2.0, 4.333333, 2.333333, 5.0, 2.666667, 2.666667],
                    [3.0, 3.0, 6.333333, 3.333333, 7.0, 3.666667, 3.666667]]],
                  None),
         "ap1": ([[[-1.063145, -0.384092, 0.555399, -0.22147], [-0.018017, 0.885433, -0.639608, 0.320877]],
                  [[-0.764626, -0.993019, -0.760173, -0.60066], [0.245146, -0.08096, -0.13451, -0.949877]]],
                 [[[0.0, 0.333333, 0.333333, 1.0, 0.666667, 2.166667, 1.5],
                   [2.0, 3.666667, 1.666667, 3.666667, 2.0, 5.5, 3.5]],
                  [[4.0, 7.0, 3.0, 6.333333, 3.333333, 8.833333, 5.5],
                   [6.0, 10.333333, 4.333333, 9.0, 4.666667, 12.166667, 7.5]]],
                 None),
         "mp1": ([[[-0.801931, 0.420445, 1.136047, 0.109706], [0.748746, 1.634783, 0.272769, 1.600019]],
                  [[0.202882, -0.083696, -0.488006, -0.488006], [0.553378, 0.409638, 0.829855, -0.25673]]],
                 [[[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0], [0.0, 4.0, 5.0, 6.0, 0.0, 0.0, 7.0]],
                  [[8.0, 0.0, 9.0, 0.0, 0.0, 21.0, 0.0], [12.0, 0.0, 0.0, 13.0, 14.0, 0.0, 15.0]]],
                 [[[0, 3, 4, 5], [1, 2, 3, 6]], [[0, 2, 5, 5], [0, 3, 4, 6]]]),
         "mp1_saved": ((1, 2), (1, 2))}


def test_pool1d_values_grads_graphs_and_modules_as_pytorch():
    X = np.random.default_rng(5).standard_normal((2, 2, 7))
    fns = {"mp1": lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
           "ap1": lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
           "aap1": lambda x: F.adaptive_avg_pool1d(x, 3)}
    for name, fn in fns.items():
        x = t64(X, True)
        y = fn(x)
        yy = y[0] if isinstance(y, tuple) else y
        (yy * engine.arange(yy.numel(), dtype=D).reshape(tuple(yy.shape))).sum().backward()
        want_y, want_g, want_i = POOL1[name]
        np.testing.assert_allclose(yy.detach().numpy(), want_y, atol=2e-6)
        np.testing.assert_allclose(x.grad.numpy(), want_g, atol=2e-6)
        if want_i is not None:
            assert y[1].tolist() == want_i
        assert yy.grad_fn.name() == "SqueezeBackward1"
        assert yy.grad_fn.next_functions[0][0].next_functions[0][0].name() == "UnsqueezeBackward0"
        gradcheck(lambda x: _first(fn(x)), [t64(X, True)])
    inner = F.max_pool1d(t64(X, True), 2).grad_fn.next_functions[0][0]
    assert inner.name() == "MaxPool2DWithIndicesBackward0"
    assert (inner._saved_stride, inner._saved_kernel_size) == tuple(tuple(v) for v in POOL1["mp1_saved"])
    assert F.adaptive_avg_pool1d(t64(X, True), 1).grad_fn.next_functions[0][0].name() == "MeanBackward1"
    assert repr(nn.MaxPool1d(2)) == "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool1d(2)) == "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool1d(3)) == "AdaptiveAvgPool1d(output_size=3)"
    x = engine.randn(2, 3, 8)
    assert tuple(nn.MaxPool1d(2)(x).shape) == (2, 3, 4) and tuple(nn.AvgPool1d(3, 1)(x).shape) == (2, 3, 6)
    assert tuple(nn.AdaptiveAvgPool1d(1)(x).shape) == (2, 3, 1) and tuple(nn.MaxPool1d(2)(x[0]).shape) == (3, 4)


def test_saved_tensor_memory_of_batch_norm_and_max_pool():
    """Activation bytes while the graph lives: batch norm keeps its input plus mean and invstd (the running
    buffers are the module's, not activations); max pooling keeps its input and the int64 indices."""
    import gc
    from engine import memory

    def act():
        return memory.memory_stats("cpu").get("allocated_bytes.activation.current", 0)

    gc.collect()
    a0 = act()
    m = nn.BatchNorm1d(10)
    h = engine.randn(6, 10) @ engine.randn(10, 10, requires_grad=True)     # a 240-byte intermediate
    y = m(h)
    assert act() - a0 == 240 + 40 + 40
    y.sum().backward()
    del y, h
    gc.collect()
    assert act() - a0 == 0
    c = engine.randn(2, 3, 4, 4, requires_grad=True) * 1                   # 384 bytes
    o = F.max_pool2d(c, 2)
    assert act() - a0 == 384 + 2 * 3 * 2 * 2 * 8
    del o, c
    gc.collect()
    assert act() - a0 == 0


def test_dropout2d_zeroes_whole_channels_as_pytorch():
    # PyTorch: F.dropout2d(x, 0.5) with x 2x3x4x4 -> MulBackward0 keeping `other`, the (2, 3, 1, 1) float32
    # mask scaled by 1/(1-p) (24 bytes), no `self`; eval mode or p=0 returns x itself
    x = engine.randn(2, 3, 4, 4, requires_grad=True)
    engine.manual_seed(5)
    y = F.dropout2d(x, 0.5)
    assert y.grad_fn.name() == "MulBackward0" and y.grad_fn._saved_self is None
    mask = y.grad_fn._saved_other
    assert tuple(mask.shape) == (2, 3, 1, 1) and mask.dtype is engine.float32 and mask.nbytes == 24
    assert set(mask.flatten().tolist()) <= {0.0, 2.0}
    planes = y.detach().numpy().reshape(6, 16)
    xs = x.detach().numpy().reshape(6, 16)
    for k, m in enumerate(mask.flatten().tolist()):
        np.testing.assert_allclose(planes[k], xs[k] * m, rtol=1e-6)
    engine.manual_seed(5)
    assert F.dropout2d(x, 0.5).tolist() == y.tolist()
    assert F.dropout2d(x, 0.5, training=False) is x and F.dropout2d(x, 0.0) is x
    m = nn.Dropout2d(0.3)
    assert repr(m) == "Dropout2d(p=0.3, inplace=False)" and repr(nn.Dropout2d()) == "Dropout2d(p=0.5, inplace=False)"
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got 1.5$"):
        F.dropout2d(x, 1.5)
    with pytest.warns(UserWarning, match="^dropout2d: Received a 3D input to dropout2d"):
        assert tuple(F.dropout2d(engine.randn(3, 4, 4), 0.5).shape) == (3, 4, 4)


# X = np.random.default_rng(6).standard_normal((2, 2, 5, 7)); y, i = F.adaptive_max_pool2d(x, (3, 4),
# return_indices=True); (y * torch.arange(y.numel()).double().reshape(y.shape)).sum().backward() -> y, g (x.grad), i;
# m = torch.nn.BatchNorm3d(2).double(); X5 = np.random.default_rng(7).standard_normal((2, 2, 2, 3, 2));
# z = m(X5) -> bn3_rv (m.running_var), bn3_z (z[1, 0, 1])
AMAX = {"bn3_rv": [0.96567, 0.980855],
        "bn3_z": [[-1.522298, -0.195735], [-0.826967, -0.613077], [1.743786, -0.611435]],
        "g": [[[[0.0, 1.0, 0.0, 0.0, 0.0, 5.0, 0.0], [4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 11.0, 0.0, 7.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                [8.0, 9.0, 0.0, 0.0, 10.0, 0.0, 11.0]],
               [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 15.0], [0.0, 12.0, 0.0, 62.0, 0.0, 19.0, 0.0],
                [0.0, 16.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 22.0, 0.0, 23.0],
                [20.0, 0.0, 21.0, 0.0, 0.0, 0.0, 0.0]]],
              [[[0.0, 24.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 25.0, 0.0, 0.0, 114.0, 0.0],
                [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [60.0, 0.0, 62.0, 0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0, 0.0, 69.0, 0.0]],
               [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 154.0, 0.0, 0.0, 38.0, 0.0, 39.0],
                [0.0, 0.0, 0.0, 0.0, 0.0, 85.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                [44.0, 0.0, 0.0, 91.0, 0.0, 47.0, 0.0]]]],
        "i": [[[[1, 1, 5, 5], [7, 17, 17, 19], [28, 29, 32, 34]],
               [[8, 10, 10, 6], [15, 10, 10, 12], [28, 30, 25, 27]]],
              [[[1, 9, 12, 12], [21, 23, 12, 12], [21, 23, 33, 33]],
               [[8, 8, 11, 13], [8, 8, 19, 19], [28, 31, 31, 33]]]],
        "y": [[[[1.776491, 1.776491, 1.352142, 1.352142], [1.497118, 1.798786, 1.798786, 1.38371],
                [1.208357, 0.394546, 0.895475, 1.085631]],
               [[-0.1163, 1.747651, 1.747651, 2.00188], [0.791977, 1.747651, 1.747651, 0.703183],
                [1.447874, 0.744075, 0.967767, 0.574468]]],
              [[[-0.061831, 1.267887, 1.182461, 1.182461], [1.035722, 1.423789, 1.182461, 1.182461],
                [1.035722, 1.423789, 1.814078, 1.814078]],
               [[1.299112, 1.299112, 0.147612, 0.206437], [1.299112, 1.299112, 1.238945, 1.238945],
                [0.556617, 1.724665, 1.724665, 1.107049]]]]}


def test_adaptive_max_pool2d_and_batchnorm3d_as_pytorch():
    X = np.random.default_rng(6).standard_normal((2, 2, 5, 7))
    x = t64(X, True)
    y, i = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
    (y * engine.arange(y.numel(), dtype=D).reshape(tuple(y.shape))).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), AMAX["y"], atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), AMAX["g"], atol=2e-6)
    assert i.tolist() == AMAX["i"]
    y, i = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
    assert y.grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    assert_saved(y.grad_fn, {"result1": ((2, 2, 3, 4), "int64", 384), "self": ((2, 2, 5, 7), "float64", 1120)})
    assert y.grad_fn._saved_result1.untyped_storage() is i.untyped_storage()
    gradcheck(lambda x: F.adaptive_max_pool2d(x, (3, 4)), [t64(X, True)])
    gradgradcheck(lambda x: F.adaptive_max_pool2d(x, (2, 3)) ** 2, [t64(X, True)])
    assert repr(nn.AdaptiveMaxPool2d((2, 3), return_indices=True)) == "AdaptiveMaxPool2d(output_size=(2, 3))"
    assert tuple(nn.AdaptiveMaxPool2d((None, 2))(x).shape) == (2, 2, 5, 2)
    m = nn.BatchNorm3d(2).double()
    z = m(t64(np.random.default_rng(7).standard_normal((2, 2, 2, 3, 2))))
    np.testing.assert_allclose(m.running_var.numpy(), AMAX["bn3_rv"], atol=2e-6)
    np.testing.assert_allclose(z[1, 0, 1].detach().numpy(), AMAX["bn3_z"], atol=2e-6)
    assert repr(nn.BatchNorm3d(4)) == ("BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                       "track_running_stats=True)")
    with pytest.raises(ValueError, match=r"^expected 5D input \(got 4D input\)$"):
        nn.BatchNorm3d(3)(engine.randn(2, 3, 4, 4))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_normalize_graph_for_every_p(p):
    x = engine.tensor(np.array([[1.0, -2.0, 3.0], [0.0, 0.0, 0.0]]), requires_grad=True)
    y = F.normalize(x, p=p)
    names, n = [], y.grad_fn
    while n is not None:
        names.append(n.name())
        n = n.next_functions[-1][0] if n.next_functions else None
    assert names == ["DivBackward0", "ExpandBackward0", "ClampMinBackward0", "LinalgVectorNormBackward0",
                     "torch::autograd::AccumulateGrad"]
    ref = np.array([[1.0, -2.0, 3.0], [0.0, 0.0, 0.0]])
    norm = np.maximum(np.linalg.norm(ref, ord=p, axis=1, keepdims=True), 1e-12)
    np.testing.assert_allclose(y.detach().numpy(), ref / norm, rtol=1e-12)
    gradcheck(lambda t: F.normalize(t, p=p, dim=0), [engine.tensor(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)])
