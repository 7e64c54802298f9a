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

from tests.engine.conftest import gradcheck, gradgradcheck

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
BN = {'bn1_y': [[0.064226, -0.073833, 1.106048], [0.041329, -0.719994, 0.550899], [1.359411, 1.654088, -1.570186], [-1.464965, -0.860261, -0.086761]], 'bn1_gx': [[-4.85996, -7.204445, -4.252853], [-1.59314, -2.395304, -0.642211], [3.480938, 2.387005, -3.695283], [2.972162, 7.212744, 8.590348]], 'bn1_gw': [-4.904233, 0.022195, -8.549263], 'bn1_gb': [18.0, 22.0, 26.0], 'bn1_rm': [0.354515, 0.230347, 0.368771], 'bn1_rv': [2.045889, 1.223317, 0.964235], 'bn1_nbt': 2, 'bn1_eval': [[-0.15995, -0.327702, 0.276643], [-0.174513, -0.692575, -0.007307], [0.663814, 0.648018, -1.09221], [-1.132546, -0.771781, -0.333461]], 'bn2_rm': [0.519605, 1.82131], 'bn2_rv': [2.960567, 4.543013], 'bn2_y': [[0.996808, -1.121999, -0.061682], [0.513955, -0.330226, -1.203663], [-1.389534, -0.905631, -0.19863]]}


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


