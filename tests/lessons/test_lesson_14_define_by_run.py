"""Lesson 14's function builds the graph its Python took, and compile refuses what it cannot hold."""
import math

import pytest

import engine as torch
from engine.compiler.runtime import Unsupported
from lessons import _runner, get
from lessons import lesson_14_define_by_run as L


def test_every_check_passes():
    lr = _runner.run(get(14))
    assert [c.text for r in lr.steps for c in r.checks if not c.ok] == []


@pytest.mark.parametrize("value", [0.1, -0.3, 2.0])
def test_the_graph_has_one_doubling_per_loop_turn(value):
    x = torch.tensor([value, value], requires_grad=True)
    turns = max(0, math.ceil(math.log2(10 / (2 * abs(value)))))
    with torch.record() as tr:
        y = L.f(x)
    last = "SinBackward0" if value > 0 else "CosBackward0"
    assert L.chain(y) == [last] + ["MulBackward0"] * turns
    made = {e["node"]["id"] for e in tr.events if e["kind"] == "op" and e.get("node")}
    died = {e["node"] for e in tr.events if e["kind"] == "node_free"}
    assert len(made - died) == turns + 1      # the conditions' nodes are gone


def test_fullgraph_refuses_the_data_dependent_loop():
    with pytest.raises(Unsupported, match=r"graph break in f: Tensor.item\(\)"):
        torch.compile(L.f, fullgraph=True)(torch.tensor([1.0, -0.5]))
