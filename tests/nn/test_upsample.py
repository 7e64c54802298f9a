"""F.interpolate and nn.Upsample (NOTE [ Interpolation matrices ]): values, gradients, nodes and errors
as PyTorch 2.13 gives them."""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import f64, gradcheck, gradgradcheck

# Generated once with PyTorch 2.13 (float64):
#   x = torch.arange(12.).reshape(1,1,3,4).requires_grad_(); w = torch.arange(35.).reshape(1,1,5,7)
#   y = F.interpolate(x, **kw); (y * w[..., :y.shape[2], :y.shape[3]]).sum().backward()
#   print(y.flatten()[:6], x.grad.flatten())
CASES = [
    (dict(size=(5, 7), mode="bilinear", align_corners=False), "UpsampleBilinear2DBackward0",
     [0.0, 0.357143, 0.928571, 1.5, 2.071429, 2.642857],
     [8.457143, 13.442857, 18.7, 22.4, 44.614286, 51.685714, 57.6, 60.3, 70.857143, 78.442857, 83.7, 84.8]),
    (dict(size=(5, 7), mode="bilinear", align_corners=True), "UpsampleBilinear2DBackward0",
     [0.0, 0.5, 1.0, 1.5, 2.0, 2.5],
     [6.0, 13.0, 19.0, 18.0, 43.0, 64.0, 72.0, 59.0, 58.5, 83.0, 89.0, 70.5]),
    (dict(size=(5, 7), mode="nearest"), "UpsampleNearest2DBackward0",
     [0.0, 0.0, 1.0, 1.0, 2.0, 2.0],
     [16.0, 24.0, 32.0, 19.0, 72.0, 80.0, 88.0, 47.0, 57.0, 61.0, 65.0, 34.0]),
    (dict(size=(5, 7), mode="nearest-exact"), "UpsampleNearestExact2DBackward0",
     [0.0, 0.0, 1.0, 2.0, 2.0, 3.0],
     [16.0, 11.0, 28.0, 36.0, 29.0, 16.0, 35.0, 39.0, 100.0, 53.0, 112.0, 120.0]),
    (dict(scale_factor=1.7, mode="bilinear"), "UpsampleBilinear2DBackward0",
     [0.0, 0.382353, 0.970588, 1.558824, 2.147059, 2.735294],
     [8.913495, 14.502595, 18.499135, 11.202422, 43.262111, 52.346021, 54.302768, 30.177336, 66.500865,
      76.974913, 76.609862, 41.708478]),
]


@pytest.mark.parametrize("kw, node, head, grad", CASES)
def test_values_gradients_and_node_as_pytorch(kw, node, head, grad, each_backend):
    x = engine.arange(12.0, dtype=engine.float64).reshape(1, 1, 3, 4).requires_grad_()
    w = engine.arange(35.0, dtype=engine.float64).reshape(1, 1, 5, 7)
    y = F.interpolate(x, **kw)
    assert y.grad_fn.name() == node and y.grad_fn.saved_tensors_info == []     # sizes and scales only
    (y * w[..., :y.shape[2], :y.shape[3]]).sum().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy().reshape(-1)[:6], head, atol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy().reshape(-1), grad, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(size=(5, 6), mode="bilinear", align_corners=False),
                                dict(scale_factor=2, mode="bilinear", align_corners=True),
                                dict(size=(4, 7), mode="nearest")])
def test_finite_differences(kw):
    gradcheck(lambda x: F.interpolate(x, **kw), [f64(2, 1, 3, 4)])
    gradgradcheck(lambda x: F.interpolate(x, **kw) ** 2, [f64(2, 1, 3, 4)])


def test_one_dimensional_linear_and_module():
    # PyTorch: F.interpolate(torch.arange(4.).reshape(1,1,4), scale_factor=1.5, mode='linear')
    y = F.interpolate(engine.arange(4.0).reshape(1, 1, 4), scale_factor=1.5, mode="linear")
    np.testing.assert_allclose(y.numpy().reshape(-1), [0.0, 0.5, 1.166667, 1.833333, 2.5, 3.0], atol=1e-6)
    up = nn.Upsample(scale_factor=2, mode="nearest")
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=(3, 4), mode="bilinear")) == "Upsample(size=(3, 4), mode='bilinear')"
    assert tuple(up(engine.zeros(2, 3, 4, 5)).shape) == (2, 3, 8, 10)


def test_errors_in_pytorchs_words():
    x = engine.randn(1, 1, 4, 4)
    cases = [(dict(scale_factor=2, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs 3D input"),
             (dict(mode="nearest"), ValueError, "either size or scale_factor should be defined"),
             (dict(size=(3, 4), scale_factor=2), ValueError, "only one of size or scale_factor should be defined"),
             (dict(scale_factor=2, mode="nearest", align_corners=True), ValueError,
              "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
              "trilinear"),
             (dict(size=(2, 2, 2)), ValueError, "Input and output must have the same number of spatial dimensions")]
    for kw, exc, msg in cases:
        with pytest.raises(exc) as e:
            F.interpolate(x, **kw)
        assert str(e.value).startswith(msg)


def exercise_upsample_ops():
    """One call per upsample row of the op table (for test_every_table_op_is_exercised)."""
    x1, x2 = f64(1, 1, 3), f64(1, 1, 2, 3)
    for mode in ("nearest", "nearest-exact", "linear"):
        F.interpolate(x1, scale_factor=2, mode=mode)
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        F.interpolate(x2, scale_factor=2, mode=mode)
