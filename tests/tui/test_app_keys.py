"""The app under Textual's Pilot: every key, every panel, the mouse."""
import os

import pytest

from replay.model import TraceModel
from tui.app import GlassgradApp
from tui.event_log import EventLog
from tui.graph_view import GraphView
from tui.help_screen import HelpScreen
from tui.home_screen import HomeScreen
from tui.inspector import Inspector
from tui.memory_view import MemoryView
from tests.tui.conftest import right_answer_keys
from tui.narrative import Narrative, step_markdown
from tui.trace_screen import SPEEDS, TraceScreen


def view_app(trace):
    return GlassgradApp("trace", trace=trace, title="mlp_trace.jsonl")


async def test_view_has_every_panel_with_a_title(mlp_trace):
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        assert isinstance(s, TraceScreen)
        titles = {w.id: str(w.border_title) for w in s.query("GraphView, MemoryView, EventLog, Inspector")}
        assert titles["graph"].startswith("Graph")
        assert titles["memory"].startswith("Memory")
        assert titles["log"] == "Events" and titles["inspector"] == "Inspector"
        assert s.query_one("#inspector").display
        assert "event #0 of 133" in str(s.query_one("#status").render())


async def test_stepping_keys(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("right", "right", "l")
        assert s.index == 3
        await pilot.press("left", "h")
        assert s.index == 1
        await pilot.press("end")
        assert s.index == len(m) - 1
        await pilot.press("home")
        assert s.index == 0
        await pilot.press("G")
        assert s.index == len(m) - 1
        await pilot.press("g")
        assert s.index == 0
        await pilot.press("full_stop")
        assert s.index == m.node_events[0]
        await pilot.press("full_stop", "comma")
        assert s.index == m.node_events[0]
        await pilot.press("right_curly_bracket")
        assert s.index == m.phase_starts[1] and m.events[s.index]["phase"] == "backward"
        await pilot.press("left_curly_bracket")
        assert s.index == 0
        await pilot.press("p")
        assert s.index == m.memory.peak_index
        # the panels follow the screen's index
        assert s.query_one(GraphView).index == s.query_one(MemoryView).index == m.memory.peak_index
        assert s.query_one(EventLog).index == s.query_one(Inspector).index == m.memory.peak_index


async def test_play_pause_and_speed(mlp_trace):
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("space")
        assert s.playing
        await pilot.pause(0.3)
        await pilot.press("space")
        assert not s.playing
        assert s.index > 0
        assert "paused" in str(s.query_one("#status").render())
        start = s.speed
        await pilot.press("greater_than_sign")      # > <: faster / slower (+ - zoom the graph)
        assert s.speed == start + 1
        await pilot.press("less_than_sign", "less_than_sign")
        assert s.speed == start - 1
        for _ in range(len(SPEEDS) + 2):
            await pilot.press("greater_than_sign")
        assert s.speed == len(SPEEDS) - 1
        await pilot.press("space")      # plays to the end, then stops by itself
        for _ in range(100):            # up to 2 s; at the top speed it is done well within 1 s
            await pilot.pause(0.02)
            if not s.playing:
                break
        assert not s.playing and s.index == len(s.model) - 1


async def test_search(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    runs = [i for i, e in enumerate(m.events) if e["kind"] == "execute" and e["name"] == "ReluBackward0"]
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("slash")
        box = s.query_one("#search")
        assert box.display and box.has_focus
        await pilot.press(*"run ReluBackward0", "enter")
        assert not box.display
        assert s.index == runs[0]
        await pilot.press("n")
        assert s.index == runs[0]       # one match: n wraps around to it
        await pilot.press("N")
        assert s.index == runs[0]
        await pilot.press("slash", *"nothing like this", "enter")
        assert s.index == runs[0]


async def test_help_screen_and_quit(mlp_trace):
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, TraceScreen)
        await pilot.press("q")
    assert pilot.app.return_code == 0


async def test_write_graph_key(mlp_trace, tmp_path):
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        s.outdir = str(tmp_path)
        await pilot.press("p", "w")
        dot = tmp_path / f"graph_event{s.index}.dot"
        assert dot.exists() and dot.read_text().startswith("digraph")


async def test_mouse_selects_nodes_and_events(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    async with view_app(mlp_trace).run_test(size=(100, 40)) as pilot:
        s = pilot.app.screen
        await pilot.press("end")
        g = s.query_one(GraphView)
        sx, sy = int(g.scroll_offset.x), int(g.scroll_offset.y)
        cw, ch = g.scrollable_content_region.width, g.scrollable_content_region.height
        nid, (x, y, w, h) = next((n, r) for n, r in g._lay.rects.items()
                                 if 0 <= r[0] + 1 - sx < cw and 0 <= r[1] + 1 - sy < ch)
        # +1: the panel's border
        await pilot.click(GraphView, offset=(x + 1 - sx + 1, y + 1 - sy + 1))
        assert s.selected == nid
        assert s.query_one(Inspector).selected == nid
        assert m.nodes[nid].name in str(s.query_one(Inspector).content())
        await pilot.press("escape")
        assert s.selected is None
        await pilot.press("comma")                     # back to an event about a node; enter selects it
        await pilot.press("enter")
        about = s.model.events[s.index]
        assert s.selected == (about["node"]["id"] if isinstance(about["node"], dict) else about["node"])
        # with a node selected, . and , move between the events about it
        rec = s.model.nodes[s.selected]
        await pilot.press("home", "full_stop")
        assert s.index == rec.created
        await pilot.press("full_stop")
        assert s.index == rec.event_indices()[1]
        await pilot.press("escape")
        log = s.query_one(EventLog)
        top = int(log.scroll_offset.y)
        await pilot.click(EventLog, offset=(5, 3))   # content row 2 (row 0 of the widget is its border)
        assert s.index == top + 2


async def test_home_opens_a_lesson_and_returns(fixed_ids):
    import lessons
    ls = [lessons.get(1), lessons.get(2)]
    app = GlassgradApp("home", lessons=ls, recent=[])
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(pilot.app.screen, HomeScreen)
        await pilot.press("enter")
        s = pilot.app.screen
        assert isinstance(s, TraceScreen) and s.lesson_run.lesson.number == 1
        await pilot.press("q")
        assert isinstance(pilot.app.screen, HomeScreen)
        await pilot.press("down", "enter")
        assert pilot.app.screen.lesson_run.lesson.number == 2


async def test_home_opens_a_recent_trace():
    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "mlp_trace.jsonl")
    app = GlassgradApp("home", lessons=[], recent=[fixture])
    async with app.run_test(size=(80, 24)) as pilot:
        pilot.app.screen.query_one("#recent").focus()
        await pilot.press("enter")
        s = pilot.app.screen
        assert isinstance(s, TraceScreen) and len(s.model) == 133


async def test_lesson_step_keys_move_to_each_focus(lesson_run):
    lr = lesson_run(1)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        nar = s.query_one(Narrative)
        assert s.step == 0 and s.index == lr.steps[0].focus_index()
        assert nar.display and not s.query_one(Inspector).display
        await pilot.press("right_square_bracket")
        assert s.step == 1 and nar.step == 1
        assert s.index == lr.steps[1].focus_index()
        assert s.model.events[s.index]["kind"] == "execute"
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        assert s.step == 3 == len(lr.steps) - 1        # past the last step it stays there
        await pilot.press("left_square_bracket")
        assert s.step == 2
        assert s.query_one(EventLog).has_focus is False   # step 3 looks at the memory panel
        # stepping events moves the narrative to the step that owns the event
        await pilot.press("home")
        assert s.step == 0
        # i swaps the narrative and the inspector on a small screen
        await pilot.press("i")
        assert s.query_one(Inspector).display and not nar.display
        await pilot.press("i")
        assert nar.display


async def test_lesson_focus_panels(lesson_run):
    lr = lesson_run(2)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("right_square_bracket", "right_square_bracket")   # step 3 asks, then looks at the log
        await pilot.press(*right_answer_keys(lr, 2))
        assert lr.steps[2].step.focus.panel == "log"
        assert s.query_one(EventLog).has_focus


async def test_tall_lesson_shows_narrative_and_inspector(lesson_run):
    lr = lesson_run(1)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(120, 48)) as pilot:
        s = pilot.app.screen
        assert s.query_one(Narrative).display and s.query_one(Inspector).display


