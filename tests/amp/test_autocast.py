"""torch.autocast against PyTorch 2.13 (tests/fixtures/make_amp_reference.py): the result dtypes of
the CPU lists, a training step's graph and saved tensors under CPU bfloat16 autocast (the halving a
learner sees), the weight-cast cache, nesting, the decorator, and the state functions."""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest

import engine
import engine.nn.functional as F

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "amp_reference.json")) as _f:
    REF = json.load(_f)
SIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "float64": 8, "int64": 8}


def dname(t):
    return str(t.dtype).replace("torch.", "")


def outcome(code, env):
    try:
        return dname(eval(code, env))
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("name", sorted(REF["ops_code"]))
def test_cpu_autocast_result_dtypes_are_pytorchs(name):
    env = {"torch": engine, "F": F}
    for tag, d in (("f32", engine.float32), ("bf16", engine.bfloat16)):
        env["T"] = lambda *s, d=d: engine.ones(*s, dtype=d) * 0.5
        with engine.autocast("cpu", dtype=engine.bfloat16):
            got = outcome(REF["ops_code"][name], env)
        assert got == REF["ops"][f"{name}/{tag}"], (name, tag)


@pytest.mark.parametrize("name", sorted(REF["mixed_code"]))
def test_cpu_autocast_promote_ops_take_the_widest_input(name):
    env = {"torch": engine, "T": lambda *s: engine.ones(*s) * 0.5,
           "B": lambda *s: engine.ones(*s, dtype=engine.bfloat16) * 0.5,
           "D": lambda *s: engine.ones(*s, dtype=engine.float64) * 0.5}
    with engine.autocast("cpu", dtype=engine.bfloat16):
        assert outcome(REF["mixed_code"][name], env) == REF["ops"][f"{name}/mixed"]


def graph(root):
    """Every node from ``root`` in breadth-first order: name and saved tensors (name, dtype, shape)."""
    seen, order, todo = set(), [], [root]
    while todo:
        n = todo.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        saved = []
        for k in sorted(k for k, _ in getattr(n, "saved_tensors_info", ())):
            v = getattr(n, "_saved_" + k)
            if isinstance(v, engine.Tensor):
                saved.append([k, dname(v), list(v.shape)])
        order.append({"name": n.name().replace("torch::autograd::", ""), "saved": saved})
        todo.extend(f for f, _ in n.next_functions)
    return order


def mlp_step(autocast):
    ps = [engine.tensor(REF[k], requires_grad=True) for k in ("W1", "B1", "W2", "B2")]
    x = engine.tensor(REF["X"])
    with engine.record() as trace, engine.autocast("cpu", dtype=engine.bfloat16, enabled=autocast):
        h = engine.relu(F.linear(x, ps[0], ps[1]))
        logits = F.linear(h, ps[2], ps[3])
        loss = F.cross_entropy(logits, engine.tensor(REF["target"]))
    nodes = graph(loss.grad_fn)
    loss.backward()
    return ps, h, logits, loss, nodes, trace


@pytest.mark.parametrize("mode", ["float32", "autocast"])
def test_a_training_step_has_pytorchs_graph_saved_tensors_and_gradients(mode):
    want = REF["mlp"][mode]
    ps, h, logits, loss, nodes, _ = mlp_step(mode == "autocast")
    for n in want["nodes"]:
        n["name"] = n["name"].replace("torch::autograd::", "")
    assert nodes == want["nodes"]
    assert (dname(h), dname(logits), dname(loss)) == (want["h_dtype"], want["logits_dtype"], want["loss_dtype"])
    tol = 1e-6 if mode == "float32" else 2e-3     # bfloat16 matmuls: PyTorch's and glassgrad's round alike
    assert abs(loss.item() - want["loss"]) <= tol
    for p, (dt, g) in zip(ps, want["grads"]):
        assert dname(p.grad) == dt == "float32"        # the float32 parameters keep float32 gradients
        assert np.allclose(np.array(p.grad.tolist()), g, atol=tol, rtol=0)


def saved_bytes(nodes):
    return {i: sum(math.prod(s) * SIZE[d] for _, d, s in n["saved"]) for i, n in enumerate(nodes)
            if n["name"] == "AddmmBackward0" or n["name"] == "ReluBackward0"}


def test_autocast_halves_the_saved_activations_as_in_pytorch():
    *_, nodes32, trace32 = mlp_step(False)
    *_, nodes16, trace16 = mlp_step(True)
    # PyTorch's figures, from the recorded dtypes and shapes
    want32 = sorted(saved_bytes(REF["mlp"]["float32"]["nodes"]).values())
    want16 = sorted(saved_bytes(REF["mlp"]["autocast"]["nodes"]).values())
    assert want32 == [128, 256, 512] and want16 == [64, 128, 256]
    assert sorted(saved_bytes(nodes32).values()) == want32 and sorted(saved_bytes(nodes16).values()) == want16
    # the trace's pack events carry the same bytes (what the app shows per node)
    for trace, mode in ((trace32, "float32"), (trace16, "autocast")):
        got = sorted(e["bytes"] for e in trace.events if e["kind"] == "pack" and e["name"] in ("mat1", "mat2", "result"))
        want = sorted(math.prod(sh) * SIZE[d] for n in REF["mlp"][mode]["nodes"] for k, d, sh in n["saved"]
                      if k in ("mat1", "mat2", "result"))
        assert got == want
    assert sum(want) * 2 == sum(sorted(math.prod(sh) * SIZE[d] for n in REF["mlp"]["float32"]["nodes"]
                                       for k, d, sh in n["saved"] if k in ("mat1", "mat2", "result"))) + 64
    # ... all halved but log_softmax's result (64 bytes): cross_entropy runs in float32 on the CPU list


