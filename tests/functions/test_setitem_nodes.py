"""``y[key] = value`` and ``x[key]`` name their nodes as PyTorch does (NOTE [ Which node a write makes ] in
engine/functions/indexing.py): IndexPutBackward0, CopySlices, CopyBackwards, FillBackward3, AliasBackward0.
The names were recorded from PyTorch 2.13 (tests/fixtures/make_graph_names_reference.py)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine
from engine.autograd import gradcheck

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "fixtures", "graph_names_reference.json"), encoding="utf-8") as _f:
    REF = json.load(_f)


def chain(fn):
    if fn is None:
        return "None"
    kids = [chain(n) for n, _ in fn.next_functions if n is not None and n.name() != "torch::autograd::AccumulateGrad"]
    return fn.name().replace("torch::autograd::", "") + ("(" + ", ".join(kids) + ")" if kids else "")


def _env():
    return {"idx": engine.tensor([1, 0]), "mask": engine.tensor([[True, False, True], [False, False, True]]),
            "ti": engine.tensor(1), "bmask": engine.tensor([True, False]), "tb": engine.tensor(True),
            "v": engine.tensor(7.0, dtype=engine.float64, requires_grad=True) * 1,
            "row": engine.tensor([[0.5, 1.5, 2.5]], dtype=engine.float64)}


def _x():
    return engine.tensor(np.arange(6.0).reshape(2, 3) - 1.0, dtype=engine.float64, requires_grad=True)


@pytest.mark.parametrize("case", REF["index"], ids=lambda c: f"{c['key']}={c['value']}")
def test_each_write_and_read_names_pytorchs_node(case):
    env = _env()
    key = eval(case["key"], {}, env)
    x = _x()
    y = x * 1
    try:
        y[key] = eval(case["value"], {}, env)
        got = chain(y.grad_fn)
    except Exception as e:  # noqa: BLE001
        got = type(e).__name__
    assert got == case["setitem"]
    assert chain((x * 1)[key].grad_fn) == case["getitem"]


def test_the_gradients_of_a_write_do_not_depend_on_the_nodes_name():
    """Every name covers the same row: the written region's gradient goes to the value, the rest to y."""
    for key in ((engine.tensor([1, 0]),), Ellipsis, (slice(None), slice(0, 9)), (0, engine.tensor([2, 0]))):
        def f(x, v, key=key):
            y = x * 1
            y[key] = v * 3
            return y * y
        x = _x()
        v = engine.tensor(0.5, dtype=engine.float64, requires_grad=True)
        assert gradcheck(f, [x, v])


def test_writing_through_the_python_bool_false_writes_and_records_nothing():
    """PyTorch 2.13: y.grad_fn stays MulBackward0, v.grad stays None, and a leaf is not refused."""
    x = _x()
    v = engine.tensor(2.0, dtype=engine.float64, requires_grad=True)
    y = x * 1
    y[False] = v * 3
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert v.grad is None and x.grad.tolist() == [[1.0] * 3] * 2
    leaf = _x()
    leaf[False] = 0.0
    assert leaf.tolist() == _x().tolist()


def test_a_value_with_extra_leading_ones_is_viewed_down_to_the_region():
    """``y[-1] = v`` with a (1,) ``v`` on a one-element ``y``: PyTorch views the value (no error in backward)."""
    x = engine.tensor([-1.125], dtype=engine.float64, requires_grad=True)
    v = engine.tensor([0.5], dtype=engine.float64, requires_grad=True)
    y = x * 1
    y[-1] = v * 3
    y.backward(engine.tensor([2.0], dtype=engine.float64))
    assert x.grad.tolist() == [0.0] and v.grad.tolist() == [6.0]
    z = engine.tensor(-0.75, dtype=engine.float64, requires_grad=True) * 1
    z[...] = v * 3
    assert z.grad_fn.name() == "torch::autograd::CopyBackwards"


def test_a_bool_scalar_index_of_a_0d_tensor_adds_a_dim():
    x = engine.tensor(1.5, requires_grad=True)
    assert tuple(x[True].shape) == (1,) and tuple(x[engine.tensor(False)].shape) == (0,)
    assert chain((x * 1)[True].grad_fn) == "IndexBackward0(UnsqueezeBackward0(MulBackward0))"


def test_index_errors_are_pytorchs():
    x = engine.ones(4, 1)
    with pytest.raises(IndexError, match=r"^shape mismatch: indexing tensors could not be broadcast together with "
                                         r"shapes \[0\], \[2\]$"):
        x[engine.zeros(0, dtype=engine.int64), engine.tensor([0, 0])]
    y = engine.ones(1, 1, 1, dtype=engine.float64) * 1
    with pytest.raises(IndexError, match=r"^index -2 is out of bounds for dimension 0 with size 1$"):
        y[engine.tensor([-2, 0])] = 1.0
    leaf = engine.tensor([1.875, -0.75], dtype=engine.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^a leaf Variable that requires grad is being used in an in-place "
                                           r"operation\.$"):
        leaf[engine.tensor([4])] = 1.5
