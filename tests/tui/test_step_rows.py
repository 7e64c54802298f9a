"""What a step redraws: the graph's rows whose signature changed (NOTE [ Graph rows ]), styles kept
until they change (NOTE [ Kept styles ]), no memory line when no byte moved (NOTE [ Redrawing only
changed lines ] rule 6); and every line on screen equal to the one drawn afresh. And the strips it
draws leave no cycle behind (NOTE [ Strips without a cycle ])."""
from textual.geometry import Region

from tui.app import GlassgradApp
from tui.event_log import EventLog
from tui.graph_view import GraphView
from tui.inspector import Inspector
from tui.memory_view import MemoryView, column_of


def _lines(w):
    return [(s.text, list(s)) for s in w.render_lines(Region(0, 0, w.size.width, w.size.height))]


def _fresh(w):
    w.refresh()
    return _lines(w)


async def test_the_graph_redraws_exactly_the_rows_that_look_different(mlp_trace, monkeypatch):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        g = s.query_one(GraphView)
        drawn = []
        orig = GraphView.render_line
        monkeypatch.setattr(GraphView, "render_line", lambda self, y: drawn.append(y) or orig(self, y))
        partial = 0
        for _ in range(150):              # forward: boxes appear; backward: they light up, their saved go
            before, scroll, room = _lines(g), g.scroll_offset, g.virtual_size
            boxes = bool(g._lay.rects)
            drawn.clear()
            s.action_step(1)
            after, rows = _lines(g), set(drawn)
            assert after == _fresh(g)
            top = g.styles.gutter.top             # render_lines has the border rows, render_line not
            changed = {y - top for y, (a, b) in enumerate(zip(before, after)) if a != b}
            if boxes and g._lay.rects and g.scroll_offset == scroll and g.virtual_size == room:
                # (else the panel is drawn whole: a message, or textual after a scroll or a new size)
                assert rows == changed, s.index            # rule 3: those rows, no other
                partial += 1
            await pilot.pause()
        assert partial > 20


async def test_a_strip_drawn_again_as_it_was_is_the_kept_one(mlp_trace):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        s.action_peak()
        await pilot.pause()
        g = s.query_one(GraphView)
        first = g.render_line(3)
        g.refresh()
        assert g.render_line(3) is first                   # rule 4: kept by signature
        pilot.app.theme = "textual-light" if pilot.app.theme != "textual-light" else "nord"
        await pilot.pause()
        again = g.render_line(3)
        assert again is not first and again.text == first.text and list(again) != list(first)


async def test_kept_styles_follow_a_new_theme(mlp_trace):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        s.action_peak()
        await pilot.pause()
        panels = [s.query_one(c) for c in (GraphView, EventLog, MemoryView, Inspector)]
        old = {type(w): _lines(w) for w in panels}
        pilot.app.theme = "textual-light" if pilot.app.theme != "textual-light" else "nord"
        await pilot.pause()
        s.action_step(1)
        s.action_step(-1)
        await pilot.pause()
        for w in panels:
            kept = _lines(w)
            assert kept == _fresh(w), type(w).__name__
            assert [t for t, _ in kept] == [t for t, _ in old[type(w)]]
        assert _lines(panels[0]) != old[GraphView] and _lines(panels[1]) != old[EventLog]


async def test_a_step_that_moves_no_byte_draws_no_memory_line(mlp_trace, monkeypatch):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        mv = s.query_one(MemoryView)
        m = s.model
        w, n = mv.size.width, len(m)

        def quiet(k):                     # k to k + 1 moves no byte, no reserved byte, no chart column
            return (m.memory.snaps[k] == m.memory.snaps[k + 1] and m.memory.reserved[k] == m.memory.reserved[k + 1]
                    and column_of(w, k, 0, n) == column_of(w, k + 1, 0, n))
        i = next(k for k in range(20, n - 1) if quiet(k) and m.memory.reserved[k - 1] == m.memory.reserved[k])
        s.index = i - 1
        await pilot.pause()
        s.action_step(1)                  # to i: the border's figure stays, the lines drawn are the step's
        _lines(mv)
        made = []
        orig = MemoryView._render_content
        monkeypatch.setattr(MemoryView, "_render_content", lambda self: made.append(1) or orig(self))
        s.action_step(1)                  # the same bytes, the same chart column: nothing to draw
        kept = _lines(mv)
        assert made == [] and kept == _fresh(mv)
        moved = next(k for k in range(i + 1, len(m) - 1) if m.memory.total[k] != m.memory.total[k + 1])
        made.clear()
        s.index = moved + 1               # bytes moved: the legend changes
        assert made and _lines(mv) == _fresh(mv)


def test_a_strip_cut_only_at_its_end_does_not_hold_itself():
    from rich.segment import Segment
    from textual.strip import Strip

    from tui import strip_cycles

    assert strip_cycles.patch() and strip_cycles.patch()      # rule 3: once, then a no-op
    s = Strip([Segment("abc"), Segment("def")], 6)
    assert s.divide([6]) == [s] and s.divide([6])[0] is s     # rule 2: textual's answer
    assert (6,) not in s._divide_cache._cache                  # not kept on the strip: no cycle
    two = s.divide([2, 6, 9])                                  # any other cut: textual's own, kept
    assert [t.text for t in two] == ["ab", "cdef"] and s.divide([2, 6, 9]) is two
