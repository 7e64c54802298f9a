"""Shape, view and index functions (engine/functions/shape.py, build.py, index.py; rows in engine/ops/shape/).

Graph node names, saved tensors and error messages are compared with PyTorch through the
fixture (test_saved_tensors.py, test_errors.py); here: values PyTorch 2.13 gives, gradients
against finite differences, which results are views, and the same runs off NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.checks import (BACKENDS, assert_matches, f64, gradcheck, gradgradcheck, matches_numpy,
                                   on_backend)

D = engine.float64


def t(values, **kw):
    return engine.tensor(values, **kw)


# ---- values, as PyTorch 2.13 gives them ---------------------------------------------------------
def test_unfold_windows_are_a_strided_view_whose_overlaps_add_up():
    x = engine.arange(10.0, requires_grad=True)
    u = x.unfold(0, 3, 2)
    assert u.tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]]
    assert u.stride() == (2, 1) and u._base is x and u.grad_fn.name() == "UnfoldBackward0"
    u.sum().backward()
    assert x.grad.tolist() == [1, 1, 2, 1, 2, 1, 2, 1, 1, 0]
    z = engine.arange(24.0).reshape(2, 3, 4)
    assert tuple(z.unfold(1, 2, 1).shape) == (2, 2, 4, 2) and z.unfold(1, 2, 1).stride() == (12, 4, 1, 4)
    assert tuple(z.unfold(-1, 2, 2).shape) == (2, 3, 2, 2)
    assert tuple(engine.ones(3, 4).unfold(1, 0, 1).shape) == (3, 5, 0)
    assert engine.tensor(2.0).unfold(0, 1, 1).tolist() == [2.0]


def test_unfold_view_sees_writes_to_its_base_and_shares_its_version():
    x = engine.zeros(6)
    u = x.unfold(0, 2, 2)
    x[3] = 5.0
    assert u.tolist() == [[0, 0], [0, 5], [0, 0]]
    assert u._version == x._version == 1


def test_movedim_select_ravel_and_splits_are_views():
    x = engine.randn(2, 3, 4)
    for v in (engine.movedim(x, 0, 2), engine.select(x, 1, -1), x.ravel(), engine.swapdims(x, 0, 2),
              *engine.hsplit(x, [1]), *engine.dsplit(x, 2), *engine.vsplit(x, 2), *x.split_with_sizes([1, 2], 1)):
        assert v._base is x and v._storage is x._storage
    assert tuple(engine.movedim(engine.ones(2, 3, 4, 5), (1, 3), (0, 1)).shape) == (3, 5, 2, 4)
    assert tuple(engine.moveaxis(x, (0, 1), (2, 0)).shape) == (3, 4, 2)
    nc = x.transpose(0, 2).ravel()                   # not contiguous: a view of a copy
    assert nc._storage is not x._storage and nc.grad_fn is None
    assert [tuple(p.shape) for p in engine.hsplit(engine.ones(3, 4), [1, 5])] == [(3, 1), (3, 3), (3, 0)]
    assert [tuple(p.shape) for p in engine.vsplit(engine.ones(3, 4), [2, 1])] == [(2, 4), (0, 4), (2, 4)]
    assert [p.tolist() for p in engine.hsplit(engine.ones(4), 2)] == [[1, 1], [1, 1]]


def test_unsafe_split_shares_memory_but_is_no_view():
    x = engine.randn(3, 4, requires_grad=True)
    parts = engine.unsafe_chunk(x, 2, 1)
    assert [p.grad_fn.name() for p in parts] == ["UnsafeSplitBackward0"] * 2
    assert all(p._base is None and p._storage is x._storage for p in parts)
    with engine.no_grad():
        y = x.detach().clone()
        q = engine.unsafe_split(y, 2, 1)[0]
        y.add_(1.0)
    assert q._version == 0 and y._version == 1


def test_fliplr_flipud_narrow_copy():
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert engine.fliplr(x).tolist() == [[3, 2, 1], [6, 5, 4]]
    assert engine.flipud(x).tolist() == [[4, 5, 6], [1, 2, 3]]
    c = engine.narrow_copy(x, 1, 1, 2)
    assert c.tolist() == [[2, 3], [5, 6]] and c._storage is not x._storage and c.is_contiguous()
    assert engine.is_same_size(x, engine.zeros(2, 3)) and not x.is_same_size(engine.zeros(3, 2))


def test_flip_is_one_node_keeping_only_dims():
    x = engine.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    y = engine.flip(x, (0, -1))
    assert y.grad_fn.name() == "FlipBackward0" and y.grad_fn._saved_dims == (0, -1)
    assert y.grad_fn.saved_tensors_info == [] and y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert y.tolist() == np.flip(np.arange(24.0).reshape(2, 3, 4), (0, 2)).tolist()
    assert y._storage is not x._storage and y.is_contiguous()           # a copy, as PyTorch's
    assert engine.fliplr(x).grad_fn._saved_dims == (1,) and engine.flipud(x).grad_fn._saved_dims == (0,)
    assert x.flip(0, 1).tolist() == engine.flip(x, (0, 1)).tolist() == x.flip([0, 1]).tolist()
    gradcheck(lambda a: engine.flip(a, (0, 2)) * engine.arange(24.0, dtype=engine.float64).reshape(2, 3, 4), [x])
    gradgradcheck(lambda a: engine.flip(a, (1,)) ** 2, [x])
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        engine.flip(x, (1, -2))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        engine.flip(x, (3,))


def test_split_chunk_unbind_are_one_node_with_view_outputs():
    x = engine.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    y = x * 1.0
    a, b = y.split(2)
    assert a.grad_fn is b.grad_fn and a.grad_fn.name() == "SplitBackward0"
    assert (a._output_nr, b._output_nr) == (0, 1) and a.grad_fn.num_outputs == 2
    assert a.grad_fn._saved_split_size == 2 and a.grad_fn._saved_dim == 0
    assert tuple(a.grad_fn._saved_self_sym_sizes) == (4, 3) and a.grad_fn.saved_tensors_info == []
    assert a._base is y and a._storage is y._storage           # views: no new storage
    c, d = engine.split(y, [1, 3])
    assert c.grad_fn.name() == "SplitWithSizesBackward0" and tuple(c.grad_fn._saved_split_sizes) == (1, 3)
    assert [p.grad_fn.name() for p in y.chunk(2)] == ["SplitBackward0"] * 2
    u = y.unbind(1)
    assert len(u) == 3 and u[0].grad_fn.name() == "UnbindBackward0" and u[0].grad_fn._saved_dim == 1
    assert u[2].tolist() == [2.0, 5.0, 8.0, 11.0] and u[2]._storage is y._storage
    assert [tuple(p.shape) for p in engine.arange(5.0).split(2)] == [(2,), (2,), (1,)]


def test_split_and_unbind_gradients():
    x = f64(5, 4)
    gradcheck(lambda t: engine.split(t, 2)[0] * 3.0, [x])                 # parts without a gradient get zeros
    gradcheck(lambda t: engine.split(t, [1, 3], 1)[1] ** 2, [x])
    gradcheck(lambda t: engine.unbind(t, 1)[2] * engine.unbind(t, 1)[0], [x])
    gradgradcheck(lambda t: engine.chunk(t, 3)[1] ** 3, [x])


def test_in_place_on_an_output_of_several_views_is_refused_with_grad():
    x = engine.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    a, b = (x * 1.0).split(2)
    for write in (lambda: b.add_(1.0), lambda: b.zero_(), lambda: b.mul_(2.0)):
        with pytest.raises(RuntimeError, match=r"^Output 1 of Split is a view and is being modified inplace\. This "
                           r"view is the output of a function that returns multiple views\. Such functions do not "
                           r"allow the output views to be modified inplace\. You should replace the inplace "
                           r"operation by an out-of-place one\.$"):
            write()
    with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view"):
        (x * 1.0).unbind()[0].add_(1.0)
    w = engine.tensor(np.arange(6.0).reshape(2, 3))
    w.split(2, 1)[0].add_(1.0)                                          # no grad: allowed, writes through
    assert w.tolist() == [[1.0, 2.0, 2.0], [4.0, 5.0, 5.0]]
    with engine.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="split_size can only be 0 if dimension size is 0, but got dimension size of 4"):
        x.split(0)
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 4"):
        x.split([1, 2])
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        engine.tensor(1.0).unbind()


def test_sum_to_size_nodes_and_error():
    x = f64(4, 3)
    y = x.sum_to_size(1, 3)
    assert y.grad_fn.name() == "SumBackward1" and y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    z = x.sum_to_size(3)
    assert z.grad_fn.name() == "ViewBackward0" and z.grad_fn.next_functions[0][0].name() == "SumBackward1"
    assert x.sum_to_size(4, 3) is x
    gradcheck(lambda t: t.sum_to_size([1, 3]) * 2.0, [x])
    with pytest.raises(RuntimeError, match=r"^size \{\[2, 3\]\} is not expandable to size \{\[4, 3\]\}\.$"):
        x.sum_to_size(2, 3)


def test_masked_select_keeps_self_and_the_mask():
    x = engine.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    m = (x.detach() % 3.0) == 0.0
    y = engine.masked_select(x, m)
    assert y.grad_fn.name() == "MaskedSelectBackward0" and y.tolist() == [0.0, 3.0, 6.0, 9.0]
    saved = dict(y.grad_fn.saved_tensors_info)
    assert set(saved) == {"self", "mask"} and saved["self"].nbytes == 12 * 8 and saved["mask"].nbytes == 12
    assert y.grad_fn._saved_self is x and y._storage is not x._storage
    xb = f64(4)
    mb = engine.tensor([[True, False, True, False], [False, False, True, True]])
    gradcheck(lambda t: engine.masked_select(t, mb) * engine.arange(4.0, dtype=engine.float64), [xb])  # broadcast self
    gradgradcheck(lambda t: engine.masked_select(t, t.detach() > 0) ** 2, [xb])
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        engine.masked_select(x, x)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(5\) must match the size of tensor b \(4\)"):
        engine.masked_select(x, engine.ones(5, dtype=engine.bool))


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_and_unbind_on_other_backends(backend):
    def run():
        x = engine.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        a, b = x.split([1, 3], 1)
        r = x.unbind(0)
        ms = engine.masked_select(x, x.detach() > 4.0)
        (a.sum() * 2.0 + (b * b).sum() + r[1].sum() + (ms * ms).sum()).backward()
        return [a.detach(), b.detach(), r[2].detach(), ms.detach(), x.grad]
    matches_numpy(backend, run)


@pytest.mark.parametrize("backend", BACKENDS)
def test_flip_on_other_backends(backend):
    def run():
        x = engine.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = engine.flip(x, (1,))
        (y * engine.arange(12.0).reshape(3, 4)).sum().backward()
        return [y.detach(), x.grad]
    matches_numpy(backend, run)


def test_constructors_from_shapes():
    assert engine.diag_embed(engine.arange(3.0), -1).tolist() == [[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0],
                                                                  [0, 0, 2, 0]]
    assert tuple(engine.diag_embed(engine.arange(6.0).reshape(2, 3), 0, 0, 2).shape) == (3, 2, 3)
    e = engine.diag_embed(engine.arange(6.0).reshape(2, 3), 1, 0, 2)
    assert e[:, 1, :].tolist() == [[0, 3, 0, 0], [0, 0, 4, 0], [0, 0, 0, 5], [0, 0, 0, 0]] and e.is_contiguous()
    assert engine.diagflat(t([[1.0, 2.0]]), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    b = engine.block_diag(engine.ones(2), t(3), engine.ones(2, 2, dtype=engine.int64))
    assert b.dtype is engine.float32 and b.tolist() == [[1, 1, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 1, 1],
                                                        [0, 0, 0, 1, 1]]
    assert engine.block_diag(engine.ones(2, dtype=engine.int64), t([True])).dtype is engine.int64
    assert tuple(engine.block_diag().shape) == (1, 0)
    assert tuple(engine.block_diag(engine.ones(0, 2), engine.ones(2, 0)).shape) == (2, 2)
    assert engine.cartesian_prod(t([1, 2]), t([3, 4, 5])).tolist() == [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4],
                                                                       [2, 5]]
    one = t([1.0, 2.0])
    assert engine.cartesian_prod(one) is one
    assert engine.combinations(t([1, 2, 3])).tolist() == [[1, 2], [1, 3], [2, 3]]
    assert engine.combinations(t([1, 2, 3]), 2, True).tolist() == [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]]
    assert engine.combinations(t([1, 2, 3]), 3).tolist() == [[1, 2, 3]]
    assert tuple(engine.combinations(engine.ones(3), 4).shape) == (0, 4)
    assert tuple(engine.combinations(engine.ones(3), 0).shape) == (0,)
    assert engine.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert engine.triu_indices(3, 4, -1).tolist() == [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2],
                                                      [0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3]]
    assert engine.tril_indices(3, 4, 1).dtype is engine.int64


def test_unravel_index_wraps_as_pytorch():
    rows, cols = engine.unravel_index(t([5, 7, 12, -1]), (3, 4))
    assert rows.tolist() == [1, 1, 0, 2] and cols.tolist() == [1, 3, 0, 3]
    r, c = engine.unravel_index(t(5), (3, 4))
    assert r.ndim == 0 and (r.item(), c.item()) == (1, 1)


def test_unique_consecutive():
    x = t([1, 1, 2, 2, 3, 1, 1])
    assert engine.unique_consecutive(x).tolist() == [1, 2, 3, 1]
    out, inv, counts = engine.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3] and counts.tolist() == [2, 2, 1, 2]
    out, inv = x.reshape(1, 7)[:, :4].unique_consecutive(return_inverse=True)
    assert inv.tolist() == [[0, 0, 1, 1]]
    m = t([[1, 1], [1, 1], [2, 3]])
    out, inv, counts = engine.unique_consecutive(m, return_inverse=True, return_counts=True, dim=0)
    assert out.tolist() == [[1, 1], [2, 3]] and inv.tolist() == [0, 0, 1] and counts.tolist() == [2, 1]
    out, inv = engine.unique_consecutive(m, return_inverse=True, dim=1)
    assert out.tolist() == m.tolist() and inv.tolist() == [0, 1]
    e, ei, ec = engine.unique_consecutive(engine.tensor([]), return_inverse=True, return_counts=True)
    assert e.numel() == 0 and ei.dtype is engine.int64 and ec.numel() == 0


def test_take_and_take_along_dim():
    x = engine.arange(12.0).reshape(3, 4)
    assert engine.take(x, t([[0, 5], [-1, 11]])).tolist() == [[0, 5], [11, 11]]
    assert engine.take_along_dim(x, t([[-1], [0], [-4]]), 1).tolist() == [[3], [4], [8]]
    assert engine.take_along_dim(x, t([0, 11])).tolist() == [0, 11]
    assert tuple(engine.take_along_dim(engine.randn(3, 1, 4), engine.zeros(1, 2, 1, dtype=engine.int64),
                                       2).shape) == (3, 2, 1)


def test_index_put_accumulate_adds_repeats_and_write_takes_last():
    x = engine.zeros(3, 2)
    i = t([0, 2, 0])
    assert engine.index_put(x, (i,), t([1.0, 2.0]), accumulate=True).tolist() == [[2, 4], [0, 0], [1, 2]]
    assert engine.index_put(x, (i, t([1, 0, 1])), t(5.0)).tolist() == [[0, 5], [0, 0], [5, 0]]
    assert engine.index_put(x, (x == 0,), t(7.0)).tolist() == [[7, 7]] * 3
    assert x.tolist() == [[0, 0]] * 3
    y = x.clone()
    assert y.index_put_((t(1),), t([1.0, 2.0]), accumulate=True) is y and y.tolist() == [[0, 0], [1, 2], [0, 0]]
    assert y._version == 1
    v = engine.ones(1, requires_grad=True)
    engine.index_put(x, (t([0, 0]),), v, accumulate=True).sum().backward()
    assert v.grad.tolist() == [4.0]    # broadcast to 2 places, twice


def test_put_and_masked_scatter():
    x = engine.zeros(2, 3)
    assert engine.put(x, t([0, -1]), t([1.0, 2.0])).tolist() == [[1, 0, 0], [0, 0, 2]]
    assert x.put(t([1, 1]), t([1.0, 2.0]), accumulate=True).tolist() == [[0, 3, 0], [0, 0, 0]]
    y = x.clone()
    assert y.put_(t([4]), t([9.0])) is y and y.tolist() == [[0, 0, 0], [0, 9, 0]]
    mask = t([[True, False, True], [False, True, False]])
    assert engine.masked_scatter(x, mask, engine.arange(1.0, 7.0)).tolist() == [[1, 0, 2], [0, 3, 0]]
    # the out-of-place form broadcasts input and mask together, as PyTorch
    assert engine.masked_scatter(engine.zeros(4), t([[True], [False]]), engine.arange(8.0)).tolist() == \
        [[0, 1, 2, 3], [0, 0, 0, 0]]
    src = engine.arange(12.0, requires_grad=True)
    m = t([[True, False, True, False]] * 3)
    engine.masked_scatter(engine.zeros(3, 4), m, src).backward(engine.arange(12.0).reshape(3, 4))
    assert src.grad.tolist() == [0, 2, 4, 6, 8, 10, 0, 0, 0, 0, 0, 0]


def test_scatter_family_values():
    x = engine.zeros(3, 4)
    assert engine.select_scatter(x, engine.ones(3), 1, -1).tolist() == [[0, 0, 0, 1]] * 3
    assert engine.slice_scatter(x, engine.ones(3, 2), 1, 0, 4, 2).tolist() == [[1, 0, 1, 0]] * 3
    assert engine.slice_scatter(x, engine.ones(3, 2), 1, 2).tolist() == [[0, 0, 1, 1]] * 3
    assert engine.diagonal_scatter(x, engine.ones(3), 1).tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    z = engine.zeros(2, 3, 3)
    d = engine.diagonal_scatter(z, engine.arange(6.0).reshape(3, 2), 0, 0, 2)   # diagonal over dims 0 and 2
    assert engine.diagonal(d, 0, 0, 2).tolist() == engine.arange(6.0).reshape(3, 2).tolist()
    assert d.sum().item() == 15 and d.is_contiguous()


def test_index_reduce_values_as_pytorch():
    x = engine.arange(1.0, 10.0).reshape(3, 3)
    src = t([[2.0, 0.0, 1.0], [3.0, 2.0, -1.0]])
    i = t([0, 2])
    assert engine.index_reduce(x, 0, i, src, "prod").tolist() == [[2, 0, 3], [4, 5, 6], [21, 16, -9]]
    assert engine.index_reduce(x, 0, i, src, "mean").tolist() == [[1.5, 1, 2], [4, 5, 6], [5, 5, 4]]
    assert engine.index_reduce(x, 0, i, src, "amax").tolist() == [[2, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert engine.index_reduce(x, 0, i, src, "amin", include_self=False).tolist() == [[2, 0, 1], [4, 5, 6],
                                                                                       [3, 2, -1]]
    assert x.index_reduce(1, t([0, 0]), engine.full((3, 2), 2.0), "prod").tolist() == [[4, 2, 3], [16, 5, 6],
                                                                                        [28, 8, 9]]
    y = x.clone()
    assert y.index_reduce_(0, t([1]), t([[0.0, 10.0, 0.0]]), "amax") is y and y[1].tolist() == [4, 10, 6]
    ints = engine.index_reduce(t([[1, 2]]), 0, t([0, 0]), t([[2, 3], [4, 4]]), "mean")
    assert ints.dtype is engine.int64 and ints.tolist() == [[2, 3]]       # floor of the mean, as PyTorch


# ---- in-place shape changes (NOTE [ In-place shape changes ]) -------------------------------------------
def test_inplace_shape_changes_keep_the_object_and_bump_the_version():
    x = engine.randn(3, 4, requires_grad=True)
    a = x.clone()
    st = a._storage
    assert a.t_() is a and tuple(a.shape) == (4, 3) and a._storage is st and a._version == 1
    assert a.grad_fn.name() == "TBackward1"
    a.transpose_(0, 1)
    a.unsqueeze_(1)
    assert tuple(a.shape) == (3, 1, 4) and a.grad_fn.name() == "UnsqueezeBackward1"
    a.squeeze_(1)
    assert tuple(a.shape) == (3, 4) and a.grad_fn.name() == "SqueezeBackward4" and a._version == 4
    (a * engine.arange(12.0).reshape(3, 4)).sum().backward()
    assert x.grad.tolist() == engine.arange(12.0).reshape(3, 4).tolist()
    b = x.clone().unsqueeze(0)
    assert b.squeeze_().grad_fn.name() == "SqueezeBackward3"
    assert x.clone().unsqueeze(0).squeeze_((0,)).grad_fn.name() == "SqueezeBackward5"
    v = x.clone()[0:2]
    v.t_()
    assert v._base is not None and v.grad_fn.name() == "TBackward1"
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.transpose_(0, 1)


def test_inplace_tril_triu_cumsum():
    x = f64(3, 4)
    a = x.clone()
    a.tril_(-1)
    assert np.array_equal(a.detach().numpy(), np.tril(x.detach().numpy(), -1))
    b = x.clone().triu_(1)
    assert np.array_equal(b.detach().numpy(), np.triu(x.detach().numpy(), 1))
    c = x.clone().cumsum_(1)
    np.testing.assert_allclose(c.detach().numpy(), np.cumsum(x.detach().numpy(), 1))
    (a.sum() + b.sum() + c.sum()).backward()
    want = np.tril(np.ones((3, 4)), -1) + np.triu(np.ones((3, 4)), 1) + np.array([4.0, 3, 2, 1])
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_inplace_write_through_select_reaches_the_base():
    x = f64(3, 4)
    base = x * 1.0
    engine.select(base, 0, 1).mul_(3.0)
    base.sum().backward()
    assert x.grad.tolist() == [[1.0] * 4, [3.0] * 4, [1.0] * 4]


# ---- gradients against finite differences ---------------------------------------------------------
I = engine.tensor
GRADS = {
    "select": (lambda x: engine.select(x, 1, -2), (3, 4)),
    "movedim": (lambda x: engine.movedim(x, (0, 2), (1, 0)) * engine.arange(24.0, dtype=D).reshape(4, 2, 3), (2, 3, 4)),
    "ravel_nc": (lambda x: x.t().ravel() * engine.arange(12.0, dtype=D), (3, 4)),
    "unfold": (lambda x: x.unfold(1, 3, 2) ** 2, (2, 7)),
    "unfold_step_past_size": (lambda x: x.unfold(0, 2, 3), (7,)),
    "narrow_copy": (lambda x: engine.narrow_copy(x, 0, 1, 2), (3, 4)),
    "fliplr": (lambda x: engine.fliplr(x) * engine.arange(12.0, dtype=D).reshape(3, 4), (3, 4)),
    "take": (lambda x: engine.take(x, I([[0, 5], [-1, 5]])) ** 2, (3, 4)),
    "take_along_dim": (lambda x: engine.take_along_dim(x, I([[0], [3], [-1]]), 1), (3, 4)),
    "diag_embed": (lambda x: engine.diag_embed(x, -1, 2, 0) * engine.arange(48.0, dtype=D).reshape(4, 3, 4), (3, 3)),
    "diagflat": (lambda x: engine.diagflat(x, 2), (2, 2)),
    "cartesian_prod": (lambda x: engine.cartesian_prod(x[0], x[1, :2]) ** 2, (2, 3)),
    "combinations": (lambda x: engine.combinations(x, 2, True) ** 2, (4,)),
    "take_along_dim_flat": (lambda x: engine.take_along_dim(x, I([0, 11, 0])) ** 2, (3, 4)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_of_one_input(name):
    fn, shape = GRADS[name]
    gradcheck(fn, [f64(*shape)])


TWO = {
    "index_put": lambda x, v: engine.index_put(x, (I([0, 2]), I([1, 3])), v[:2]),
    "index_put_accumulate": lambda x, v: engine.index_put(x, (I([0, 2, 0]),), v, accumulate=True) ** 2,
    "index_put_mask": lambda x, v: engine.index_put(x, (I([True, False, True]),), v) * x,
    "index_put_": lambda x, v: (x * 1.0).index_put_((I([2, 2]), I([0, 0])), v[1:3] * 2.0, accumulate=True) ** 2,
    "put": lambda x, v: engine.put(x, I([0, -1, 5, 6]), v) ** 2,
    "put_accumulate": lambda x, v: engine.put(x, I([0, 0, 5, 6]), v, accumulate=True) ** 2,
    "put_": lambda x, v: (x * 2.0).put_(I([3, 1, 2, 0]), v) ** 2,
    "masked_scatter": lambda x, v: engine.masked_scatter(x, I([[True, False, True, False]] * 3), v.repeat(2)) ** 2,
    "masked_scatter_": lambda x, v: (x * 1.0).masked_scatter_(I([False, True, True, False]), v.repeat(2)) ** 2,
    "select_scatter": lambda x, v: engine.select_scatter(x, v[:3], 1, 2) ** 2,
    "slice_scatter": lambda x, v: engine.slice_scatter(x, v.reshape(2, 2).repeat(2, 1)[:3], 1, 1, None, 2) ** 2,
    "diagonal_scatter": lambda x, v: engine.diagonal_scatter(x, v[:3], 1) ** 2,
    "block_diag": lambda x, v: engine.block_diag(x, v, v[0]) ** 2,
    "index_reduce_prod": lambda x, v: engine.index_reduce(x, 1, I([0, 2, 0, 3]), v.reshape(1, 4).repeat(3, 1), "prod"),
    "index_reduce_mean": lambda x, v: engine.index_reduce(x, 0, I([2, 2]), v.reshape(2, 2).repeat(1, 2), "mean"),
    "index_reduce_amax": lambda x, v: x.index_reduce(1, I([1, 1, 2, 1]), v.reshape(1, 4).repeat(3, 1) * x, "amax",
                                                     include_self=False),
    "index_reduce__amin": lambda x, v: (x * 1.0).index_reduce_(0, I([0, 1, 0]), v[:3, None] * x, "amin"),
}


@pytest.mark.parametrize("name", sorted(TWO))
def test_gradients_of_two_inputs(name):
    gradcheck(TWO[name], [f64(3, 4, seed=1), f64(4, seed=2)])


@pytest.mark.parametrize("name", ["index_put_accumulate", "put", "masked_scatter", "diagonal_scatter", "block_diag",
                                  "index_reduce_prod"])
def test_second_derivatives(name):
    gradgradcheck(TWO[name], [f64(3, 4, seed=1), f64(4, seed=2)])


@pytest.mark.parametrize("name", ["unfold", "take", "diag_embed", "narrow_copy"])
def test_second_derivatives_one_input(name):
    fn, shape = GRADS[name]
    gradgradcheck(lambda x: fn(x) ** 2, [f64(*shape)])


# ---- the same on other backends -----------------------------------------------------------------
BACKEND_CASES = {
    "unfold": lambda a, b: a.unfold(1, 2, 1) * b.unfold(1, 2, 1),
    "select_movedim_ravel": lambda a, b: engine.select(a, 0, 1) * engine.movedim(b.reshape(3, 2, 2), 0, 2).ravel()[:4],
    "narrow_copy": lambda a, b: engine.narrow_copy(a, 1, 1, 2) * b[:, :2],
    "take": lambda a, b: engine.take(a, engine.tensor([0, -1, 5, 5])) * b[0],
    "take_along_dim": lambda a, b: engine.take_along_dim(a, engine.tensor([[1], [-1], [0]]), 1) * b[:, :1],
    "index_put": lambda a, b: engine.index_put(a, (engine.tensor([0, 2, 0]),), b[0], accumulate=True),
    "index_put_mask": lambda a, b: engine.index_put(a, (a > 0,), b[a > 0]),
    "put": lambda a, b: engine.put(a, engine.tensor([3, 1, 1, -2]), b[1], accumulate=True) * a,
    "masked_scatter": lambda a, b: engine.masked_scatter(a, b > 0, b.flip(0)),
    "select_scatter": lambda a, b: engine.select_scatter(a, b[1] * 2.0, 0, 1),
    "slice_scatter": lambda a, b: engine.slice_scatter(a, b[:, ::2], 1, 0, None, 2),
    "diagonal_scatter": lambda a, b: engine.diagonal_scatter(a, b[0, :3], 1),
    "diag_embed": lambda a, b: engine.diag_embed(a * b, 1, 0, 2),
    "block_diag": lambda a, b: engine.block_diag(a, b[0], b[1, 0]),
    "cartesian_prod": lambda a, b: engine.cartesian_prod(a[0], b[1]),
    "combinations": lambda a, b: engine.combinations(a[1] * b[1], 3),
    "inplace_shape": lambda a, b: (a * b).t_().unsqueeze_(0).tril_(),
    "index_reduce": lambda a, b: engine.index_reduce(a, 0, engine.tensor([2, 0, 2]), b, "prod"),
    "index_reduce_mean": lambda a, b: a.index_reduce(1, engine.tensor([3, 3, 0, 1]), b, "mean", include_self=False),
}


def _run(fn):
    rng = np.random.default_rng(0)
    a = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    b = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    out = fn(a, b)
    out.backward(engine.ones_like(out))
    return out, [t.grad for t in (a, b)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BACKEND_CASES))
def test_other_backends_match_numpy(name, backend):
    ref_out, ref_grads = _run(BACKEND_CASES[name])
    with on_backend(backend):
        out, grads = _run(BACKEND_CASES[name])
    assert_matches(backend, [out, *grads], [ref_out, *ref_grads])


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_free_functions_on_other_backends(backend):
    with on_backend(backend):
        x = engine.tensor([1, 1, 2, 2, 3, 1])
        out, inv, counts = engine.unique_consecutive(x, return_inverse=True, return_counts=True)
        rows, cols = engine.unravel_index(engine.tensor([5, -1]), (3, 4))
        idx = engine.tril_indices(3, 3)
        got = [out.tolist(), inv.tolist(), counts.tolist(), rows.tolist(), cols.tolist(), idx.tolist()]
    assert got == [[1, 2, 3, 1], [0, 0, 1, 1, 2, 3], [2, 2, 1, 1], [1, 2], [1, 3],
                   [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]]


def exercise_shape_ops():
    """One call per row behind these shape functions (unfold, take, index_put, ...; engine/ops/shape/), with its
    backward (for test_ops_grad's table check)."""
    for fn in BACKEND_CASES.values():
        _run(fn)
    engine.as_strided(engine.arange(4.0, requires_grad=True), (2, 2), (1, 1), 1).sum().backward()


def test_narrow_counts_a_negative_start_from_the_end_and_refuses_what_pytorch_refuses():
    x = engine.arange(4.0, requires_grad=True)
    y = x.narrow(0, -2, 2)                     # found by tools/fuzz: this used to be empty
    assert y.tolist() == [2.0, 3.0] and y.grad_fn.name() == "SliceBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match=r"start \(3\) \+ length \(2\) exceeds dimension size \(4\)\."):
        x.narrow(0, 3, 2)
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of \[-4, 4\], but got 5\)"):
        x.narrow(0, 5, 1)
    with pytest.raises(RuntimeError, match="narrow\\(\\): length must be non-negative."):
        x.narrow(0, 0, -1)
    with pytest.raises(RuntimeError, match="narrow\\(\\) cannot be applied to a 0-dim tensor."):
        engine.tensor(1.0).narrow(0, 0, 1)


