"""Grouped and depthwise convolutions, padding modes, transposed convolutions (engine/ops/nn/conv.py,
engine/nn/functional/conv.py, engine/nn/modules/conv.py): values against direct NumPy loops, finite differences in
float64 (first and second order), what ConvolutionBackward0 keeps, PyTorch's errors, module repr/init."""
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


def ref_conv(x, w, b, stride, padding, dilation, groups):
    """Direct loops over every output position: (N, C, *sp) with (O, C/G, *k), 1-D or 2-D."""
    one = x.ndim == 3
    if one:
        x, w = x[:, :, None], w[:, :, None]
        stride, padding, dilation = (1,) + stride, (0,) + padding, (1,) + dilation
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * padding[0], wd + 2 * padding[1]))
    xp[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + wd] = x
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc, i, j in itertools.product(range(o), range(oh), range(ow)):
        g = oc // og
        for ci, a, bb in itertools.product(range(cg), range(kh), range(kw)):
            out[:, oc, i, j] += (xp[:, g * cg + ci, i * stride[0] + a * dilation[0], j * stride[1] + bb * dilation[1]]
                                 * w[oc, ci, a, bb])
    if b is not None:
        out += b[None, :, None, None]
    return out[:, :, 0] if one else out


def ref_conv_transpose(x, w, b, stride, padding, output_padding, dilation, groups):
    """Scatter each input value through the kernel: (N, Ci, *sp) with (Ci, Co/G, *k)."""
    one = x.ndim == 3
    if one:
        x, w = x[:, :, None], w[:, :, None]
        stride, padding, dilation = (1,) + stride, (0,) + padding, (1,) + dilation
        output_padding = (0,) + output_padding
    n, ci, h, wd = x.shape
    _, cog, kh, kw = w.shape
    full = [(s - 1) * st + d * (k - 1) + 1 + op for s, st, d, k, op in
            zip((h, wd), stride, dilation, (kh, kw), output_padding)]
    out = np.zeros((n, cog * groups, full[0], full[1]))
    cig = ci // groups
    for c, i, j, a, bb in itertools.product(range(ci), range(h), range(wd), range(kh), range(kw)):
        g = c // cig
        out[:, g * cog:(g + 1) * cog, i * stride[0] + a * dilation[0], j * stride[1] + bb * dilation[1]] += \
            x[:, c, i, j][:, None] * w[c, :, a, bb][None, :]
    out = out[:, :, padding[0]:full[0] - padding[0], padding[1]:full[1] - padding[1]]
    if b is not None:
        out = out + b[None, :, None, None]
    return out[:, :, 0] if one else out


# ---- values ----------------------------------------------------------------------------------------------
CONV = {   # name: (input shape, weight shape, bias?, stride, padding, dilation, groups)
    "2d_groups2": ((2, 4, 6, 7), (6, 2, 3, 2), True, (2, 1), (1, 2), (1, 2), 2),
    "2d_depthwise": ((2, 3, 5, 5), (3, 1, 3, 3), False, (1, 1), (1, 1), (1, 1), 3),
    "2d_depthwise_multiplier": ((1, 2, 4, 5), (6, 1, 2, 2), True, (1, 2), (0, 1), (1, 1), 2),
    "1d_groups3": ((2, 6, 9), (3, 2, 3), True, (2,), (1,), (1,), 3),
    "1d_depthwise_dilated": ((1, 4, 8), (4, 1, 2), False, (1,), (2,), (3,), 4),
}


@pytest.mark.parametrize("name", sorted(CONV))
def test_grouped_conv_values_and_gradients(name):
    xs, ws, has_b, s, p, d, g = CONV[name]
    x, w = f64(*xs, seed=1), f64(*ws, seed=2)
    b = f64(ws[0], seed=3) if has_b else None
    fn = F.conv1d if len(xs) == 3 else F.conv2d
    out = fn(x, w, b, s, p, d, g)
    want = ref_conv(_np(x), _np(w), None if b is None else _np(b), s, p, d, g)
    np.testing.assert_allclose(_np(out), want, rtol=1e-12, atol=1e-12)
    args = [x, w] + ([b] if b is not None else [])
    gradcheck(lambda *a: fn(a[0], a[1], a[2] if len(a) > 2 else None, s, p, d, g), args)


