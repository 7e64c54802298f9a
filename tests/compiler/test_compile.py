"""engine.compile: capture, joint graph, min-cut partition, fusion, execution, logs, errors."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import engine
from engine import nn
from engine.compiler import Unsupported
from engine.compiler.fusion import fusion_groups
from engine.compiler.partition import INF, max_flow


def _xw(seed=0, n=4, k=8, m=16):
    engine.manual_seed(seed)
    return engine.randn(n, k, requires_grad=True), engine.randn(k, m, requires_grad=True)


def chain(x, w):
    """A pointwise chain after a matmul."""
    return (x @ w).sin().cos().exp().sum()


def test_capture_prints_readable_python():
    def f(x, y):
        return (x * y).sin() + x

    cf = engine.compile(f)
    cf(engine.ones(2, 3), engine.ones(2, 3))
    assert cf.last.graph.python_code(comments=False) == (
        'def forward(x: "f32[2, 3]", y: "f32[2, 3]"):\n'
        '    mul: "f32[2, 3]" = ops.mul(x, y)\n'
        '    sin: "f32[2, 3]" = ops.sin(mul)\n'
        '    add: "f32[2, 3]" = ops.add(sin, x)\n'
        '    return (add,)\n')
    text = cf.last.graph.python_code()
    assert "# File: test_compile.py:" in text and "code: return (x * y).sin() + x" in text


def test_promotion_becomes_an_explicit_cast():
    cf = engine.compile(lambda a, b: a + b)
    out = cf(engine.ones(3, dtype=engine.int64), engine.ones(3, dtype=engine.float64))
    assert out.dtype is engine.float64 and out.tolist() == [2.0, 2.0, 2.0]
    assert [(n.op, n.target) for n in cf.last.graph.call_nodes()] == [("call_op", "to_dtype"), ("call_op", "add")]


def test_joint_graph_of_sin_cos():
    x = engine.randn(5, requires_grad=True)
    cf = engine.compile(lambda x: x.sin().cos())
    cf(x)
    joint = cf.last.joint
    assert [(n.name, n.op, n.target) for n in joint.nodes] == [
        ("x", "placeholder", "x"),
        ("sin", "call_op", "sin"), ("cos", "call_op", "cos"),
        ("tangents_1", "placeholder", "tangents_1"),
        ("neg", "operator", "neg"), ("sin_1", "call_fn", "sin"), ("mul", "operator", "mul"),
        ("cos_1", "call_fn", "cos"), ("mul_1", "operator", "mul"),
        ("output", "output", "output")]
    assert [o.name for o in joint.outputs] == ["cos", "mul_1"]
    p = cf.last.partition
    # as AOTAutograd does here: keep only the input, recompute sin in backward
    assert [n.name for n in p.saved] == ["x"] and [n.name for n in p.recomputed] == ["sin"]
    assert [o.name for o in p.forward.outputs] == ["cos", "x"]
    assert p.saved_bytes == 0 and cf.last.eager_saved_bytes == 20   # eager keeps sin's result (5 floats)


def test_min_cut_saves_the_matmul_and_recomputes_the_chain():
    x, w = _xw()
    cf = engine.compile(chain)
    cf(x, w)
    a = cf.last
    assert [n.name for n in a.partition.saved] == ["x", "w", "mm"]
    assert [n.name for n in a.partition.recomputed] == ["sin", "cos", "exp"]
    assert a.compiled_saved_bytes == 4 * 16 * 4 == 256
    assert a.eager_saved_bytes == 3 * 256          # eager keeps mm (sin's input), sin (cos's input), exp
    assert a.partition.flow == 256


def test_max_flow_on_a_small_network():
    cap = {"s": {"a": 3, "b": 2}, "a": {"b": 1, "t": 2}, "b": {"t": 3}}
    flow, side = max_flow(cap, "s", "t")
    assert flow == 5 and side == {"s"}
    flow, side = max_flow({"s": {"a": INF}, "a": {"t": 4}}, "s", "t")
    assert flow == 4 and side == {"s", "a"}


def test_fusion_groups_and_generated_source():
    x, w = _xw()
    cf = engine.compile(chain)
    cf(x, w)
    a = cf.last
    assert [[n.name for n in g] for g in fusion_groups(a.partition.forward)] == [["sin", "cos", "exp"]]
    assert [[n.name for n in g] for g in fusion_groups(a.partition.backward)] == [
        ["cos", "exp", "mul", "neg", "sin_1", "mul_1", "cos_1", "mul_2"]]
    assert a.forward_program.kernels[0].source == (
        "def fused_sin_cos_exp_0(in0):\n"
        "    t0 = kernels.sin(xp, in0)  # sin\n"
        "    t1 = kernels.cos(xp, t0)  # cos\n"
        "    t2 = kernels.exp(xp, t1)  # exp\n"
        "    return t2\n")
    # a value with two readers is not fused away
    def two_readers(x):
        y = x.sin()
        return y * y.exp()

    cf2 = engine.compile(two_readers)
    cf2(engine.randn(3))
    assert [[n.name for n in g] for g in fusion_groups(cf2.last.forward_program.graph)] == [["exp", "mul"]]


def test_chain_numbers_and_gradients_equal_eager():
    x, w = _xw()
    cf = engine.compile(chain)
    y = cf(x, w)
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    y.backward()
    gx, gw = x.grad, w.grad
    x.grad = w.grad = None
    ye = chain(x, w)
    ye.backward()
    assert y.item() == ye.item()
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-6, atol=1e-6)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 32)
        self.act = nn.GELU()
        self.out = nn.Linear(32, 8)

    def forward(self, x):
        return x + self.out(self.act(self.fc(self.ln(x))))


@pytest.mark.parametrize("make,shape", [
    (lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)), (5, 8)),
    (Block, (2, 3, 8))])
def test_modules_match_eager(make, shape):
    engine.manual_seed(0)
    model = make().double()
    x = engine.randn(*shape, dtype=engine.float64, requires_grad=True)
    cm = engine.compile(model)
    y = cm(x)
    (y * y).sum().backward()
    got = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    for p in model.parameters():
        p.grad = None
    x.grad = None
    ye = model(x)
    (ye * ye).sum().backward()
    want = [p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()]
    np.testing.assert_array_equal(y.detach().numpy(), ye.detach().numpy())
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    names = [p.name for p in cm.last.graph.placeholders]
    assert names[0] == "x" or names[0] == "input"
    assert all(n.startswith("self_") for n in names[1:])
    with engine.no_grad():
        np.testing.assert_array_equal(cm(x).numpy(), ye.detach().numpy())
    assert cm.training is model.training


def test_block_saves_less_than_eager():
    engine.manual_seed(0)
    blk = Block()
    cm = engine.compile(blk)
    cm(engine.randn(2, 3, 8, requires_grad=True))
    a = cm.last
    assert [n.name for n in a.partition.recomputed] == ["view", "t", "view_1", "gelu", "view_2", "t_1"]
    assert a.compiled_saved_bytes == 192 + 24 + 24 + 768 and a.eager_saved_bytes == 1776


def test_new_shapes_retrace_and_old_ones_hit_the_cache():
    calls = []

    def f(x):
        calls.append(1)
        return x.tanh() * 2

    cf = engine.compile(f)
    cf(engine.randn(3))
    cf(engine.randn(3))
    assert len(cf.artifacts) == 1 and len(calls) == 1
    cf(engine.randn(4))
    assert len(cf.artifacts) == 2 and len(calls) == 2
    cf(engine.randn(3, requires_grad=True))       # requires_grad is part of the guard
    cf(engine.randn(3, dtype=engine.float64))     # so is the dtype
    assert len(cf.artifacts) == 4 and len(calls) == 4
    out = cf(engine.ones(4))
    assert len(calls) == 4 and np.allclose(out.numpy(), 2 * np.tanh(1.0))


def test_logs_print_each_stage(monkeypatch, capsys):
    monkeypatch.setenv("GLASSGRAD_LOGS", "graph,joint,partition,fusion,recompiles")
    x, w = _xw()
    cf = engine.compile(chain)
    cf(x, w)
    err = capsys.readouterr().err
    heads = [line for line in err.splitlines() if line.startswith("[glassgrad.compile]")]
    assert heads == ["[glassgrad.compile] [graph] captured graph of chain",
                     "[glassgrad.compile] [joint] joint forward+backward graph of chain",
                     "[glassgrad.compile] [partition] min-cut partition of chain",
                     "[glassgrad.compile] [fusion] fused kernels of chain"]
    assert "# bytes saved: 256 (eager saves 768)" in err and "def fused_sin_cos_exp_0(in0):" in err
    cf(*_xw(n=2))
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("[glassgrad.compile] [recompiles] chain: no graph for "
                                          "(float32[2, 8] cpu requires_grad")
    monkeypatch.setenv("GLASSGRAD_LOGS", "")
    engine.compile(chain)(*_xw())
    assert capsys.readouterr().err == ""


def test_compile_stage_events():
    x, w = _xw()
    cf = engine.compile(chain)
    with engine.record() as tr:
        y = cf(x, w)
    stages = [(e["stage"], e["nodes"]) for e in tr.events if e["kind"] == "compile_stage"]
    assert stages == [("graph", 5), ("joint", 5 + 11), ("partition", 5 + 3 + 11), ("fusion", 3 + 8)]
    assert "def joint(" in [e for e in tr.events if e["kind"] == "compile_stage"][1]["text"]
    from replay.words import event_line      # the app's event log: one line per stage
    assert event_line(tr.of_kind("compile_stage")[0]) == "compile: graph (5 nodes)"
    with engine.record() as tr2:
        cf(x, w)
    ops = [e["op"] for e in tr2.events if e["kind"] == "op"]
    assert ops == ["CompiledFunction"] and not tr2.of_kind("compile_stage")
    del y


def test_graph_breaks_raise_with_fullgraph_and_fall_back_otherwise():
    def branch(x):
        if x.sum() > 0:
            return x * 2
        return x

    def inplace(x):
        y = x * 1
        y.add_(1)
        return y

    def factory(x):
        return x + engine.ones(3)

    for fn, what in ((branch, "Tensor.item() reads a tensor's values in Python"),
                     (inplace, "in-place op 'add_'"),
                     (factory, "a tensor made inside the function outside the op table")):
        pattern = rf"graph break in {fn.__name__}: {re.escape(what)}.* at test_compile\.py:\d+"
        with pytest.raises(Unsupported, match=pattern):
            engine.compile(fn, fullgraph=True)(engine.ones(3))
        cf = engine.compile(fn)
        with pytest.warns(UserWarning, match=f"graph break in {fn.__name__}"):
            out = cf(engine.ones(3))
        np.testing.assert_array_equal(out.numpy(), fn(engine.ones(3)).numpy())
        with warnings.catch_warnings():
            warnings.simplefilter("error")     # warned once per guard
            cf(engine.ones(3))
    # engine-internal value reads (index bounds checks) are not graph breaks
    cf = engine.compile(lambda x, i: x[i], fullgraph=True)
    assert cf(engine.arange(5.0), engine.tensor([3, 1])).tolist() == [3.0, 1.0]


def test_double_backward_is_refused_as_in_pytorch():
    x = engine.randn(3, requires_grad=True)
    y = engine.compile(lambda x: x.sin())(x).sum()
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        engine.autograd.grad(y, x, create_graph=True)


def test_argument_errors():
    with pytest.raises(TypeError, match="arguments must be Tensors or Python numbers, got list"):
        engine.compile(lambda x: x)([engine.ones(1)])
    with pytest.raises(ValueError, match="backend must be one of"):
        engine.compile(lambda x: x, backend="tvm")
    with pytest.raises(RuntimeError, match="model must be a callable"):
        engine.compile(3)
    with pytest.raises(Unsupported, match="returned a int"):
        engine.compile(lambda x: 3, fullgraph=True)(engine.ones(1))


def test_train_and_eval_modes_have_their_own_graphs():
    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval()
    cm = engine.compile(model, fullgraph=True)
    x = engine.randn(2, 4)
    np.testing.assert_array_equal(cm(x).detach().numpy(), model(x).detach().numpy())
    model.train()                               # dropout draws a mask now: a graph break, not the eval graph
    with pytest.raises(Unsupported, match="dropout's mask"):
        cm(x)


def test_keyword_arguments_and_list_outputs():
    def f(x, *, bias, scale=1.0):
        return [x * scale + bias, x.exp()]

    cf = engine.compile(f)
    x, b = engine.randn(3), engine.randn(3)
    out = cf(x, bias=b, scale=2.0)
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[0].numpy(), (x * 2.0 + b).numpy())
    assert [p.name for p in cf.last.graph.placeholders] == ["x", "bias"]
    cf(x, bias=b, scale=3.0)                  # a Python number is guarded by value
    assert len(cf.artifacts) == 2


def test_decorator_and_aot_eager_backend():
    @engine.compile(backend="aot_eager")
    def f(x):
        return (x.sin() * 3).relu()

    x = engine.randn(6, requires_grad=True)
    y = f(x)
    assert f.last.kernels == []
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (np.cos(x.detach().numpy()) * 3 *
                                                (np.sin(x.detach().numpy()) > 0)), rtol=1e-6)


def _ops_cases():
    """(name, fn) pairs; modules and constants are made when the test runs, not at collection."""
    import engine.nn.functional as F
    engine.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1).double()
    emb = nn.Embedding(10, 4).double()
    t = engine.tensor([1, 0, 3, 2])
    idx = engine.tensor([[1, 2], [3, 4]])
    return [
        ("softmax", lambda x, y: F.softmax(x, -1)),
        ("log_softmax", lambda x, y: F.log_softmax(x, -1) * y),
        ("cross_entropy", lambda x, y: F.cross_entropy(x, t)),
        ("two_outputs", lambda x, y: (x * y, x > 0)),
        ("max_dim", lambda x, y: engine.max(x, 1)[0]),
        ("mean_var", lambda x, y: x.mean(0).var()),
        ("views", lambda x, y: x.reshape(5, 4).t().sigmoid()),
        ("where", lambda x, y: engine.where(x > 0, x, y).tanh()),
        ("slices", lambda x, y: x[1:3, ::2].exp()),
        ("int_index", lambda x, y: x[t].relu()),
        ("cat", lambda x, y: engine.cat([x, x.sin()], 0).sum(1)),
        ("clamp_pow", lambda x, y: x.clamp(-0.5, 0.5) ** 2),
        ("gelu_tanh", lambda x, y: F.gelu(x, approximate="tanh")),
        ("mse", lambda x, y: F.mse_loss(x, y)),
        ("abs_sqrt_log", lambda x, y: x.abs().sqrt().log()),
        ("stack_std", lambda x, y: engine.stack([x, y], 0).std(0)),
        ("matmul_t", lambda x, y: x @ y.t()),
        ("broadcast", lambda x, y: x * 3 + y[0] / 2 - 1),
        ("layer_norm", lambda x, y: F.layer_norm(x, (5,))),
        ("logsumexp_amax", lambda x, y: x.logsumexp(1) + x.amax(1)),
        ("conv", lambda x, y: conv(x.reshape(1, 1, 4, 5).expand(2, 3, 4, 5)).relu().mean()),
        ("embedding", lambda x, y: emb(idx).tanh() * x[0, :4]),
        ("attention", lambda x, y: F.scaled_dot_product_attention(x.reshape(1, 4, 5), y.reshape(1, 4, 5),
                                                                   y.reshape(1, 4, 5))),
    ]


_OP_CASES = ["softmax", "log_softmax", "cross_entropy", "two_outputs", "max_dim", "mean_var", "views", "where",
             "slices", "int_index", "cat", "clamp_pow", "gelu_tanh", "mse", "abs_sqrt_log", "stack_std", "matmul_t",
             "broadcast", "layer_norm", "logsumexp_amax", "conv", "embedding", "attention"]


def test_op_cases_listed():
    assert [c[0] for c in _ops_cases()] == _OP_CASES


@pytest.mark.parametrize("name", _OP_CASES)
def test_ops_match_eager_and_save_no_more(name):
    fn = dict(_ops_cases())[name]
    engine.manual_seed(1)
    x = engine.randn(4, 5, dtype=engine.float64, requires_grad=True)
    y = engine.randn(4, 5, dtype=engine.float64, requires_grad=True)
    cf = engine.compile(fn, fullgraph=True)
    got = cf(x, y)
    want = fn(x, y)
    got, want = ((got, want) if isinstance(got, tuple) else ((got,), (want,)))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
        assert g.requires_grad == w.requires_grad and g.dtype is w.dtype
    grads = [engine.autograd.grad(sum((o.double() * o.double()).sum() for o in outs if o.requires_grad), [x, y],
                                  allow_unused=True) for outs in (got, want)]
    for g, w in zip(*grads):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    assert cf.last.compiled_saved_bytes <= cf.last.eager_saved_bytes


def _mlp_grads(model, x, compiled):
    run = engine.compile(model) if compiled else model
    y = run(x)
    (y * y).sum().backward()
    out = [y.detach()] + [p.grad for p in model.parameters()]
    model.zero_grad()
    return out


def test_compile_on_the_array_api_strict_namespace():
    """The GPU stand-in: graphs, joint tracing and fused kernels touch arrays only through the array API."""
    xps = pytest.importorskip("array_api_strict")
    from engine.backend.device import cpu_namespace

    def run(compiled):
        engine.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))
        x = engine.randn(3, 4)
        return [t.numpy() for t in _mlp_grads(model, x, compiled)], type(x._data).__module__

    ref, _ = run(False)
    with cpu_namespace(xps):
        got, module = run(True)
    assert module.startswith("array_api_strict")
    for a, b in zip(ref, got):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not engine.cuda.is_available(), reason="no CUDA GPU visible to CuPy")
def test_compile_on_cuda_matches_eager():
    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2)).cuda()
    x = engine.randn(3, 4, device="cuda")
    got = _mlp_grads(model, x, True)
    want = _mlp_grads(model, x, False)
    for a, b in zip(got, want):
        assert a.device.type == "cuda"
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_calls_leave_no_memory_behind():
    """Artifacts, saved values and lifted parameters go with the last reference (no cycles, no gc)."""
    import gc
    gc.disable()
    try:
        before = engine.memory.memory_allocated()
        engine.manual_seed(0)
        model = Block()
        cm = engine.compile(model)
        x = engine.randn(2, 3, 8, requires_grad=True)
        y = cm(x)
        held = engine.memory.memory_allocated()
        y.sum().backward()
        with engine.no_grad():
            cm(x)
        del model, cm, x, y
        assert engine.memory.memory_allocated() == before < held
    finally:
        gc.enable()


def test_outputs_that_view_an_input_share_its_storage():
    x = engine.randn(3, 4)
    cf = engine.compile(lambda x: (x, x.t(), x * 2))
    before = engine.memory.memory_allocated()
    same, view, fresh = cf(x)
    assert same is x and view._storage is x._storage and view._base is x and tuple(view.shape) == (4, 3)
    assert engine.memory.memory_allocated() - before == 3 * 4 * 4       # only x * 2 is new
    assert fresh._storage is not x._storage


def test_logs_all_and_unknown_names(monkeypatch):
    from engine.compiler.runtime import STAGES, enabled_logs
    monkeypatch.setenv("GLASSGRAD_LOGS", "all")
    assert enabled_logs() == set(STAGES)
    monkeypatch.setenv("GLASSGRAD_LOGS", " graph , +fusion,dynamo")
    assert enabled_logs() == {"graph", "fusion"}


@pytest.mark.parametrize("act", ["SiLU", "LeakyReLU", "ELU", "Softplus", "Mish", "Hardtanh"])
def test_new_activations_are_pointwise_for_the_partitioner(act):
    # recomputed in backward instead of saved: same values and gradients as eager, fewer saved bytes
    engine.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), getattr(nn, act)(), nn.Linear(16, 4))
    x = engine.randn(5, 8)
    y1 = m(x)
    (y1 * y1).sum().backward()
    g1 = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    cm = engine.compile(m)
    y2 = cm(x)
    (y2 * y2).sum().backward()
    np.testing.assert_allclose(y2.detach().numpy(), y1.detach().numpy(), atol=1e-6)
    for p, g in zip(m.parameters(), g1):
        np.testing.assert_allclose(p.grad.numpy(), g.numpy(), atol=1e-5)
    assert cm.last.compiled_saved_bytes < cm.last.eager_saved_bytes
