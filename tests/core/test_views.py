"""``view``, ``reshape``, ``flatten``/``unflatten`` and ``view(dtype)`` (engine/functions/views.py) follow
PyTorch's stride rule (NOTE [ Strided views ] in engine/ops/shape/strided.py), not contiguity.

Every expected value, stride, node name and message was recorded from PyTorch 2.13.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine as torch

VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.")


def _shares(a, b) -> bool:
    return a._storage is b._storage and np.shares_memory(a._data, b._data)


def test_the_examples_of_pytorchs_view_docs():
    x = torch.arange(16.).reshape(4, 4)
    assert x.view(16).shape == (16,) and x.view(-1, 8).shape == (2, 8)
    a = torch.arange(24.).reshape(1, 2, 3, 4)
    b = a.transpose(1, 2)
    c = a.view(1, 3, 2, 4)
    assert b.shape == c.shape == (1, 3, 2, 4) and not torch.equal(b, c)
    t = torch.arange(16.).reshape(4, 4)
    v = t.view(2, 8)
    assert _shares(t, v)
    v[0][0] = 3.14
    assert t[0][0].item() == pytest.approx(3.14)
    base = torch.tensor([[0, 1], [2, 3]])
    tt = base.transpose(0, 1)
    assert base.is_contiguous() and not tt.is_contiguous() and tt.contiguous().is_contiguous()


def test_views_that_need_the_stride_rule_not_contiguity():
    e = torch.tensor([1.0]).expand(3).view(3)
    assert e.tolist() == [1.0, 1.0, 1.0] and e.stride() == (0,)
    x = torch.arange(6.).reshape(2, 3)
    s = x.select(1, 0).view(2)
    assert s.tolist() == [0.0, 3.0] and s.stride() == (3,) and _shares(x, s)
    t = x.t().view(3, 2)
    assert t.stride() == (1, 3) and _shares(x, t)
    z = torch.zeros(0).view(-1)
    assert z.shape == (0,)
    assert torch.zeros(0, 3).view(3, -1).shape == (3, 0)
    assert torch.tensor([1.0, 2.0]).expand(3, 2).view(3, 1, 2).stride() == (0, 2, 1)
    for bad in (lambda: x.t().view(6), lambda: torch.tensor([1.0, 2.0]).expand(3, 2).view(6)):
        with pytest.raises(RuntimeError) as e:
            bad()
        assert str(e.value) == VIEW_ERROR


def test_the_nanogpt_split_then_view():
    """q, k, v = x.split(n, dim=2); k.view(B, T, nh, hs): each part's last dim is contiguous."""
    B, T, C, nh = 2, 3, 8, 2
    x = (torch.arange(float(B * T * 3 * C)) / 8).reshape(B, T, 3 * C).requires_grad_()
    y = x * 1
    _, k, _ = y.split(C, dim=2)
    kk = k.view(B, T, nh, C // nh)
    assert kk.stride() == (72, 24, 4, 1) and kk.storage_offset() == 8 and kk.grad_fn.name() == "ViewBackward0"
    assert _shares(kk, y) and kk.tolist() == y.detach()[:, :, C:2 * C].reshape(B, T, nh, C // nh).tolist()
    (kk * kk).sum().backward()
    assert x.grad[0, 0].tolist() == [0.0] * 8 + [2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 3.75] + [0.0] * 8


@pytest.mark.parametrize("call,error,message", [
    (lambda x: x.view(), TypeError, ("view() received an invalid combination of arguments - got (), but expected "
                                     "one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")),
    (lambda x: x.view(2.0, 3), TypeError, ("view() received an invalid combination of arguments - got (float, int), "
                                           "but expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")),
    (lambda x: x.view(()), RuntimeError, "shape '[]' is invalid for input of size 6"),
    (lambda x: x.view(-2, 3), RuntimeError, "invalid shape dimension -2 at index 0 of shape [-2, 3]"),
    (lambda x: x.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda x: x.view(4), RuntimeError, "shape '[4]' is invalid for input of size 6"),
    (lambda x: torch.zeros(0, 3).view(0, -1), RuntimeError,
     ("cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension size -1 can be any "
      "value and is ambiguous")),
    (lambda x: x.reshape(), TypeError, 'reshape() missing 1 required positional arguments: "shape"'),
    (lambda x: x.reshape((2.0, 3)), TypeError,
     "reshape(): argument 'shape' (position 1) must be tuple of ints, but found element of type float at pos 0"),
    (lambda x: x.flatten(2, 1), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda x: x.flatten(1, 0), RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim"),
], ids=["no-sizes", "float", "empty-shape", "negative", "two-inferred", "wrong-size", "ambiguous", "reshape-none",
        "reshape-float", "flatten-range", "flatten-order"])
def test_pytorchs_errors(call, error, message):
    with pytest.raises(error) as e:
        call(torch.arange(6.).reshape(2, 3))
    assert str(e.value) == message


def test_sizes_come_as_ints_a_sequence_or_a_keyword():
    x = torch.arange(6.).reshape(2, 3)
    for y in (x.view(6), x.view((6,)), x.view([6]), x.view(torch.Size([6])), x.view(size=(6,)),
              x.view(torch.tensor(6)), x.reshape(shape=(6,))):
        assert y.shape == (6,) and _shares(x, y)
    assert torch.tensor(1.).view(1, 1).shape == (1, 1) and torch.tensor([1.]).view([]).shape == ()


def test_reshape_views_where_the_stride_rule_allows_and_copies_only_otherwise():
    x = torch.arange(24., requires_grad=True).reshape(2, 3, 4) * 1
    c = x.reshape(6, 4)
    assert c.grad_fn.name() == "ViewBackward0" and _shares(c, x)
    s = x.select(2, 0).reshape(6)         # not contiguous, but a view: _reshape_alias
    assert s.grad_fn.name() == "ReshapeAliasBackward0" and _shares(s, x) and s.stride() == (4,)
    e = torch.tensor([1.0], requires_grad=True).expand(3).reshape(3)
    assert e.grad_fn.name() == "ReshapeAliasBackward0" and e.stride() == (0,)
    t = x.transpose(0, 2).reshape(24)       # impossible as a view: a contiguous copy
    assert t.grad_fn.name() == "UnsafeViewBackward0" and t.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert not _shares(t, x)


def test_flatten_of_one_dim_is_the_tensor_itself_and_unflatten_is_a_view():
    x = torch.arange(24., requires_grad=True).reshape(2, 3, 4) * 1
    assert x.flatten(1, 1) is x and x.flatten(-1) is x
    t = x.transpose(0, 2)
    assert t.unflatten(1, (3, 1)).grad_fn.name() == "ViewBackward0"
    assert t.flatten(0, 1).grad_fn.name() == "UnsafeViewBackward0"
    assert torch.tensor(1., requires_grad=True).flatten().grad_fn.name() == "ViewBackward0"


def test_is_contiguous_is_pytorchs():
    assert torch.zeros(0, 3).is_contiguous() and torch.zeros(3, 0).t().is_contiguous()
    assert torch.zeros(3, 1).t().is_contiguous() and torch.zeros(()).is_contiguous()
    assert not torch.zeros(2, 3)[:, :1].is_contiguous() and not torch.zeros(1).expand(3).is_contiguous()


# ---- view(dtype) ------------------------------------------------------------------------------------
def test_view_dtype_reads_the_same_bytes():
    x = torch.arange(6.).reshape(2, 3).double()
    f = x.view(torch.float32)
    assert f.shape == (2, 6) and f.stride() == (6, 1) and f.dtype is torch.float32
    assert f.tolist() == [[0.0, 0.0, 0.0, 1.875, 0.0, 2.0], [0.0, 2.125, 0.0, 2.25, 0.0, 2.3125]]
    assert torch.arange(4.).view(torch.int64).tolist() == [4575657221408423936, 4629700418010611712]
    assert torch.tensor([1, 2]).view(torch.float64).tolist() == [5e-324, 1e-323]
    assert torch.tensor([1.0, 0.0]).view(torch.bool).tolist() == [False, False, True, True] + [False] * 4
    b = torch.tensor([True, False, False, False, False, False, True, True]).view(torch.float32)
    assert b.tolist() == [1.401298464324817e-45, 2.369355800876173e-38]
    assert x.view(dtype=torch.int64).dtype is torch.int64


def test_view_dtype_geometry_sharing_and_no_graph():
    g = torch.zeros(3, 4, dtype=torch.float64)[1:, :2].view(torch.float32)
    assert (tuple(g.shape), g.stride(), g.storage_offset()) == ((2, 4), (8, 1), 8)
    g = torch.zeros(3, 8)[1:, 2:6].view(torch.float64)
    assert (tuple(g.shape), g.stride(), g.storage_offset()) == ((2, 2), (4, 1), 5)
    x = torch.zeros(2, requires_grad=True)
    y = x * 1
    i = y.view(torch.float32)
    assert i.grad_fn is None and not i.requires_grad and i._base is None
    i.view(torch.int64)[0] = 1
    assert y._version == 1 and _shares(i, y) and y.grad_fn.name() == "MulBackward0"


@pytest.mark.parametrize("call,message", [
    (lambda: torch.arange(6.).reshape(2, 3).view(torch.int64),
     "self.size(-1) must be divisible by 2 to view Float as Long (different element sizes), but got 3"),
    (lambda: torch.zeros(()).view(torch.float64), "self.dim() cannot be 0 to view Float as Double (different element sizes)"),
    (lambda: torch.zeros(3)[1:].view(torch.float64),
     "self.storage_offset() must be divisible by 2 to view Float as Double (different element sizes), but got 1"),
    (lambda: torch.zeros(4, 4).t().view(torch.float64),
     "self.stride(-1) must be 1 to view Float as Double (different element sizes), but got 4"),
    (lambda: torch.zeros(3, 3)[:, :2].view(torch.float64),
     "self.stride(0) must be divisible by 2 to view Float as Double (different element sizes), but got 3"),
    (lambda: torch.zeros(2, 2, dtype=torch.float64).t().view(torch.float32),
     "self.stride(-1) must be 1 to view Double as Float (different element sizes), but got 2"),
    (lambda: torch.zeros(8, dtype=torch.bool)[1:5].view(torch.float32),
     "self.storage_offset() must be divisible by 4 to view Bool as Float (different element sizes), but got 1"),
], ids=["size", "0-d", "offset", "last-stride", "stride", "downsize-stride", "bool"])
def test_view_dtype_errors(call, message):
    with pytest.raises(RuntimeError) as e:
        call()
    assert str(e.value) == message


def test_chunk_of_an_empty_dim_gives_every_chunk_and_refuses_what_pytorch_refuses():
    parts = (torch.zeros(0, requires_grad=True) * 1).chunk(3)
    assert len(parts) == 3 and all(p.shape == (0,) for p in parts)
    assert parts[0].grad_fn.name() == "SplitWithSizesBackward0"
    for call, message in ((lambda: torch.zeros(3).chunk(0), "chunk expects `chunks` to be greater than 0, got: 0"),
                          (lambda: torch.tensor(1.).chunk(2), "chunk expects at least a 1-dimensional tensor")):
        with pytest.raises(RuntimeError) as e:
            call()
        assert str(e.value) == message
