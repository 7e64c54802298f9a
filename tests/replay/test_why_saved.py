"""Why a node keeps a tensor: the save rule and formula from the op table, and who shares it."""
import engine as torch
from replay.graph import graph_at
from replay.model import TraceModel
from replay.why_saved import shared_with, under_checkpoint, why


def test_mul_keeps_each_factor_for_the_others_gradient():
    assert why("MulBackward0", "other")[0] == "MulBackward0 keeps 'other' (an input) because self's gradient reads it in backward"
    assert why("MulBackward0", "self")[0].endswith("because other's gradient reads it in backward")
    assert "g * s.other" in why("MulBackward0", "other")[1]


def test_an_output_kept_for_any_gradient_and_an_unknown_slot():
    assert why("ReluBackward0", "result")[0] == ("ReluBackward0 keeps 'result' (its own output) because any "
                                                "input's gradient reads it in backward")
    assert why("ReluBackward0", "nothing_like_this") == []
    assert why("NoSuchBackward7", "self") == []


def test_shared_with_finds_the_other_holders_of_the_same_storage():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)
    with torch.record() as tr:
        h = torch.relu(lin(x))
        y = lin(h)                                  # h is ReluBackward0's result and this addmm's mat1
    g = graph_at(TraceModel.from_trace(tr), len(tr.events) - 1)
    relu = next(n for n in g.nodes.values() if n.name == "ReluBackward0")
    assert ("AddmmBackward0", "mat1") in shared_with(g, relu.id, "result")
    addmm = [n for n in g.nodes.values() if n.name == "AddmmBackward0"]
    assert [sv.name for sv in addmm[0].saved] == ["mat1"]      # x needs no gradient: the weight is not kept
    assert shared_with(g, addmm[1].id, "mat2") == [("parameter", "weight")]
    assert shared_with(g, relu.id, "no_such_slot") == []
    assert under_checkpoint(True).startswith("under checkpoint it would stay")
    assert "dropped in forward and recomputed" in under_checkpoint(False)
    del y


def test_the_formula_is_the_lambda_alone():
    from replay.why_saved import formula, rows_for
    f = formula(rows_for("TanhBackward0")[0])
    assert f == "lambda F, g, s: (g * (1.0 - s.result * s.result),)"


def test_a_row_written_on_one_line_gives_its_backward_not_its_forward():
    from replay.why_saved import formula, rows_for
    f = formula(rows_for("ExpBackward0")[0])
    assert f.startswith("lambda F, g, s:") and "s.result" in f
