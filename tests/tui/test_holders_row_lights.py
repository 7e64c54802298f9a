"""Enter on a holders row lights, in the graph, every node that made or saved its storages, drawn
with their own mark until escape (NOTE [ Memory views ] rule 4, NOTE [ Graph marks ] rule 5)."""
from replay.model import TraceModel
from tests.tui.conftest import host_screen
from tui.graph_view import GraphView
from tui.holders_view import HoldersView
from tui.lifetimes_view import LifetimesView


def _makers_and_savers(events, storages, nodes) -> set:
    """From the events alone: for each storage, the node of the first op whose output lives in it (no
    input sharing it), or the node backward executed when it was allocated in backward; and every
    node that packed it."""
    out = set()
    for s in storages:
        alloc = next((i for i, e in enumerate(events) if e["kind"] == "alloc" and e.get("storage") == s), None)
        if alloc is not None:
            e = events[alloc]
            if e.get("phase") == "backward":
                ex = [x for x in events[:alloc] if x["kind"] == "execute"]
                ended = any(x["kind"] == "backward_end" for x in events[events.index(ex[-1]):alloc]) if ex else True
                if not ended:
                    out.add(ex[-1].get("node"))
            else:
                for op in events[alloc:]:
                    o = op.get("output") if op["kind"] == "op" else None
                    if isinstance(o, dict) and o.get("storage") == s:
                        if not any(isinstance(t, dict) and t.get("storage") == s for t in op.get("inputs") or []):
                            node = op.get("node")
                            out.add(node.get("id") if isinstance(node, dict) else node)
                        break
        out |= {e.get("node") for e in events if e["kind"] == "pack" and e.get("storage") == s}
    return {n for n in out if n in nodes}


def _drawn_styles(g: GraphView) -> dict:
    """Box id -> the style its top-left corner is drawn with, of the boxes on screen."""
    sx, sy = g.scroll_offset
    lit_style = g.get_component_rich_style("graph--lit")
    out = {}
    for did in g.boxes_in_view():
        x, y = g._lay.rects[did][:2]
        if not (0 <= y - sy < g.size.height and 0 <= x - sx < g.size.width):
            continue
        pos = 0
        for seg in g.render_line(y - sy):
            if pos <= x - sx < pos + len(seg.text):
                out[did] = "lit" if seg.style == lit_style else "other"
                break
            pos += len(seg.text)
    return out


async def test_enter_on_a_holders_row_lights_the_nodes_that_made_or_saved_it_and_escape_clears_them(mlp_trace):
    model = TraceModel.from_trace(mlp_trace)
    events = list(mlp_trace.events)
    async with host_screen(model, "mlp").run_test(size=(160, 60)) as pilot:
        s = pilot.app.screen
        s.index = model.memory.peak_index
        g = s.query_one(GraphView)
        assert g.lit == frozenset() and "lit" not in _drawn_styles(g).values()     # nothing lit by default
        await pilot.press("m", "m")                        # the holders view
        ho = s.query_one(HoldersView)
        ho.focus()
        await pilot.pause()
        rows = range(len(ho.holder_rows))                # "before recording": lit by their savers alone
        most, lit_drawn = 0, 0
        for row in rows:
            ho.move_cursor(row=row)
            await pilot.press("enter")
            await pilot.pause()
            want = _makers_and_savers(events, ho.holder_rows[row].storages, model.nodes)
            assert set(g.lit) == want, ho.holder_rows[row].name
            assert s.selected in want
            most = max(most, len(want))
            drawn = _drawn_styles(g)
            for nid in want - {s.selected, g.current}:
                if nid in drawn:
                    assert drawn[nid] == "lit", nid
            for nid, how in drawn.items():
                if nid not in want:
                    assert how == "other", nid
            shown_lit = [n for n in want - {s.selected, g.current} if n in drawn]
            lit_drawn += len(shown_lit)
            if shown_lit:
                assert "lit" in [m.key for m in g.marks_now()]        # the legend names the mark
        assert most >= 2 and lit_drawn > 0                # a row lights more than its selected node
        await pilot.press("escape")
        await pilot.pause()
        assert g.lit == frozenset() and s.query_one(LifetimesView).highlight == frozenset()
        assert "lit" not in _drawn_styles(g).values()
        assert "lit" not in [m.key for m in g.marks_now()]