def test_copy_into_a_non_leaf_gives_its_history_a_zero_gradient():
    """CopyBackwards hands ``self`` zeros (its old values are overwritten), not nothing: the input
    behind it still gets a ``.grad``, as in PyTorch (found by tools/fuzz: x.grad was None)."""
    x = engine.tensor([-2.75, 0.75], requires_grad=True)
    src = engine.tensor([0.25, -0.5], requires_grad=True)
    y = x * 1
    y.copy_(src).mul_(3).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and src.grad.tolist() == [3.0, 3.0]
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::CopyBackwards"


# ---- strided views (engine/ops/shape/strided.py, NOTE [ Strided views ]) ---------------------------------
# (shape, strides, new shape) -> the strides PyTorch 2.13's view gives, None where it refuses
VIEW_STRIDES = [
    ((2, 3, 4), (12, 4, 1), (24,), (1,)),
    ((2, 3, 4), (12, 4, 1), (6, 4), (4, 1)),
    ((2, 3, 4), (12, 4, 1), (2, 12), (12, 1)),
    ((2, 3, 4), (12, 4, 1), (4, 3, 2), (6, 2, 1)),
    ((2, 3, 4), (12, 4, 1), (3, 8), (8, 1)),
    ((2, 3, 4), (12, 4, 1), (2, 3, 2, 2), (12, 4, 2, 1)),
    ((2, 3, 4), (12, 4, 1), (1, 24, 1), (24, 1, 1)),
    ((4, 3, 2), (1, 4, 12), (24,), None),
    ((4, 3, 2), (1, 4, 12), (6, 4), None),
    ((4, 3, 2), (1, 4, 12), (2, 12), None),
    ((4, 3, 2), (1, 4, 12), (4, 3, 2), (1, 4, 12)),
    ((4, 3, 2), (1, 4, 12), (3, 8), None),
    ((4, 3, 2), (1, 4, 12), (2, 3, 2, 2), None),
    ((4, 3, 2), (1, 4, 12), (1, 24, 1), None),
    ((2, 2, 4), (12, 4, 1), (16,), None),
    ((2, 2, 4), (12, 4, 1), (2, 8), (12, 1)),
    ((2, 2, 4), (12, 4, 1), (4, 4), None),
    ((2, 2, 4), (12, 4, 1), (8, 2), None),
    ((2, 2, 4), (12, 4, 1), (2, 2, 4), (12, 4, 1)),
    ((2, 3, 2), (12, 4, 2), (12,), (2,)),
    ((2, 3, 2), (12, 4, 2), (3, 4), (8, 2)),
    ((2, 3, 2), (12, 4, 2), (4, 3), (6, 2)),
    ((2, 3, 2), (12, 4, 2), (2, 6), (12, 2)),
    ((2, 3, 2), (12, 4, 2), (6, 2), (4, 2)),
    ((2, 3, 2), (12, 4, 2), (3, 2, 2), (8, 4, 2)),
    ((2, 3, 2), (12, 4, 2), (1, 12), (24, 2)),
    ((2, 4), (12, 1), (8,), None),
    ((2, 4), (12, 1), (2, 4), (12, 1)),
    ((2, 4), (12, 1), (4, 2), None),
    ((2, 4), (12, 1), (2, 2, 2), (12, 2, 1)),
    ((4, 3), (0, 1), (12,), None),
    ((4, 3), (0, 1), (3, 4), None),
    ((4, 3), (0, 1), (4, 3), (0, 1)),
    ((4, 3), (0, 1), (2, 6), None),
    ((4, 3), (0, 1), (6, 2), None),
    ((4, 3), (0, 1), (3, 2, 2), None),
    ((4, 3), (0, 1), (1, 12), None),
    ((3,), (0,), (3,), (0,)),
    ((3,), (0,), (1, 3), (0, 0)),
    ((3,), (0,), (3, 1), (0, 0)),
    ((4, 3), (6, 1), (12,), None),
    ((4, 3), (6, 1), (3, 4), None),
    ((4, 3), (6, 1), (4, 3), (6, 1)),
    ((4, 3), (6, 1), (2, 6), None),
    ((4, 3), (6, 1), (6, 2), None),
    ((4, 3), (6, 1), (3, 2, 2), None),
    ((4, 3), (6, 1), (1, 12), None),
    ((3, 2, 4), (4, 0, 1), (24,), None),
    ((3, 2, 4), (4, 0, 1), (6, 4), None),
    ((3, 2, 4), (4, 0, 1), (2, 12), None),
    ((3, 2, 4), (4, 0, 1), (4, 3, 2), None),
    ((3, 2, 4), (4, 0, 1), (3, 8), None),
    ((3, 2, 4), (4, 0, 1), (2, 3, 2, 2), None),
    ((3, 2, 4), (4, 0, 1), (1, 24, 1), None),
    ((2, 3, 1, 4), (12, 4, 12, 1), (24,), (1,)),
    ((2, 3, 1, 4), (12, 4, 12, 1), (6, 4), (4, 1)),
    ((2, 3, 1, 4), (12, 4, 12, 1), (2, 12), (12, 1)),
    ((2, 3, 1, 4), (12, 4, 12, 1), (4, 3, 2), (6, 2, 1)),
    ((2, 3, 1, 4), (12, 4, 12, 1), (3, 8), (8, 1)),
    ((2, 3, 1, 4), (12, 4, 12, 1), (2, 3, 2, 2), (12, 4, 2, 1)),
    ((2, 3, 1, 4), (12, 4, 12, 1), (1, 24, 1), (24, 1, 1)),
    ((0, 3), (3, 1), (0,), (1,)),
    ((0, 3), (3, 1), (3, 0), (1, 1)),
    ((0, 3), (3, 1), (0, 3), (3, 1)),
    ((0, 3), (3, 1), (2, 0, 5), (5, 5, 1)),
    ((), (), (), ()),
    ((), (), (1,), (1,)),
    ((), (), (1, 1), (1, 1)),
    ((2, 4, 4), (48, 12, 1), (32,), None),
]


