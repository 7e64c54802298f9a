"""Keys mixing index tensors with ints, slices, None and ``...`` follow PyTorch: basic parts first (a
view node), then IndexBackward0 on that view, whose ``_saved_indices`` has None for full-slice dims."""
import numpy as np
import pytest

import engine
from tests.checks import gradcheck

I = [0, 2]
# key -> (shape, node below IndexBackward0, _saved_indices pattern: "t" a tensor, None a kept dim)
CASES = {
    "1,:,i": (lambda x, i: x[1, :, i], (4, 2), "SelectBackward0", (None, "t")),
    "i,:,1": (lambda x, i: x[i, :, 1], (2, 4), "SelectBackward0", ("t",)),
    ":,i": (lambda x, i: x[:, i], (3, 2, 5), "torch::autograd::AccumulateGrad", (None, "t")),
    "...,i": (lambda x, i: x[..., i], (3, 4, 2), "torch::autograd::AccumulateGrad", (None, None, "t")),
    "None,i,None": (lambda x, i: x[None, i, None], (1, 2, 1, 4, 5), "UnsqueezeBackward0", (None, "t")),
    "...,i,1": (lambda x, i: x[..., i, 1], (3, 2), "SelectBackward0", (None, "t")),
    "1:3,i,::2": (lambda x, i: x[1:3, i, ::2], (2, 2, 3), "SliceBackward0", (None, "t")),
    "i,:,i": (lambda x, i: x[i, :, i], (2, 4), "torch::autograd::AccumulateGrad", ("t", None, "t")),
}


def _below(y):
    return y.grad_fn.next_functions[0][0].name()


@pytest.mark.parametrize("name", list(CASES))
def test_shape_graph_and_saved_indices(name):
    fn, shape, below, pattern = CASES[name]
    x = engine.arange(60.0).reshape(3, 4, 5).requires_grad_()
    i = engine.tensor(I)
    y = fn(x, i)
    assert tuple(y.shape) == shape
    assert y.grad_fn.name() == "IndexBackward0" and _below(y) == below
    saved = y.grad_fn._saved_indices
    assert tuple("t" if s is not None else None for s in saved) == pattern
    assert all(s is None or s.tolist() == I for s in saved)


def test_int_then_tensor_values_and_gradient():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5))
    x = engine.tensor(a, dtype=engine.float64, requires_grad=True)
    i = engine.tensor([4, 0, 4])
    y = x[1, :, i]
    np.testing.assert_array_equal(y.detach().numpy(), a[1][:, [4, 0, 4]])
    gradcheck(lambda t: t[1, :, i], [x])
    gradcheck(lambda t: t[None, 1:, :, i], [x])


def test_setitem_with_an_int_writes_pytorchs_region():
    x = engine.zeros(3, 4, 5)
    v = engine.arange(8.0).reshape(4, 2)
    x[1, :, engine.tensor(I)] = v
    want = np.zeros((3, 4, 5), np.float32)
    want[1][:, I] = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(x.numpy(), want)


def test_setitem_with_an_int_gradients():
    rng = np.random.default_rng(1)
    base = engine.tensor(rng.standard_normal((3, 4, 5)), dtype=engine.float64, requires_grad=True)
    v = engine.tensor(rng.standard_normal((4, 2)), dtype=engine.float64, requires_grad=True)
    i = engine.tensor(I)

    def f(b, val):
        y = b * 1.0
        y[1, :, i] = val
        return y
    gradcheck(f, [base, v])


@pytest.mark.parametrize("key,value,msg", [
    (lambda i: i, (3, 4), "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to indexing result "
                          "of shape [2, 4]"),
    (lambda i: (slice(None), i), (2, 3), "shape mismatch: value tensor of shape [2, 3] cannot be broadcast to "
                                         "indexing result of shape [3, 2]"),
    (lambda i: slice(0, 2), (3, 4), "The expanded size of the tensor (2) must match the existing size (3) at "
                                    "non-singleton dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 4]"),
])
def test_setitem_shape_errors_in_pytorchs_words(key, value, msg):
    x = engine.zeros(3, 4)
    with pytest.raises(RuntimeError) as e:
        x[key(engine.tensor(I))] = engine.ones(*value)
    assert str(e.value) == msg