TRANSPOSED = {   # name: (input, weight, bias?, stride, padding, output_padding, dilation, groups)
    "2d_stride2_outpad": ((2, 4, 3, 4), (4, 3, 3, 2), True, (2, 2), (1, 1), (1, 1), (1, 1), 2),
    "2d_dilation_outpad": ((1, 2, 3, 3), (2, 3, 3, 3), False, (1, 1), (0, 0), (1, 1), (2, 2), 1),
    "2d_plain": ((1, 2, 3, 2), (2, 1, 2, 3), True, (1, 1), (0, 0), (0, 0), (1, 1), 1),
    "1d_stride3": ((2, 2, 5), (2, 4, 3), True, (3,), (2,), (0,), (2,), 1),
    "1d_depthwise": ((1, 3, 4), (3, 1, 3), False, (2,), (1,), (1,), (1,), 3),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSED))
def test_conv_transpose_values_and_gradients(name):
    xs, ws, has_b, s, p, op, d, g = TRANSPOSED[name]
    x, w = f64(*xs, seed=4), f64(*ws, seed=5)
    b = f64(ws[1] * g, seed=6) if has_b else None
    fn = F.conv_transpose1d if len(xs) == 3 else F.conv_transpose2d
    out = fn(x, w, b, s, p, op, g, d)
    want = ref_conv_transpose(_np(x), _np(w), None if b is None else _np(b), s, p, op, d, g)
    np.testing.assert_allclose(_np(out), want, rtol=1e-12, atol=1e-12)
    assert out.grad_fn.name() == "ConvolutionBackward0" and out.grad_fn._saved_transposed is True
    args = [x, w] + ([b] if b is not None else [])
    gradcheck(lambda *a: fn(a[0], a[1], a[2] if len(a) > 2 else None, s, p, op, g, d), args)


def test_conv_transpose_is_the_adjoint_of_conv():
    """<conv(x), y> == <x, conv_transpose(y)> with the same weight, stride, padding, dilation, groups."""
    x, w, y = f64(1, 4, 7, 6, seed=7), f64(6, 2, 3, 2, seed=8), None
    out = F.conv2d(x, w, None, (2, 1), (1, 0), (1, 2), 2)
    y = f64(*out.shape, seed=9)
    back = F.conv_transpose2d(y, w, None, (2, 1), (1, 0), (0, 0), 2, (1, 2))
    assert tuple(back.shape) == tuple(x.shape)
    assert math.isclose(float((out * y).sum()), float((x * back).sum()), rel_tol=1e-12)


def test_second_order_through_grouped_and_transposed_convs():
    x, w = f64(1, 4, 4, 4, seed=10), f64(4, 2, 2, 2, seed=11)
    gradgradcheck(lambda a, b: F.conv2d(a, b, padding=1, groups=2) ** 2, [x, w])
    xt, wt = f64(1, 2, 3, 3, seed=12), f64(2, 2, 2, 2, seed=13)
    gradgradcheck(lambda a, b: F.conv_transpose2d(a, b, stride=2, output_padding=1) ** 2, [xt, wt])


def test_padding_same_with_an_even_kernel_pads_one_more_on_the_right_and_bottom():
    x, w = f64(1, 2, 5, 6, seed=14), f64(3, 2, 4, 2, seed=15)
    out = F.conv2d(x, w, padding="same")
    assert tuple(out.shape) == (1, 3, 5, 6)
    xp = np.pad(_np(x), ((0, 0), (0, 0), (1, 2), (0, 1)))
    np.testing.assert_allclose(_np(out), ref_conv(xp, _np(w), None, (1, 1), (0, 0), (1, 1), 1), atol=1e-12)
    assert out.grad_fn.next_functions[0][0].name() == "ConstantPadNdBackward0"
    gradcheck(lambda a, b: F.conv2d(a, b, padding="same"), [x, w])


# ---- what the node keeps -------------------------------------------------------------------------------
def test_convolution_node_keeps_input_and_weight_and_shows_pytorchs_arguments():
    x = engine.randn(2, 4, 5, 5, requires_grad=True)
    w = engine.randn(6, 2, 3, 3, requires_grad=True)
    node = F.conv2d(x, w, engine.randn(6, requires_grad=True), stride=2, padding=1, groups=2).grad_fn
    assert node.name() == "ConvolutionBackward0"
    assert node._saved_input is x and node._saved_weight is w
    assert (node._saved_stride, node._saved_padding, node._saved_dilation) == ((2, 2), (1, 1), (1, 1))
    assert (node._saved_groups, node._saved_transposed, node._saved_output_padding) == (2, False, (0, 0))
    t = F.conv_transpose1d(engine.randn(2, 4, 3, requires_grad=True), engine.randn(4, 3, 3), stride=2,
                           output_padding=1, groups=2).grad_fn
    assert t._saved_transposed is True and t._saved_output_padding == (1,) and t._saved_groups == 2
    assert tuple(t._saved_input.shape) == (2, 4, 3) and tuple(t._saved_weight.shape) == (4, 3, 3)


