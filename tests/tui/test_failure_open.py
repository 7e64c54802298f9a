"""A run whose backward raised opens at the node it failed in (NOTE [ A failed backward ])."""
import os

import pytest
from textual.app import App

import engine as torch
from replay.model import TraceModel
from tui.trace_screen import TraceScreen


async def test_the_screen_moves_to_the_failing_node_and_selects_it():
    x = torch.randn(4, requires_grad=True)
    with torch.record() as tr:
        y = x.exp()
        y.add_(1)
        with pytest.raises(RuntimeError):
            y.sum().backward()
    model = TraceModel.from_trace(tr)

    class Host(App):
        CSS_PATH = os.path.join(os.path.dirname(__import__("tui").__file__), "glassgrad.tcss")

        def on_mount(self):
            self.push_screen(TraceScreen(model, title="bad"))

    async with Host().run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        s.open_at_failure()
        await pilot.pause()
        assert model.events[s.index]["kind"] == "execute" and model.events[s.index]["name"] == "ExpBackward0"
        assert model.nodes[s.selected].name == "ExpBackward0"
