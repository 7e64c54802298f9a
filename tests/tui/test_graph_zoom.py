"""The graph panel fits a real model: zoom levels, fit, pan by keys and by a mouse drag, names that fit."""
import pytest

import engine as torch
from replay.model import TraceModel
from tests.tui.conftest import host_screen, residual_blocks
from tui.graph_layout import COMPACT, FULL, layout, to_text
from tui.graph_view import GraphView
from tui.graph_zoom import BOXES, NAMES, PAN_X, WHOLE, cells, fit, fit_name, short_name

SIZE = (120, 36)


@pytest.fixture(scope="module")
def deep():
    """17 residual blocks: a graph of 103 nodes (per block T, Addmm, Tanh, Add and two AccumulateGrad)."""
    return residual_blocks(17)


def _text(g) -> list:
    return [g.render_line(y).text for y in range(g.size.height)]


async def test_zooming_out_shows_more_boxes_and_the_smallest_level_shows_every_node(deep):
    model, at = deep
    shown = model.shown(at)
    assert len(shown) >= 100
    async with host_screen(model, "deep").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        await pilot.pause()
        g = s.query_one(GraphView)
        counts = {}
        for level, key in ((BOXES, None), (NAMES, "minus"), (WHOLE, "minus")):
            if key:
                await pilot.press(key)
                await pilot.pause()          # the scroll is clamped to the new layout on the next refresh
            assert g.zoom == level
            counts[level] = len(g.boxes_in_view())
        assert counts[BOXES] < counts[NAMES] < counts[WHOLE] == len(shown)
        text = "".join(_text(g))
        assert text.count("■") == len(shown)              # one mark per node, each in a cell of its own
        await pilot.press("minus")                         # the last level stays
        assert g.zoom == WHOLE
        await pilot.press("plus", "equals_sign")
        assert g.zoom == BOXES
        names = "".join(_text(g))
        assert all(model.nodes[d].name[:10] in names for d in g.boxes_in_view()
                   if g._lay.rects[d][0] >= g.scroll_offset.x and g._lay.rects[d][1] + 1 >= g.scroll_offset.y)


async def test_zero_fits_the_whole_graph_and_the_selected_node_stays_in_view(deep):
    model, at = deep
    async with host_screen(model, "deep").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        await pilot.pause()
        g = s.query_one(GraphView)
        first = min(model.shown(at), key=lambda n: model.nodes[n].created)   # a leaf, on the top row
        s.selected = first
        await pilot.press("minus")
        x, y, w, h = g._lay.rects[first]
        vx, vy = g.scroll_offset
        vw, vh = g.scrollable_content_region.size
        assert vx <= x and x + w <= vx + vw and vy <= y and y + h <= vy + vh
        await pilot.press("0")
        # 103 nodes in a chain of 17 blocks fit neither as boxes nor as names in 36 rows
        assert g._build(NAMES)[0].height > vh and g.zoom == WHOLE
        assert len(g.boxes_in_view()) == len(model.shown(at))


async def test_zero_picks_boxes_when_the_graph_fits():
    torch.manual_seed(0)
    x = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        x.sin().sum().backward()
    model = TraceModel.from_trace(tr)
    async with host_screen(model, "small").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = len(model) - 1
        g = s.query_one(GraphView)
        await pilot.press("minus", "minus", "0")
        assert g.zoom == BOXES and tuple(g.scroll_offset) == (0, 0)


async def test_pan_keys_move_the_view_by_exact_steps(deep):
    model, at = deep
    async with host_screen(model, "deep").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        await pilot.pause()
        g = s.query_one(GraphView)
        g.scroll_to(0, 0, animate=False, force=True, immediate=True)
        assert g.max_scroll_x >= 2 * PAN_X and g.max_scroll_y >= 3 * FULL.ystep
        await pilot.press("shift+down")
        assert tuple(g.scroll_offset) == (0, FULL.ystep)
        await pilot.press("J", "shift+right")
        assert tuple(g.scroll_offset) == (PAN_X, 2 * FULL.ystep)
        await pilot.press("H", "K")
        assert tuple(g.scroll_offset) == (0, FULL.ystep)
        await pilot.press("minus", "shift+up", "shift+up")     # one layer of names is COMPACT.ystep rows
        before = g.scroll_offset.y
        await pilot.press("shift+down")
        assert g.scroll_offset.y - before == COMPACT.ystep


