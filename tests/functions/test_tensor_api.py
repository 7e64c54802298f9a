"""Smaller pieces of PyTorch's tensor API: return_types, deepcopy, legacy constructors,
set_printoptions, floor/ceil/round nodes, logspace."""
import copy

import numpy as np
import pytest

import engine


# ---- return_types --------------------------------------------------------------------------------
def test_structured_results_unpack_name_and_print_as_pytorch():
    r = engine.tensor([[1.0, 2.0], [3.0, 4.0]]).max(dim=0)
    values, indices = r
    assert isinstance(r, tuple) and type(r).__name__ == "max" and r.values is values and r.indices is indices
    assert repr(r) == "torch.return_types.max(\nvalues=tensor([3., 4.]),\nindices=tensor([1, 1]))"
    assert type(engine.tensor([3.0, 1.0]).sort()) is engine.return_types.sort
    assert type(engine.topk(engine.tensor([3.0, 1.0]), 1)) is engine.return_types.topk
    assert type(engine.min(engine.ones(2, 2), 1)) is engine.return_types.min


# ---- deepcopy ------------------------------------------------------------------------------------
def test_deepcopy_of_a_leaf_copies_memory_grad_and_flag():
    t = engine.ones(2, requires_grad=True)
    (t * 2).sum().backward()
    c = copy.deepcopy(t)
    assert c.requires_grad and c.is_leaf and c._storage is not t._storage
    assert c.grad.tolist() == [2.0, 2.0] and c.grad._storage is not t.grad._storage
    with engine.no_grad():
        c.add_(1.0)
    assert t.tolist() == [1.0, 1.0]


def test_deepcopy_keeps_views_of_one_storage_together():
    a = engine.arange(6.0)
    d = copy.deepcopy([a, a[1:3]])
    d[1][0] = 100.0
    assert d[0].tolist() == [0.0, 100.0, 2.0, 3.0, 4.0, 5.0] and a.tolist()[1] == 1.0


def test_deepcopy_of_a_non_leaf_raises_pytorchs_error():
    u = engine.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="^Only Tensors created explicitly by the user \\(graph leaves\\) support "
                                           "the deepcopy protocol at the moment"):
        copy.deepcopy(u)


# ---- legacy constructors -------------------------------------------------------------------------
def test_legacy_constructors():
    assert engine.Tensor().shape == (0,) and engine.Tensor().dtype is engine.float32
    assert tuple(engine.Tensor(2, 3).shape) == (2, 3)
    assert engine.Tensor([1, 2]).tolist() == [1.0, 2.0] and engine.Tensor([1, 2]).dtype is engine.float32
    assert tuple(engine.Tensor(engine.Size([2, 1])).shape) == (2, 1)
    a = engine.ones(2)
    assert engine.Tensor(a) is a
    assert engine.LongTensor([1.7, 2]).tolist() == [1, 2] and engine.DoubleTensor(2).dtype is engine.float64
    assert engine.BoolTensor([1, 0]).tolist() == [True, False]
    assert isinstance(engine.ones(2), engine.FloatTensor) and not isinstance(engine.ones(2), engine.LongTensor)
    assert engine.ones(2).type(engine.LongTensor).dtype is engine.int64
    assert engine.ones(2).type("torch.DoubleTensor").dtype is engine.float64


@pytest.mark.parametrize("call,msg", [
    (lambda: engine.Tensor("a"), "new(): invalid data type 'str'"),
    (lambda: engine.Tensor(3.5), "new(): data must be a sequence (got float)"),
    (lambda: engine.Tensor([1, 2], dtype=engine.int64),
     "new() received an invalid combination of arguments - got (list, dtype=dtype)"),
])
def test_legacy_constructor_errors(call, msg):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == msg


# ---- set_printoptions ----------------------------------------------------------------------------
@pytest.fixture
def printopts():
    yield engine.set_printoptions
    engine.set_printoptions(profile="default")


def test_printoptions(printopts):
    printopts(precision=6)
    assert repr(engine.tensor([1 / 3, 2.0])) == "tensor([0.333333, 2.000000])"
    printopts(profile="default", sci_mode=False)
    assert repr(engine.tensor([1e-6, 1.0, 1e9])) == "tensor([         0.0000,          1.0000, 1000000000.0000])"
    printopts(sci_mode=True)
    assert repr(engine.tensor([1.5, 2.25])) == "tensor([1.5000e+00, 2.2500e+00])"
    printopts(profile="default", edgeitems=1, threshold=5)
    assert repr(engine.arange(10.0)) == "tensor([0.,  ..., 9.])"
    printopts(profile="default", linewidth=20)
    assert repr(engine.arange(4.0)) == "tensor([0., 1., 2.,\n        3.])"
    printopts(profile="full")
    assert "..." not in repr(engine.arange(1200))
    printopts(profile="default")
    assert repr(engine.arange(2000)).startswith("tensor([   0,    1,    2,  ..., 1997,")


