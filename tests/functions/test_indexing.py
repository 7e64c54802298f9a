"""engine/functions/indexing.py's refusals and writes that the differential fuzzer found apart from
PyTorch 2.13 (issue #16): a lone key into a 0-d tensor, ``copy_``'s checks in PyTorch's order, and
``y[key] = value`` into an ``expand``ed tensor (NOTE [ Which node a write makes ] 5). Messages and
values recorded from PyTorch 2.13; ``index_select`` out of range, whose message depends on PyTorch's CPU
kernel path."""
from __future__ import annotations

import pytest

import engine

D = engine.float64
ZERO_DIM = "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert " \
           "a 0-dim tensor to a number"
SHARED = ("unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
          "Please clone() the tensor before performing the operation.")


@pytest.mark.parametrize("key, message", [(0, ZERO_DIM), (-1, "index -1 is out of bounds for dimension 0 with size 0"),
                                          (5, "index 5 is out of bounds for dimension 0 with size 0"),
                                          (slice(None), "slice() cannot be applied to a 0-dim tensor."),
                                          ((0,), "too many indices for tensor of dimension 0")])
def test_a_lone_key_into_a_0d_tensor_gives_pytorchs_error(key, message):
    x = engine.tensor(1.5)
    for op in (lambda: x[key], lambda: x.__setitem__(key, 2.0)):
        with pytest.raises(IndexError) as e:
            op()
        assert str(e.value) == message
    x[...] = 2.0
    x[True] = 3.0                     # what PyTorch allows into a 0-d tensor still writes
    assert x.item() == 3.0 and x[None].shape == (1,)


@pytest.mark.parametrize("dst, src, message", [
    ((2,), (3,), "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ((1,), (3,), "output with shape [1] doesn't match the broadcast shape [3]"),
    ((3, 1), (3, 3), "output with shape [3, 1] doesn't match the broadcast shape [3, 3]"),
    ((), (2,), "output with shape [] doesn't match the broadcast shape [2]"),
    ((2, 3), (1, 1, 3), "output with shape [2, 3] doesn't match the broadcast shape [1, 2, 3]"),
])
def test_copy_refuses_what_pytorch_refuses_in_its_words(dst, src, message):
    with pytest.raises(RuntimeError) as e:
        engine.zeros(dst).copy_(engine.ones(src))
    assert str(e.value) == message
    y = engine.zeros(2, 3)
    assert y.copy_(engine.tensor([1.0, 2.0, 3.0])).tolist() == [[1.0, 2.0, 3.0]] * 2


@pytest.mark.parametrize("split, name", [(lambda y: y.split(2), "Split"), (lambda y: y.chunk(2), "Split"),
                                         (lambda y: y.unbind(0), "Unbind")])
def test_copy_into_an_output_of_a_multi_view_op_is_refused_before_its_shape_is_checked(split, name):
    y = engine.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    with pytest.raises(RuntimeError) as e:
        split(y)[0].copy_(engine.ones(5))      # a shape that does not fit either
    assert str(e.value) == (f"Output 0 of {name} is a view and is being modified inplace. This view is the output of "
                            "a function that returns multiple views. Such functions do not allow the output views to "
                            "be modified inplace. You should replace the inplace operation by an out-of-place one.")
    with engine.no_grad():
        part = split(y)[0]
        part.copy_(engine.zeros(part.shape))   # without grad mode the write is allowed
    assert y[0].item() == 0.0


def _write_row(y, v):
    y[0] = 1.0


def _write_element(y, v):
    y[1, 2] = v * 3


def _write_column(y, v):
    y[:, 0] = v


EXPANDED = {   # y = (x * 1)[:1].expand(3, 3) (or [:, :1].expand(2, 3) for the column), y[key] = value,
    # y.backward(arange): (y, x.grad, v.grad) from PyTorch 2.13, y.grad_fn AsStridedBackward0
    _write_row: ([[1.0] * 3] * 3, [[0.0] * 3] * 2, None),
    _write_element: ([[0.5, -1.5, 0.75]] * 3, [[12.0, 15.0, 0.0], [0.0] * 3], 54.0),
    _write_column: ([[0.25] * 3] * 2, [[0.0] * 3] * 2, 21.0),
}


@pytest.mark.parametrize("write", list(EXPANDED), ids=lambda f: f.__name__)
def test_a_write_into_an_expanded_tensor_that_shares_nothing_computes_its_backward(write):
    x = engine.tensor([[0.5, -1.5, 2.0], [1.25, 3.0, -0.75]], dtype=D, requires_grad=True)
    v = engine.tensor(0.25, dtype=D, requires_grad=True)
    y = (x * 1)[:, :1].expand(2, 3) if write is _write_column else (x * 1)[:1].expand(3, 3)
    write(y, v)
    y.backward(engine.arange(1.0, y.numel() + 1, dtype=D).reshape(y.shape))
    want_y, want_x, want_v = EXPANDED[write]
    assert y.grad_fn.name() == "AsStridedBackward0" and y.tolist() == want_y and x.grad.tolist() == want_x
    assert (v.grad is None and want_v is None) or v.grad.item() == want_v


@pytest.mark.parametrize("key", [..., slice(None), slice(1, None), 0, (slice(None), 1), (None, 1)], ids=repr)
def test_a_write_into_memory_that_elements_of_the_written_view_share_is_refused_at_once(key):
    y = (engine.tensor([1.0, 2.0, 3.0]) * 1)[:1].expand(3, 3)
    for value in (2.0, engine.tensor(2.0), engine.tensor([2.0, 3.0, 4.0])):
        with pytest.raises(RuntimeError) as e:
            y[key] = value
        assert str(e.value) == SHARED
    y[1, 1] = 5.0                             # one element: nothing shared
    assert y.tolist() == [[5.0] * 3] * 3
    e = engine.zeros(0, 4, 1) * 1             # nor in an empty tensor
    e[...] = 2.0
    assert e.shape == (0, 4, 1)


@pytest.mark.parametrize("shape, dim, index, exc, message", [
    ((2, 3), 0, [2], IndexError, "index out of range in self"),
    ((2, 3), 1, [-1], RuntimeError, "INDICES element is out of DATA bounds, id=-1 axis_dim=3"),
    ((2, 3, 4), 2, [9], IndexError, "index out of range in self"),
    ((2, 3, 4), 1, [9], RuntimeError, "INDICES element is out of DATA bounds, id=9 axis_dim=3"),
    ((2,), 0, [-1], IndexError, "index out of range in self"),
    ((), 0, [1], IndexError, "index out of range in self"),
    ((0, 3), 0, [0], RuntimeError, "index_select(): self indexing axis dim should be positive"),
    ((2, 0), 0, [5], RuntimeError, "INDICES element is out of DATA bounds, id=5 axis_dim=2"),
])
def test_index_select_out_of_range_in_pytorchs_words(shape, dim, index, exc, message):
    with pytest.raises(exc) as e:
        engine.index_select(engine.zeros(shape), dim, engine.tensor(index))
    assert str(e.value) == message
    with pytest.raises(IndexError) as e:   # a transposed (not contiguous) input takes the same path along dim 0
        engine.index_select(engine.zeros(3, 2).t(), 0, engine.tensor([5]))
    assert str(e.value) == "index out of range in self"