async def test_a_mouse_drag_pans_the_graph_and_selects_nothing(deep):
    model, at = deep
    async with host_screen(model, "deep").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        await pilot.pause()
        g = s.query_one(GraphView)
        g.scroll_to(10, 10, animate=False, force=True, immediate=True)
        await pilot.mouse_down(GraphView, offset=(20, 12))
        await pilot.hover(GraphView, offset=(14, 8))
        assert tuple(g.scroll_offset) == (16, 14)            # the graph follows the pointer: 6 left, 4 up
        await pilot.hover(GraphView, offset=(23, 14))
        await pilot.mouse_up(GraphView, offset=(23, 14))
        assert tuple(g.scroll_offset) == (7, 8)
        assert s.selected is None
        await pilot.hover(GraphView, offset=(2, 2))          # the button is up: no more panning
        assert tuple(g.scroll_offset) == (7, 8)


def test_names_that_fit():
    assert short_name("AddmmBackward0") == "Addmm" and short_name("CompiledFunctionBackward") == "CompiledFunction"
    assert short_name("AccumulateGrad") == "AccumulateGrad" and short_name("Backward0") == "Backward0"
    assert fit("NativeLayerNormBackward0", 10) == "NativeLay…" and fit("Mm", 10) == "Mm"
    assert fit_name("transformer.h.0.attn.c_attn.weight", 14) == "…c_attn.weight"
    assert fit_name("transformer.h.0", 14) == "…h.0" and fit_name("blocks.12", 14) == "blocks.12"
    assert fit_name("averyveryverylongname.weight", 6) == "avery…"    # no tail fits: the start


def test_upside_layout_puts_leaves_on_top_with_arrows_into_the_consumer():
    g = {3: [2], 2: [1], 1: []}
    names = {3: "SumBackward0", 2: "CosBackward0", 1: "SinBackward0"}
    down = to_text(layout(g, names), {k: (v, "") for k, v in names.items()})
    up = to_text(layout(g, names, up=True), {k: (v, "") for k, v in names.items()})
    assert down[1] == "│SumBackward0│" and down[7] == "┌──────▼─────┐"      # the loss on top...
    assert up[:4] == ["┌────────────┐", "│SinBackward0│", "│            │", "└──────┬─────┘"]
    assert up[7] == "┌──────▼─────┐" and up[-3] == "│SumBackward0│"        # ...or at the bottom, arrows down
    assert len(up) == len(down)


def test_compact_layout_is_one_row_a_box_and_one_row_a_channel():
    g = {3: [2, 1], 2: [1], 1: []}
    lay = layout(g, {3: "Sum", 2: "Cos", 1: "x"}, COMPACT, up=True)
    assert lay.height == 5 and {r[3] for r in lay.rects.values()} == {1}
    assert [lay.rects[n][1] for n in (1, 2, 3)] == [0, 2, 4]


def test_whole_level_cells_are_distinct_and_near_their_box():
    lay = layout({n: [n - 1] if n else [] for n in range(30)}, None, COMPACT)     # a chain 59 rows high
    got = cells(lay, 10, 10)
    assert len(got) == 30 and len(set(got.values())) == 30
    assert all(0 <= c < 10 and 0 <= r < 10 for c, r in got.values())
    ys = [got[n][1] for n in range(29, -1, -1)]          # down the chain, never up
    assert ys == sorted(ys)
    assert len(cells(lay, 3, 3)) == 9                   # a panel of 9 cells holds 9 of them
