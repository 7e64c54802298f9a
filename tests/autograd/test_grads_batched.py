"""autograd.grad(..., is_grads_batched=True): one backward per row of the cotangents, stacked."""
import numpy as np
import pytest

import engine


def test_rows_of_the_identity_give_the_jacobian():
    x = engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64, requires_grad=True)
    w = engine.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], dtype=engine.float64)
    y = w @ (x * x)
    (jac,) = engine.autograd.grad(y, x, engine.eye(2, dtype=engine.float64), is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), w.numpy() * 2 * x.detach().numpy())
    assert x.grad is None


def test_shape_mismatch_is_pytorchs_error():
    x = engine.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        engine.autograd.grad(x ** 2, x, engine.ones(3), is_grads_batched=True)
    assert str(e.value) == (
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch dimension. "
        "The sizes of the remaining dimensions are expected to match the shape of corresponding output, but a "
        "mismatch was detected: grad_output[0] has a shape of torch.Size([]) and output[0] has a shape of "
        "torch.Size([3]). If you only want some tensors in `grad_output` to be considered batched, consider "
        "using vmap.")
