"""Unflatten, PixelShuffle/PixelUnshuffle/ChannelShuffle, the padding modules, Fold/Unfold, Bilinear
(engine/ops/nn/shuffle.py, engine/ops/nn/bilinear.py, engine/nn/functional/shuffle.py, padding.py, im2col.py,
linear_maps.py, and their modules in engine/nn/modules/): values against NumPy, finite differences in float64,
PyTorch's nodes, errors and reprs."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, f64, gradcheck, gradgradcheck, matches_numpy


def _np(t):
    return t.detach().numpy()


# ---- shuffles --------------------------------------------------------------------------------------------
def test_pixel_shuffle_moves_channel_blocks_into_pixels():
    x = f64(2, 3, 8, 2, 3, seed=1)                   # two batch dims
    out = F.pixel_shuffle(x, 2)
    a = _np(x)
    assert tuple(out.shape) == (2, 3, 2, 4, 6)
    for c, i, j, u, v in itertools.product(range(2), range(2), range(3), range(2), range(2)):
        assert out[1, 2, c, 2 * i + u, 2 * j + v].item() == a[1, 2, c * 4 + u * 2 + v, i, j]
    back = F.pixel_unshuffle(out, 2)
    assert np.array_equal(_np(back), a)
    assert out.grad_fn.name() == "PixelShuffleBackward0" and out.grad_fn._saved_upscale_factor == 2
    assert back.grad_fn.name() == "PixelUnshuffleBackward0" and back.grad_fn._saved_downscale_factor == 2
    assert out.grad_fn.saved_tensors_info == []
    gradcheck(lambda t: F.pixel_shuffle(t, 2), [f64(1, 8, 2, 1, seed=2)])
    gradcheck(lambda t: F.pixel_unshuffle(t, 3), [f64(2, 1, 3, 6, seed=3)])
    gradgradcheck(lambda t: F.pixel_shuffle(t, 2) ** 2, [f64(1, 4, 1, 2, seed=4)])


def test_channel_shuffle_interleaves_groups():
    x = engine.arange(6.0).reshape(1, 6, 1)
    out = F.channel_shuffle(x, 2)
    assert out.reshape(-1).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert nn.ChannelShuffle(3)(x).reshape(-1).tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    t = f64(2, 6, 2, 3, seed=5)
    node = F.channel_shuffle(t, 3).grad_fn
    assert node.name() == "ChannelShuffleBackward0" and node._saved_groups == 3
    gradcheck(lambda a: F.channel_shuffle(a, 3), [t])


def test_shuffle_modules_repr():
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    assert tuple(nn.PixelShuffle(2)(engine.randn(8, 3, 3)).shape) == (2, 6, 6)


# ---- Unflatten ---------------------------------------------------------------------------------------------
def test_unflatten():
    x = engine.randn(2, 8, 3, requires_grad=True)
    m = nn.Unflatten(1, (2, 4))
    out = m(x)
    assert tuple(out.shape) == (2, 2, 4, 3) and out.grad_fn.name() == "ViewBackward0"
    assert repr(m) == "Unflatten(dim=1, unflattened_size=(2, 4))"
    assert repr(nn.Unflatten(1, [2, 4])) == "Unflatten(dim=1, unflattened_size=[2, 4])"
    assert tuple(nn.Unflatten(1, (2, -1))(x).shape) == (2, 2, 4, 3)
    assert tuple(nn.Sequential(nn.Flatten(), nn.Unflatten(1, (8, 3)))(x).shape) == (2, 8, 3)
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[3, 3\] don't multiply up to the size of "
                                           r"dim 1 \(8\) in the input tensor"):
        nn.Unflatten(1, (3, 3))(x)


# ---- padding modules -------------------------------------------------------------------------------------
PADS = [
    (nn.ZeroPad1d((1, 2)), "ZeroPad1d((1, 2))", (2, 3, 4), ((0, 0), (0, 0), (1, 2)), "constant", 0.0),
    (nn.ZeroPad2d(1), "ZeroPad2d((1, 1, 1, 1))", (1, 2, 3, 4), ((0, 0), (0, 0), (1, 1), (1, 1)), "constant", 0.0),
    (nn.ConstantPad1d(2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)", (2, 3), ((0, 0), (2, 2)), "constant", 3.5),
    (nn.ConstantPad2d((1, 2, 3, 0), -1.0), "ConstantPad2d(padding=(1, 2, 3, 0), value=-1.0)", (2, 3, 4),
     ((0, 0), (3, 0), (1, 2)), "constant", -1.0),
    (nn.ConstantPad3d(1, 2.0), "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=2.0)", (1, 2, 2, 3),
     ((0, 0), (1, 1), (1, 1), (1, 1)), "constant", 2.0),
    (nn.ReflectionPad1d(2), "ReflectionPad1d((2, 2))", (2, 3, 4), ((0, 0), (0, 0), (2, 2)), "reflect", None),
    (nn.ReflectionPad2d((1, 0, 2, 1)), "ReflectionPad2d((1, 0, 2, 1))", (1, 2, 3, 4), ((0, 0), (0, 0), (2, 1), (1, 0)),
     "reflect", None),
    (nn.ReplicationPad1d(1), "ReplicationPad1d((1, 1))", (2, 3), ((0, 0), (1, 1)), "edge", None),
    (nn.ReplicationPad2d(2), "ReplicationPad2d((2, 2, 2, 2))", (1, 2, 3, 3), ((0, 0), (0, 0), (2, 2), (2, 2)), "edge",
     None),
    (nn.CircularPad1d(1), "CircularPad1d((1, 1))", (2, 3, 4), ((0, 0), (0, 0), (1, 1)), "wrap", None),
    (nn.CircularPad2d((1, 2, 0, 1)), "CircularPad2d((1, 2, 0, 1))", (2, 3, 4), ((0, 0), (0, 1), (1, 2)), "wrap", None),
]


@pytest.mark.parametrize("k", range(len(PADS)))
def test_padding_modules(k):
    m, text, shape, np_pad, mode, value = PADS[k]
    assert repr(m) == text and m.state_dict() == {}
    x = f64(*shape, seed=6)
    kw = {"constant_values": value} if mode == "constant" else {}
    np.testing.assert_allclose(_np(m(x)), np.pad(_np(x), np_pad, mode=mode, **kw))
    gradcheck(lambda a: m(a), [x])


def test_circular_pad_modules_check_the_input_dims():
    with pytest.raises(ValueError, match=r"^expected 2D or 3D input \(got 4D input\)$"):
        nn.CircularPad1d(1)(engine.randn(2, 2, 2, 3))
    with pytest.raises(ValueError, match=r"^expected 3D or 4D input \(got 2D input\)$"):
        nn.CircularPad2d(1)(engine.randn(3, 3))


# ---- Unfold / Fold ---------------------------------------------------------------------------------------
def ref_unfold(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c * k[0] * k[1], oh * ow))
    for ci, a, b, i, j in itertools.product(range(c), range(k[0]), range(k[1]), range(oh), range(ow)):
        out[:, (ci * k[0] + a) * k[1] + b, i * ow + j] = xp[:, ci, i * s[0] + a * d[0], j * s[1] + b * d[1]]
    return out


def test_unfold_values_node_and_gradients():
    x = f64(2, 3, 5, 6, seed=7)
    out = F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    np.testing.assert_allclose(_np(out), ref_unfold(_np(x), (2, 3), (1, 2), (1, 1), (2, 1)))
    node = out.grad_fn
    assert node.name() == "Im2ColBackward0" and node.saved_tensors_info == []
    assert (node._saved_kernel_size, node._saved_dilation, node._saved_padding, node._saved_stride) == \
        ((2, 3), (1, 2), (1, 1), (2, 1))
    gradcheck(lambda a: F.unfold(a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), [x])
    un = F.unfold(x[0], 2)                                  # unbatched (C, H, W) -> (C*k, L)
    assert tuple(un.shape) == (12, 20)
    np.testing.assert_allclose(_np(un), ref_unfold(_np(x[:1]), (2, 2), (1, 1), (0, 0), (1, 1))[0])


def test_fold_is_the_adjoint_of_unfold():
    x, y = f64(2, 2, 4, 5, seed=8), None
    cols = F.unfold(x, 2, padding=(1, 0), stride=(1, 2))
    y = f64(*cols.shape, seed=9)
    back = F.fold(y, (4, 5), 2, padding=(1, 0), stride=(1, 2))
    assert back.grad_fn.name() == "Col2ImBackward0" and tuple(back.shape) == (2, 2, 4, 5)
    assert math.isclose(float((cols * y).sum()), float((x * back).sum()), rel_tol=1e-12)
    gradcheck(lambda a: F.fold(a, (4, 5), 2, padding=(1, 0), stride=(1, 2)), [y])
    ones = F.fold(F.unfold(engine.ones(1, 1, 3, 3), 2), (3, 3), 2)      # each pixel counted once per block
    assert ones[0, 0].tolist() == [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    assert tuple(F.fold(engine.randn(8, 4), (3, 3), 2).shape) == (2, 3, 3)


FOLD_ERRORS = [
    (lambda: F.unfold(engine.randn(1, 2, 3, 3), 4), RuntimeError, "Given input with spatial size (3, 3), "
     "kernel_size=(4, 4), dilation=(1, 1), padding=(0, 0), calculated shape of the array of sliding blocks as "
     "(0, 0), but its components must be at least one."),
    (lambda: F.unfold(engine.randn(3, 3), 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: F.unfold(engine.randn(2, 3, 4, 4, 4), 2), RuntimeError, "Expected 3D or 4D (batch mode) tensor with "
     "possibly 0 batch size and other non-zero dimensions for input, but got: [2, 3, 4, 4, 4]"),
    (lambda: F.unfold(engine.randn(1, 2, 3, 3), 2, stride=0), RuntimeError,
     "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
    (lambda: F.unfold(engine.randn(1, 2, 3, 3), 2, padding=-1), RuntimeError,
     "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
    (lambda: F.fold(engine.randn(2, 12, 4), (3, 3), 2, stride=2), RuntimeError, "Given output_size=(3, 3), "
     "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(2, 2), expected size of input's dimension 2 to "
     "match the calculated number of sliding blocks 1 * 1 = 1, but got input.size(2)=4."),
    (lambda: F.fold(engine.randn(2, 11, 4), (3, 3), 2), RuntimeError, "Expected size of input's dimension 1 to be "
     "divisible by the product of kernel_size, but got input.size(1)=11 and kernel_size=(2, 2)."),
    (lambda: F.fold(engine.randn(2, 12, 4, 1), (3, 3), 2), RuntimeError, "Expected 2D or 3D (batch mode) tensor for "
     "input with possibly 0 batch size and non-zero dimensions for input, but got: [2, 12, 4, 1]"),
    (lambda: F.pixel_shuffle(engine.randn(2, 6, 3, 3), 2), RuntimeError, "pixel_shuffle expects its input's "
     "'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=6 is not divisible "
     "by 4"),
    (lambda: F.pixel_shuffle(engine.randn(6, 3), 2), RuntimeError,
     "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)"),
    (lambda: F.pixel_unshuffle(engine.randn(2, 6, 3, 3), 2), RuntimeError, "pixel_unshuffle expects height to be "
     "divisible by downscale_factor, but input.size(-2)=3 is not divisible by 2"),
    (lambda: F.pixel_shuffle(engine.randn(2, 8, 3, 3), 0), RuntimeError,
     "pixel_shuffle expects a positive upscale_factor, but got 0"),
    (lambda: F.channel_shuffle(engine.randn(2, 6, 3), 4), RuntimeError,
     "Number of channels must be divisible by groups. Got 6 channels and 4 groups."),
    (lambda: F.channel_shuffle(engine.randn(2, 6), 2), RuntimeError,
     "channel_shuffle expects input with > 2 dims, but got input with sizes [2, 6]"),
    (lambda: F.bilinear(engine.randn(4, 3), engine.randn(4, 5), engine.randn(2, 4, 5)), RuntimeError,
     "bilinear(): input1 size does not match weight size: got 3 but expected 4"),
    (lambda: F.bilinear(engine.randn(4, 3), engine.randn(4, 4), engine.randn(2, 3, 5)), RuntimeError,
     "bilinear(): input2 size does not match weight size: got 4 but expected 5"),
    (lambda: F.bilinear(engine.randn(4, 3), engine.randn(3, 5), engine.randn(2, 3, 5)), RuntimeError,
     "bilinear(): input batch dimensions do not match at dim 0: got 4 and 3"),
    (lambda: F.bilinear(engine.randn(4, 3), engine.randn(4, 5), engine.randn(2, 3, 5), engine.randn(3)),
     RuntimeError, "bilinear(): bias size does not match weight size: got 3 but expected 2"),
]


@pytest.mark.parametrize("k", range(len(FOLD_ERRORS)))
def test_errors_as_pytorch(k):
    fn, kind, msg = FOLD_ERRORS[k]
    with pytest.raises(kind) as e:
        fn()
    assert str(e.value) == msg


def test_fold_unfold_modules():
    assert repr(nn.Unfold(2, padding=1)) == "Unfold(kernel_size=2, dilation=1, padding=1, stride=1)"
    assert repr(nn.Fold((4, 4), 2, stride=(1, 2))) == \
        "Fold(output_size=(4, 4), kernel_size=2, dilation=1, padding=0, stride=(1, 2))"
    x = engine.randn(1, 2, 4, 4)
    assert tuple(nn.Fold((4, 4), 2, stride=2)(nn.Unfold(2, stride=2)(x)).shape) == (1, 2, 4, 4)
    assert np.allclose(nn.Fold((4, 4), 2, stride=2)(nn.Unfold(2, stride=2)(x)).numpy(), x.numpy())


# ---- Bilinear ----------------------------------------------------------------------------------------------
def test_bilinear_values_node_and_gradients():
    a, b, w, c = f64(2, 4, 3, seed=10), f64(2, 4, 5, seed=11), f64(2, 3, 5, seed=12), f64(2, seed=13)
    out = F.bilinear(a, b, w, c)
    np.testing.assert_allclose(_np(out), np.einsum("...i,oij,...j->...o", _np(a), _np(w), _np(b)) + _np(c),
                               atol=1e-12)
    assert out.grad_fn.name() == "AddBackward0"
    view = out.grad_fn.next_functions[0][0]
    tri = view.next_functions[0][0]
    assert view.name() == "ViewBackward0" and tri.name() == "TrilinearBackward0"
    assert tuple(tri._saved_i1.shape) == (8, 3) and tri._saved_i2 is w and tuple(tri._saved_i3.shape) == (8, 5)
    assert [f.name() for f, _ in tri.next_functions] == ["ViewBackward0", "torch::autograd::AccumulateGrad", "ViewBackward0"]
    gradcheck(lambda *t: F.bilinear(*t), [a, b, w, c])
    gradgradcheck(lambda x, y, ww: F.bilinear(x, y, ww), [f64(2, 2, seed=14), f64(2, 3, seed=15),
                                                           f64(2, 2, 3, seed=16)])
    assert tuple(F.bilinear(engine.randn(3), engine.randn(5), engine.randn(2, 3, 5)).shape) == (2,)


def test_bilinear_module():
    m = nn.Bilinear(3, 5, 2)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=5, out_features=2, bias=True)"
    assert list(m.state_dict()) == ["weight", "bias"] and tuple(m.weight.shape) == (2, 3, 5)
    bound = 1 / math.sqrt(3)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    assert list(nn.Bilinear(3, 5, 2, bias=False).state_dict()) == ["weight"]
    assert tuple(m(engine.randn(7, 3), engine.randn(7, 5)).shape) == (7, 2)




@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    def run():
        x, w = f64(1, 8, 2, 3, seed=17), f64(2, 3, 4, seed=18)
        out = (F.pixel_shuffle(x, 2).square().sum() + F.channel_shuffle(x, 4).cos().sum()
               + F.fold(F.unfold(x, 2, padding=1), (2, 3), 2, padding=1).square().sum()
               + F.bilinear(x[0, :3, :, 0].T, x[0, :4, 1, :2].T, w).square().sum()
               + nn.CircularPad2d(1)(x).square().sum()
               + F.max_pool3d(x.unsqueeze(0), 2, padding=1).square().sum()
               + F.avg_pool3d(x.unsqueeze(0), (2, 1, 2)).square().sum()
               + F.conv3d(x.reshape(1, 4, 2, 2, 3), w.reshape(2, 4, 1, 1, 3)).square().sum())
        out.backward()
        return [out, x.grad, w.grad]
    matches_numpy(backend, run)


def exercise_cnn_layer_ops():
    """One call to each op-table row behind these layers (test_ops_grad's every-op check runs it)."""
    x = engine.randn(1, 4, 4, 4, requires_grad=True)
    F.conv_transpose1d(x[0], engine.randn(4, 2, 2))
    F.conv_transpose2d(x, engine.randn(4, 2, 2, 2))
    F.conv3d(engine.randn(1, 4, 2, 3, 3, requires_grad=True), engine.randn(2, 4, 2, 2, 2))
    F.conv_transpose3d(engine.randn(1, 4, 2, 3, 3, requires_grad=True), engine.randn(4, 2, 2, 2, 2))
    F.group_norm(x, 2)
    F.rms_norm(x, (4,))
    F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2)
    F.channel_shuffle(x, 2)
    F.fold(F.unfold(x, 2), (4, 4), 2)
    F.bilinear(x[0, 0], x[0, 1], engine.randn(2, 4, 4))
    F.max_pool3d(x[None], 2)
    F.avg_pool3d(x[None], 2)