async def test_streamed_events_are_followed(mlp_trace):
    from textual.app import App

    class Host(App):
        CSS_PATH = os.path.join(os.path.dirname(__import__("tui").__file__), "glassgrad.tcss")

        def on_mount(self):
            self.push_screen(TraceScreen(TraceModel(), title="run", follow=True))

    async with Host().run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        assert "waiting for events" in str(s.query_one("#status").render())
        s.add_events(mlp_trace.events[:50])
        await pilot.pause()
        assert s.index == 49
        s.add_events(mlp_trace.events[50:])
        await pilot.pause()
        assert s.index == 132 and len(s.query_one(GraphView).model) == 133


async def test_run_command_streams_a_script(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import engine as torch\n"
                      "x = torch.ones(4, requires_grad=True)\n"
                      "(x.sin() * 3).sum().backward()\n")
    out = tmp_path / "run.jsonl"
    app = GlassgradApp("run", script=str(script), out=str(out))
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(100):
            await pilot.pause(0.1)
            if "finished" in pilot.app.screen.title_text or "failed" in pilot.app.screen.title_text:
                break
        s = pilot.app.screen
        assert s.title_text == "run prog.py (finished)"
        assert len(s.model) > 10 and s.index == len(s.model) - 1
        assert any(r.name == "SinBackward0" for r in s.model.nodes.values())
    assert out.exists() and not (tmp_path / "run.jsonl.part").exists()


