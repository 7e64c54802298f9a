"""Module groups folded in the graph panel: one box with the group's totals, lit while backward runs inside it."""
import pytest

from replay.graph import graph_at
from replay.words import nbytes
from tests.tui.conftest import host_screen, residual_blocks
from tui.graph_folds import GROUP, MIN_REPEATS
from tui.graph_view import GraphView
from tui.inspector import Inspector
from viz.graph_dot import graph_source
from viz.module_groups import collapsed_instances, totals

SIZE = (120, 36)


@pytest.fixture(scope="module")
def blocks():
    """Four alike residual blocks, recorded through backward; ``at``: the last event of forward."""
    model, begin = residual_blocks(4)
    return model, begin - 1


def _members(model, i, inst):
    return sorted(n for n, g in collapsed_instances(graph_at(model, i), MIN_REPEATS).items() if g == inst)


def _held_beyond_params(model, ids) -> int:
    """Bytes of the distinct storages the nodes ``ids`` saved, less the parameters' own (from the trace)."""
    params = {r.tensor["storage"] for r in model.nodes.values() if r.is_leaf and r.tensor}
    storages = {s.storage: s.bytes for n in ids for s in model.nodes[n].saved if s.storage not in params}
    return sum(storages.values())


def _box_lines(g, gid) -> list:
    x, y, w, h = g._lay.rects[gid]
    return [g.render_line(row - g.scroll_offset.y).text[x - g.scroll_offset.x:][:w] for row in range(y, y + h)]


async def test_t_folds_the_selected_nodes_group_into_one_box_with_its_totals(blocks):
    model, at = blocks
    members = _members(model, at, "1")
    fns = [n for n in members if model.nodes[n].kind == "fn"]
    assert sorted(model.nodes[n].name for n in fns) == ["AddBackward0", "AddmmBackward0", "TBackward0",
                                                         "TanhBackward0"]
    held = _held_beyond_params(model, fns)
    t = totals(graph_at(model, at), members)
    assert held == t.saved == 2 * 2 * 8 * 4        # addmm's input and tanh's result, 2x8 float32 each
    picture = graph_source(graph_at(model, at))    # the picture's box of module 1 says the same
    box = next(line for line in picture.splitlines() if "module 1\\n" in line)
    assert f"saved: {nbytes(held)} held beyond parameters" in box and "backward: 0/4 nodes run" in box
    assert "collapsed: 4 grad_fn nodes · 2 parameters" in box and (t.nodes, t.params) == (4, 2)
    async with host_screen(model, "blocks").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        addmm = next(n for n in fns if model.nodes[n].name == "AddmmBackward0")
        s.selected = addmm
        await pilot.press("t")
        g = s.query_one(GraphView)
        gid = GROUP + "1"
        assert s.selected == g.selected == gid
        assert gid in g._lay.rects and not set(members) & set(g._lay.rects)
        g.centre_on(gid)
        lines = _box_lines(g, gid)
        assert lines[0].startswith("┏") and lines[-1].startswith("┗")
        assert "1 · 4 nodes" in lines[1] and f"saved {nbytes(held)} · 0/4 ran" in lines[2]
        words = str(s.query_one(Inspector).content())
        assert "module 1" in words and "4 grad_fn nodes, 2 parameters" in words
        assert f"saved     {nbytes(held)} held beyond the parameters" in words and "0/4 nodes run" in words
        await pilot.press("t")                              # t again unfolds it
        assert gid not in g._lay.rects and set(members) <= set(g._lay.rects) and s.selected is None


async def test_a_folded_box_is_current_while_backward_runs_a_node_inside(blocks):
    model, at = blocks
    members = _members(model, at, "2")
    fns = [n for n in members if model.nodes[n].kind == "fn"]
    tanh = next(n for n in fns if model.nodes[n].name == "TanhBackward0")
    runs = model.nodes[tanh].runs[0]
    async with host_screen(model, "blocks").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        s.selected = fns[0]
        await pilot.press("t", "escape")
        g = s.query_one(GraphView)
        gid = GROUP + "2"
        assert g._style_name(gid) == "graph--pending"
        s.index = runs
        await pilot.pause()
        assert model.state(tanh, runs) == "current"
        assert g._style_name(gid) == "graph--current"
        ran = sum(model.state(n, runs) == "executed" for n in fns)
        assert 0 < ran < 4                                  # Add ran before tanh, Addmm and T after it
        y = g._lay.rects[gid][1]
        assert f"· {ran}/4 ran" in _box_lines(g, gid)[2]    # the view went to it: it is about the node running
        strip = g.render_line(y + 1 - g.scroll_offset.y)
        at_box = [seg for seg in strip if "2 · 4 nodes" in seg.text]
        assert at_box and at_box[0].style == g.get_component_rich_style("graph--current")
        s.index = next(k for k, e in enumerate(model.events) if e.get("kind") == "backward_end")
        await pilot.pause()
        assert gid in g._lay.rects and g._style_name(gid) == "graph--executed" and "· 4/4 ran" in _box_lines(g, gid)[2]


async def test_T_folds_every_group_and_a_click_selects_a_folded_box(blocks):
    model, at = blocks
    groups = collapsed_instances(graph_at(model, at), MIN_REPEATS)
    assert sorted(set(groups.values())) == ["0", "1", "2", "3"]
    async with host_screen(model, "blocks").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        await pilot.press("T")
        g = s.query_one(GraphView)
        assert sorted(d for d in g._lay.rects if isinstance(d, str)) == [GROUP + k for k in "0123"]
        assert len(g._lay.rects) == len(model.shown(at)) - len(groups) + 4
        legend = [m.key for m in g.marks_now()]
        assert "group" in legend
        gid = GROUP + "3"
        g.centre_on(gid)
        x, y = g._lay.rects[gid][:2]
        await pilot.click(GraphView, offset=(x - g.scroll_offset.x + 2, y - g.scroll_offset.y + 1))
        assert s.selected == gid
        assert "module 3" in str(s.query_one(Inspector).content())
        await pilot.press("T")
        assert not [d for d in g._lay.rects if isinstance(d, str)] and s.selected is None


async def test_t_on_a_node_in_no_group_folds_nothing(blocks):
    model, at = blocks
    groups = collapsed_instances(graph_at(model, at), MIN_REPEATS)
    loss = next(n for n, r in model.nodes.items() if r.name == "SumBackward0")
    assert loss not in groups
    async with host_screen(model, "blocks").run_test(size=SIZE) as pilot:
        s = pilot.app.screen
        s.index = at
        s.selected = loss
        await pilot.press("t")
        g = s.query_one(GraphView)
        assert not g.folds.folded and s.selected == loss
