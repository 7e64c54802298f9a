"""PyTorch's type promotion, checked against tables taken from PyTorch 2.13.

Operand codes: b bool, i int64, f float32, d float64; a trailing 0 means a 0-d tensor.
Dimensioned tensors outrank 0-d tensors, which outrank Python scalars; a lower group
only matters when its category (bool < int < float) is higher.
"""
from __future__ import annotations

import pytest

import engine

DT = {"b": engine.bool, "i": engine.int64, "f": engine.float32, "d": engine.float64}
KEYS = ["b", "b0", "i", "i0", "f", "f0", "d", "d0"]

# result of  row (op) column  for + - * maximum where (all the same); E = error
SAME_KIND = {
    "b": "b b i i f f d d",
    "b0": "b b i i f f d d",
    "i": "i i i i f f d d",
    "i0": "i i i i f f d d",
    "f": "f f f f f f d f",
    "f0": "f f f f f f d d",
    "d": "d d d d d d d d",
    "d0": "d d d d f d d d",
}
# true division: integers and bools give the default float dtype
TRUE_DIV = {
    "b": "f f f f f f d d",
    "b0": "f f f f f f d d",
    "i": "f f f f f f d d",
    "i0": "f f f f f f d d",
    "f": "f f f f f f d f",
    "f0": "f f f f f f d d",
    "d": "d d d d d d d d",
    "d0": "d d d d f d d d",
}
# tensor (row) with a Python scalar: for True, 3, 2.5 in turn the ops  t+s, s-t, t/s, t**s, s**t
SCALARS = {
    "b": "b E f b E i E f i i f E f f f",
    "b0": "b E f b E i E f i i f E f f f",
    "i": "i E f i i i i f i i f f f f f",
    "i0": "i E f i i i i f i i f f f f f",
    "f": "f E f f f f f f f f f f f f f",
    "f0": "f E f f f f f f f f f f f f f",
    "d": "d E d d d d d d d d d d d d d",
    "d0": "d E d d d d d d d d d d d d d",
}
# The bool ** bool corner (PyTorch: bool, and an error for True ** bool tensor) is not modelled.
SKIP_SCALAR = {("b", "True", "**"), ("b", "True", "r**"), ("b0", "True", "**"), ("b0", "True", "r**")}


def make(key):
    return engine.ones(() if key.endswith("0") else (2,), dtype=DT[key[0]])


BINARY = {"+": lambda a, b: a + b, "*": lambda a, b: a * b, "maximum": engine.maximum,
          "where": lambda a, b: engine.where(engine.tensor(True), a, b)}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("a", KEYS)
def test_binary_promotion(op, a):
    for b, want in zip(KEYS, SAME_KIND[a].split()):
        r = BINARY[op](make(a), make(b))
        assert r.dtype is DT[want], (a, op, b)
        assert r.shape == (() if a.endswith("0") and b.endswith("0") else (2,))


@pytest.mark.parametrize("a", KEYS)
def test_true_division_promotion(a):
    for b, want in zip(KEYS, TRUE_DIV[a].split()):
        assert (make(a) / make(b)).dtype is DT[want], (a, b)


SCALAR_OPS = [("+", lambda t, s: t + s), ("r-", lambda t, s: s - t), ("/", lambda t, s: t / s),
              ("**", lambda t, s: t ** s), ("r**", lambda t, s: s ** t)]


@pytest.mark.parametrize("a", KEYS)
def test_python_scalar_promotion(a):
    wants = iter(SCALARS[a].split())
    for sname, s in (("True", True), ("3", 3), ("2.5", 2.5)):
        for opname, fn in SCALAR_OPS:
            want = next(wants)
            if (a, sname, opname) in SKIP_SCALAR:
                continue
            if want == "E":
                with pytest.raises(RuntimeError, match="with a bool tensor is not supported|two bool tensors"):
                    fn(make(a), s)
            else:
                assert fn(make(a), s).dtype is DT[want], (a, opname, sname)


def test_examples_named_in_pytorch_docs():
    assert (engine.tensor([1, 2]) + 2.5).dtype is engine.float32
    assert (engine.ones(2) + engine.tensor(1.0, dtype=engine.float64)).dtype is engine.float32
    assert (engine.tensor([True]) + engine.tensor([1])).dtype is engine.int64
    assert (engine.tensor([4]) / engine.tensor([2])).dtype is engine.float32
    assert (engine.tensor([4]) / engine.tensor([2])).tolist() == [2.0]
    assert (engine.tensor([7, -7]) // 2).tolist() == [3, -4] and (engine.tensor([7]) // 2).dtype is engine.int64
    assert engine.div(engine.tensor([7, -7]), 2, rounding_mode="trunc").tolist() == [3, -3]
    assert (engine.tensor([7.0, -7.0]) // 2).tolist() == [3.0, -4.0]
    assert engine.promote_types(engine.int64, engine.float32) is engine.float32
    engine.set_default_dtype(engine.float64)
    assert (engine.tensor([1, 2]) + 2.5).dtype is engine.float64
    assert (engine.tensor([1]) / engine.tensor([2])).dtype is engine.float64


UNARY = {  # op: (bool, int64, float32, float64) result dtypes in PyTorch
    "sum": "i i f d", "exp": "f f f d", "neg": "E i f d", "sqrt": "f f f d", "sin": "f f f d",
    "sigmoid": "f f f d", "max": "b i f d", "eq": "b b b b", "square": "i i f d", "tanh": "f f f d",
    "log": "f f f d",
}
UNARY_FN = {"sum": lambda a: a.sum(), "exp": engine.exp, "neg": lambda a: -a, "sqrt": engine.sqrt,
            "sin": engine.sin, "sigmoid": engine.sigmoid, "max": lambda a: a.max(), "eq": lambda a: a == a,
            "square": engine.square, "tanh": engine.tanh, "log": engine.log}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_result_dtypes(name):
    for k, want in zip("bifd", UNARY[name].split()):
        a = make(k)
        if want == "E":
            with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
                UNARY_FN[name](a)
        else:
            assert UNARY_FN[name](a).dtype is DT[want], (name, k)


def test_mean_of_integers_is_an_error_and_sum_of_bools_counts():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        engine.tensor([1, 2]).mean()
    assert engine.tensor([True, True, False]).sum().item() == 2


def test_inplace_keeps_the_target_dtype():
    x = engine.zeros(2)
    x.add_(engine.tensor([1, 2]))
    assert x.dtype is engine.float32 and x.tolist() == [1.0, 2.0]
    y = engine.zeros(2, dtype=engine.float64)
    y += engine.tensor([0.5, 0.5])
    assert y.dtype is engine.float64
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        engine.zeros(2, dtype=engine.long).mul_(1.5)
