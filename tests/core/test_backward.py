"""Autograd semantics: execution order, freeing, hooks, Function, saved-tensor hooks, versions, modes, threads."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import autograd
from engine.autograd.graph import save_on_cpu, saved_tensors_hooks


def leaf(*values):
    return engine.tensor(list(values), requires_grad=True)


# ---- execution order and freeing ----------------------------------------------------------
def diamond():
    x = engine.randn(8, requires_grad=True)
    a = x.exp()          # saves its result
    b = a.sin()          # saves a
    c = a.cos()          # saves a
    d = b * c            # saves b and c
    return x, a, b, c, d, d.sum()


def test_diamond_executes_in_pytorch_order():
    x, a, b, c, d, loss = diamond()
    with engine.record() as tr:
        loss.backward()
    names = [e["name"] for e in tr.of_kind("execute")]
    # ready queue: the most recently created ready node runs first (cos before sin), exp only after both
    assert names == ["SumBackward0", "MulBackward0", "CosBackward0", "SinBackward0", "ExpBackward0"]
    ids = [e["node"] for e in tr.of_kind("execute")]
    assert ids == [loss.grad_fn.id, d.grad_fn.id, c.grad_fn.id, b.grad_fn.id, a.grad_fn.id]
    kinds = [e["kind"] for e in tr.events if e["kind"] in ("backward_begin", "execute", "accumulate", "backward_end")]
    assert kinds == ["backward_begin"] + ["execute"] * 5 + ["accumulate", "backward_end"]


def test_saved_tensors_released_right_after_each_node():
    x, a, b, c, d, loss = diamond()
    with engine.record() as tr:
        loss.backward()
    seq = [(e["kind"], e["name"]) for e in tr.events if e["kind"] in ("execute", "release")]
    assert seq == [("execute", "SumBackward0"),
                   ("execute", "MulBackward0"), ("release", "other"), ("release", "self"),
                   ("execute", "CosBackward0"), ("release", "self"),
                   ("execute", "SinBackward0"), ("release", "self"),
                   ("execute", "ExpBackward0"), ("release", "result")]
    assert [e["bytes"] for e in tr.of_kind("release")] == [32] * 5
    storages = [e["storage"] for e in tr.of_kind("release")]
    assert storages == [c._storage.id, b._storage.id, a._storage.id, a._storage.id, a._storage.id]


def test_activation_bytes_fall_as_each_node_runs():
    x, a, b, c, d, loss = diamond()
    seen = []

    def probe(node):
        def pre(grads):
            gc.collect()
            seen.append((node.name(), engine.memory.memory_stats().get("allocated_bytes.activation.current", 0)))
        node.register_prehook(pre)
    for n in (loss.grad_fn, d.grad_fn, c.grad_fn, b.grad_fn, a.grad_fn):
        probe(n)
    gc.collect()
    start = engine.memory.memory_stats()["allocated_bytes.activation.current"]
    loss.backward()
    # a (32 bytes) stays "activation" until Exp ran; b and c go when Mul ran
    assert [(n, v - start) for n, v in seen] == [("SumBackward0", 0), ("MulBackward0", 0), ("CosBackward0", -64),
                                                  ("SinBackward0", -64), ("ExpBackward0", -64)]
    gc.collect()
    assert engine.memory.memory_stats()["allocated_bytes.activation.current"] - start == -96


def test_second_backward_fails_and_retain_graph_keeps_everything():
    x, a, b, c, d, loss = diamond()
    loss.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1, rtol=1e-6)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


# ---- higher order, autograd.grad ------------------------------------------------------------
def test_create_graph_third_derivative():
    x = engine.tensor([1.5, -2.0], dtype=engine.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([1.5, -2.0]) ** 2)
    assert g.requires_grad and g.grad_fn is not None
    (gg,) = autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * np.array([1.5, -2.0]))
    (ggg,) = autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), [6.0, 6.0])
    assert not ggg.requires_grad


def test_backward_create_graph_leaves_differentiable_grad():
    x = engine.tensor([2.0], requires_grad=True)
    (x.sin() * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    v = 2.0
    np.testing.assert_allclose(x.grad.numpy(), [2 * np.cos(v) - v * np.sin(v)], rtol=1e-5)


def test_grad_allow_unused_and_materialize():
    x, z = leaf(1.0, 2.0), leaf(3.0, 4.0)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and gx.tolist() == [2.0, 2.0]
    gx, gz = autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0, 0.0]
    assert x.grad is None and z.grad is None    # autograd.grad accumulates nothing


def test_grad_of_intermediate_and_grad_outputs():
    x = leaf(1.0, 2.0, 3.0)
    h = x * x
    y = h * 3
    (gh,) = autograd.grad(y, h, grad_outputs=engine.tensor([1.0, 0.5, 2.0]))
    assert gh.tolist() == [3.0, 1.5, 6.0]


def test_grad_accumulates_over_two_backwards_and_inputs_argument():
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    (x * w).sum().backward()
    (x * w).sum().backward()
    assert x.grad.tolist() == [6.0, 8.0] and w.grad.tolist() == [2.0, 4.0]
    storage = x.grad._storage
    (x * 1.0).sum().backward()
    assert x.grad._storage is storage            # accumulated in place
    x.grad, w.grad = None, None
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * w).sum().backward(inputs=[])


# ---- hooks and retain_grad ----------------------------------------------------------------
def test_tensor_hook_replaces_gradient_and_handle_removes_it():
    x = leaf(1.0, 2.0)
    h = x * 2
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    h.sum().backward()
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [20.0, 20.0]
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_leaf_hook_sees_gradient_before_accumulation():
    x = leaf(1.0, 2.0)
    x.register_hook(lambda g: g + 1)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_node_pre_and_post_hooks():
    x = leaf(1.0, 2.0)
    y = x.exp()
    calls = []

    def pre(grad_outputs):
        calls.append(("pre", [g.tolist() for g in grad_outputs]))
        return (grad_outputs[0] * 2,)

    def post(grad_inputs, grad_outputs):
        calls.append(("post", [g.tolist() for g in grad_inputs], [g.tolist() for g in grad_outputs]))

    y.grad_fn.register_prehook(pre)
    y.grad_fn.register_hook(post)
    y.sum().backward()
    e = np.exp([1.0, 2.0]).astype(np.float32)
    assert calls[0] == ("pre", [[1.0, 1.0]])
    assert calls[1][0] == "post" and calls[1][2] == [[2.0, 2.0]]
    np.testing.assert_allclose(calls[1][1][0], 2 * e, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * e, rtol=1e-6)


def test_retain_grad():
    x = leaf(1.0, 2.0)
    h = x * 3
    h.retain_grad()
    assert h.retains_grad
    y = h * h
    y.sum().backward()
    assert h.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    z = x * 2
    z.sum().backward()
    with pytest.warns(UserWarning, match="that is not a leaf Tensor is being accessed"):
        assert z.grad is None
    assert h.grad is not None          # retained: no warning (pytest runs with warnings visible)


# ---- autograd.Function --------------------------------------------------------------------
class Cube(autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        ctx.seen_needs = ctx.needs_input_grad
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * ctx.scale, None


def test_function_ctx_api():
    x = leaf(1.0, 2.0)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert y.grad_fn.ctx.seen_needs == (True, False)


def test_function_needs_input_grad_and_twice_backward():
    a, b = leaf(1.0), engine.tensor([2.0])
    seen = []

    class Mul(autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            a, b = ctx.saved_tensors
            return (g * b if ctx.needs_input_grad[0] else None), (g * a if ctx.needs_input_grad[1] else None)

    y = Mul.apply(a, b)
    y.sum().backward()
    assert seen == [(True, False)] and a.grad.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_function_wrong_number_of_gradients():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError) as info:
        Bad.apply(leaf(1.0), leaf(2.0)).sum().backward()
    assert str(info.value) == "function BadBackward returned an incorrect number of gradients (expected 2, got 1)"


def test_function_mark_dirty_and_non_differentiable():
    class Double_(autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf(1.0, 2.0)
    a = x * 1
    v0 = a._version
    b = Double_.apply(a)
    assert b is a and a._version - v0 == 2 and a.grad_fn.name() == "Double_Backward"
    b.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]

    class ArgMax(autograd.Function):
        @staticmethod
        def forward(ctx, a):
            idx = a.argmax()
            ctx.mark_non_differentiable(idx)
            return a * 2, idx

        @staticmethod
        def backward(ctx, g, gi):
            assert gi is None or float(gi.abs().sum()) == 0
            return g * 2

    out, idx = ArgMax.apply(leaf(3.0, 1.0))
    assert out.requires_grad and not idx.requires_grad and idx.item() == 0


def test_function_materialize_grads():
    got = []

    class Two(autograd.Function):
        materialize = True

        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(Two.materialize)
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1 is None, g2 is None if g2 is None else g2.tolist()))
            return g1

    o1, o2 = Two.apply(leaf(1.0, 2.0))
    o1.sum().backward()
    Two.materialize = False
    o1, o2 = Two.apply(leaf(1.0, 2.0))
    o1.sum().backward()
    assert got == [(False, [0.0, 0.0]), (False, True)]


# ---- saved tensor hooks -------------------------------------------------------------------
def test_saved_tensors_hooks_pack_and_unpack_as_pytorch():
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.requires_grad, t.grad_fn.name() if t.grad_fn else None))
        return t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    x = engine.randn(2, 3, requires_grad=True)
    y = engine.randn(3, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        z = x * y
        e = z.exp()
        s = (e @ engine.ones(3)).sum()
    log.append("backward")
    s.backward()
    # the same sequence PyTorch 2.13 produces (mul packs other before self)
    assert log == [("pack", (3,), True, None), ("pack", (2, 3), True, None), ("pack", (2, 3), True, "ExpBackward0"),
                   ("pack", (3,), False, None), "backward", ("unpack", (3,)), ("unpack", (2, 3)), ("unpack", (3,)),
                   ("unpack", (2, 3))]


def test_pack_hook_result_is_what_is_kept():
    x = engine.randn(4, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().numpy().copy(), lambda a: engine.tensor(a)):
        y = x.sin()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_save_on_cpu_round_trip():
    x = engine.randn(5, requires_grad=True)
    with save_on_cpu():
        y = (x * 2).exp()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.detach().numpy()), rtol=1e-5)


# ---- versions and in-place ----------------------------------------------------------------
def test_version_counter_shared_by_views():
    t = engine.zeros(4)
    v, w = t[1:3], t.view(2, 2)
    assert (t._version, v._version, w._version) == (0, 0, 0)
    v.add_(1)
    assert (t._version, v._version, w._version) == (1, 1, 1)
    t.mul_(2)
    assert (t._version, v._version, w._version) == (2, 2, 2)
    t[0] = 5
    assert (t._version, v._version) == (3, 3)
    assert t.tolist() == [5.0, 2.0, 2.0, 0.0]
    u = t.clone()
    u.add_(1)
    assert u._version == 1 and t._version == 3


def test_inplace_on_view_rebases_base_history():
    x = engine.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    v = a[:2]
    v.mul_(2)
    assert a.grad_fn.name() == "torch::autograd::CopySlices" and v.grad_fn.name() == "AsStridedBackward0"
    assert a.tolist() == [2.0, 4.0, 3.0]
    (a.sum() + (v * 3).sum()).backward()
    assert x.grad.tolist() == [8.0, 8.0, 1.0]


def test_inplace_on_view_of_tensor_without_history():
    w = engine.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    z = engine.zeros(3, 2)
    z.T.add_(w)
    assert z.grad_fn.name() == "torch::autograd::CopySlices" and not z.is_leaf
    (z * engine.arange(6.0).reshape(3, 2)).sum().backward()
    assert w.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


def test_inplace_op_saving_its_input_uses_the_old_value():
    x = engine.tensor([0.5, 1.0], requires_grad=True)
    a = x * 1
    a.sin_()
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0]), rtol=1e-6)


# ---- grad modes ---------------------------------------------------------------------------
def test_grad_modes():
    x = leaf(1.0)
    with engine.no_grad():
        assert not (x * 2).requires_grad
        with engine.enable_grad():
            assert (x * 2).requires_grad
    assert engine.is_grad_enabled()

    @engine.no_grad()
    def f(a):
        return a * 2

    assert not f(x).requires_grad and engine.is_grad_enabled()

    @engine.enable_grad()
    def g(a):
        return a * 2

    with engine.no_grad():
        assert g(x).requires_grad

    engine.set_grad_enabled(False)
    assert not (x * 2).requires_grad and not engine.is_grad_enabled()
    engine.set_grad_enabled(True)
    with engine.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_inference_mode():
    x = leaf(1.0)
    with engine.inference_mode():
        q = engine.ones(2)
        r = x * 2
        assert not engine.is_grad_enabled()
    assert not r.requires_grad and r.is_inference() and q.is_inference()
    assert not (x * 2).is_inference()
    with engine.inference_mode(False):
        assert (x * 2).requires_grad

    @engine.inference_mode()
    def f(a):
        return a * 2

    assert not f(x).requires_grad


def test_is_leaf_rules():
    a = engine.randn(2)
    b = engine.randn(2, requires_grad=True)
    c = b * 2
    d = c.detach()
    assert a.is_leaf and b.is_leaf and not c.is_leaf and d.is_leaf and not d.requires_grad
    with engine.no_grad():
        e = b * 2
    assert e.is_leaf and not e.requires_grad


# ---- threads ------------------------------------------------------------------------------
def _work(seed):
    rng = np.random.default_rng(seed)
    w1 = engine.tensor(rng.standard_normal((8, 6)), requires_grad=True)
    w2 = engine.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    x = engine.tensor(rng.standard_normal((5, 8)))
    for _ in range(20):
        h = F.gelu(x @ w1)
        loss = F.cross_entropy(h @ w2, engine.tensor([0, 1, 2, 0, 1])) + (h.tanh() ** 2).mean()
        loss.backward()
    return w1.grad.numpy().copy(), w2.grad.numpy().copy()


def test_independent_graphs_in_threads_match_single_threaded():
    expected = [_work(s) for s in range(6)]
    results = [None] * 6
    errors = []

    def run(i):
        try:
            results[i] = _work(i)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_grad_mode_is_per_thread():
    x = leaf(1.0)
    seen = []
    with engine.no_grad():
        t = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        t.start()
        t.join()
    assert seen == [True]


def test_branch_that_carries_no_gradient_does_not_block_a_leaf():
    x = leaf(1.0, 2.0, 3.0)
    y = (x * 1.0).fill_(2.0)          # the history through fill_ carries no gradient back to x
    (y * x).sum().backward()          # ... but x is also reached directly
    assert x.grad.tolist() == [2.0, 2.0, 2.0]

    class NoGrad(autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return None

    z = leaf(1.0, 1.0)
    (NoGrad.apply(z * 3) + z).sum().backward()
    assert z.grad.tolist() == [1.0, 1.0]


def test_storages_kept_only_by_the_graph_are_freed_at_release():
    def build():
        x = engine.randn(8, requires_grad=True)
        a = x.exp()
        b = a.sin()
        c = a.cos()
        loss = (b * c).sum()
        return x, loss, {"a": a._storage.id, "b": b._storage.id, "c": c._storage.id}

    x, loss, ids = build()            # a, b and c now live only inside the graph
    gc.collect()
    before = engine.memory.memory_allocated()
    with engine.record() as tr:
        loss.backward()
    ev = [e for e in tr.events if e["kind"] in ("execute", "release", "free")]
    for name, node in (("c", "MulBackward0"), ("b", "MulBackward0"), ("a", "ExpBackward0")):
        k = next(i for i, e in enumerate(ev) if e["kind"] == "release" and e["storage"] == ids[name]
                 and [x for x in ev[:i] if x["kind"] == "execute"][-1]["name"] == node)
        assert ev[k + 1]["kind"] == "free" and ev[k + 1]["storage"] == ids[name]
    # a is released three times (by Cos, Sin and Exp) and freed only after the last
    assert [e["kind"] for e in ev if e.get("storage") == ids["a"]] == ["release", "release", "release", "free"]
    gc.collect()
    # a, b, c (3 x 32 bytes) gone, x.grad (32 bytes) made
    assert engine.memory.memory_allocated() - before == -64
    assert x.grad.nbytes == 32


def test_calling_a_grad_fn_runs_its_backward():
    a = engine.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    ga, gb = b.grad_fn(engine.ones(2))
    assert ga.tolist() == [1.0, 2.0] and gb.tolist() == [1.0, 2.0]
    (g,) = a.exp().grad_fn(engine.tensor([1.0, 0.0]))
    np.testing.assert_allclose(g.numpy(), [np.e, 0.0], rtol=1e-6)


def test_requires_grad_on_non_leaf():
    y = leaf(1.0) * 2
    assert y.requires_grad_(True) is y                 # already requires grad: allowed, as in PyTorch
    with pytest.raises(RuntimeError) as info:
        y.requires_grad = True
    assert str(info.value) == "you can only change requires_grad flags of leaf variables."
    with pytest.raises(RuntimeError, match="use var_no_grad = var.detach\\(\\)"):
        y.requires_grad_(False)


def test_custom_function_twice_differentiable():
    x = engine.tensor([1.0, 2.0], dtype=engine.float64, requires_grad=True)
    (g,) = autograd.grad(Cube.apply(x, 2.0).sum(), x, create_graph=True)
    assert g.tolist() == [6.0, 24.0] and g.requires_grad
    (gg,) = autograd.grad(g.sum(), x)
    assert gg.tolist() == [12.0, 24.0]


def test_backward_inputs_may_name_non_leaves():
    x = leaf(1.0, 2.0)
    h = x * 3
    (h * h).sum().backward(inputs=[h, x])
    assert h.grad.tolist() == [6.0, 12.0] and x.grad.tolist() == [18.0, 36.0]
    assert h.grad._storage.category == "gradient"


def test_post_accumulate_grad_hook():
    x = leaf(1.0)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.item()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [2.0, 5.0]
    handle.remove()
    (x * 1).sum().backward()
    assert seen == [2.0, 5.0]
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_retain_grad_follows_in_place_ops():
    x = leaf(1.0, 2.0)
    h = x * 2
    h.retain_grad()
    h.mul_(3)                                   # h now has a new grad_fn; its .grad is w.r.t. the new h
    (h * h).sum().backward()
    assert h.grad.tolist() == [12.0, 24.0] and x.grad.tolist() == [72.0, 144.0]

    x = leaf(1.0, 2.0, 3.0)
    a = x * 1
    a.retain_grad()
    a[:2].mul_(2)                               # rebased through a view: still retained
    (a * a).sum().backward()
    assert a.grad.tolist() == [4.0, 8.0, 6.0] and x.grad.tolist() == [8.0, 16.0, 6.0]


def test_overwritten_input_still_gets_a_zero_gradient():
    x = leaf(1.0, 2.0)
    a = x * 1.0
    a.zero_()                         # FillBackward0 sends zeros back, as PyTorch's does
    (a * 3).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [0.0, 0.0]


def test_grad_mode_decorators_as_pytorch():
    x = leaf(1.0)

    @engine.no_grad
    def f(a):
        return a * 2

    @engine.inference_mode
    def g(a):
        return a * 2

    assert not f(x).requires_grad and not g(x).requires_grad and engine.is_grad_enabled()

    @engine.set_grad_enabled(False)
    def h(a):
        return a * 2

    assert engine.is_grad_enabled()            # decorating does not switch the mode
    assert not h(x).requires_grad and engine.is_grad_enabled()

    @engine.no_grad()
    def steps(a):
        seen = []
        for _ in range(2):
            seen.append((a * 2).requires_grad)
            yield engine.is_grad_enabled()
        return seen

    gen = steps(x)
    assert next(gen) is False and engine.is_grad_enabled()   # the mode holds inside the generator only
    assert (x * 2).requires_grad
    assert next(gen) is False
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value == [False, False]

    m = engine.no_grad()
    for _ in range(2):
        with m:
            assert not engine.is_grad_enabled()
    assert engine.is_grad_enabled()


def test_inference_tensors_cannot_start_requiring_grad():
    with engine.inference_mode():
        t = engine.ones(2)
        assert engine.is_inference_mode_enabled()
    assert not engine.is_inference_mode_enabled()
    with pytest.raises(RuntimeError) as info:
        t.requires_grad_()
    assert str(info.value) == "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."


def test_data_has_its_own_version_counter_as_in_pytorch():
    # NOTE [ Version counters ] 3: changes through .data are invisible to autograd (PyTorch 2.13 prints the
    # same versions and gradient: 0 0 / 1 0 / 2 2 0 / 3 3 and 2*cos([7, 7, 4]))
    a = engine.ones(3, requires_grad=True)
    b = a * 2
    y = b.sin()                        # saves b
    d = b.data
    assert (d._version, b._version) == (0, 0)
    assert not d.requires_grad and d.grad_fn is None and d._base is None
    d.add_(1)
    assert (d._version, b._version) == (1, 0)
    v = d[0:2]
    v.mul_(2)                          # a view of .data shares its counter
    assert (d._version, v._version, b._version) == (2, 2, 0)
    dd = d.detach()
    dd.add_(1)                         # so does its detach()
    assert (d._version, dd._version) == (3, 3)
    y.sum().backward()                 # no error: b's own counter never moved
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.cos(np.array([7.0, 7.0, 4.0])), rtol=1e-6)


def test_detach_shares_the_version_counter_so_backward_refuses():
    a = engine.ones(3, requires_grad=True)
    b = a * 2
    y = b.sin()
    b.detach().add_(1)
    assert b._version == 1
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of Mul, "
                                           r"is at version 1; expected version 0 instead"):
        y.sum().backward()
