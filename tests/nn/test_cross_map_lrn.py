"""nn.CrossMapLRN2d (engine/nn/modules/normalization.py): PyTorch's legacy windows, values and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, matches_numpy

# PyTorch 2.13 for x = arange(12).view(1, 4, 3, 1) / 5, CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=2), sum()
TORCH_OUT = [0.0, 0.11410482227802277, 0.22193792462348938, 0.3212590515613556, 0.4097770154476166,
             0.485594779253006, 0.548520028591156, 0.5982835292816162, 0.6352813243865967, 0.8360628485679626,
             0.8773826956748962, 0.9067956805229187]
TORCH_GRAD = [0.5815668106079102, 0.5678244829177856, 0.5447260737419128, 0.5144800543785095, 0.4678344428539276,
              0.41396254301071167, 0.35725438594818115, 0.28226524591445923, 0.20828185975551605,
              0.17937704920768738, 0.11219993233680725, 0.05528866872191429]


def test_values_and_gradient_are_pytorchs():
    x = (engine.arange(12.0).reshape(1, 4, 3, 1) / 5).requires_grad_()
    y = nn.CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=2)(x)
    assert y.grad_fn.name() == "CrossMapLRN2dBackward"
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy().reshape(-1), TORCH_OUT, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy().reshape(-1), TORCH_GRAD, rtol=1e-5)


def test_the_legacy_window_differs_from_local_response_norm_at_the_start():
    x = engine.tensor(np.random.default_rng(0).standard_normal((1, 6, 2, 2)))
    a = nn.CrossMapLRN2d(3, alpha=0.5)(x).numpy()
    b = F.local_response_norm(x, 3, alpha=0.5).numpy()
    np.testing.assert_allclose(a[:, 1], b[:, 1], rtol=1e-12)     # the centred window of 3
    assert not np.allclose(a[:, 3], b[:, 3])                      # channel 0 is never dropped (NOTE 1)


def test_module_repr_and_error():
    assert repr(nn.CrossMapLRN2d(3, alpha=0.01)) == "CrossMapLRN2d(3, alpha=0.01, beta=0.75, k=1)"
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        nn.CrossMapLRN2d(3)(engine.zeros(6, 3, 3))


def _run():
    x = engine.tensor(np.random.default_rng(1).standard_normal((2, 5, 3, 2)), requires_grad=True)
    y = nn.CrossMapLRN2d(4, alpha=0.3, beta=0.6, k=1.5)(x)
    (y * y).sum().backward()
    return [y, x.grad]


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    matches_numpy(backend, _run)
