"""engine.nn.functional's argument checks in PyTorch's words (one_hot, group_norm) and their values,
recorded from PyTorch 2.13 (found by tools/fuzz)."""
from __future__ import annotations

import pytest

import engine
import engine.nn.functional as F


@pytest.mark.parametrize("code, exc, message", [
    ("F.one_hot(engine.tensor([0, 5]), 3)", RuntimeError, "Class values must be smaller than num_classes."),
    ("F.one_hot(engine.tensor([-1, 0]), 3)", RuntimeError, "Class values must be non-negative."),
    ("F.one_hot(engine.zeros(0, dtype=engine.long))", RuntimeError,
     "Can not infer total number of classes from empty tensor."),
    ("F.group_norm(engine.ones(1, 4, 1), 4)", ValueError,
     "Expected more than 1 value per channel when training, got input size [1, 4, 1]"),
    ("F.group_norm(engine.ones(1, 4, 1), 3)", ValueError,
     "Expected more than 1 value per channel when training, got input size [1, 3, 1]"),
    ("F.gelu(engine.tensor([True]))", NotImplementedError, "\"GeluKernelImpl\" not implemented for 'Bool'"),
])
def test_pytorchs_refusals(code, exc, message):
    with pytest.raises(exc) as e:
        eval(code, {"engine": engine, "F": F})
    assert str(e.value) == message


def test_one_hot_and_group_norm_values():
    assert F.one_hot(engine.tensor([2, 0])).tolist() == [[0, 0, 1], [1, 0, 0]]
    out = F.group_norm(engine.tensor([[1.0, 2.0, -1.0, 3.0]]), 2)
    assert out.tolist()[0] == pytest.approx([-0.9999799728393555, 0.9999799728393555, -0.9999987483024597,
                                             0.9999987483024597], rel=1e-6)
