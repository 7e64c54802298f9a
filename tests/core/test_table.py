"""The op table itself (engine/core/table.py; rows in core/primitives.py and engine/ops/): one row per name."""
from __future__ import annotations

import pytest

from engine.core.table import OPS, op


def test_a_row_name_is_taken_once():
    taken = next(iter(OPS))
    before = OPS[taken]
    with pytest.raises(ValueError, match=f"^op table row '{taken}' is defined twice$"):
        op(taken, "OtherBackward0", ("self",), lambda xp, a: a)
    assert OPS[taken] is before


def test_every_row_is_keyed_by_its_own_name_and_names_a_node_as_pytorch_does():
    import re
    # PyTorch's few node names outside the <Op>Backward<N> pattern
    other = {"CopySlices", "CopyBackwards", "NotImplemented", "DiagonalBackward0_copy"}
    for name, row in OPS.items():
        assert row.name == name
        assert row.node is None or row.node in other or re.fullmatch(r"\w+Backward\d*", row.node), (name, row.node)
