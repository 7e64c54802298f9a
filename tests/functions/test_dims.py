"""Dim arguments (NOTE [ A 0-d tensor's one dim ] in engine/functions/dims.py): every dim-taking op of a
0-d tensor against values, grad_fn names and gradients recorded from PyTorch 2.13, and the dim errors in
PyTorch's words."""
from __future__ import annotations

import pytest

import engine as torch
from engine.core.table import OPS
from engine.functions.dims import reduce_dims, row_for, wrap_dim

F = torch.nn.functional

# (code on t = tensor(-0.75, float64), out, out.grad_fn, t.grad after out.backward(2.0)), recorded from PyTorch
FLOAT_CASES = [
    ("torch.sum(t, 0)", -0.75, "SumBackward1", 2.0),
    ("torch.sum(t, -1, keepdim=True)", -0.75, "SumBackward1", 2.0),
    ("torch.mean(t, (0,))", -0.75, "MeanBackward1", 2.0),
    ("torch.nansum(t, 0)", -0.75, "NansumBackward0", 2.0),
    ("torch.nanmean(t, -1)", -0.75, "DivBackward0", 2.0),
    ("torch.amax(t, 0)", -0.75, "AmaxBackward0", 2.0),
    ("torch.amin(t, -1, keepdim=True)", -0.75, "AminBackward0", 2.0),
    ("torch.logsumexp(t, 0)", -0.75, "LogsumexpBackward0", 2.0),
    ("torch.norm(t, dim=0)", 0.75, "LinalgVectorNormBackward0", -2.0),
    ("torch.var(t, 0, correction=0)", 0.0, "VarBackward0", 0.0),
    ("torch.std(t, -1, unbiased=False)", 0.0, "StdBackward0", 0.0),
    ("torch.prod(t, 0)", -0.75, "ProdBackward1", 2.0),
    ("torch.softmax(t, 0)", 1.0, "SoftmaxBackward0", 0.0),
    ("F.log_softmax(t, dim=-1)", 0.0, "LogSoftmaxBackward0", 0.0),
    ("F.softmin(t, 0)", 1.0, "SoftmaxBackward0", -0.0),
    ("torch.cumsum(t, 0)", -0.75, "CumsumBackward0", 2.0),
    ("torch.cumprod(t, -1)", -0.75, "CumprodBackward0", 2.0),
    ("torch.logcumsumexp(t, 0)", -0.75, "LogcumsumexpBackward0", 2.0),
    ("torch.sort(t)[0]", -0.75, "SortBackward0", 2.0),
    ("torch.topk(t, 1)[0]", -0.75, "TopkBackward0", 2.0),
    ("torch.max(t, 0)[0]", -0.75, "MaxBackward0", 2.0),
    ("torch.min(t, -1, keepdim=True)[0]", -0.75, "MinBackward0", 2.0),
    ("torch.median(t, 0)[0]", -0.75, "MedianBackward1", 2.0),
    ("torch.mode(t, 0)[0]", -0.75, "ModeBackward0", 2.0),
    ("torch.kthvalue(t, 1, 0)[0]", -0.75, "KthvalueBackward0", 2.0),
    ("torch.cummax(t, 0)[0]", -0.75, "CummaxBackward0", 2.0),
    ("torch.cummin(t, 0)[0]", -0.75, "CumminBackward0", 2.0),
    ("torch.msort(t)", -0.75, "SortBackward0", 2.0),
    ("torch.var_mean(t, 0, correction=0)[1]", -0.75, "VarMeanBackward0", 2.0),
    ("torch.aminmax(t, dim=0, keepdim=True)[1]", -0.75, "AminmaxBackward0", 2.0),
]

# (code, value, dtype, shape), recorded from PyTorch
INDEX_CASES = [
    ("torch.argmax(t, 0)", 0, "int64", []),
    ("torch.argmin(t, -1, keepdim=True)", 0, "int64", []),
    ("torch.argsort(t, 0)", 0, "int64", []),
    ("torch.sort(t, 0)[1]", 0, "int64", []),
    ("torch.max(t, 0)[1]", 0, "int64", []),
    ("torch.mode(t)[1]", 0, "int64", []),
    ("torch.count_nonzero(t, 0)", 1, "int64", []),
    ("torch.all(t, 0)", True, "bool", []),
    ("torch.any(t, -1)", True, "bool", []),
]