# ---- errors in PyTorch's words -------------------------------------------------------------------------
def _t(*s):
    return engine.randn(*s)


ERRORS = [
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 3, 3, 3), groups=2), "Given groups=2, weight of size [6, 3, 3, 3], "
     "expected input[2, 4, 5, 5] to have 6 channels, but got 4 channels instead"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(5, 2, 3, 3), groups=2), "Given groups=2, expected weight to be divisible "
     "by 2 at dimension 0, but got weight of size [[5, 2, 3, 3]] instead"),
    (lambda: F.conv1d(_t(2, 4, 5), _t(6, 3, 3), groups=2), "Given groups=2, weight of size [6, 3, 3], expected "
     "input[2, 4, 5] to have 6 channels, but got 4 channels instead"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), groups=0), "non-positive groups is not supported"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), _t(5)), "Given weight of size [6, 4, 3, 3], expected bias "
     "to be 1-dimensional with 6 elements, but got bias of size [5] instead"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), padding=-1), "negative padding is not supported"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), stride=0), "non-positive stride is not supported"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), padding="foo"), "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(_t(2, 4, 5, 5).double(), _t(6, 4, 3, 3)), "expected scalar type Double but found Float"),
    (lambda: F.conv2d(_t(2, 4, 5, 5), _t(6, 4, 3, 3), _t(6).double()),
     "Input type (float) and bias type (double) should be the same"),
    (lambda: F.conv_transpose2d(_t(2, 4, 3, 3), _t(4, 3, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
     "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda: F.conv_transpose1d(_t(2, 4, 5), _t(4, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 0 "
     "output_padding_width: 2 stride_height: 1 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda: F.conv_transpose2d(_t(2, 4, 3, 3), _t(3, 3, 3, 3)), "Given transposed=1, weight of size [3, 3, 3, 3], "
     "expected input[2, 4, 3, 3] to have 3 channels, but got 4 channels instead"),
    (lambda: F.conv_transpose2d(_t(2, 4, 3, 3), _t(4, 3, 3, 3), _t(5)), "Given transposed=1, weight of size "
     "[4, 3, 3, 3], expected bias to be 1-dimensional with 3 elements, but got bias of size [5] instead"),
    (lambda: F.conv_transpose2d(_t(2, 4, 5, 5, 5), _t(4, 3, 3, 3)), "Expected 3D (unbatched) or 4D (batched) input "
     "to conv_transpose2d, but got input of size: [2, 4, 5, 5, 5]"),
    (lambda: F.conv_transpose2d(_t(1, 1, 2, 2), _t(1, 1, 1, 1), padding=2), "Given input size per channel: (2 x 2). "
     "Calculated output size per channel: (-2 x -2). Output size is too small"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_pytorch(k):
    fn, msg = ERRORS[k]
    with pytest.raises(RuntimeError) as e:
        fn()
    assert str(e.value) == msg


MODULE_ERRORS = [
    (lambda: nn.Conv2d(4, 6, 3, groups=3), "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 6, 3, groups=4), "out_channels must be divisible by groups"),
    (lambda: nn.Conv1d(4, 6, 3, groups=0), "groups must be a positive integer"),
    (lambda: nn.Conv2d(4, 6, 3, padding="same", stride=2), "padding='same' is not supported for strided "
     "convolutions"),
    (lambda: nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"), 'Only "zeros" padding mode is supported for '
     "ConvTranspose2d"),
    (lambda: nn.ConvTranspose1d(4, 6, 3, stride=2)(_t(2, 4, 5), output_size=(5,)), "requested an output size of "
     "(5,), but valid sizes range from [11] to [12] (for an input of torch.Size([5]))"),
    (lambda: nn.ConvTranspose1d(4, 6, 3, stride=2)(_t(2, 4, 5), output_size=(2, 3)), "ConvTranspose1D: for 3D "
     "input, output_size must have 1 or 3 elements (got 2)"),
]


@pytest.mark.parametrize("k", range(len(MODULE_ERRORS)))
def test_module_errors_as_pytorch(k):
    fn, msg = MODULE_ERRORS[k]
    with pytest.raises(ValueError) as e:
        fn()
    assert str(e.value) == msg
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 1, padding_mode="foo")


# ---- modules ---------------------------------------------------------------------------------------------
def test_module_repr_shapes_and_state_dict():
    assert repr(nn.Conv2d(4, 6, 3, groups=2, padding_mode="reflect", padding=1)) == \
        "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2, padding_mode=reflect)"
    assert repr(nn.Conv2d(1, 2, 3, padding="same")) == "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding=same)"
    assert repr(nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, output_padding=1, dilation=2, bias=False)) == \
        ("ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2), output_padding=(1, 1), "
         "groups=2, bias=False)")
    assert repr(nn.ConvTranspose1d(4, 6, 3)) == "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(1,))"
    m = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(m.weight.shape) == (4, 3, 3, 3) and list(m.state_dict()) == ["weight", "bias"]
    assert tuple(nn.Conv2d(4, 8, 3, groups=4).weight.shape) == (8, 1, 3, 3)
    x = engine.randn(2, 4, 3, 3)
    t = nn.ConvTranspose2d(4, 6, 3, stride=2)
    assert tuple(t(x).shape) == (2, 6, 7, 7)
    assert tuple(t(x, output_size=(8, 8)).shape) == tuple(t(x, output_size=[2, 4, 8, 8]).shape) == (2, 6, 8, 8)
    assert tuple(t(x[0]).shape) == (6, 7, 7)          # unbatched


def test_transposed_init_bounds_follow_the_fan_in_of_its_weight_layout():
    m = nn.ConvTranspose2d(4, 6, 3, groups=2)          # weight (4, 3, 3, 3): fan_in 3 * 9 = 27
    bound = 1 / math.sqrt(27)
    assert float(m.bias.abs().max()) <= bound and float(m.weight.abs().max()) <= bound


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_padding_modes_pad_first_then_convolve(mode):
    engine.manual_seed(0)
    m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
    x = f64(1, 2, 4, 5, seed=16)
    out = m(x)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(_np(x), ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    want = ref_conv(xp, _np(m.weight), _np(m.bias), (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(_np(out), want, atol=1e-12)
    gradcheck(lambda a: m(a), [x])
    c1 = nn.Conv1d(2, 2, 3, padding="same", padding_mode=mode, groups=2).double()
    x1 = f64(1, 2, 6, seed=17)
    np.testing.assert_allclose(_np(c1(x1)), ref_conv(np.pad(_np(x1), ((0, 0), (0, 0), (1, 1)), mode=np_mode),
                                                     _np(c1.weight), _np(c1.bias), (1,), (0,), (1,), 2), atol=1e-12)


def test_circular_pad_values_gradient_and_errors():
    x = engine.arange(12.0).reshape(1, 3, 4)
    assert F.pad(x, (1, 2), mode="circular")[0, 0].tolist() == [3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0]
    a = f64(1, 2, 3, 4, seed=18)
    np.testing.assert_allclose(_np(F.pad(a, (1, 2, 2, 0), mode="circular")),
                               np.pad(_np(a), ((0, 0), (0, 0), (2, 0), (1, 2)), mode="wrap"))
    cropped = F.pad(engine.arange(6.0).reshape(1, 1, 2, 3), (1, 1, -1, 1), mode="circular")
    assert cropped.tolist() == [[[[5.0, 3.0, 4.0, 5.0, 3.0], [5.0, 3.0, 4.0, 5.0, 3.0]]]]
    gradcheck(lambda t: F.pad(t, (1, 2, 2, 0), mode="circular"), [a])
    with pytest.raises(RuntimeError, match="^Padding value causes wrapping around more than once.$"):
        F.pad(engine.randn(1, 2, 3), (4, 0), mode="circular")
    with pytest.raises(RuntimeError, match="doesn't take in value argument"):
        F.pad(engine.randn(1, 2, 3), (1, 1), mode="circular", value=1.0)


# ---- the same kernels off NumPy ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    def run():
        x, w = f64(1, 4, 4, 5, seed=19), f64(4, 2, 3, 2, seed=20)
        xt, wt = f64(1, 2, 3, 3, seed=21), f64(2, 2, 2, 3, seed=22)
        out = (F.conv2d(x, w, padding=1, groups=2).sum() + F.conv_transpose2d(xt, wt, stride=2, output_padding=1,
                                                                               dilation=2).square().sum()
               + F.conv1d(x[:, :, 0], w[:, :, 0], groups=2).sum())
        out.backward()
        return [out] + [t.grad for t in (x, w, xt, wt)]
    matches_numpy(backend, run)


# ---- conv3d ----------------------------------------------------------------------------------------------
def ref_conv3d(x, w, b, stride, padding, dilation, groups):
    n, c, d, h, wd = x.shape
    o, cg, kd, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    out_sp = [(xp.shape[2 + i] - dilation[i] * (k - 1) - 1) // stride[i] + 1 for i, k in enumerate((kd, kh, kw))]
    out = np.zeros((n, o, *out_sp))
    og = o // groups
    for oc, a, bb, cc in itertools.product(range(o), *map(range, out_sp)):
        g = oc // og
        for i, j, k in itertools.product(range(kd), range(kh), range(kw)):
            patch = xp[:, g * cg:(g + 1) * cg, a * stride[0] + i * dilation[0], bb * stride[1] + j * dilation[1],
                       cc * stride[2] + k * dilation[2]]
            out[:, oc, a, bb, cc] += patch @ w[oc, :, i, j, k]
    return out + (b[None, :, None, None, None] if b is not None else 0)


def test_conv3d_values_gradients_and_module():
    x, w, b = f64(2, 4, 4, 5, 3, seed=23), f64(6, 2, 2, 3, 2, seed=24), f64(6, seed=25)
    args = ((1, 2, 1), (1, 0, 1), (2, 1, 1), 2)
    out = F.conv3d(x, w, b, *args)
    np.testing.assert_allclose(_np(out), ref_conv3d(_np(x), _np(w), _np(b), *args), atol=1e-12)
    node = out.grad_fn
    assert node.name() == "ConvolutionBackward0" and node._saved_input is x and node._saved_weight is w
    assert node._saved_stride == (1, 2, 1) and node._saved_output_padding == (0, 0, 0)
    gradcheck(lambda a, ww, bb: F.conv3d(a, ww, bb, *args), [f64(1, 4, 3, 4, 3, seed=26), w, b])
    same = F.conv3d(x, w, padding="same", groups=2)
    assert tuple(same.shape) == (2, 6, 4, 5, 3)
    m = nn.Conv3d(4, 6, 3, groups=2, padding=1, padding_mode="replicate")
    assert repr(m) == ("Conv3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), groups=2, "
                       "padding_mode=replicate)")
    assert tuple(m.weight.shape) == (6, 2, 3, 3, 3) and tuple(m(engine.randn(4, 3, 3, 3)).shape) == (6, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"^Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d, but got "
                                           r"input of size: \[2, 3\]$"):
        F.conv3d(engine.randn(2, 3), engine.randn(1, 3, 1, 1, 1))


def test_conv_transpose3d_is_the_adjoint_of_conv3d_and_has_gradients():
    x, w = f64(1, 4, 3, 4, 3, seed=27), f64(4, 2, 2, 2, 2, seed=28)
    args = dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)
    out = F.conv3d(x, w, **args)
    y = f64(*out.shape, seed=29)
    op = tuple(a - b for a, b in zip(x.shape[2:], F.conv_transpose3d(y, w, **args).shape[2:]))
    back = F.conv_transpose3d(y, w, output_padding=op, **args)
    assert tuple(back.shape) == tuple(x.shape) and back.grad_fn._saved_transposed is True
    assert math.isclose(float((out * y).sum()), float((x * back).sum()), rel_tol=1e-12)
    gradcheck(lambda a, b, c: F.conv_transpose3d(a, b, c, stride=2, output_padding=(1, 0, 1)),
              [f64(1, 2, 2, 2, 2, seed=30), f64(2, 2, 2, 1, 2, seed=31), f64(2, seed=32)])
    assert repr(nn.ConvTranspose3d(2, 4, 3, stride=2)) == "ConvTranspose3d(2, 4, kernel_size=(3, 3, 3), stride=(2, 2, 2))"
    with pytest.raises(RuntimeError) as e:
        F.conv_transpose3d(engine.randn(1, 2, 3, 3, 3), engine.randn(2, 3, 2, 2, 2), stride=2,
                           output_padding=(0, 2, 1))
    assert str(e.value) == ("output padding must be smaller than either stride or dilation, but got "
                            "output_padding_depth: 0 output_padding_height: 2 output_padding_width: 1 stride_depth: 2 "
                            "stride_height: 2 stride_width: 2 dilation_depth: 1 dilation_height: 1 dilation_width: 1")
