"""NOTE [ Backward execution ] 8 (core/backward.py): the backward engine's direct path runs the same
nodes in the same order and gives the same gradients, storages and accounting calls as the general
path, and steps aside for hooks, retain_grad, ``inputs``, create_graph and recording."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.core import backward, dispatch
from engine.memory import state


class _NotANode:
    """Stands in for OpNode so that no node qualifies: the general path only."""


@pytest.fixture
def direct(monkeypatch):
    """The nodes the direct path ran, by name."""
    backward._numpy_xp()              # NumPy's ArrayFns, which the direct path asks to exist
    ran, last = [], []
    real_own, real_apply = backward._own, dispatch.OpNode.apply

    def apply(node, grads, F=None):
        last[:] = [node.name()]
        return real_apply(node, grads, F)

    def own(gin, outs, made):
        if type(outs) is tuple:       # the direct path hands its incoming gradient as a tuple
            ran.append(last[0])
        return real_own(gin, outs, made)
    monkeypatch.setattr(backward, "_own", own)
    monkeypatch.setattr(dispatch.OpNode, "apply", apply)
    return ran


def _trace_calls(monkeypatch):
    """Every node apply (name, in order) and every on_alloc / on_free / on_move, storages named
    by their order of first appearance."""
    calls, names = [], {}
    real_apply = dispatch.OpNode.apply
    real = state.on_alloc, state.on_free, state.on_move

    def name(st):
        return names.setdefault(st.id, len(names))

    def apply(node, grads, F=None):
        calls.append(("apply", node.name(), [None if g is None else tuple(np.shape(g)) for g in grads]))
        return real_apply(node, grads, F)

    def alloc(st):
        calls.append(("alloc", name(st), st.nbytes, st.category))
        real[0](st)

    def free(st):
        calls.append(("free", name(st), st.nbytes, st.category))
        real[1](st)

    def move(st, old, new):
        calls.append(("move", name(st), st.nbytes, old, new))
        real[2](st, old, new)
    monkeypatch.setattr(dispatch.OpNode, "apply", apply)
    monkeypatch.setattr(state, "on_alloc", alloc)
    monkeypatch.setattr(state, "on_free", free)
    monkeypatch.setattr(state, "on_move", move)
    return calls


def _program(kind):
    """Leaves and a scalar loss: a chain with a shared leaf, broadcasting, views and a diamond."""
    engine.manual_seed(0)
    a = engine.randn(3, 4, requires_grad=True)
    w = engine.randn(4, requires_grad=True)
    b = engine.randn(2, 6, dtype=engine.float64, requires_grad=True)
    if kind == "chain":
        x = a
        for _ in range(3):
            x = engine.tanh(x * 0.9 + a) - 0.1
        loss = (x * w).sum()                                  # w broadcasts: its gradient is summed back
    elif kind == "views":
        y = (a + 1.0).reshape(12)[2:10].view(2, 4)            # backward of views shares the incoming storage
        loss = (y.t() * w[:2]).exp().sum() + (b.reshape(3, 4) * a.double()).mean()
    else:                                                     # a diamond: two consumers of one node
        h = a * w
        loss = (engine.sigmoid(h) * engine.tanh(h) + h / 3.0).sum() + (b * b).sum()
    return (a, w, b), loss


def _run(kind, general, **kw):
    with pytest.MonkeyPatch.context() as mp:
        if general:
            mp.setattr(backward, "_OpNode", _NotANode)
        leaves, loss = _program(kind)
        calls = _trace_calls(mp)
        loss.backward(**kw)
        del loss
        out = list(calls)
    return out, [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


@pytest.mark.parametrize("kind", ["chain", "views", "diamond"])
def test_same_order_gradients_and_accounting_as_the_general_path(direct, kind):
    calls, grads = _run(kind, general=False)
    n_direct = len(direct)
    assert n_direct == sum(c[0] == "apply" for c in calls)        # every node but the leaves' went direct
    calls2, grads2 = _run(kind, general=True)
    assert len(direct) == n_direct                                 # the second run took the general path
    assert calls == calls2
    assert any(c[0] == "move" for c in calls)                      # saved tensors released: storages moved back
    assert [g is None for g in grads] == [g is None for g in grads2] == [False, False, kind == "chain"]
    for g, g2 in zip(grads[:2], grads2):
        assert g.dtype == g2.dtype
        np.testing.assert_array_equal(g, g2)


def test_gradients_match_finite_differences():
    leaves, loss = _program("diamond")
    loss.backward()
    a, w, b = leaves

    def f(av, wv):
        h = av * wv
        return float(np.sum(1 / (1 + np.exp(-h)) * np.tanh(h) + h / 3.0))
    av, wv = a.detach().numpy().astype(np.float64), w.detach().numpy().astype(np.float64)
    eps = 1e-6
    num = np.zeros_like(av)
    for idx in np.ndindex(av.shape):
        d = np.zeros_like(av)
        d[idx] = eps
        num[idx] = (f(av + d, wv) - f(av - d, wv)) / (2 * eps)
    np.testing.assert_allclose(a.grad.numpy(), num, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(b.grad.numpy(), 2 * b.detach().numpy())


def test_retain_graph_keeps_saved_tensors_and_without_it_a_second_backward_fails(direct):
    (a, _, _), loss = _program("chain")
    loss.backward(retain_graph=True)
    first = a.grad.numpy().copy()
    loss.backward()
    assert direct
    np.testing.assert_allclose(a.grad.numpy(), 2 * first, rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"^Trying to backward through the graph a second time"):
        loss.backward()


def test_hooks_retain_grad_inputs_create_graph_and_recording_take_the_general_path(direct):
    a = engine.randn(4, requires_grad=True)
    y = a * 2.0
    z = y * 3.0
    z.register_hook(lambda g: g * 10.0)                    # a tensor hook on z's MulBackward0
    y.retain_grad()                                        # retain_grad on y's MulBackward0
    z.sum().backward()
    assert direct == ["SumBackward0"]
    np.testing.assert_array_equal(a.grad.numpy(), np.full(4, 60.0, np.float32))
    np.testing.assert_array_equal(y.grad.numpy(), np.full(4, 30.0, np.float32))

    direct.clear()
    for kw in ({"inputs": [a]}, {"create_graph": True}):
        a.grad = None
        (a * 2.0 * 3.0).sum().backward(**kw)
        np.testing.assert_array_equal(a.grad.detach().numpy(), np.full(4, 6.0, np.float32))
    with engine.record():
        (a * 2.0).sum().backward()
    assert direct == []
    (a * 2.0).sum().backward()
    assert direct == ["SumBackward0", "MulBackward0"]