async def test_lesson_focus_on_memory_and_on_a_node(lesson_run):
    lr = lesson_run(3)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(80, 24)) as pilot:
        s = pilot.app.screen
        await pilot.press("right_square_bracket", "right_square_bracket")    # step 3 is about a node
        assert lr.steps[2].step.focus.panel == "inspector"
        nid = s.model.events[s.index]["node"]["id"]
        assert s.selected == nid and s.query_one(Inspector).selected == nid
        assert s.query_one(Narrative).display          # the lesson text stays
        await pilot.press("i")
        assert "SinBackward0" in str(s.query_one(Inspector).content())
        await pilot.press("right_square_bracket")                            # step 4 looks at memory
        assert s.query_one(MemoryView).has_focus


@pytest.mark.parametrize("name", __import__("lessons").module_names())
async def test_every_lesson_plays_in_the_app(name, lesson_run):
    lr = lesson_run(name)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(100, 30)) as pilot:
        s = pilot.app.screen
        nv = s.query_one(Narrative)
        for k in range(len(lr.steps)):
            if k:
                await pilot.press("right_square_bracket")
            if lr.steps[k].answers:                    # NOTE [ Questions ]: the step waits at its mark
                assert s.step == k and s.index == lr.steps[k].start and nv.pending(k)
                await pilot.press(*right_answer_keys(lr, k))
                assert not nv.pending(k)
                assert all(f"The run says **{a.answer}**" in step_markdown(lr, k, None, nv.picked[k])
                           for a in lr.steps[k].answers)
            assert s.step == k and s.index == lr.steps[k].focus_index()
        await pilot.press("p", "end", "full_stop", "comma", "left_curly_bracket", "enter")
        assert s.index < len(s.model)


async def test_lesson_memory_chart_zooms_to_the_step(lesson_run):
    from tui.memory_view import MemoryView

    lr = lesson_run(1)
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(100, 30)) as pilot:
        s = pilot.app.screen
        mv = s.query_one(MemoryView)
        r = lr.steps[0]
        assert mv.window == (r.start, r.end)
        await pilot.press("p")                       # the step's own peak
        step_total = s.model.memory.total[r.start:r.end]
        assert s.index == r.start + step_total.index(max(step_total))
        await pilot.press("z")
        assert mv.window is None and "whole run" in str(mv.border_title)
        await pilot.press("p")
        assert s.index == s.model.memory.peak_index
        assert s.step == 2                            # the run's peak is in step 3; the step follows the cursor
        await pilot.press("z", "left_square_bracket")
        assert mv.window == (lr.steps[1].start, lr.steps[1].end)


async def test_p_and_P_go_to_the_two_peaks_the_lesson_names(lesson_run):
    """Lesson 2 step 2 says p lands on the live-bytes peak in backward and P on the activation peak."""
    lr = lesson_run(2)
    r = lr.steps[1]
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        await pilot.press("right_square_bracket")
        await pilot.press("p")
        live = s.index
        assert s.model.events[live]["phase"] == "backward"
        assert f"#{live}" in r.narrative()
        await pilot.press("P")
        act = s.index
        assert act < live and f"#{act}" in r.narrative()
        mem = s.model.memory
        assert mem.live_of("activation", act) == max(mem.live_of("activation", k) for k in range(r.start, r.end))
        lines = pilot.app.screen.query_one(MemoryView).render().plain.splitlines()
        k = next(k for k, line in enumerate(lines) if set(line) <= set("─▲△┃"))   # the axis, then the legend
        assert "▲" in lines[k] and lines[k].startswith("┃")    # the cursor sits on △ here
        legend = " ".join(lines[k + 1:])
        assert "▲peak" in legend and "△act peak" in legend