# ---- 3-D pooling -----------------------------------------------------------------------------------------
def ref_pool3d(x, k, s, p, d, out, op, count_include_pad=True):
    n, c, *size = x.shape
    res = np.zeros((n, c) + tuple(out))
    for i, j, l in itertools.product(*map(range, out)):
        starts = [o * st - pp for o, st, pp in zip((i, j, l), s, p)]
        idx = [[a + t * dd for t in range(kk)] for a, kk, dd in zip(starts, k, d)]
        inside = [[v for v in ix if 0 <= v < sz] for ix, sz in zip(idx, size)]
        win = x[:, :, inside[0]][:, :, :, inside[1]][:, :, :, :, inside[2]].reshape(n, c, -1)
        if op == "max":
            res[:, :, i, j, l] = win.max(-1)
        else:
            whole = np.prod([min(a + kk, sz + pp) - a for a, kk, sz, pp in zip(starts, k, size, p)])
            res[:, :, i, j, l] = win.sum(-1) / (whole if count_include_pad else win.shape[-1])
    return res


def test_max_pool3d_values_indices_node_and_gradients():
    x = f64(2, 3, 4, 5, 6, seed=19)
    out, idx = F.max_pool3d(x, 2, stride=(1, 2, 2), padding=1, dilation=(1, 1, 2), ceil_mode=True,
                            return_indices=True)
    assert tuple(out.shape) == (2, 3, 5, 3, 4) and idx.dtype is engine.int64
    np.testing.assert_allclose(_np(out), ref_pool3d(_np(x), (2, 2, 2), (1, 2, 2), (1, 1, 1), (1, 1, 2), (5, 3, 4),
                                                    "max"))
    flat = _np(x).reshape(2, 3, -1)
    assert np.array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2).reshape(out.shape), _np(out))
    node = out.grad_fn
    assert node.name() == "MaxPool3DWithIndicesBackward0" and node._saved_self is x
    assert node._saved_result1 is idx and node._saved_stride == (1, 2, 2) and node._saved_dilation == (1, 1, 2)
    gradcheck(lambda a: F.max_pool3d(a, (2, 3, 2)), [f64(1, 2, 4, 6, 4, seed=20)])
    nan = engine.tensor([[[[[1.0, float("nan"), 3.0], [float("nan"), 2.0, 0.0]]]]])
    v, i = F.max_pool3d(nan, (1, 2, 3), return_indices=True)
    assert math.isnan(v.item()) and i.item() == 3          # PyTorch's CPU kernel: the last NaN
    assert repr(nn.MaxPool3d(2)) == "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert tuple(nn.MaxPool3d(2)(engine.randn(3, 4, 4, 4)).shape) == (3, 2, 2, 2)


