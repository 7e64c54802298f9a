"""float16 and bfloat16 end to end, against values recorded from PyTorch 2.13's CPU kernels
(tests/fixtures/make_dtypes_reference.py): elementwise ops, reductions, matmul, linear, conv2d, the
nn functions and one MLP step, all computed in float32 and rounded once (NOTE [ Low-precision
results ]); factories, casts, repr, and the bytes a half-precision activation costs."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine
import engine.nn.functional as F

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "dtypes_reference.json")) as _f:
    REF = json.load(_f)
LOW = ("float16", "bfloat16")


def inputs(dt):
    r, d = REF["low"][dt], getattr(engine, dt)
    return {k: engine.tensor(r[k], dtype=d) for k in ("x", "w", "b", "img", "ker")}


CASES = {
    "exp": lambda t: t["x"].exp(), "mul_float": lambda t: t["x"] * 0.3, "div": lambda t: t["x"] / 3,
    "add": lambda t: t["x"] + t["x"] * 2, "tanh": lambda t: t["x"].tanh(), "sigmoid": lambda t: t["x"].sigmoid(),
    "sum": lambda t: t["x"].sum(), "mean": lambda t: t["x"].mean(), "sum_dim": lambda t: t["x"].sum(1),
    "var": lambda t: t["x"].var(), "mm": lambda t: t["x"] @ t["w"].t(), "linear": lambda t: F.linear(t["x"], t["w"], t["b"]),
    "softmax": lambda t: engine.softmax(t["x"], 1), "log_softmax": lambda t: engine.log_softmax(t["x"], 1),
    "layer_norm": lambda t: F.layer_norm(t["x"], (6,)),
    "cross_entropy": lambda t: F.cross_entropy(t["x"] @ t["w"].t(), engine.tensor([0, 4, 2, 1])),
    "conv2d": lambda t: F.conv2d(t["img"], t["ker"], padding=1), "gelu": lambda t: F.gelu(t["x"]),
    "long_sum": lambda t: engine.full((4096,), 0.1, dtype=t["x"].dtype).sum(),
    "long_mean": lambda t: engine.full((4096,), 0.1, dtype=t["x"].dtype).mean(),
}
# PyTorch's log_softmax and cross_entropy kernels subtract the log-sum in another order: within one ulp
ULPS = {"log_softmax": 1, "cross_entropy": 1}


def ulps(got, want, dt):
    eps = engine.finfo(getattr(engine, dt)).eps
    g, w = np.array(got, dtype=np.float64), np.array(want, dtype=np.float64)
    return float(np.max(np.abs(g - w) / (np.maximum(np.abs(w), 2.0 ** -14) * eps)))


@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_are_pytorchs_computed_in_float32_and_rounded_once(dt, case):
    want = REF["low"][dt][case]
    r = CASES[case](inputs(dt))
    assert str(r.dtype) == "torch." + want["dtype"] and list(r.shape) == want["shape"]
    assert ulps(r.double().tolist(), want["values"], dt) <= ULPS.get(case, 0)


def test_a_long_bfloat16_sum_accumulates_in_float32():
    # 4096 x 0.1 in bfloat16 accumulated in bfloat16 stalls at 32; PyTorch (and glassgrad) give ~409
    s = engine.full((4096,), 0.1, dtype=engine.bfloat16).sum()
    assert s.item() == REF["low"]["bfloat16"]["long_sum"]["values"] and s.item() > 400


@pytest.mark.parametrize("dt", LOW)
def test_an_mlp_step_gives_grads_in_the_parameters_dtype(dt):
    want = REF["low"][dt]["mlp"]
    t, d = inputs(dt), getattr(engine, dt)
    w1 = t["w"].clone().requires_grad_()
    b1 = t["b"].clone().requires_grad_()
    w2 = engine.tensor(want["w2"], dtype=d, requires_grad=True)
    loss = F.cross_entropy(F.linear(engine.relu(F.linear(t["x"], w1, b1)), w2), engine.tensor([0, 2, 1, 2]))
    loss.backward()
    assert loss.dtype is d and str(loss.dtype) == "torch." + want["loss_dtype"]
    assert ulps([loss.item()], [want["loss"]], dt) <= 1
    for name, p in (("w1", w1), ("b1", b1), ("w2", w2)):
        g = want["grads"][name]
        assert p.grad.dtype is d and str(p.grad.dtype) == "torch." + g["dtype"]
        # the backward formulas run on the saved half-precision arrays: within a few ulps of PyTorch's
        assert np.allclose(np.array(p.grad.double().tolist()), g["values"], rtol=4 * engine.finfo(d).eps,
                           atol=4 * engine.finfo(d).eps), name


@pytest.mark.parametrize("dt", LOW + ("uint8", "int8", "int16"))
def test_factories_and_casts_give_every_dtype(dt):
    d = getattr(engine, dt)
    for t in (engine.zeros(2, 3, dtype=d), engine.ones(2, 3, dtype=d), engine.full((2, 3), 3, dtype=d),
              engine.empty(2, 3, dtype=d), engine.arange(6, dtype=d).reshape(2, 3), engine.tensor([[1, 2, 3]] * 2, dtype=d)):
        assert t.dtype is d and t.element_size() == d.itemsize and t.nbytes == 6 * d.itemsize
    x = engine.tensor([1.0, 2.5, -3.0])
    method = {"float16": "half", "bfloat16": "bfloat16", "uint8": "byte", "int8": "char", "int16": "short"}[dt]
    assert getattr(x, method)().dtype is d and x.to(d).dtype is d and x.to(dtype=d).dtype is d
    assert x.type(getattr(engine, d.name if False else {"float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
                                                         "uint8": "ByteTensor", "int8": "CharTensor",
                                                         "int16": "ShortTensor"}[dt])).dtype is d
    if d.is_floating_point:
        r = engine.randn(1000, dtype=d)
        assert r.dtype is d and 0.8 < float(r.float().std()) < 1.2
        assert engine.rand(3, dtype=d).dtype is d


def test_type_names_and_repr_as_pytorch_prints_them():
    assert engine.ones(2, dtype=engine.float16).type() == "torch.HalfTensor"
    assert engine.ones(2, dtype=engine.bfloat16).type() == "torch.BFloat16Tensor"
    assert engine.ones(2, dtype=engine.uint8).type() == "torch.ByteTensor"
    # strings printed by PyTorch 2.13 for the same tensors
    assert repr(engine.tensor([0.1, -2.5, 3.0], dtype=engine.bfloat16)) == \
        "tensor([ 0.1001, -2.5000,  3.0000], dtype=torch.bfloat16)"
    assert repr(engine.tensor([1e-5, 1.0, 300.0], dtype=engine.float16)) == \
        "tensor([1.0014e-05, 1.0000e+00, 3.0000e+02], dtype=torch.float16)"
    x = engine.tensor([1.0, 2.0], dtype=engine.float16, requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], dtype=torch.float16, grad_fn=<MulBackward0>)"
    assert repr(engine.tensor([1, 2, 100], dtype=engine.int8)) == "tensor([  1,   2, 100], dtype=torch.int8)"


def test_a_float16_activation_costs_two_bytes_an_element():
    w = engine.randn(64, 32, dtype=engine.float16, requires_grad=True)
    x = engine.randn(16, 32, dtype=engine.float16)
    base = engine.memory.memory_allocated("cpu")
    with engine.record() as trace:
        h = (x @ w.t()).relu()        # relu saves its result: 16 * 64 * 2 bytes; mm's output is freed
    assert engine.memory.memory_allocated("cpu") - base == 16 * 64 * 2
    saved = h.grad_fn._saved_result
    assert saved.dtype is engine.float16 and saved.nbytes == 16 * 64 * 2
    allocs = [e for e in trace.events if e["kind"] == "alloc"]
    assert [a["bytes"] for a in allocs] == [16 * 64 * 2, 16 * 64 * 2]


def test_checkpoints_store_the_small_dtypes_under_pytorchs_storage_names(tmp_path):
    import zipfile
    names = {"float16": "HalfStorage", "bfloat16": "BFloat16Storage", "uint8": "ByteStorage", "int8": "CharStorage",
             "int16": "ShortStorage"}
    d = {n: engine.tensor([1.5, -2.25, 3.0]).to(getattr(engine, n)) for n in names}
    path = tmp_path / "small.pt"
    engine.save(d, path)
    pkl = zipfile.ZipFile(path).read("small/data.pkl")
    for n, storage in names.items():
        assert f"torch\n{storage}\n".encode() in pkl
    back = engine.load(path, weights_only=True)
    for n, t in back.items():
        assert t.dtype is getattr(engine, n) and t.tolist() == d[n].tolist()


@pytest.mark.parametrize("dt", LOW)
def test_a_bias_gradient_sums_its_batch_in_float32(dt):
    # 2048 rows of gradient 0.01: summed in float32 and rounded once (PyTorch gives 20.5 in bfloat16),
    # where accumulating in the low dtype would stall (at 4.0 in bfloat16)
    d = getattr(engine, dt)
    b = engine.zeros(4, dtype=d, requires_grad=True)
    y = F.linear(engine.ones(2048, 8, dtype=d), engine.ones(4, 8, dtype=d), b)
    (y * 0.01).sum().backward()
    step = engine.tensor(0.01, dtype=d).item()                      # 0.01 in the low dtype
    want = engine.tensor(2048 * step, dtype=engine.float64).to(d).item()
    assert b.grad.dtype is d and b.grad.tolist() == [want] * 4
    assert want > 20


@pytest.mark.parametrize("dt", LOW)
def test_dropout_keeps_the_dtype_and_its_mask_costs_two_bytes(dt):
    d = getattr(engine, dt)
    x = engine.ones(8, 16, dtype=d, requires_grad=True)
    y = F.dropout(x, 0.5)
    assert y.dtype is d and y.grad_fn.name() == "MulBackward0"     # the CPU's input * mask, as PyTorch's
    mask = y.grad_fn._saved_other
    assert mask.dtype is d and mask.nbytes == 8 * 16 * 2
    assert sorted(set(mask.float().flatten().tolist())) == [0.0, 2.0]
    assert engine.randperm(5, dtype=engine.int8).dtype is engine.int8
