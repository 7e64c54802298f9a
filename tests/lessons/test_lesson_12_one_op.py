"""Lesson 12's tools read the engine as it is: the call path, the layers and the table row."""
import engine as torch
from engine.core.table import OPS
from lessons import _runner, get
from lessons import lesson_12_one_op as L


def test_every_check_passes():
    lr = _runner.run(get(12))
    assert [c.text for r in lr.steps for c in r.checks if not c.ok] == []


def test_watch_calls_sees_the_dispatch_path_of_a_unary_op():
    x = torch.ones(3, requires_grad=True)
    calls = [f"{p}:{n}" for _, p, n in L.watch_calls(lambda: x.exp())]
    assert L._in_order(calls, ["engine/core/dispatch.py:apply", "engine/core/tensor.py:Tensor._wrap",
                               "engine/core/dispatch.py:OpNode.__init__", "engine/core/dispatch.py:_save"])
    assert not any("lesson" in c for c in calls)


def test_layer_of_maps_files_to_the_reading_path():
    assert L.layer_of("engine/core/operators.py") == "binding"
    assert L.layer_of("engine/memory/allocator.py") == "memory"
    assert L.layer_of("engine/nn/modules/linear.py") == "engine (other)"
    assert L.layer_of("/usr/lib/python3.11/abc.py") == "python"


def test_table_row_names_what_each_input_needs():
    row = L.table_row(OPS["div"])
    assert row.splitlines()[:2] == ["- name: div(Tensor self, Tensor other)", "  node: DivBackward0"]
    assert "  save other: when any input needs a gradient" in row
    assert "  save self: when other needs a gradient" in row
