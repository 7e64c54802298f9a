"""NOTE [ Direct path ] (core/dispatch.py): the short path of ``a * b``, ``x - 0.1`` and the like gives
the same values, graph, saved tensors, gradients and memory accounting as the general path, and
steps aside wherever one of its conditions fails."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.core import dispatch, operators
from engine.core.hooks import push_op_hook
from engine.memory import state


@pytest.fixture
def taken(monkeypatch):
    """The ops the direct path ran (not the ones it declined)."""
    ran = []
    real = dispatch.direct

    def spy(op, a, b):
        out = real(op, a, b)
        if out is not None:
            ran.append(op.name)
        return out
    monkeypatch.setattr(operators, "direct", spy)
    return ran


def _general_only(monkeypatch):
    monkeypatch.setattr(operators, "direct", lambda op, a, b: None)


def _accounting(monkeypatch):
    """Every on_alloc / on_free / on_move, storages named by their order of first appearance."""
    calls, names = [], {}
    real = state.on_alloc, state.on_free, state.on_move

    def name(st):
        return names.setdefault(st.id, len(names))

    def alloc(st):
        calls.append(("alloc", name(st), st.nbytes, st.category))
        real[0](st)

    def free(st):
        calls.append(("free", name(st), st.nbytes, st.category))
        real[1](st)

    def move(st, old, new):
        calls.append(("move", name(st), st.nbytes, old, new))
        real[2](st, old, new)
    monkeypatch.setattr(state, "on_alloc", alloc)
    monkeypatch.setattr(state, "on_free", free)
    monkeypatch.setattr(state, "on_move", move)
    return calls


def _graph(t):
    """The graph behind ``t`` as plain data: node names, edges, saved tensors and attributes, in walk order."""
    out, index, stack = [], {}, [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in index:
            continue
        index[id(n)] = len(index)
        saved = [(k, s.nbytes, s.meta[0].name, s.meta[1], s.is_output) for k, s in n._saved.items()]
        attrs = {k: v for k, v in getattr(n, "_attrs", {}).items()}
        out.append((n.name(), [(m.name() if m else None, nr) for m, nr in n.next_functions], saved, attrs,
                    getattr(n, "_needs", None)))
        stack.extend(m for m, _ in reversed(n.next_functions))
    return out


def _program(dtype=engine.float32):
    engine.manual_seed(0)
    a = engine.randn(3, 4, dtype=dtype, requires_grad=True)
    b = engine.randn(3, 4, dtype=dtype, requires_grad=True)
    w = engine.randn(4, dtype=dtype, requires_grad=True)
    c = engine.randn(3, 4, dtype=dtype)                  # needs no gradient
    x = a * b
    y = x - 0.25
    z = y + w                                             # broadcasts
    u = 2.0 * (z * c)
    v = (u / b) * u
    loss = (v - x).sum()
    return (a, b, w), [x, y, z, u, v], loss


@pytest.mark.parametrize("dtype", [engine.float32, engine.float64])
def test_values_graph_saved_tensors_and_gradients_match_the_general_path(monkeypatch, taken, dtype):
    leaves, mids, loss = _program(dtype)
    assert taken == ["mul", "sub", "add", "mul", "mul", "div", "mul", "sub"]
    graph = _graph(loss)
    values = [m.detach().numpy().copy() for m in mids]
    loss.backward()
    grads = [t.grad.numpy().copy() for t in leaves]

    _general_only(monkeypatch)
    leaves2, mids2, loss2 = _program(dtype)
    assert _graph(loss2) == graph
    assert [m.dtype for m in mids2] == [m.dtype for m in mids]
    for m, v in zip(mids2, values):
        np.testing.assert_array_equal(m.detach().numpy(), v)
    loss2.backward()
    for t, g in zip(leaves2, grads):
        np.testing.assert_array_equal(t.grad.numpy(), g)


def test_memory_accounting_matches_the_general_path(monkeypatch, taken):
    def run():
        calls = _accounting(monkeypatch)
        before = engine.memory.memory_stats("cpu")
        _, mids, loss = _program()
        during = engine.memory.memory_allocated("cpu") - before["allocated_bytes.all.current"]
        del mids
        loss.backward()
        del loss
        after = engine.memory.memory_stats("cpu")
        monkeypatch.undo()
        return list(calls), during, {k: after[k] - before.get(k, 0) for k in after
                                      if k.startswith(("allocated_bytes", "allocation."))}

    direct = run()
    assert len(taken) == 8      # the first run took the direct path; run() ends by removing the spy
    _general_only(monkeypatch)
    general = run()
    assert direct == general
    assert any(c[0] == "move" for c in direct[0])   # saved tensors moved storages into "activation" and back


def test_the_general_path_runs_where_a_condition_fails(taken):
    i = engine.arange(4)
    f = engine.ones(4, requires_grad=True)
    h = engine.ones(4, dtype=engine.float16)
    d = engine.ones(4, dtype=engine.float64)
    assert (i * i).dtype is engine.int64                      # rule 1: an integer tensor
    assert (f * d).dtype is engine.float64                    # rule 1: two dtypes (promotion)
    assert (h * h).dtype is engine.float16                    # rule 1: float16
    assert (f * 2).dtype is engine.float32                    # rule 1: an int, not a Python float
    assert (f * np.float64(2.0)).dtype is engine.float32      # rule 1: a NumPy scalar is taken as a number
    assert engine.add(f, f, alpha=2).tolist() == [3.0] * 4    # rule 1: an attribute
    with push_op_hook(_Quiet()):
        f * f                                                 # rule 2: an op hook
    with engine.record():
        f * f                                                 # rule 2: a trace records
    assert taken == []
    f * f
    f - 0.5
    assert taken == ["mul", "sub"]


class _Quiet:
    def before(self, op, inputs, attrs, inplace):
        return None

    def after(self, op, inputs, attrs, result):
        pass


def test_a_failing_kernel_leaves_the_error_to_the_general_path(taken):
    a, b = engine.ones(3, requires_grad=True), engine.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(4\) "
                                           r"at non-singleton dimension 0$"):
        a * b
    assert taken == []


def test_no_grad_and_non_differentiable_results_make_no_node(taken):
    a = engine.ones(3, requires_grad=True)
    with engine.no_grad():
        y = a * a
    assert y.grad_fn is None and not y.requires_grad
    assert (a * 0.5).grad_fn.name() == "MulBackward0"
    assert taken == ["mul", "mul"]