# ---- floor / ceil / round ------------------------------------------------------------------------
@pytest.mark.parametrize("name,node,want", [
    ("floor", "FloorBackward0", [1.0, -3.0, 0.0]), ("ceil", "CeilBackward0", [2.0, -2.0, 1.0]),
    ("round", "RoundBackward0", [2.0, -2.0, 0.0]),
])
def test_rounding_nodes_and_zero_gradients(name, node, want):
    x = engine.tensor([1.5, -2.5, 0.5], requires_grad=True)
    y = getattr(engine, name)(x)
    assert y.tolist() == want and y.grad_fn.name() == node
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert getattr(engine, name)(engine.tensor([1, 2])).tolist() == [1, 2]
    with pytest.raises(NotImplementedError, match=f"^\"{name}_vml_cpu\" not implemented for 'Bool'$"):
        getattr(engine, name)(engine.tensor([True]))
    z = x.detach().clone()
    getattr(z, name + "_")()
    assert z.tolist() == want


def test_round_decimals():
    x = engine.tensor([1.2345, -2.5, 0.125], dtype=engine.float64, requires_grad=True)
    y = engine.round(x, decimals=2)
    np.testing.assert_allclose(y.detach().numpy(), [1.23, -2.5, 0.12])
    assert y.grad_fn.name() == "RoundBackward1"
    assert engine.round(x, decimals=0).grad_fn.name() == "RoundBackward1"      # given at all: the decimals form
    assert x.round().grad_fn.name() == "RoundBackward0"
    with pytest.raises(NotImplementedError, match="^\"round_cpu\" not implemented for 'Long'$"):
        engine.round(engine.tensor([1, 2]), decimals=1)


def test_logspace():
    assert engine.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert engine.logspace(0, 3, 4, base=2).tolist() == [1.0, 2.0, 4.0, 8.0]
    np.testing.assert_allclose(engine.logspace(0, 1, 3, dtype=engine.float64).numpy(), [1.0, 10 ** 0.5, 10.0])


def exercise_rounding_ops():
    """One call of each rounding row (test_ops_grad checks every table op is exercised)."""
    x = engine.tensor([1.5, -2.5], requires_grad=True)
    for y in (engine.floor(x), engine.ceil(x), engine.round(x), engine.round(x, decimals=1)):
        y.sum().backward()


# ---- finfo / iinfo / result_type / can_cast ----------------------------------------------------
def test_finfo_and_iinfo():
    f = engine.finfo(engine.float32)
    assert (f.bits, f.eps, f.resolution, f.dtype) == (32, 2.0 ** -23, 1e-06, "float32")
    assert f.max == -f.min == float(np.finfo(np.float32).max) and f.tiny == f.smallest_normal == 2.0 ** -126
    assert engine.finfo().eps == f.eps and engine.finfo(engine.float64).eps == 2.0 ** -52
    assert repr(f) == ("finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
                       "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)")
    i = engine.iinfo(engine.int64)
    assert (i.bits, i.max, i.min) == (64, 2 ** 63 - 1, -2 ** 63)
    with pytest.raises(TypeError, match=r"^torch.finfo\(\) requires a floating point input type"):
        engine.finfo(engine.int64)
    with pytest.raises(TypeError, match="^torch.bool is not supported by torch.iinfo$"):
        engine.iinfo(engine.bool)


def test_result_type_and_can_cast():
    assert engine.result_type(engine.tensor([1]), 1.0) is engine.float32
    assert engine.result_type(engine.tensor([1.0], dtype=engine.float64), engine.tensor([1.0])) is engine.float64
    assert engine.result_type(engine.tensor(True), 1) is engine.int64
    assert [engine.can_cast(a, b) for a, b in [(engine.float64, engine.int64), (engine.int64, engine.float32),
                                                (engine.bool, engine.int64), (engine.float32, engine.bool)]] == \
        [False, True, True, False]


