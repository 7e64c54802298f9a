"""NOTE [ Where the graph view looks ] rules 5-6: an event about no node keeps the graph's working end in view;
a change of the panel's size looks again, unless the learner moved the view by hand."""
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


def _whole_in_view(g, nid) -> bool:
    from textual.geometry import Region
    x, y, w, h = g._lay.rects[g.box_of(nid)]
    vw, vh = g.scrollable_content_region.size
    return Region(*g.scroll_offset, vw, vh).contains_region(Region(x, y, w, h))


async def test_the_graph_looks_again_when_its_panel_shrinks(mlp_trace):
    """Rule 6: the jump to backward centres node 66 in the panel as it was first laid out; the
    scrollbars then take two rows and columns, and the node is looked at again, so it is whole in
    the smaller panel (it was cut at the bottom before rule 6)."""
    from tui.app import GlassgradApp
    app = GlassgradApp("trace", trace=mlp_trace, title="mlp")
    async with app.run_test(size=(120, 36)) as pilot:
        g = app.screen.query_one(GraphView)
        before = tuple(g.scrollable_content_region.size)
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        nid = app.screen.focus_of.node(app.screen.index)
        assert before != tuple(g.scrollable_content_region.size)      # the panel did shrink
        assert nid is not None and _whole_in_view(g, nid)


async def test_a_view_moved_by_hand_stays_when_the_panel_resizes(mlp_trace):
    """Rule 6: after the learner pans, a change of the panel's size leaves the view where they put it."""
    from tui.app import GlassgradApp
    app = GlassgradApp("trace", trace=mlp_trace, title="mlp")
    async with app.run_test(size=(120, 36)) as pilot:
        g = app.screen.query_one(GraphView)
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        await pilot.press("K", "K")                              # pan up, away from the cursor's node
        await pilot.pause()
        moved = tuple(g.scroll_offset)
        nid = app.screen.focus_of.node(app.screen.index)
        assert not _whole_in_view(g, nid)
        size = tuple(g.scrollable_content_region.size)
        await pilot.resize_terminal(118, 35)
        await pilot.pause()
        assert tuple(g.scrollable_content_region.size) != size
        assert g.scroll_offset.y == moved[1] and not _whole_in_view(g, nid)