@pytest.mark.parametrize("shape,strides,new,expected", VIEW_STRIDES,
                         ids=[f"{s}/{st}->{n}" for s, st, n, _ in VIEW_STRIDES])
def test_view_strides_is_pytorchs_compute_stride(shape, strides, new, expected):
    from engine.ops.shape.strided import view_strides
    assert view_strides(shape, strides, new) == expected


def test_as_strided_reads_the_storage_and_its_backward_finds_the_input_elements():
    x = t([1., 2., 3.], requires_grad=True)
    z = engine.as_strided(x, (2, 2), (1, 1))
    assert z.tolist() == [[1., 2.], [2., 3.]] and z._base is x and z.grad_fn.name() == "AsStridedBackward0"
    assert (z.grad_fn._saved_size, z.grad_fn._saved_stride, z.grad_fn._saved_storage_offset) == ((2, 2), (1, 1), 0)
    (z * t([[1., 2.], [3., 4.]])).sum().backward()
    assert x.grad.tolist() == [1.0, 5.0, 4.0]
    x = t([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    z = engine.as_strided(x.t(), (3,), (2,), 1)           # storage positions 1, 3, 5 of a transposed input
    assert z.tolist() == [2.0, 4.0, 6.0]
    (z * t([1., 10., 100.])).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [10.0, 0.0, 100.0]]
    x = t([1., 2., 3.], requires_grad=True)
    engine.as_strided(x.expand(2, 3), (2,), (1,)).sum().backward()     # rule 4: shared positions divide
    assert x.grad.tolist() == [1.0, 1.0, 0.0]
    x = t([1., 2., 3., 4.], requires_grad=True)
    z = engine.as_strided(x[2:], (2,), (1,), 0)            # before the input's first element
    assert z.tolist() == [1.0, 2.0] and engine.as_strided(x, (2,), (1,), 1).storage_offset() == 1
    z.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_as_strided_double_backward_and_gradcheck():
    x = t([1., 2., 3.], requires_grad=True)
    g, = engine.autograd.grad((engine.as_strided(x, (2, 2), (1, 1)) ** 2).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 8.0, 6.0]
    g.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 2.0]
    y = t(np.linspace(-1.0, 1.0, 12).reshape(3, 4), dtype=D, requires_grad=True)
    gradcheck(lambda a: engine.as_strided(a.t(), (2, 3), (1, 4), 1), [y])
    gradgradcheck(lambda a: engine.as_strided(a, (3, 2), (4, 2)) ** 2, [y])


@pytest.mark.parametrize("args,message", [
    (((5,), (1,)), ("setStorage: sizes [5], strides [1], storage offset 0, and itemsize 4 requiring a storage size "
                    "of 20 are out of bounds for storage of size 16")),
    (((2,), (1,), 3), ("setStorage: sizes [2], strides [1], storage offset 3, and itemsize 4 requiring a storage size "
                       "of 20 are out of bounds for storage of size 16")),
    (((2,), (-1,)), "as_strided: Negative strides are not supported at the moment, got strides: [-1]"),
    (((2, 2), (1,)), "mismatch in length of strides and shape"),
    (((-1,), (1,)), "Storage size calculation overflowed with sizes=[-1] and strides=[1]"),
    (((2,), (1,), -1), "Tensor: invalid storage offset -1"),
], ids=["size", "offset", "negative-stride", "lengths", "negative-size", "negative-offset"])
def test_as_strided_errors(args, message):
    with pytest.raises(RuntimeError) as e:
        engine.as_strided(engine.zeros(4), *args)
    assert str(e.value) == message