async def test_graph_panel_drops_dead_nodes_and_f_keeps_them_greyed(lesson_run):
    """Lesson 3 step 4: after `del q` the ExpBackward0 boxes leave the panel; f shows them '✝ freed'."""
    from tui.graph_view import box_style, node_texts

    lr = lesson_run(3)
    r = lr.steps[3]
    async with GlassgradApp("lesson", lesson_run=lr).run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        s.index = r.end - 1
        await pilot.pause()
        g = s.query_one(GraphView)
        m = s.model
        exps = [n.id for n in m.nodes.values() if n.name == "ExpBackward0"]
        assert exps and not set(exps) & set(g._recs)
        await pilot.press("f")
        assert g.keep_freed and set(exps) <= set(g._recs)
        assert node_texts(m, exps[0], s.index)[1].startswith("✝ freed")
        assert box_style(m, exps[0], s.index) == "graph--freed"
        await pilot.press("f")
        assert not set(exps) & set(g._recs)


async def _wait_finished(pilot):
    for _ in range(150):
        await pilot.pause(0.1)
        t = pilot.app.screen.title_text
        if "finished" in t or "failed" in t:
            return
    raise AssertionError("the run did not finish")


async def test_run_shows_the_scripts_output_and_its_error(tmp_path):
    """glassgrad run: print output in the Output panel (o, in the footer); a raise names the script's line."""
    script = tmp_path / "bad.py"
    script.write_text("import engine as torch\n"
                      "print('hello from the script')\n"
                      "a = torch.ones(2, 3)\n"
                      "c = a @ torch.ones(4, 5)\n")
    app = GlassgradApp("run", script=str(script), out=str(tmp_path / "run.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await _wait_finished(pilot)
        s = pilot.app.screen
        assert s.title_text == "run bad.py (failed: RuntimeError at bad.py:4)"
        out = s.query_one("#output")
        assert out.display and not s.query_one("#log").display       # shown by itself on failure
        text = "\n".join(out.lines)
        assert "hello from the script" in text
        assert 'File "' in text and "bad.py\", line 4" in text and "c = a @ torch.ones(4, 5)" in text
        assert "engine/" not in text and "runpy" not in text and "record_worker" not in text
        assert "✗ RuntimeError in" in text and "4 | c = a @ torch.ones(4, 5)" in text
        await pilot.press("o")
        assert not out.display and s.query_one("#log").display
        assert "o" in {k for k, b in pilot.app.active_bindings.items() if b.binding.show}


async def test_run_of_a_script_with_a_syntax_error(tmp_path):
    script = tmp_path / "syn.py"
    script.write_text("x = 1\nif x\n    print(x)\n")
    out = tmp_path / "run.jsonl"
    app = GlassgradApp("run", script=str(script), out=str(out))
    async with app.run_test(size=(100, 30)) as pilot:
        await _wait_finished(pilot)
        s = pilot.app.screen
        assert s.title_text == "run syn.py (failed: SyntaxError at syn.py:2)"
        text = "\n".join(s.query_one("#output").lines)
        assert "2 | if x" in text and "did not start" in text
        assert "no events" in str(s.query_one("#status").render())
    assert not out.exists() and not (tmp_path / "run.jsonl.part").exists()


async def test_output_key_only_in_a_run(mlp_trace):
    async with view_app(mlp_trace).run_test(size=(80, 24)) as pilot:
        assert "o" not in {k for k, b in pilot.app.active_bindings.items() if b.binding.show}
        await pilot.press("o")
        assert not pilot.app.screen.query("#output")


async def test_q_does_what_the_help_says(lesson_run):
    from tui.help_screen import KEYS

    assert dict(KEYS)["q"] == "quit; a lesson or trace opened from the home screen goes back to it"
    app = GlassgradApp("lesson", lesson_run=lesson_run(1))   # glassgrad lesson 1: q quits
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running