@pytest.mark.parametrize("kw", [dict(kernel_size=(2, 3, 2), padding=(1, 1, 0), count_include_pad=False),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=2, divisor_override=3)])
def test_avg_pool3d_values_node_and_gradients(kw):
    x = f64(1, 2, 4, 5, 6, seed=21)
    out = F.avg_pool3d(x, **kw)
    assert out.grad_fn.name() == "AvgPool3DBackward0" and out.grad_fn._saved_self is x
    k = kw["kernel_size"]
    k = (k,) * 3 if isinstance(k, int) else k
    s = kw.get("stride", k)
    s = (s,) * 3 if isinstance(s, int) else s
    p = kw.get("padding", 0)
    p = (p,) * 3 if isinstance(p, int) else p
    want = ref_pool3d(_np(x), k, s, p, (1, 1, 1), tuple(out.shape[2:]), "avg", kw.get("count_include_pad", True))
    if kw.get("divisor_override"):
        want = want * np.prod(k) / kw["divisor_override"]
    np.testing.assert_allclose(_np(out), want, atol=1e-12)
    gradcheck(lambda a: F.avg_pool3d(a, **kw), [x])
    assert repr(nn.AvgPool3d(3, stride=2, padding=1)) == "AvgPool3d(kernel_size=3, stride=2, padding=1)"


def test_pool3d_errors_as_pytorch():
    cases = [
        (lambda: F.max_pool3d(engine.randn(2, 3, 4), 2), "non-empty 4D or 5D (batch mode) tensor expected for input"),
        (lambda: F.max_pool3d(engine.randn(1, 2, 3, 3, 3), 2, padding=2),
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
        (lambda: F.max_pool3d(engine.randn(1, 2, 1, 3, 3), 2),
         "Given input size: (2x1x3x3). Calculated output size: (2x0x1x1). Output size is too small"),
        (lambda: F.avg_pool3d(engine.randn(1, 2, 1, 3, 3), 2),
         "input image (T: 1 H: 3 W: 3) smaller than kernel size (kT: 2 kH: 2 kW: 2)"),
        (lambda: F.max_pool3d(engine.randn(1, 2, 3, 3, 3), (2, 2)),
         "max_pool3d: kernel_size must either be a single int, or a tuple of three ints"),
        (lambda: F.avg_pool3d(engine.randn(1, 2, 3, 3, 3), 2, divisor_override=0), "divisor must be not zero"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError) as e:
            fn()
        assert str(e.value) == msg