def test_casts_are_real_ops_that_cost_memory_and_weights_are_cast_once():
    w = engine.randn(32, 16, requires_grad=True)
    x = engine.randn(8, 16)
    base = engine.memory.memory_allocated("cpu")
    with engine.autocast("cpu"):
        a = F.linear(x, w)           # x and w cast to bfloat16 before w.t(), as PyTorch's linear casts
        b = F.linear(x, w)           # the cached copy of w is reused; x (no leaf that requires grad) is cast again
        cast_a = a.grad_fn.next_functions[1][0].next_functions[0][0]
        cast_b = b.grad_fn.next_functions[1][0].next_functions[0][0]
        assert a.dtype is engine.bfloat16 and a.grad_fn.next_functions[1][0].name() == "TBackward0"
        assert cast_a.name() == "ToCopyBackward0" and cast_a is cast_b   # one cast of w
        live = engine.memory.memory_allocated("cpu") - base
        # w's bfloat16 copy (kept by the cache), a and b, and the bfloat16 copy of x each mm saved
        assert live == 32 * 16 * 2 + 2 * (8 * 32 * 2) + 2 * (8 * 16 * 2)
    # leaving the outermost region drops the cache, and with it w's copy (no node saved it)
    assert engine.memory.memory_allocated("cpu") - base == live - 32 * 16 * 2
    with engine.autocast("cpu", cache_enabled=False):
        c, d = F.linear(x, w), F.linear(x, w)
        assert c.grad_fn.next_functions[1][0].next_functions[0][0] is not \
            d.grad_fn.next_functions[1][0].next_functions[0][0]
    assert w.dtype is engine.float32     # the float32 weight stays
    (a.float().sum() + c.float().sum()).backward()
    assert w.grad.dtype is engine.float32


def test_state_nesting_disabling_and_the_decorator():
    assert not engine.is_autocast_enabled() and not engine.is_autocast_enabled("cpu")
    assert engine.get_autocast_dtype("cpu") is engine.bfloat16 and engine.get_autocast_dtype("cuda") is engine.float16
    x = engine.randn(2, 2)
    with engine.autocast("cpu"):
        assert engine.is_autocast_enabled("cpu") and not engine.is_autocast_enabled()
        assert (x @ x).dtype is engine.bfloat16
        with engine.autocast("cpu", enabled=False):
            assert not engine.is_autocast_enabled("cpu") and (x @ x).dtype is engine.float32
        with engine.autocast("cpu", dtype=engine.float16):
            assert engine.get_autocast_dtype("cpu") is engine.float16 and (x @ x).dtype is engine.float16
        assert engine.get_autocast_dtype("cpu") is engine.bfloat16 and (x @ x).dtype is engine.bfloat16
    assert not engine.is_autocast_enabled("cpu") and (x @ x).dtype is engine.float32

    @engine.autocast("cpu")
    def f(t):
        return t @ t

    assert f(x).dtype is engine.bfloat16 and (x @ x).dtype is engine.float32
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        engine.autocast(engine.device("cpu"))
    with pytest.raises(RuntimeError, match="User specified an unsupported autocast device_type 'mps'"):
        engine.autocast("mps")


def test_pytorchs_warnings_for_an_unsupported_dtype_deprecated_names_and_no_gpu():
    x = engine.randn(2, 2)
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                                         "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16"):
        ctx = engine.autocast("cpu", dtype=engine.float64)
    with ctx:
        assert (x @ x).dtype is engine.float32 and not engine.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated. Please use "
                                           r"`torch.amp.autocast\('cpu', args...\)` instead."):
        ctx = engine.cpu.amp.autocast()
    with ctx:
        assert (x @ x).dtype is engine.bfloat16
    if not engine.cuda.is_available():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with engine.cuda.amp.autocast():
                assert (x @ x).dtype is engine.float32
        assert [(type(m.message), str(m.message)) for m in w] == [
            (FutureWarning, ("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                             "`torch.amp.autocast('cuda', args...)` instead.")),
            (UserWarning, "CUDA is not available or torch_xla is imported. Disabling autocast.")]
    with pytest.warns(DeprecationWarning, match=r"torch.get_autocast_cpu_dtype\(\) is deprecated"):
        assert engine.get_autocast_cpu_dtype() is engine.bfloat16


def test_autocast_is_per_thread():
    import threading
    seen = []
    with engine.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((engine.randn(2, 2) @ engine.randn(2, 2)).dtype))
        t.start()
        t.join()
    assert seen == [engine.float32]


@pytest.mark.skipif(not engine.cuda.is_available(), reason="no CUDA GPU visible to CuPy")
def test_cuda_autocast_follows_the_cuda_lists():
    x = engine.randn(4, 4, device="cuda")
    with engine.autocast("cuda"):
        assert (x @ x).dtype is engine.float16                        # lower precision
        assert engine.softmax(x, 1).dtype is engine.float32           # fp32 on CUDA (not on the CPU list)
        assert engine.softmax(x.half(), 1).dtype is engine.float32
        assert x.half().exp().dtype is engine.float32 and x.half().sum().dtype is engine.float32
        assert engine.addcmul(x, x.half(), x.half()).dtype is engine.float32   # promote
        y = engine.rand(4, device="cuda")
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(y, y)
    with engine.autocast("cpu"):
        assert (x @ x).dtype is engine.float32          # a CPU region leaves CUDA tensors alone
