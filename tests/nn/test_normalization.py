"""GroupNorm, InstanceNorm, RMSNorm, LocalResponseNorm (engine/ops/nn/norm.py, engine/nn/functional/normalization.py,
engine/nn/modules/normalization.py, engine/nn/modules/instancenorm.py): values against NumPy, finite differences in
float64, the nodes and saved tensors PyTorch shows, errors in PyTorch's words, modules."""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, f64, gradcheck, gradgradcheck, matches_numpy


def _np(t):
    return t.detach().numpy()


def ref_group_norm(x, g, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    x3 = x.reshape(n, g, -1)
    out = ((x3 - x3.mean(2, keepdims=True)) / np.sqrt(x3.var(2, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out


# ---- group norm ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,groups,affine", [((2, 6, 3, 4), 3, True), ((3, 4), 2, False), ((2, 4, 5), 4, True),
                                                 ((1, 6, 2, 2, 2), 1, True)])
def test_group_norm_values_and_gradients(shape, groups, affine):
    x = f64(*shape, seed=1)
    w, b = (f64(shape[1], seed=2), f64(shape[1], seed=3)) if affine else (None, None)
    out = F.group_norm(x, groups, w, b)
    np.testing.assert_allclose(_np(out), ref_group_norm(_np(x), groups, None if w is None else _np(w),
                                                        None if b is None else _np(b)), atol=1e-12)
    if affine:
        gradcheck(lambda a, ww, bb: F.group_norm(a, groups, ww, bb), [x, w, b])
    else:
        gradcheck(lambda a: F.group_norm(a, groups), [x])


def test_group_norm_second_order():
    gradgradcheck(lambda a, w: F.group_norm(a, 2, w), [f64(2, 4, 3, seed=4), f64(4, seed=5)])


def test_group_norm_node_keeps_input_weight_mean_rstd():
    x = engine.randn(2, 6, 3, 3, requires_grad=True)
    w = engine.randn(6, requires_grad=True)
    node = F.group_norm(x, 3, w, engine.randn(6, requires_grad=True)).grad_fn
    assert node.name() == "NativeGroupNormBackward0"
    assert node._saved_input is x and node._saved_weight is w
    assert tuple(node._saved_result1.shape) == tuple(node._saved_result2.shape) == (2, 3)
    assert (node._saved_N, node._saved_C, node._saved_HxW, node._saved_group, node._saved_eps) == (2, 6, 9, 3, 1e-5)
    x3 = x.detach().numpy().reshape(2, 3, -1)
    np.testing.assert_allclose(node._saved_result1.numpy(), x3.mean(2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(node._saved_result2.numpy(), 1 / np.sqrt(x3.var(2) + 1e-5), rtol=1e-4)
    assert F.group_norm(x, 3).grad_fn._saved_weight is None


GN_ERRORS = [
    (lambda: F.group_norm(engine.randn(2, 6, 3, 3), 4), RuntimeError, "Expected number of channels in input to be "
     "divisible by num_groups, but got input of shape [2, 6, 3, 3] and num_groups=4"),
    (lambda: F.group_norm(engine.randn(2, 6, 3, 3), 3, engine.randn(5)), RuntimeError, "Expected weight to be a "
     "vector of size equal to the number of channels in input, but got weight of shape [5] and input of shape "
     "[2, 6, 3, 3]"),
    (lambda: F.group_norm(engine.randn(6), 3), RuntimeError,
     "Expected at least 2 dimensions for input tensor but received 1"),
    (lambda: F.group_norm(engine.randn(2, 6).double(), 3, engine.randn(6)), RuntimeError,
     "mixed dtype (CPU): all inputs must share same datatype."),
    (lambda: nn.GroupNorm(4, 6), ValueError, "num_channels (6) must be divisible by num_groups (4)"),
    (lambda: F.instance_norm(engine.randn(1, 6, 1)), ValueError,
     "Expected more than 1 spatial element when training, got input size torch.Size([1, 6, 1])"),
    (lambda: F.instance_norm(engine.randn(2, 6, 3, 3), engine.zeros(5), engine.ones(5)), RuntimeError,
     "running_mean should contain 12 elements not 10"),
    (lambda: nn.InstanceNorm2d(6, affine=True)(engine.randn(2, 5, 3, 3)), ValueError,
     "expected input's size at dim=1 to match num_features (6), but got: 5."),
    (lambda: nn.InstanceNorm1d(6)(engine.randn(2, 6, 3, 3)), ValueError, "expected 2D or 3D input (got 4D input)"),
    (lambda: F.rms_norm(engine.randn(2, 6, 3, 3), (4,)), RuntimeError, "Given normalized_shape=[4], expected input "
     "with shape [*4], but got input of size[2, 6, 3, 3]"),
    (lambda: F.rms_norm(engine.randn(3), (2, 3)), ValueError,
     "Input tensor must have at least 2 dimensions, but got 1"),
    (lambda: F.rms_norm(engine.randn(2, 3), (3,), engine.randn(4)), RuntimeError, "Expected weight to be of same "
     "shape as normalized_shape, but got weight of shape [4] and normalized_shape = [3]"),
    (lambda: F.local_response_norm(engine.randn(2, 3), 2), ValueError,
     "Expected 3D or higher dimensionality                          input (got 2 dimensions)"),
]


@pytest.mark.parametrize("k", range(len(GN_ERRORS)))
def test_errors_as_pytorch(k):
    fn, kind, msg = GN_ERRORS[k]
    with pytest.raises(kind) as e:
        fn()
    assert str(e.value) == msg


# ---- instance norm ---------------------------------------------------------------------------------------
def test_instance_norm_is_group_norm_with_one_channel_per_group_and_batch_norm_underneath():
    x, w, b = f64(2, 3, 4, 5, seed=6), f64(3, seed=7), f64(3, seed=8)
    out = F.instance_norm(x, weight=w, bias=b)
    np.testing.assert_allclose(_np(out), ref_group_norm(_np(x), 3, _np(w), _np(b)), atol=1e-12)
    names = [out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()]
    assert names == ["ViewBackward0", "NativeBatchNormBackward0"]
    bn = out.grad_fn.next_functions[0][0]
    assert tuple(bn._saved_input.shape) == (1, 6, 4, 5) and tuple(bn._saved_weight.shape) == (6,)
    assert [f.name() for f, _ in bn.next_functions] == ["ViewBackward0", "RepeatBackward0", "RepeatBackward0"]
    gradcheck(lambda a, ww, bb: F.instance_norm(a, weight=ww, bias=bb), [x, w, b])


def test_instance_norm_running_stats_are_the_batch_mean_of_per_sample_updates():
    x = f64(2, 3, 4, seed=9, requires_grad=False)
    rm, rv = engine.zeros(3, dtype=engine.float64), engine.ones(3, dtype=engine.float64)
    F.instance_norm(x, rm, rv, momentum=0.5)
    a = _np(x)
    np.testing.assert_allclose(_np(rm), (0.5 * a.mean(2)).mean(0), atol=1e-12)
    np.testing.assert_allclose(_np(rv), (0.5 + 0.5 * a.var(2, ddof=1)).mean(0), atol=1e-12)
    out = F.instance_norm(x, rm, rv, use_input_stats=False)      # evaluation: the running statistics
    np.testing.assert_allclose(_np(out), (a - _np(rm)[:, None]) / np.sqrt(_np(rv)[:, None] + 1e-5), atol=1e-12)


def test_instance_norm_modules():
    m = nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
    assert repr(m) == ("InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert repr(nn.InstanceNorm1d(4)) == ("InstanceNorm1d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, "
                                          "track_running_stats=False)")
    assert nn.InstanceNorm1d(4).state_dict() == {}
    x = engine.randn(2, 4, 3, 3)
    m(x)
    assert float(m.running_mean.abs().sum()) > 0 and int(m.num_batches_tracked) == 0   # as PyTorch: not counted
    m.eval()
    assert tuple(m(x[0]).shape) == (4, 3, 3)                                         # unbatched
    assert tuple(nn.InstanceNorm1d(6)(engine.randn(6, 3)).shape) == (6, 3)
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm2d(6)(engine.randn(2, 5, 3, 3))


# ---- RMSNorm -----------------------------------------------------------------------------------------------
def test_rms_norm_values_graph_and_gradients():
    x, w = f64(2, 3, 4, seed=10), f64(3, 4, seed=11)
    out = F.rms_norm(x, (3, 4), w, eps=1e-6)
    a = _np(x)
    want = a / np.sqrt((a ** 2).mean((1, 2), keepdims=True) + 1e-6) * _np(w)
    np.testing.assert_allclose(_np(out), want, atol=1e-12)
    scaled = out.grad_fn.next_functions[0][0]                  # (x * rsqrt(...)) * weight
    assert out.grad_fn.name() == scaled.name() == "MulBackward0"
    assert tuple(scaled._saved_other.shape) == (2, 1, 1) and scaled._saved_self is x
    inner = scaled.next_functions[1][0]
    names = [inner.name()]
    while inner.next_functions and inner.next_functions[0][0] is not None \
            and inner.next_functions[0][0].name() != "torch::autograd::AccumulateGrad":
        inner = inner.next_functions[0][0]
        names.append(inner.name())
    assert names == ["RsqrtBackward0", "AddBackward1", "MeanBackward1", "PowBackward0"]
    gradcheck(lambda a, ww: F.rms_norm(a, (4,), ww[0]), [x, w])
    gradgradcheck(lambda a: F.rms_norm(a, (4,)), [f64(2, 4, seed=12)])


def test_rms_norm_default_eps_is_the_dtypes_machine_epsilon():
    x = engine.tensor([[0.0, 0.0]])
    out = F.rms_norm(x, (2,))
    assert out.tolist() == [[0.0, 0.0]]
    tiny = engine.tensor([[1e-4, 1e-4]])
    expect = 1e-4 / np.sqrt(np.float32(1e-8) + np.finfo(np.float32).eps)
    np.testing.assert_allclose(F.rms_norm(tiny, (2,)).numpy(), [[expect, expect]], rtol=1e-5)
    m = nn.RMSNorm(4)
    assert repr(m) == "RMSNorm((4,), eps=None, elementwise_affine=True)" and list(m.state_dict()) == ["weight"]
    assert m.weight.tolist() == [1.0] * 4
    assert repr(nn.RMSNorm((3, 4), eps=1e-6, elementwise_affine=False)) == \
        "RMSNorm((3, 4), eps=1e-06, elementwise_affine=False)"


# ---- local response norm -------------------------------------------------------------------------------
def ref_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    sq = x ** 2
    div = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        div[:, i] = sq[:, lo:hi].sum(1) / size
    return x / (k + alpha * div) ** beta


@pytest.mark.parametrize("shape,size", [((2, 5, 4), 3), ((2, 5, 3, 4), 2), ((1, 5, 2, 3, 2), 4)])
def test_local_response_norm_values_and_gradients(shape, size):
    x = f64(*shape, seed=13)
    out = F.local_response_norm(x, size, 0.1, 0.6, 1.5)
    np.testing.assert_allclose(_np(out), ref_lrn(_np(x), size, 0.1, 0.6, 1.5), atol=1e-12)
    assert out.grad_fn.name() == "DivBackward0"
    pool = out.grad_fn.next_functions[1][0]
    while pool.name() not in ("AvgPool2DBackward0", "AvgPool3DBackward0"):
        pool = pool.next_functions[0][0]
    assert pool.name() == ("AvgPool2DBackward0" if len(shape) == 3 else "AvgPool3DBackward0")   # as PyTorch
    gradcheck(lambda a: F.local_response_norm(a, size, 0.1, 0.6, 1.5), [x])
    assert repr(nn.LocalResponseNorm(2, 1e-3, 0.5, 2.0)) == "LocalResponseNorm(2, alpha=0.001, beta=0.5, k=2.0)"


def test_group_norm_module():
    m = nn.GroupNorm(3, 6)
    assert repr(m) == "GroupNorm(3, 6, eps=1e-05, affine=True, bias=True)"
    assert list(m.state_dict()) == ["weight", "bias"] and m.weight.tolist() == [1.0] * 6
    assert m.bias.tolist() == [0.0] * 6
    assert repr(nn.GroupNorm(3, 6, affine=False, eps=1e-3)) == "GroupNorm(3, 6, eps=0.001, affine=False, bias=False)"
    assert nn.GroupNorm(3, 6, affine=False).state_dict() == {}
    x = f64(2, 6, 2, seed=14)
    np.testing.assert_allclose(_np(m.double()(x)), ref_group_norm(_np(x), 3), atol=1e-12)




@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    def run():
        x, w = f64(2, 4, 3, seed=15), f64(4, seed=16)
        out = (F.group_norm(x, 2, w, w).square().sum() + F.instance_norm(x).square().sum()
               + F.rms_norm(x, (3,)).square().sum() + F.local_response_norm(x, 3).square().sum())
        out.backward()
        return [out, x.grad, w.grad]
    matches_numpy(backend, run)