@pytest.mark.parametrize("code, value, node, grad", FLOAT_CASES)
def test_a_dim_op_of_a_0d_tensor_is_pytorchs(code, value, node, grad):
    t = torch.tensor(-0.75, dtype=torch.float64, requires_grad=True)
    out = eval(code, {"torch": torch, "F": F, "t": t})
    assert out.shape == () and out.item() == value
    assert out.grad_fn.name() == node
    out.backward(torch.tensor(2.0, dtype=torch.float64))
    assert t.grad.shape == () and t.grad.item() == grad


@pytest.mark.parametrize("code, value, dtype, shape", INDEX_CASES)
def test_the_indices_of_a_0d_tensor_are_0d(code, value, dtype, shape):
    t = torch.tensor(-0.75, dtype=torch.float64)
    out = eval(code, {"torch": torch, "t": t})
    assert list(out.shape) == shape and out.dtype.name == dtype and out.item() == value


def test_a_row_along_the_one_dim_keeps_its_node_and_differentiates_twice():
    # rule 3: softmax(t) * t is t, so d/dt = 1 and d2/dt2 = 0; max(t, 0, keepdim)**3 gives 3t^2 and 6t
    t = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(torch.softmax(t, 0) * t, t, create_graph=True)
    g2, = torch.autograd.grad(g, t)
    assert (g.item(), g2.item()) == (1.0, 0.0)
    g, = torch.autograd.grad(torch.max(t, 0, keepdim=True)[0] ** 3, t, create_graph=True)
    g2, = torch.autograd.grad(g, t)
    assert (g.item(), g2.item()) == (0.75, 3.0)
    row = row_for("softmax", t)
    assert (row.name, row.node) == ("softmax", "SoftmaxBackward0") and row is row_for("softmax", t)
    assert row is not OPS["softmax"] and row_for("softmax", t.reshape(1)) is OPS["softmax"]


def test_in_place_scans_of_a_0d_tensor():
    t = torch.tensor(-0.75, dtype=torch.float64, requires_grad=True)
    y = t * 1
    y.cumsum_(0)
    y.backward(torch.tensor(2.0, dtype=torch.float64))
    assert y.shape == () and y.grad_fn.name() == "CumsumBackward0" and t.grad.item() == 2.0


def test_wrap_dim_and_reduce_dims():
    assert [wrap_dim(d, 0) for d in (0, -1)] == [0, 0]
    assert wrap_dim(-1, 3) == 2
    assert reduce_dims((0, -1), 3) == (0, 2)
    assert reduce_dims(0, 0) == () and reduce_dims(None, 2) is None and reduce_dims([], 2) is None
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)$"):
        wrap_dim(1, 0)
    with pytest.raises(IndexError, match="^Dimension specified as 0 but tensor has no dimensions$"):
        wrap_dim(0, 0, scalar=False)


@pytest.mark.parametrize("code, message", [
    ("torch.sum(torch.ones(2, 2), (0, -2))", "dim 0 appears multiple times in the list of dims"),
    ("torch.var_mean(torch.ones(2, 3), (-1, 1))", "dim 1 appears multiple times in the list of dims"),
    ("torch.sum(torch.tensor(1.5), (0, -1))", "dim 0 appears multiple times in the list of dims"),
    ("torch.count_nonzero(torch.ones(2, 2), (0, 0))", "dim 0 appears multiple times in the list of dims"),
])
def test_a_dim_named_twice_is_refused(code, message):
    with pytest.raises(RuntimeError) as e:
        eval(code)
    assert str(e.value) == message


def test_roll_refuses_a_0d_tensor_as_pytorch():
    with pytest.raises(IndexError) as e:
        torch.roll(torch.tensor(1.5), 1, 0)
    assert str(e.value) == "Dimension specified as 0 but tensor has no dimensions"


def test_a_compiled_function_runs_a_0d_dim_op_eagerly():
    """Rule 3's rows are not table rows, so engine.compile breaks the graph there and runs it eagerly."""
    def f(x):
        return torch.softmax(x * 2, 0) + torch.cumsum(x, 0)

    x = torch.tensor(0.5, requires_grad=True)
    with pytest.warns(UserWarning, match="along the one dim of a 0-d tensor"):
        y = torch.compile(f)(x)
    y.backward()
    assert y.shape == () and y.item() == 1.5 and x.grad.item() == 1.0
