"""Tensor basics: factories, dtypes, repr, conversions, strides, views, versions, leaf rules.

REPRS holds expressions and the repr PyTorch 2.13 prints for them; glassgrad must print the same.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine as torch  # noqa: F401  (the REPRS expressions say ``torch.``)

REPRS = [  # (expression, PyTorch 2.13 repr)
    ('torch.tensor([1.0, 2.0, 3.0])', 'tensor([1., 2., 3.])'),
    ('torch.tensor([1.5, -2.25])', 'tensor([ 1.5000, -2.2500])'),
    ('torch.tensor(3.0)', 'tensor(3.)'),
    ('torch.tensor(3)', 'tensor(3)'),
    ('torch.tensor(True)', 'tensor(True)'),
    ('torch.tensor([1, 2, 3])', 'tensor([1, 2, 3])'),
    ('torch.tensor([True, False])', 'tensor([ True, False])'),
    ('torch.tensor([[1., 2.], [3., 4.]])', 'tensor([[1., 2.],\n        [3., 4.]])'),
    ('torch.tensor([1.0, 2.0], dtype=torch.float64)', 'tensor([1., 2.], dtype=torch.float64)'),
    ('torch.tensor([0.1, 200.0])', 'tensor([1.0000e-01, 2.0000e+02])'),
    ('torch.tensor([1e-5, 1.0])', 'tensor([1.0000e-05, 1.0000e+00])'),
    ('torch.tensor([1e10, 1.0])', 'tensor([1.0000e+10, 1.0000e+00])'),
    ('torch.zeros(0)', 'tensor([])'),
    ('torch.zeros(2, 0)', 'tensor([], size=(2, 0))'),
    ('torch.tensor([1.0, 2.0], requires_grad=True)', 'tensor([1., 2.], requires_grad=True)'),
    ('torch.tensor([1.0, 2.0], requires_grad=True) * 2', 'tensor([2., 4.], grad_fn=<MulBackward0>)'),
    ("torch.tensor([float('nan'), float('inf'), 1.0])", 'tensor([nan, inf, 1.])'),
    ('torch.arange(3, dtype=torch.float64)', 'tensor([0., 1., 2.], dtype=torch.float64)'),
    ('torch.tensor([[1, -2], [30, 4]])', 'tensor([[ 1, -2],\n        [30,  4]])'),
    ('torch.tensor(2.5, dtype=torch.float64)', 'tensor(2.5000, dtype=torch.float64)'),
    ('torch.tensor([0.12345678, 1.0])', 'tensor([0.1235, 1.0000])'),
    ('torch.ones(2, 3)', 'tensor([[1., 1., 1.],\n        [1., 1., 1.]])'),
    ('torch.tensor([-0.5, 0.25])', 'tensor([-0.5000,  0.2500])'),
    ('torch.float32', 'torch.float32'),
    ('torch.int64', 'torch.int64'),
    ('torch.bool', 'torch.bool'),
    ('torch.float64', 'torch.float64'),
    ("torch.device('cpu')", "device(type='cpu')"),
    ('torch.ones(2,3).shape', 'torch.Size([2, 3])'),
    ('torch.tensor([1.0, 2.0]).sum()', 'tensor(3.)'),
    ('torch.tensor([1.0,2.0], requires_grad=True).sum()', 'tensor(3., grad_fn=<SumBackward0>)'),
    ('torch.ones(3,4).stride()', '(4, 1)'),
    ('torch.ones(3,4).t().stride()', '(1, 4)'),
    ('torch.ones(3,4).t().is_contiguous()', 'False'),
    ('torch.ones(3,4)[:, 1].stride()', '(4,)'),
    ('torch.ones(3,4)[1:, 1:].storage_offset()', '5'),
    ('torch.ones(2,3).element_size()', '4'),
    ('torch.ones(2,3,dtype=torch.long).element_size()', '8'),
    ('torch.ones(2,3).numel()', '6'),
    ('torch.ones(2,3).dim()', '2'),
    ('torch.ones(2,3).size(1)', '3'),
    ('torch.ones(2,3).size(-1)', '3'),
    ('torch.tensor([1.5]).item()', '1.5'),
    ('torch.tensor([[1, 2]]).tolist()', '[[1, 2]]'),
    ('torch.tensor(3.5).tolist()', '3.5'),
    ('type(torch.tensor([1]).item())', "<class 'int'>"),
    ('torch.ones(2).type()', "'torch.FloatTensor'"),
    ('torch.ones(2).long().type()', "'torch.LongTensor'"),
    ('torch.tensor([1.0]).numpy().dtype', "dtype('float32')"),
    ('torch.tensor([2]).numpy().dtype', "dtype('int64')"),
    ('torch.linspace(0, 1, 5)', 'tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])'),
    ('torch.eye(2)', 'tensor([[1., 0.],\n        [0., 1.]])'),
    ('torch.full((2,), 7)', 'tensor([7, 7])'),
    ('torch.full((2,), 7.0)', 'tensor([7., 7.])'),
    ('torch.full((2,), True)', 'tensor([True, True])'),
    ('torch.arange(0, 1, 0.25)', 'tensor([0.0000, 0.2500, 0.5000, 0.7500])'),
    ('torch.arange(5)', 'tensor([0, 1, 2, 3, 4])'),
    ('torch.zeros_like(torch.ones(2, dtype=torch.long))', 'tensor([0, 0])'),
    ('torch.ones(2, 2).T.is_contiguous()', 'False'),
    ('torch.tensor([[1,2],[3,4]]).float().mean()', 'tensor(2.5000)'),
    ('torch.get_default_dtype()', 'torch.float32'),
    ('torch.tensor([1, 2]).dtype', 'torch.int64'),
    ('torch.tensor([1., 2]).dtype', 'torch.float32'),
    ('torch.tensor(1.0).shape', 'torch.Size([])'),
    ('torch.tensor([]).dtype', 'torch.float32'),
    ('torch.tensor([]).shape', 'torch.Size([0])'),
    ('torch.randn(2, 3).is_leaf', 'True'),
    ('torch.ones(4)[1:3]._base is not None', 'True'),
    ('torch.ones(2)._version', '0'),
    ('len(torch.ones(3, 2))', '3'),
    ('torch.Size([2, 3])', 'torch.Size([2, 3])'),
    ('torch.tensor([[0.001, 1000.0]])', 'tensor([[1.0000e-03, 1.0000e+03]])'),
    ('torch.tensor([123456.0, 1.0])', 'tensor([1.2346e+05, 1.0000e+00])'),
    ('torch.tensor([1.0, 2.0]) == torch.tensor([1.0, 3.0])', 'tensor([ True, False])'),
]


@pytest.mark.parametrize("code,expected", REPRS, ids=[c for c, _ in REPRS])
def test_repr_like_pytorch(code, expected):
    assert repr(eval(code)) == expected


def test_str_and_long_tensor_summary():
    assert str(engine.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    r = repr(engine.arange(2000.0))
    assert r.startswith("tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,") and "..." in r and r.endswith("1.9990e+03])")
    assert f"{engine.tensor(2.5):.2f}" == "2.50"


# ---- factories ------------------------------------------------------------------------------
def test_factories_shapes_dtypes_values():
    assert engine.zeros(2, 3).tolist() == [[0.0] * 3] * 2 and engine.zeros((2, 3)).shape == (2, 3)
    assert engine.ones([4]).dtype is engine.float32
    assert engine.full((2,), 7).dtype is engine.int64 and engine.full((2,), 7.0).dtype is engine.float32
    assert engine.full((1,), True).dtype is engine.bool
    assert engine.arange(5).dtype is engine.int64 and engine.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert engine.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert engine.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert engine.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert engine.empty(3).shape == (3,)
    x = engine.ones(2, dtype=engine.float64)
    for like in (engine.zeros_like(x), engine.ones_like(x), engine.full_like(x, 3.0), engine.empty_like(x)):
        assert like.dtype is engine.float64 and like.shape == (2,)
    assert engine.zeros(3, dtype=engine.long).dtype is engine.int64
    assert engine.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert engine.tensor(np.array([1.0, 2.0])).dtype is engine.float64   # NumPy float64 keeps its dtype
    assert engine.tensor([1.0, 2.0]).dtype is engine.float32             # Python floats: the default dtype
    assert engine.tensor(np.array([1, 2], dtype=np.int32)).dtype is engine.int32   # as PyTorch: kept
    assert engine.tensor(3.0).shape == () and engine.tensor(3.0).item() == 3.0
    assert engine.tensor([]).shape == (0,)


def test_random_factories_are_seeded():
    engine.manual_seed(5)
    a = engine.randn(3, 2)
    engine.manual_seed(5)
    b = engine.randn(3, 2)
    assert a.tolist() == b.tolist() and a.dtype is engine.float32
    r = engine.rand(1000)
    assert 0.0 <= float(r.min()) and float(r.max()) < 1.0
    i = engine.randint(0, 3, (100,))
    assert i.dtype is engine.int64 and set(i.tolist()) <= {0, 1, 2}
    assert sorted(engine.randperm(5).tolist()) == [0, 1, 2, 3, 4]
    j = engine.randint(3, (50,))          # randint(high, size), as PyTorch allows
    assert tuple(j.shape) == (50,) and set(j.tolist()) <= {0, 1, 2}
    k = engine.randint(7, 9, size=(2, 25))
    assert tuple(k.shape) == (2, 25) and set(k.flatten().tolist()) <= {7, 8}


def test_default_dtype():
    assert engine.get_default_dtype() is engine.float32
    engine.set_default_dtype(engine.float64)
    assert engine.tensor([1.0]).dtype is engine.float64 and engine.ones(1).dtype is engine.float64
    assert (engine.tensor([1, 2]) * 0.5).dtype is engine.float64
    engine.set_default_dtype(engine.float32)
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        engine.set_default_dtype(engine.int64)


def test_dtype_aliases_and_sizes():
    assert engine.float is engine.float32 and engine.double is engine.float64 and engine.long is engine.int64
    assert [d.itemsize for d in (engine.bool, engine.int64, engine.float32, engine.float64)] == [1, 8, 4, 8]
    assert engine.float32.is_floating_point and not engine.int64.is_floating_point
    assert engine.ones(3, dtype=engine.float64).element_size() == 8 and engine.ones(3).nbytes == 12


# ---- conversions --------------------------------------------------------------------------
def test_item_tolist_numpy():
    t = engine.tensor([[1.5, 2.0]])
    assert t.tolist() == [[1.5, 2.0]] and isinstance(engine.tensor([3]).item(), int)
    a = t.numpy()
    assert a.dtype == np.float32 and a.shape == (1, 2)
    a[0, 0] = 9.0                                     # numpy() shares memory, as in PyTorch
    assert t[0, 0].item() == 9.0
    n = np.arange(3.0)
    f = engine.from_numpy(n)
    n[1] = 7.0                                        # and so does from_numpy
    assert f.tolist() == [0.0, 7.0, 2.0] and f.dtype is engine.float64
    c = engine.tensor(n)
    n[2] = -1.0                                       # tensor() copies
    assert c.tolist() == [0.0, 7.0, 2.0]
    assert float(engine.tensor([2.5])) == 2.5 and int(engine.tensor(3)) == 3
    assert np.asarray(engine.ones(2)).tolist() == [1.0, 1.0]


def test_to_dtype_conversions():
    x = engine.tensor([1.7, -1.2])
    assert x.long().tolist() == [1, -1] and x.long().dtype is engine.int64
    assert x.double().dtype is engine.float64 and x.to(engine.float64).dtype is engine.float64
    assert x.to(engine.float32) is x
    assert engine.tensor([0.0, 2.0]).bool().tolist() == [False, True]
    assert x.type() == "torch.FloatTensor" and x.type(engine.float64).dtype is engine.float64
    assert x.to("cpu") is x and x.cpu() is x


# ---- strides, views, storage --------------------------------------------------------------
def test_strides_and_contiguity():
    x = engine.ones(3, 4)
    assert x.stride() == (4, 1) and x.stride(0) == 4 and x.is_contiguous()
    assert x.t().stride() == (1, 4) and not x.t().is_contiguous()
    assert x[:, 1].stride() == (4,) and x[1:, 1:].storage_offset() == 5
    assert x.t().contiguous().is_contiguous() and x.t().contiguous().stride() == (3, 1)
    assert x.unsqueeze(0).shape == (1, 3, 4) and x.view(2, 6).stride() == (6, 1)


def test_views_share_storage_and_copies_do_not():
    x = engine.zeros(3, 4)
    views = [x.view(12), x[1], x[:, ::2], x.t(), x.T, x.unsqueeze(1), x.reshape(4, 3), x.expand(2, 3, 4),
             x.transpose(0, 1), x.permute(1, 0), x.narrow(1, 1, 2), x.detach(), x[None]]
    for v in views:
        assert v._storage is x._storage
    for c in (x.clone(), x.t().reshape(12), x * 1, x[engine.tensor([0, 1])], x.t().contiguous()):
        assert c._storage is not x._storage
    v = x[1]
    v.fill_(2.0)
    assert x[1].tolist() == [2.0] * 4 and x[0].tolist() == [0.0] * 4
    assert x.view(12)._base is x and x[1][2:]._base is x


def test_versions():
    x = engine.zeros(3)
    assert x._version == 0
    x.add_(1)
    x += 1
    x.mul_(2)
    assert x._version == 3 and x.tolist() == [4.0] * 3
    x[0] = 1.0
    assert x._version == 4
    x.zero_()
    assert x._version == 5
    y = x + 1
    assert y._version == 0 and x._version == 5


# ---- leaves and requires_grad -------------------------------------------------------------
def test_requires_grad_rules():
    a = engine.randn(2)
    assert a.is_leaf and not a.requires_grad and a.grad_fn is None and a.grad is None
    a.requires_grad_()
    assert a.requires_grad and a.is_leaf
    b = a * 2
    assert b.requires_grad and not b.is_leaf and b.grad_fn.name() == "MulBackward0"
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        b.requires_grad = False
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        engine.tensor([1, 2], requires_grad=True)
    c = b.detach()
    assert c.is_leaf and not c.requires_grad and c._storage is b._storage
    assert not (engine.randn(2) * 3).requires_grad
    a.requires_grad = False
    assert not (a * 2).requires_grad
    x = engine.ones(2, requires_grad=True)
    assert not (x > 0).requires_grad and (x > 0).grad_fn is None   # comparisons are not differentiable
    assert not x.argmax().requires_grad
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]


def test_grad_setter_checks():
    x = engine.ones(2, requires_grad=True)
    x.grad = engine.zeros(2)
    assert x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = engine.zeros(3)
    x.grad = None
    assert x.grad is None


def test_shape_helpers():
    x = engine.ones(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == engine.Size([2, 3, 4]) and x.size(-1) == 4
    assert x.dim() == x.ndim == 3 and x.numel() == 24 and len(x) == 2
    assert repr(x.shape) == "torch.Size([2, 3, 4])"
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(engine.tensor(1.0))
    assert [t.shape for t in engine.ones(3, 2)] == [(2,)] * 3


def test_size_operations_keep_the_type():
    s = engine.ones(2, 3, 4).shape
    assert repr(s[1:]) == "torch.Size([3, 4])" and s[-1] == 4 and isinstance(s[0], int)
    assert repr(s + (5,)) == "torch.Size([2, 3, 4, 5])" and repr((1,) + s) == "torch.Size([1, 2, 3, 4])"
    assert repr(s * 2) == "torch.Size([2, 3, 4, 2, 3, 4])" and s.numel() == 24
    assert s == (2, 3, 4) and engine.Size([2, 3, 4]) == s


def test_unsupported_dtype_names_say_which_dtypes_exist():
    for name in ("float8_e4m3fn", "uint16", "complex32"):
        with pytest.raises(AttributeError) as e:
            getattr(engine, name)
        assert str(e.value) == (f"glassgrad has no dtype torch.{name}: its dtypes are bool, uint8, int8, int16, "
                                "int32, int64, float16, bfloat16, float32, float64, complex64 and complex128")
        assert not hasattr(engine, name)
    for name in ("float16", "bfloat16", "uint8", "int8", "int16", "half", "short"):
        assert isinstance(getattr(engine, name), engine.dtype)


def test_integer_requires_grad_errors_word_each_path_as_pytorch():
    # PyTorch 2.13: factories and Parameter, the setter and requires_grad_() each have their own text
    cases = [(lambda: engine.zeros(2, dtype=engine.int64, requires_grad=True),
              "Only Tensors of floating point and complex dtype can require gradients"),
             (lambda: engine.arange(3, requires_grad=True),
              "Only Tensors of floating point and complex dtype can require gradients"),
             (lambda: engine.nn.Parameter(engine.tensor([1, 2])),
              "Only Tensors of floating point and complex dtype can require gradients"),
             (lambda: setattr(engine.tensor([1, 2]), "requires_grad", True),
              "only Tensors of floating point and complex dtype can require gradients"),
             (lambda: engine.ones(2, dtype=engine.bool).requires_grad_(),
              "only Tensors of floating point dtype can require gradients")]
    for fn, msg in cases:
        with pytest.raises(RuntimeError) as e:
            fn()
        assert str(e.value) == msg
    t = engine.tensor([1, 2])
    assert engine.nn.Parameter(t, requires_grad=False).dtype is engine.int64   # allowed without grad


def test_empty_tensor_repr_names_any_non_default_dtype_as_pytorch():
    assert repr(engine.tensor([], dtype=engine.int64)) == "tensor([], dtype=torch.int64)"
    assert repr(engine.zeros(0, 3, dtype=engine.int64)) == "tensor([], size=(0, 3), dtype=torch.int64)"
    assert repr(engine.zeros(0, dtype=engine.bool)) == "tensor([], dtype=torch.bool)"
    assert repr(engine.tensor([])) == "tensor([])"
    assert repr(engine.tensor([1, 2])) == "tensor([1, 2])"


def test_unique_as_pytorch():
    # PyTorch 2.13 gives these results
    x = engine.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
    u = engine.unique(x)
    assert u.tolist() == [1.0, 2.0, 3.0] and u.grad_fn.name() == "Unique2Backward0"
    with pytest.raises(RuntimeError, match=r"^the derivative for '_unique2' is not implemented\.$"):
        u.sum().backward()
    vals, inv, counts = engine.tensor([3, 1, 3, 2]).unique(return_inverse=True, return_counts=True)
    assert (vals.tolist(), inv.tolist(), counts.tolist()) == ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    assert inv.dtype is engine.int64 and counts.dtype is engine.int64
    rows, rinv = engine.unique(engine.tensor([[1, 2], [1, 2], [0, 1]]), dim=0, return_inverse=True)
    assert rows.tolist() == [[0, 1], [1, 2]] and rinv.tolist() == [1, 1, 0]
    m = engine.tensor([[2, 2], [1, 2]])
    assert engine.unique(m, return_inverse=True)[1].tolist() == [[1, 1], [0, 1]]


def test_default_device_and_the_device_context_manager():
    import threading
    assert engine.get_default_device() == engine.device("cpu")
    seen = []
    with engine.device("cpu") as d:
        assert d == engine.device("cpu") and engine.zeros(1).device == d
        worker = threading.Thread(target=lambda: seen.append(engine.get_default_device()))
        worker.start()
        worker.join()
    assert seen == [engine.device("cpu")]          # other threads keep their own default
    engine.set_default_device("cpu")
    assert engine.tensor([1.0]).device.type == "cpu"
    if engine.cuda.is_available():
        with engine.device("cuda"):
            assert engine.tensor([1.0]).is_cuda and engine.randn(2).is_cuda
            with engine.device("cpu"):
                assert engine.zeros(1).device.type == "cpu"
            assert engine.ones(1).is_cuda
        assert engine.ones(1).device.type == "cpu"


def test_a_gpu_generator_made_after_manual_seed_takes_that_seed():
    # PyTorch queues manual_seed for CUDA until it starts: a seed set first still holds on the GPU
    from engine import random as R
    engine.manual_seed(123)
    g = R.generator_for("cuda:7")          # made now, after the seed (no GPU is needed to make one)
    try:
        assert g.initial_seed() == 123
        want = np.random.Generator(np.random.PCG64(123)).standard_normal(4)
        np.testing.assert_array_equal(g.normal((4,), np.float64), want)
        engine.manual_seed(9)
        assert g.initial_seed() == 9 and R.default_generator.initial_seed() == 9
    finally:
        R._generators.pop("cuda:7", None)


def test_in_place_ops_on_reduction_results():
    # NumPy reduces to a scalar object; the tensor holds a 0-d array, so in-place ops work as in PyTorch
    x = engine.arange(1.0, 4.0)
    s = engine.sum(x)
    assert isinstance(s._data, np.ndarray) and s._data.shape == ()
    s.mul_(2)
    assert s.item() == 12.0 and s._version == 1
    m = x.mean()
    m.add_(1)
    assert m.item() == 3.0
    d = engine.dot(x, x)
    d.sub_(4.0)
    assert d.item() == 10.0
    y = engine.ones(2, 3, requires_grad=True)
    z = (y * 2).sum() * 1
    z.mul_(3)
    z.backward()
    assert y.grad.tolist() == [[6.0] * 3] * 2


def test_an_in_place_op_on_a_detached_view_leaves_the_base_history_alone():
    """``detach()`` is not a differentiable view: writing through it bumps the shared version
    counter but does not rebase the base's history (found by tools/fuzz: a.grad was [0, 0] and
    b got a gradient)."""
    a = engine.ones(2, requires_grad=True)
    b = engine.full((2,), 3.0, requires_grad=True)
    y = a * 1
    z = y.view(2).detach()
    z.mul_(b)
    assert y.grad_fn.name() == "MulBackward0" and z.grad_fn.name() == "MulBackward0"
    assert y._version == z._version == 1
    y.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad is None
    assert y.tolist() == [3.0, 3.0]              # the same memory


@pytest.mark.parametrize("write", ["add_(1)", "mul_(engine.ones(2, 3))", "uniform_()", "copy_(engine.zeros(2, 3))",
                                   "relu_()"])   # fill_, zero_, masked_fill_ and a setitem are allowed: test_inplace.py
def test_writing_into_an_expanded_tensor_gives_pytorchs_error(write):
    """Several elements of an ``expand()``ed tensor share one memory location: PyTorch refuses the
    write, in its words (it was NumPy's "assignment destination is read-only"; found by tools/fuzz)."""
    x = engine.ones(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single "
                                           "memory location. Please clone\\(\\) the tensor"):
        eval("x." + write, {"x": x, "engine": engine})
