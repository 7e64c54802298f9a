"""matmul, einsum, F.linear, addmm and outer build PyTorch's graph (NOTE [ matmul's lowering ] in
engine/functions/matmul.py, NOTE [ einsum's lowering ] in engine/functions/einsum_lowering.py), with
PyTorch's error messages. The graphs, strides and messages were recorded from PyTorch 2.13
(tests/fixtures/make_graph_names_reference.py); values are checked against NumPy and finite differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine.autograd import gradcheck

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "fixtures", "graph_names_reference.json"), encoding="utf-8") as _f:
    REF = json.load(_f)

MM_A = {1: (3,), 2: (2, 3), 3: (2, 2, 3), 4: (2, 1, 2, 3)}
MM_B = {1: (3,), 2: (3, 4), 3: (2, 3, 4), 4: (1, 2, 3, 4)}


def chain(fn):
    if fn is None:
        return "None"
    kids = [chain(n) for n, _ in fn.next_functions if n is not None and n.name() != "torch::autograd::AccumulateGrad"]
    return fn.name() + ("(" + ", ".join(kids) + ")" if kids else "")


def arange(shape, scale=1.0):
    return engine.tensor(np.arange(int(np.prod(shape)), dtype=float).reshape(shape) * scale - 1.0, dtype=engine.float64)


def _operands(case):
    (ra, ga), (rb, gb) = case["a"], case["b"]
    a, b = arange(MM_A[ra]), arange(MM_B[rb], 0.5)
    if case["layout"] == "transposed":
        if ra >= 3:
            a = a.transpose(0, -2).contiguous().transpose(0, -2)
        if rb >= 2:
            b = b.transpose(-1, -2).contiguous().transpose(-1, -2)
    return a.requires_grad_(ga), b.requires_grad_(gb)


@pytest.mark.parametrize("case", REF["matmul"], ids=lambda c: f"{c['a']}@{c['b']}-{c['layout']}")
def test_matmul_builds_pytorchs_graph_for_every_rank_pair(case):
    a, b = _operands(case)
    out = engine.matmul(a, b)
    assert chain(out.grad_fn) == case["graph"]
    assert list(out.stride()) == case["stride"]
    np.testing.assert_array_equal(out.detach().numpy(), np.matmul(a.detach().numpy(), b.detach().numpy()))
    out.backward(engine.ones_like(out))
    if a.requires_grad:
        np.testing.assert_allclose(a.grad.numpy(), _ones_grad_of_a(a.detach().numpy(), b.detach().numpy()))


def _ones_grad_of_a(a, b):
    """d sum(a @ b) / da by NumPy: 1-D operands promoted to matrices, ones @ b^T, summed back to a's shape."""
    a2 = a if a.ndim > 1 else a[None, :]
    b2 = b if b.ndim > 1 else b[:, None]
    g = np.ones(np.matmul(a2, b2).shape) @ np.swapaxes(b2, -1, -2)
    g = g.reshape((-1,) + a2.shape).sum(0) if g.ndim > a2.ndim else g
    g = g.sum(axis=tuple(i for i, n in enumerate(a2.shape) if n == 1 and g.shape[i] != 1), keepdims=True)
    return g.reshape(a.shape)


def test_matmul_gradients_match_finite_differences():
    for ra, rb in [(1, 3), (3, 1), (2, 3), (3, 2), (4, 3), (1, 4), (3, 3)]:
        a, b = arange(MM_A[ra], 0.3).requires_grad_(), arange(MM_B[rb], 0.2).requires_grad_()
        assert gradcheck(engine.matmul, [a, b])