# ---- pooling ---------------------------------------------------------------------------------------
# rng = np.random.default_rng(1); X = rng.standard_normal((1, 2, 5, 5)); for each name, with y = fn(x):
# (y * torch.arange(y.numel()).double().reshape(y.shape)).sum().backward()  -> name: y, name_g: x.grad,
# name_i: the indices. mp: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True);
# mpd: F.max_pool2d(x, 2, 1, dilation=2, return_indices=True); ap: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True);
# apx: F.avg_pool2d(x, (2, 3), (2, 1), (1, 0), count_include_pad=False); aap: F.adaptive_avg_pool2d(x, (3, 2))
POOL = {'mp': [[[[0.821618, 0.821618, 0.905356], [0.598846, 0.581118, 0.364572], [0.598846, 1.294064, 1.006724]], [[2.117839, 2.042772, 2.042772], [2.117839, 2.042772, 2.042772], [0.095483, 0.593748, 0.891167]]]], 'mp_g': [[[[0.0, 1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 4.0, 5.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [9.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 7.0, 8.0, 0.0]], [[0.0, 0.0, 0.0, 0.0, 0.0], [21.0, 0.0, 0.0, 48.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [15.0, 0.0, 0.0, 16.0, 17.0]]]], 'mp_i': [[[[1, 1, 4], [15, 7, 8], [15, 22, 23]], [[5, 8, 8], [5, 8, 8], [20, 23, 24]]]], 'mpd': [[[[0.345584, 0.821618, 0.905356], [0.598846, 0.364572, 0.581118], [1.294064, 1.006724, 1.294064]], [[0.663063, 0.213643, 0.217322], [2.117839, 2.042772, 0.646703], [0.663063, 0.593748, 0.891167]]]], 'mpd_g': [[[[0.0, 1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 5.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 14.0, 7.0, 0.0]], [[0.0, 0.0, 0.0, 10.0, 11.0], [12.0, 0.0, 0.0, 13.0, 14.0], [24.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 16.0, 17.0]]]], 'mpd_i': [[[[0, 1, 4], [15, 8, 7], [22, 23, 22]], [[10, 3, 4], [5, 8, 9], [10, 23, 24]]]], 'ap': [[[[0.119625, 0.028626, 0.028989], [0.124792, -0.108729, -0.113936], [0.041234, 0.11006, -0.304838]], [[-0.117552, 0.01887, 0.346716], [-0.083967, -0.349055, 0.213659], [-0.197723, -0.17522, 0.049099]]]], 'ap_g': [[[[0.0, 0.111111, 0.111111, 0.333333, 0.222222], [0.333333, 0.888889, 0.555556, 1.333333, 0.777778], [0.333333, 0.777778, 0.444444, 1.0, 0.555556], [1.0, 2.222222, 1.222222, 2.666667, 1.444444], [0.666667, 1.444444, 0.777778, 1.666667, 0.888889]], [[1.0, 2.111111, 1.111111, 2.333333, 1.222222], [2.333333, 4.888889, 2.555556, 5.333333, 2.777778], [1.333333, 2.777778, 1.444444, 3.0, 1.555556], [3.0, 6.222222, 3.222222, 6.666667, 3.444444], [1.666667, 3.444444, 1.777778, 3.666667, 1.888889]]]], 'apx': [[[[0.499213, -0.050367, -0.022455], [0.05487, 0.009348, -0.02361], [0.228786, 0.16509, -0.290322]], [[-0.828659, -0.127773, 0.002925], [-0.145134, -0.240245, 0.156712], [-0.392974, -0.26283, -0.02274]]]], 'apx_g': [[[[0.0, 0.333333, 1.0, 1.0, 0.666667], [0.5, 1.166667, 2.0, 1.5, 0.833333], [0.5, 1.166667, 2.0, 1.5, 0.833333], [1.0, 2.166667, 3.5, 2.5, 1.333333], [1.0, 2.166667, 3.5, 2.5, 1.333333]], [[3.0, 6.333333, 10.0, 7.0, 3.666667], [2.0, 4.166667, 6.5, 4.5, 2.333333], [2.0, 4.166667, 6.5, 4.5, 2.333333], [2.5, 5.166667, 8.0, 5.5, 2.833333], [2.5, 5.166667, 8.0, 5.5, 2.833333]]]], 'aap': [[[[0.331363, 0.19541], [0.075037, -0.163691], [0.228786, -0.290322]], [[-0.309627, 0.386774], [-0.317048, -0.019421], [-0.392974, -0.02274]]]], 'aap_g': [[[[0.0, 0.0, 0.166667, 0.166667, 0.166667], [0.222222, 0.222222, 0.722222, 0.5, 0.5], [0.222222, 0.222222, 0.555556, 0.333333, 0.333333], [0.888889, 0.888889, 2.055556, 1.166667, 1.166667], [0.666667, 0.666667, 1.5, 0.833333, 0.833333]], [[1.0, 1.0, 2.166667, 1.166667, 1.166667], [1.888889, 1.888889, 4.055556, 2.166667, 2.166667], [0.888889, 0.888889, 1.888889, 1.0, 1.0], [2.555556, 2.555556, 5.388889, 2.833333, 2.833333], [1.666667, 1.666667, 3.5, 1.833333, 1.833333]]]]}
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


# ---- the same ops on array_api_strict (as tests/engine/test_backends.py runs the op suite) ----------
STRICT = {
    "batch_norm_train": lambda a: F.batch_norm(a.reshape(2, 3, 2), None, None, a[0, :3], a[1, :3], training=True),
    "batch_norm_eval": lambda a: F.batch_norm(a, a[0].detach() * 0.1, a[1].detach().abs() + 1.0, a[2], None),
    "batch_norm_running": lambda a: _bn_running(a),
    "max_pool2d": lambda a: F.max_pool2d(a.reshape(1, 1, 3, 4), 2, 1, 1, ceil_mode=True),
    "avg_pool2d": lambda a: F.avg_pool2d(a.reshape(1, 1, 3, 4), 2, 1, 1, count_include_pad=False),
    "adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a.reshape(1, 3, 4), (2, 3)),
    "silu": lambda a: F.silu(a),
    "leaky_relu": lambda a: F.leaky_relu(a, 0.2) + F.leaky_relu(a * 1, 0.3, inplace=True),
    "elu": lambda a: F.elu(a, 0.7) + F.elu(a * 1, inplace=True),
    "softplus": lambda a: F.softplus(a * 8, 2, 10),
    "mish": lambda a: F.mish(a),
    "hardtanh": lambda a: F.hardtanh(a, -0.5, 0.7),
    "smooth_l1_huber": lambda a: F.smooth_l1_loss(a, a.flip(0), beta=0.6) + F.huber_loss(a[0], a[1], "none", 0.4),
    "l1": lambda a: F.l1_loss(a, a.T.reshape(3, 4).detach(), reduction="sum"),
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


@pytest.mark.parametrize("name", sorted(STRICT))
def test_array_api_strict_matches_numpy(name):
    xps = pytest.importorskip("array_api_strict")
    from engine._device import cpu_namespace
    ref_out, ref_grad = _run_strict(STRICT[name])
    with cpu_namespace(xps):
        out, grad = _run_strict(STRICT[name])
        assert type(out._data).__module__.startswith("array_api_strict")
        assert type(grad._data).__module__.startswith("array_api_strict")
    host = lambda t: t.detach().cpu().numpy()  # noqa: E731
    np.testing.assert_allclose(host(out), host(ref_out), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(host(grad), host(ref_grad), rtol=1e-10, atol=1e-12)


def exercise_layer_ops():
    """One call of each table op this file covers (tests/engine/test_ops_grad.py checks every op runs)."""
    for name in sorted(STRICT):
        _run_strict(STRICT[name])


# ---- activations -----------------------------------------------------------------------------------
# X = [-25.0, -3.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0]; x = torch.tensor(X, dtype=torch.float64,
# requires_grad=True); y = f(x) (in-place names: y = f(x * 1)); y.backward(torch.arange(1., 11., dtype=torch.float64))
# -> name: (y, x.grad), for f in ACT below
ACT = {'silu': ([-0.0, -0.142278, -0.268941, -0.18877, 0.0, 0.172333, 0.731059, 2.310355, 11.999926, 30.0], [-0.0, -0.176208, 0.216988, 1.040155, 2.5, 3.88668, 6.493694, 8.795209, 9.000608, 10.0]), 'leaky_relu': ([-5.0, -0.6, -0.2, -0.1, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0], [0.2, 0.4, 0.6, 0.8, 1.0, 6.0, 7.0, 8.0, 9.0, 10.0]), 'elu': ([-0.7, -0.665149, -0.442484, -0.275429, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0], [0.0, 0.069702, 0.772547, 1.698286, 3.5, 6.0, 7.0, 8.0, 9.0, 10.0]), 'selu': ([-1.758099, -1.670569, -1.111331, -0.691758, 0.0, 0.31521, 1.050701, 2.626752, 12.608412, 31.52103], [0.0, 0.175061, 1.940306, 4.265365, 8.790497, 6.304206, 7.354907, 8.405608, 9.456309, 10.50701]), 'softplus': ([0.0, 0.001238, 0.063464, 0.156631, 0.346574, 0.518744, 1.063464, 2.503358, 12.0, 30.0], [0.0, 0.004945, 0.357609, 1.075766, 2.5, 3.873938, 6.16558, 7.946457, 9.0, 10.0]), 'softplus_default': ([0.0, 0.048587, 0.313262, 0.474077, 0.693147, 0.854355, 1.313262, 2.57889, 12.000006, 30.0], [0.0, 0.094852, 0.806824, 1.510163, 2.5, 3.446655, 5.11741, 7.393135, 8.999945, 10.0]), 'mish': ([-0.0, -0.145647, -0.303401, -0.220744, 0.0, 0.208001, 0.865098, 2.471392, 12.0, 30.0], [-0.0, -0.186786, 0.17765, 1.158043, 3.0, 4.696964, 7.343254, 8.329036, 9.0, 10.0]), 'hardtanh': ([-1.0, -1.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 2.5, 2.5], [0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 7.0, 0.0, 0.0, 0.0]), 'relu6': ([0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 2.5, 6.0, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 7.0, 8.0, 0.0, 0.0]), 'silu_': ([-0.0, -0.142278, -0.268941, -0.18877, 0.0, 0.172333, 0.731059, 2.310355, 11.999926, 30.0], [-0.0, -0.176208, 0.216988, 1.040155, 2.5, 3.88668, 6.493694, 8.795209, 9.000608, 10.0]), 'leaky_relu_': ([-5.0, -0.6, -0.2, -0.1, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0], [0.2, 0.4, 0.6, 0.8, 1.0, 6.0, 7.0, 8.0, 9.0, 10.0]), 'elu_': ([-0.7, -0.665149, -0.442484, -0.275429, 0.0, 0.3, 1.0, 2.5, 12.0, 30.0], [0.0, 0.069702, 0.772547, 1.698286, 3.5, 6.0, 7.0, 8.0, 9.0, 10.0]), 'hardtanh_': ([-1.0, -1.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 2.5, 2.5], [0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 7.0, 0.0, 0.0, 0.0]), 'mish_': ([-0.0, -0.145647, -0.303401, -0.220744, 0.0, 0.208001, 0.865098, 2.471392, 12.0, 30.0], [-0.0, -0.186786, 0.17765, 1.158043, 3.0, 4.696964, 7.343254, 8.329036, 9.0, 10.0])}
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
             (nn.ELU(0.5, True), "ELU(alpha=0.5, inplace=True)"), (nn.Hardtanh(-2, 2), "Hardtanh(min_val=-2, max_val=2)"),
             (nn.ReLU6(), "ReLU6()"), (nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"),
             (nn.Mish(True), "Mish(inplace=True)"), (nn.SELU(), "SELU()"), (nn.ReLU6(inplace=True), "ReLU6(inplace=True)")]
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
LOSS = {'l1_mean': (1.701934, [[0.083333, -0.083333, -0.083333, -0.083333], [0.083333, 0.083333, -0.083333, 0.083333], [-0.083333, -0.083333, 0.083333, -0.083333]], [[-0.083333, 0.083333, 0.083333, 0.083333], [-0.083333, -0.083333, 0.083333, -0.083333], [0.083333, 0.083333, -0.083333, 0.083333]]), 'l1_sum': (20.423212, [[1.0, -1.0, -1.0, -1.0], [1.0, 1.0, -1.0, 1.0], [-1.0, -1.0, 1.0, -1.0]], [[-1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]]), 'l1_w': (1.604184, [[0.050619, -0.147047, -0.074924, -0.11038], [0.017057, 0.016633, -0.032124, 0.14072], [-0.108161, -0.135118, 0.102533, -0.064683]], [[-0.050619, 0.147047, 0.074924, 0.11038], [-0.017057, -0.016633, 0.032124, -0.14072], [0.108161, 0.135118, -0.102533, 0.064683]]), 'sl1_mean': (1.374357, [[0.083333, -0.030161, -0.083333, -0.083333], [0.083333, 0.083333, -0.083333, 0.083333], [-0.033219, -0.083333, 0.083333, -0.083333]], [[-0.083333, 0.030161, 0.083333, 0.083333], [-0.083333, -0.083333, 0.083333, -0.083333], [0.033219, 0.083333, -0.083333, 0.083333]]), 'sl1_none': ([[0.249875, 0.032093, 0.781085, 4.283737], [2.554126, 2.395517, 0.302388, 1.939887], [0.038933, 0.795681, 1.124564, 0.531617]], [[0.0, -0.25335, -2.0, -3.0], [4.0, 5.0, -4.666041, 7.0], [-2.232349, -9.0, 10.0, -11.0]], [[-0.0, 0.25335, 2.0, 3.0], [-4.0, -5.0, 4.666041, -7.0], [2.232349, 9.0, -10.0, 11.0]]), 'sl1_bcast': (12.720832, [[0.471287, -0.1689, -0.854057, -1.0], [1.0, 1.0, -0.737202, 1.0], [0.594163, -0.210333, 1.0, -0.347943]], [[-2.065451, -0.620767, 0.591259, 0.347943], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), 'hub_mean': (0.85046, [[0.05, -0.021113, -0.05, -0.05], [0.05, 0.05, -0.05, 0.05], [-0.023254, -0.05, 0.05, -0.05]], [[-0.05, 0.021113, 0.05, 0.05], [-0.05, -0.05, 0.05, -0.05], [0.023254, 0.05, -0.05, 0.05]]), 'hub_sum': (22.481529, [[0.706931, -0.25335, -1.281085, -2.0], [2.0, 2.0, -0.777674, 2.0], [-0.279044, -1.295681, 1.624564, -1.031617]], [[-0.706931, 0.25335, 1.281085, 2.0], [-2.0, -2.0, 0.777674, -2.0], [0.279044, 1.295681, -1.624564, 1.031617]]), 'hub_w': (0.417396, [[0.015907, -0.019513, -0.023545, -0.034688], [0.00536, 0.005227, -0.010095, 0.044222], [-0.015808, -0.042462, 0.032222, -0.020327]], [[-0.015907, 0.019513, 0.023545, 0.034688], [-0.00536, -0.005227, 0.010095, -0.044222], [0.015808, 0.042462, -0.032222, 0.020327]])}


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
