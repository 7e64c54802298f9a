"""NOTE [ Where the graph view looks ] rule 5: an event about no node keeps the graph's working end in view."""
from replay.model import TraceModel
from tests.tui.conftest import host_screen
from tui.graph_view import GraphView


async def test_an_alloc_in_backward_shows_the_running_node_and_one_in_forward_the_newest(mlp_trace):
    model = TraceModel.from_trace(mlp_trace)
    ev = model.events
    back = [i for i in range(len(ev)) if ev[i]["kind"] == "alloc" and model.current(i) is not None]
    fwd = [i for i in range(len(ev)) if ev[i]["kind"] == "alloc" and ev[i].get("phase") == "forward"
           and model.current(i) is None and model.shown(i)]
    assert back and fwd
    async with host_screen(model, "mlp").run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        g = s.query_one(GraphView)
        moved = 0
        for i in (back[-1], fwd[-1], back[0]):
            before = tuple(g.scroll_offset)
            s.index = i
            await pilot.pause()
            shown = [n for n in model.shown(i) if model.nodes[n].created <= i]
            want = model.current(i) or max(shown, key=lambda n: model.nodes[n].created)
            assert s.focus_of.node(i) is None
            assert g.box_of(want) in g.boxes_in_view(), (i, want)
            moved += tuple(g.scroll_offset) != before
        assert moved          # the graph is bigger than the panel: some jump had to move the view
