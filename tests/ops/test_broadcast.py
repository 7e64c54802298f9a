"""broadcast_tensors / broadcast_shapes, and all/any with dim tuples and keepdim, as PyTorch."""
import pytest

import engine


def test_broadcast_tensors_expands_only_what_changes():
    a = engine.ones(3, 1, requires_grad=True)
    b = engine.ones(4)
    x, y = engine.broadcast_tensors(a, b)
    assert tuple(x.shape) == tuple(y.shape) == (3, 4)
    assert x.grad_fn.name() == "ExpandBackward0" and x._storage is a._storage
    x.sum().backward()
    assert a.grad.tolist() == [[4.0]] * 3
    same = engine.ones(3, 4)
    assert engine.broadcast_tensors(same, b)[0] is same


def test_broadcast_shapes_and_errors():
    assert engine.broadcast_shapes((3, 1), (4,), (2, 1, 1)) == engine.Size([2, 3, 4])
    with pytest.raises(RuntimeError, match=r"^Attempting to broadcast a dimension of length 4 at -1! Mismatching "
                                           r"argument at index 1 had \(4,\); but expected shape should be "
                                           r"broadcastable to \[3\]$"):
        engine.broadcast_shapes((3,), (4,))
    with pytest.raises(RuntimeError, match="^The size of tensor a \\(3\\) must match the size of tensor b \\(4\\) "
                                           "at non-singleton dimension 0$"):
        engine.broadcast_tensors(engine.ones(3), engine.ones(4))


def test_all_any_dims_and_keepdim():
    t = engine.tensor([[1, 0, 1], [1, 1, 1]])
    assert t.all(1).tolist() == [False, True] and t.any(0, keepdim=True).tolist() == [[True, True, True]]
    assert engine.all(t, dim=(0, 1)).item() is False and tuple(t.all(1, keepdim=True).shape) == (2, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.all(2)
