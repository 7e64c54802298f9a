"""A run whose backward raised opens at the node it failed in (NOTE [ A failed backward ])."""
import pytest

import engine as torch
from replay.model import TraceModel
from tests.tui.conftest import host_screen


async def test_the_screen_moves_to_the_failing_node_and_selects_it():
    x = torch.randn(4, requires_grad=True)
    with torch.record() as tr:
        y = x.exp()
        y.add_(1)
        with pytest.raises(RuntimeError):
            y.sum().backward()
    model = TraceModel.from_trace(tr)


    async with host_screen(model, "bad").run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        s.open_at_failure()
        await pilot.pause()
        assert model.events[s.index]["kind"] == "execute" and model.events[s.index]["name"] == "ExpBackward0"
        assert model.nodes[s.selected].name == "ExpBackward0"
