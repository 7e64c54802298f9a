"""dropout1d/dropout3d (channel dropout) and alpha_dropout/feature_alpha_dropout, with their modules."""
import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F

ALPHA = 1.7580993408473766


@pytest.mark.parametrize("fn,shape", [(F.dropout1d, (4, 6, 5)), (F.dropout3d, (2, 6, 2, 3, 2))])
def test_channel_dropout_zeroes_whole_channels(fn, shape):
    engine.manual_seed(0)
    x = engine.ones(*shape, dtype=engine.float64, requires_grad=True)
    y = fn(x, 0.5)
    assert y.grad_fn.name() == "MulBackward0"
    assert tuple(y.grad_fn._saved_other.shape) == shape[:2] + (1,) * (len(shape) - 2)
    per_channel = y.detach().numpy().reshape(shape[0] * shape[1], -1)
    for row in per_channel:                       # each channel is all 0 or all 1/(1-p)
        assert set(row.tolist()) in ({0.0}, {2.0})
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_unbatched_input_and_errors():
    y = F.dropout1d(engine.randn(3, 4, requires_grad=True), 0.5)
    assert y.grad_fn.name() == "SqueezeBackward1" and y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert F.dropout3d(engine.randn(3, 2, 2, 2, requires_grad=True)).grad_fn.name() == "SqueezeBackward1"
    with pytest.raises(RuntimeError, match="^dropout1d: Expected 2D or 3D input, but received a 1D input"):
        F.dropout1d(engine.randn(3))
    with pytest.warns(UserWarning, match="^dropout3d: Received a 3-D input to dropout3d, which is deprecated"):
        F.dropout3d(engine.randn(2, 3, 2))
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got 1.5$"):
        F.alpha_dropout(engine.randn(3), 1.5)


def test_alpha_dropout_values_gradient_and_moments():
    engine.manual_seed(1)
    p = 0.3
    a = 1.0 / ((ALPHA ** 2 * p + 1) * (1 - p)) ** 0.5
    x = engine.randn(1000, dtype=engine.float64, requires_grad=True)
    y = F.alpha_dropout(x, p, training=True)
    assert y.grad_fn.name() == "AddBackward0" and y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    xs, ys = x.detach().numpy(), y.detach().numpy()
    dropped = np.isclose(ys, a * ALPHA * (p - 1))
    np.testing.assert_allclose(ys[~dropped], a * xs[~dropped] + a * ALPHA * p, rtol=1e-12)
    assert 0.2 < dropped.mean() < 0.4
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(dropped, 0.0, a))
    z = F.alpha_dropout(engine.randn(200000, dtype=engine.float64), p, training=True).numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01      # SELU's fixed point is kept
    assert F.alpha_dropout(x, p) is x                                # training=False by default, as PyTorch


def test_feature_alpha_dropout_is_per_channel():
    engine.manual_seed(2)
    y = F.feature_alpha_dropout(engine.zeros(8, 5, 3, dtype=engine.float64), 0.5, training=True).numpy()
    for row in y.reshape(40, 3):
        assert len(set(row.tolist())) == 1


def test_modules():
    assert repr(nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"
    assert repr(nn.Dropout1d(0.3)) == "Dropout1d(p=0.3, inplace=False)"
    assert repr(nn.Dropout3d()) == "Dropout3d(p=0.5, inplace=False)"
    assert repr(nn.FeatureAlphaDropout(0.1)) == "FeatureAlphaDropout(p=0.1, inplace=False)"
    m = nn.Dropout1d(0.5).eval()
    x = engine.randn(2, 3, 4)
    assert m(x) is x