def test_a_matmul_result_is_no_view_so_an_in_place_op_on_it_is_ordinary():
    """_unsafe_view shares the product's bytes but has no base (core/table.py's ``alias`` flag)."""
    a, b = arange((2, 2, 3)).requires_grad_(), arange((3, 4)).requires_grad_()
    out = a @ b
    assert out._base is None
    assert out.grad_fn.name() == "UnsafeViewBackward0"
    mm_result = out.grad_fn.next_functions[0][0]
    assert mm_result.name() == "MmBackward0"
    out.mul_(2)
    assert out.grad_fn.name() == "MulBackward0"
    out.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), 2 * a.detach().numpy().reshape(4, 3).T @ np.ones((4, 4)))


@pytest.mark.parametrize("case", REF["einsum"], ids=lambda c: c["equation"])
def test_einsum_builds_pytorchs_graph(case):
    ts = [arange(tuple(s), 0.25).requires_grad_() for s in case["shapes"]]
    out = engine.einsum(case["equation"], *ts)
    assert chain(out.grad_fn) == case["graph"]
    assert _bmm_saved(out.grad_fn) == case["bmm_saved"]    # what its bmm keeps: the same views or copies
    eq = case["equation"].replace(" ", "")
    np.testing.assert_allclose(out.detach().numpy(), np.einsum(eq, *[t.detach().numpy() for t in ts]))
    assert gradcheck(lambda *xs: engine.einsum(case["equation"], *xs), ts)


def _bmm_saved(fn):
    if fn is None:
        return []
    here = []
    if fn.name() == "BmmBackward0":
        here = [[list(t.shape), list(t.stride())] for t in (fn._saved_self, fn._saved_mat2)]
    return here + [s for n, _ in fn.next_functions for s in _bmm_saved(n)]


@pytest.mark.parametrize("case", REF["linear"], ids=lambda c: f"{c['input']}-{c['bias']}-{c['contiguous']}")
def test_linear_builds_pytorchs_graph(case):
    x = arange(tuple(case["input"]))
    if not case["contiguous"]:
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    x.requires_grad_()
    w = arange((4, 3), 0.5).requires_grad_()
    b = {"1d": arange((4,)), "0d": arange(())}.get(case["bias"])
    if b is not None:
        b.requires_grad_()
    out = F.linear(x, w, b)
    assert chain(out.grad_fn) == case["graph"]
    want = x.detach().numpy() @ w.detach().numpy().T + (b.detach().numpy() if b is not None else 0.0)
    np.testing.assert_allclose(out.detach().numpy(), want)


def test_addmm_with_beta_and_alpha_is_one_node_with_pytorchs_values():
    c, a, m = arange((4,)).requires_grad_(), arange((2, 3)).requires_grad_(), arange((3, 4), 0.5).requires_grad_()
    for beta, alpha in ((0.5, 1), (1, 2), (0, 1.5)):
        out = engine.addmm(c, a, m, beta=beta, alpha=alpha)
        assert chain(out.grad_fn) == "AddmmBackward0"
        want = alpha * (a.detach().numpy() @ m.detach().numpy()) + (beta * c.detach().numpy() if beta else 0.0)
        np.testing.assert_allclose(out.detach().numpy(), want)
        assert gradcheck(lambda c, a, m, beta=beta, alpha=alpha: engine.addmm(c, a, m, beta=beta, alpha=alpha),
                         [c, a, m])
    nan_in = engine.tensor([float("nan")] * 4, dtype=engine.float64)
    assert not np.isnan(engine.addmm(nan_in, a, m, beta=0).detach().numpy()).any()   # beta=0 ignores the input


def test_outer_is_a_product_of_a_view_as_in_pytorch():
    out = engine.outer(arange((2,)).requires_grad_(), arange((3,)).requires_grad_())
    assert chain(out.grad_fn) == "MulBackward0(ViewBackward0)"


@pytest.mark.parametrize("case", REF["errors"], ids=lambda c: c["code"])
def test_the_matmul_familys_errors_are_pytorchs(case):
    with pytest.raises(Exception) as info:
        eval(case["code"], {"torch": engine})
    assert type(info.value).__name__ == case["type"]
    assert str(info.value).splitlines()[0] == case["message"]
