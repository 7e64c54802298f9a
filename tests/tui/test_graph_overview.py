"""The graph overview: every node as one mark, the normal view framed, a click goes there."""

import engine as torch
from replay.model import TraceModel
from tests.tui.conftest import host_screen
from tui.graph_overview import grid
from tui.graph_view import GraphView


async def test_v_shows_every_node_scaled_and_a_click_centres_the_view_there():
    torch.manual_seed(0)
    m = torch.nn.Sequential(*[layer for _ in range(12) for layer in (torch.nn.Linear(8, 8), torch.nn.Tanh())])
    with torch.record() as tr:
        y = m(torch.randn(2, 8)).sum()       # kept: its graph stays alive
    model = TraceModel.from_trace(tr)
    assert y.grad_fn is not None


    async with host_screen(model, "deep").run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        s.index = len(model) - 1
        await pilot.press("v")
        g = s.query_one(GraphView)
        assert g.overview
        w, h = g.size.width, g.size.height
        marks = grid(g, w, h)
        text = "".join(g.render_line(y).text for y in range(h))
        assert text.count("■") == len(marks) > 1 and "┌" in text and "┘" in text
        assert g._lay.height > h                                 # the graph is taller than the panel
        before = tuple(g.scroll_offset)
        await pilot.click(GraphView, offset=(w // 2, h - 2))
        assert not g.overview and tuple(g.scroll_offset) != before
