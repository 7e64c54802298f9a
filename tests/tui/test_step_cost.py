"""A step redraws only the rows whose look changed (graph boxes, event-log rows), and what is on the
screen after any sequence of steps and jumps equals what the panel draws afresh at that state."""
from textual.geometry import Region

from tui.app import GlassgradApp
from tui.event_log import EventLog
from tui.graph_view import GraphView
from tui.inspector import Inspector
from tui.memory_view import MemoryView
from tui.trace_screen import TraceScreen


def _drawn(w):
    """The panel's lines as the screen has them (its line cache), then drawn afresh with no cache."""
    region = Region(0, 0, w.size.width, w.size.height)
    kept = [(s.text, list(s)) for s in w.render_lines(region)]
    w.refresh()                     # every line drawn again from the widget's state
    fresh = [(s.text, list(s)) for s in w.render_lines(region)]
    return kept, fresh


async def test_steps_and_jumps_never_leave_stale_rows(mlp_trace):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        assert isinstance(s, TraceScreen)
        moves = (["right"] * 3 + ["p"] + ["left"] * 5 + ["right"] * 3 + ["G"] + ["left"] * 12
                 + ["home", "p", "right", "right"])
        seen = set()
        for k, key in enumerate(moves):
            await pilot.press(key)
            await pilot.pause()
            mv = s.query_one(MemoryView)
            if k == 12:
                s.selected = next(iter(s.model.nodes))   # a selection, then more steps
                await pilot.pause()
            if k == 16:
                mv.window = (20, 90)                     # a window over part of the run
                await pilot.pause()
            if k == 22:
                await pilot.resize_terminal(100, 34)
                await pilot.pause()
            for w in (s.query_one(GraphView), s.query_one(EventLog), mv, s.query_one(Inspector)):
                kept, fresh = _drawn(w)
                assert kept == fresh, (key, k, type(w).__name__)
            kept = mv.render()
            mv._runs_key = mv._cols_key = None           # the chart's columns drawn again from the model
            fresh = mv.render()
            assert (kept.plain, kept.spans) == (fresh.plain, fresh.spans), (key, k)
            seen.add(s.index)
        assert len(seen) > 12


async def test_a_step_redraws_only_the_rows_that_changed(mlp_trace, monkeypatch):
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 40)) as pilot:
        s = pilot.app.screen
        log, graph = s.query_one(EventLog), s.query_one(GraphView)
        drawn = []
        for cls in (EventLog, GraphView):
            orig = cls.render_line
            monkeypatch.setattr(cls, "render_line", lambda self, y, orig=orig: drawn.append((self, y)) or orig(self, y))
        await pilot.press("p")                # the peak: the graph is drawn
        await pilot.pause()
        drawn.clear()
        top = log.scroll_offset.y
        i = s.index
        s.action_step(1)                      # one row down, no scroll: the old and the new cursor rows
        for w in (log, graph):
            w.render_lines(Region(0, 0, w.size.width, w.size.height))
        assert log.scroll_offset.y == top
        assert sorted(y for w, y in drawn if w is log) == [i - top, i + 1 - top]
        graph_rows = [y for w, y in drawn if w is graph]
        assert len(graph_rows) < graph.size.height
