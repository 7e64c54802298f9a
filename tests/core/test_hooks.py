"""engine.autograd.graph's multi-tensor hooks, gradient edges and version bumps, and the legacy Variable
(outputs as PyTorch 2.13 gives them for the same programs)."""
from __future__ import annotations

import threading

import pytest

import engine
from engine.autograd import Variable
from engine.autograd.graph import GradientEdge, get_gradient_edge, increment_version, register_multi_grad_hook


def _lists(gs):
    return [None if g is None else g.tolist() for g in gs]


def test_all_mode_waits_for_every_gradient_the_pass_computes():
    a, b, c = engine.ones(2, requires_grad=True), engine.ones(3, requires_grad=True), engine.ones(1, requires_grad=True)
    got = []
    handle = register_multi_grad_hook([a, b, c], lambda gs: got.append(_lists(gs)))
    ((a * 2).sum() + (b * 3).sum()).backward()            # c is not in this graph: not waited for
    assert got == [[[2.0, 2.0], [3.0, 3.0, 3.0], None]]
    got.clear()
    loss = (a * 2).sum() + (b * 3).sum() + c.sum()
    loss.backward(inputs=[a, c])                          # b is not needed by this pass
    assert got == [[[2.0, 2.0], None, [1.0]]]
    handle.remove()
    got.clear()
    (a * 2).sum().backward()
    assert got == []


def test_all_mode_on_non_leaf_tensors_and_once_per_pass():
    x = engine.ones(2, requires_grad=True)
    y, w = x * 2, x * 3
    got = []
    register_multi_grad_hook([y, w], lambda gs: got.append(_lists(gs)))
    (y.sum() * 5).backward(retain_graph=True)
    assert got == [[[5.0, 5.0], None]]
    (y.sum() + w.sum()).backward()
    assert got[1:] == [[[1.0, 1.0], [1.0, 1.0]]]


def test_any_mode_fires_once_with_the_first_gradient():
    a, b = engine.ones(2, requires_grad=True), engine.ones(3, requires_grad=True)
    got = []
    register_multi_grad_hook([a, b], lambda g: got.append(g.tolist()), mode="any")
    ((a * 2).sum() + (b * 3).sum()).backward()
    assert got == [[3.0, 3.0, 3.0]]                       # b's AccumulateGrad runs first, as in PyTorch
    ((a * 2).sum()).backward()
    assert got[1:] == [[2.0, 2.0]]


def test_passes_in_threads_keep_their_own_counts():
    results, lock = [], threading.Lock()

    def run(k):
        a, b = engine.ones(2, requires_grad=True), engine.ones(2, requires_grad=True)
        seen = []
        register_multi_grad_hook([a, b], lambda gs: seen.append(_lists(gs)))
        for _ in range(20):
            ((a * k).sum() + (b * (k + 1)).sum()).backward()
        with lock:
            results.append((k, seen))

    threads = [threading.Thread(target=run, args=(k,)) for k in (1.0, 2.0, 3.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, seen in results:
        assert seen == [[[k, k], [k + 1, k + 1]]] * 20


def test_mode_is_checked():
    with pytest.raises(ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got x$"):
        register_multi_grad_hook([engine.ones(1, requires_grad=True)], print, mode="x")


def test_gradient_edges():
    a = engine.ones(2, requires_grad=True)
    e = get_gradient_edge(a)
    assert isinstance(e, GradientEdge) and e.node.name() == "torch::autograd::AccumulateGrad" and e.output_nr == 0
    assert e.node is get_gradient_edge(a).node and e.ownership_token is None
    y = a * 2
    assert get_gradient_edge(y) == (y.grad_fn, 0, None)
    assert repr(get_gradient_edge(y)).startswith("GradientEdge(node=<MulBackward0 object at ")
    with pytest.raises(RuntimeError, match="^It is not possible to get the gradient edge for a Tensor that does not "
                                           "require gradients$"):
        get_gradient_edge(engine.ones(2))


def test_increment_version_invalidates_saved_tensors():
    x = engine.ones(2, requires_grad=True)
    y = x * 1
    z = (y * y).sum()
    before = y._version
    increment_version(y)
    assert y._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_variable_is_every_tensor_and_makes_a_leaf():
    x = engine.ones(2)
    v = Variable(x, requires_grad=True)
    assert isinstance(x, Variable) and isinstance(v, engine.Tensor)
    assert v.requires_grad and v.is_leaf and v._storage is x._storage
    with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got int$"):
        Variable(3)