# ---- reductions over nothing, and no degrees of freedom --------------------------------------------
def test_mean_of_nothing_is_nan_without_numpy_warnings():
    import warnings
    x = engine.zeros(0, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = x.mean(0)
        m.sum().backward()
    assert np.isnan(m.detach().numpy()).all() and tuple(x.grad.shape) == (0, 3)


@pytest.mark.parametrize("name", ["var", "std"])
def test_no_degrees_of_freedom_warns_as_pytorch(name):
    with pytest.warns(UserWarning, match=rf"^{name}\(\): degrees of freedom is <= 0. Correction should be strictly "
                                         r"less than the reduction factor \(input numel divided by output numel\).$"):
        out = getattr(engine.tensor([1.0]), name)()
    assert np.isnan(out.item())


# ---- conversions, comparisons with None, index_select and setitem on a leaf ---------------------------
def test_python_scalar_conversions_and_none_comparisons():
    for conv in (float, int):
        with pytest.raises(ValueError, match="^only one element tensors can be converted to Python scalars$"):
            conv(engine.ones(2))
    assert float(engine.tensor([2.5])) == 2.5 and int(engine.tensor(3)) == 3
    t = engine.tensor([1.0, 2.0])
    assert (t == None) is False and (t != None) is True    # noqa: E711


def test_index_select_checks_its_index():
    with pytest.raises(RuntimeError, match=r"^index_select\(\): Expected dtype int32 or int64 for index$"):
        engine.ones(2).index_select(0, engine.tensor([0.0]))
    with pytest.raises(IndexError, match=r"^index_select\(\): Index is supposed to be a vector$"):
        engine.ones(3).index_select(0, engine.tensor([[0, 1]]))
    with pytest.raises(RuntimeError, match=r"^INDICES element is out of DATA bounds, id=-1 axis_dim=4$"):
        engine.ones(3, 4).index_select(1, engine.tensor([-1]))
    x = engine.ones(3, 4, requires_grad=True)
    y = x.index_select(1, engine.tensor([0, 2, 2]))
    assert y.grad_fn.name() == "IndexSelectBackward0" and y.grad_fn._saved_dim == 1
    assert y.grad_fn._saved_index.tolist() == [0, 2, 2]
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 2.0, 0.0]] * 3
    assert tuple(x.index_select(1, engine.tensor(1)).shape) == (3, 1)


@pytest.mark.parametrize("key,view", [(0, True), ((slice(None), 0), True), (None, True), ((0, [1]), True),
                                      ([0], False), (Ellipsis, False), (slice(None), False),
                                      ((slice(None), [1]), False)])
def test_setitem_on_a_leaf_names_the_view_as_pytorch(key, view):
    x = engine.ones(2, 3, requires_grad=True)
    if isinstance(key, list):
        key = engine.tensor(key)
    elif isinstance(key, tuple):
        key = tuple(engine.tensor(k) if isinstance(k, list) else k for k in key)
    msg = ("a view of a leaf Variable" if view else "a leaf Variable") + \
        " that requires grad is being used in an in-place operation."
    with pytest.raises(RuntimeError) as e:
        x[key] = 5.0
    assert str(e.value) == msg


# ---- mT / mH, fill_ / zero_ nodes (found by tools/fuzz; messages and names are PyTorch 2.13's) ----------------
def test_mT_and_mH_refuse_a_vector_and_return_a_scalar_itself():
    v = engine.tensor([-2.75, 0.75], requires_grad=True)
    for name in ("mT", "mH"):
        with pytest.raises(RuntimeError) as err:
            getattr(v, name)
        assert str(err.value) == (f"tensor.{name} is only supported on matrices or batches of matrices. "
                                  "Got 1-D tensor.")
    s = engine.tensor(1.5, requires_grad=True) * 1
    with pytest.warns(UserWarning, match=r"^Tensor\.mT is deprecated on 0-D tensors\. This function is the "
                                         r"identity in these cases\.$"):
        assert s.mT is s
    with pytest.warns(UserWarning, match=r"^Tensor\.mH is deprecated on 0-D tensors\. Consider using x\.conj\(\)\.$"):
        assert s.mH is s
    m = engine.zeros(4, 2, 3, requires_grad=True) * 1
    assert m.mT.shape == m.mH.shape == (4, 3, 2) and m.mT.grad_fn.name() == "TransposeBackward0"


def test_fill_and_zero_nodes_are_pytorchs_overloads():
    """fill_(number) is fill_.Scalar (FillBackward2), fill_(tensor) fill_.Tensor (FillBackward3, a value
    that requires grad takes the sum of the gradient), zero_ ZeroBackward0; the input gets zeros."""
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    w = engine.tensor(2.0, requires_grad=True)
    for fill, name in ((lambda y: y.fill_(1.0), "FillBackward2"), (lambda y: y.zero_(), "ZeroBackward0"),
                       (lambda y: y.fill_(engine.tensor(2.0)), "FillBackward3"), (lambda y: y.fill_(w), "FillBackward3")):
        y = x * 1
        assert fill(y) is y and y.grad_fn.name() == name and y._version == 1
        y.backward(engine.tensor([1.0, 3.0]))
        assert x.grad.tolist() == [0.0, 0.0]
        x.grad = None
    assert w.grad.item() == 4.0 and y.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError) as err:
        (x * 1).fill_(engine.tensor([2.0]))
    assert str(err.value) == "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."
    assert engine.tensor([1, 2]).fill_(2.7).tolist() == [2, 2]
