"""A NumPy scalar is a number to PyTorch: it neither promotes a float32 tensor to float64 nor turns
the result into a NumPy array (issue #20)."""
import numpy as np
import pytest

import engine as torch


@pytest.mark.parametrize("s", [np.float64(2.0), np.float32(2.0), np.int64(2), np.sqrt(4.0)])
def test_arithmetic_with_a_numpy_scalar_keeps_float32(s):
    t = torch.ones(3)
    for r in (t / s, t * s, t + s, t - s, torch.add(t, s), torch.mul(t, s)):
        assert isinstance(r, torch.Tensor) and r.dtype == torch.float32


def test_a_numpy_scalar_on_the_left_gives_a_tensor():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    r = np.float64(2.0) * t
    assert isinstance(r, torch.Tensor) and r.dtype == torch.float32 and r.tolist() == [2.0, 4.0]
    assert r.grad_fn.name() == "MulBackward0"
    assert isinstance(np.float64(1.0) + t, torch.Tensor) and isinstance(np.float32(3.0) - t, torch.Tensor)


def test_the_attention_scale_of_nanogpt_stays_float32():
    q = torch.randn(2, 4, 8)
    att = (q @ q.transpose(-2, -1)) * (1.0 / np.sqrt(q.size(-1)))
    assert att.dtype == torch.float32
