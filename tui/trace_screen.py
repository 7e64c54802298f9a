"""TraceScreen: replay a trace (or a lesson's trace) with time travel over its events.

State lives in reactive attributes (``index``, ``selected``, ``playing``, ``speed``,
``step``); actions change them; watchers push the new state into the panels.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Input, Log, Static

from replay.model import TraceModel
from replay.words import event_line, nbytes

from .event_focus import EventFocus
from .event_log import EventLog
from .export import write_step_graph
from .fit import fit_status, fit_title, short_title
from . import graph_keys
from .graph_legend import GraphLegend
from .graph_view import GraphView
from .help_screen import HelpScreen
from .inspector import Inspector
from . import memory_modes
from .memory_view import MemoryView
from .narrative import Narrative
from .records_view import RecordsView

SPEEDS = [1, 2, 5, 10, 25, 50, 100, 250, 1000, 5000, 20000]   # events a second
FPS = 30                                                        # at most this many redraws a second
PHASE_WORDS = {"forward": "forward", "backward": "backward", "recompute": "recompute", "optimizer": "optimizer"}


class TraceScreen(Screen):
    BINDINGS = [
        Binding("right,l", "step(1)", "Step", key_display="←→", priority=True),
        Binding("left,h", "step(-1)", "Back", show=False, priority=True),
        Binding("full_stop", "node(1)", "Node", show=False),
        Binding("comma", "node(-1)", "Prev node", show=False),
        Binding("right_curly_bracket", "phase(1)", "Phase", show=False),
        Binding("left_curly_bracket", "phase(-1)", "Prev phase", show=False),
        Binding("g,home", "first", "First", show=False, priority=True),
        Binding("G,end", "last", "Last", show=False, priority=True),
        Binding("space", "play", "Play"),
        Binding("greater_than_sign", "speed(1)", "Faster", show=False),
        Binding("less_than_sign", "speed(-1)", "Slower", show=False),
        *graph_keys.BINDINGS,                 # the graph panel: zoom, pan, fold (tui/graph_keys.py)
        Binding("p", "peak", "Peak"),
        Binding("P", "peak('activation')", "Activation peak", show=False),
        Binding("right_square_bracket", "lesson_step(1)", "Next step", key_display="]"),
        Binding("left_square_bracket", "lesson_step(-1)", "Prev step", show=False),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("n", "search_next(1)", "Next match", show=False),
        Binding("N", "search_next(-1)", "Prev match", show=False),
        Binding("i", "toggle_inspector", "Inspector", show=False),
        Binding("z", "zoom", "Zoom memory", show=False),
        Binding("f", "keep_freed", "Show freed nodes", show=False),
        Binding("w", "write_graph", "Write .dot", show=False),
        Binding("enter", "select_current", "Inspect node", show=False),
        Binding("escape", "deselect", "Deselect", show=False),
        Binding("o", "output", "Output"),
        Binding("m", "memory_mode", "Memory view", show=False),
        Binding("v", "overview", "Graph overview", show=False),
        Binding("a", "window_mark('start')", "Window start", show=False),
        Binding("e", "window_mark('end')", "Window end", show=False),
        Binding("W", "window_preset", "Window preset", show=False),
        Binding("x", "window_clear", "Clear window", show=False),
        *[Binding(str(n), f"answer({n})", "Answer", show=False) for n in range(1, 10)],
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "close", "Quit"),
    ]

    index: reactive[int] = reactive(0, repaint=False)   # the panels redraw what changed (tui/changed_lines.py)
    selected: reactive[int | None] = reactive(None)
    playing: reactive[bool] = reactive(False)
    speed: reactive[int] = reactive(3)          # index into SPEEDS
    step: reactive[int] = reactive(0)           # lesson step (lessons only)
    show_inspector: reactive[bool] = reactive(False)
    zoom: reactive[bool] = reactive(True)        # lessons: the memory chart shows the current step only
    memory_mode: reactive[str] = reactive("chart")   # NOTE [ Memory views ] in tui/memory_modes.py
    window: reactive[tuple | None] = reactive(None)  # a chosen window of events (lo, hi) for every memory view

    def __init__(self, model: TraceModel, title: str = "trace", lesson_run=None, follow: bool = False,
                 outdir: str = "glassgrad-out", output: bool = False, **kw) -> None:
        super().__init__(**kw)
        self.has_output = output          # glassgrad run: an Output panel with the script's own output
        self.finished = False
        self.model = model
        self.title_text = title
        self.lesson_run = lesson_run
        self.follow = follow              # a streaming run: stay on the newest event
        self.outdir = outdir
        self.query_text = ""
        self._window_marks = [None, None]   # the memory panel's a/e marks, its notices and preset (memory_modes)
        self._notice_seq = 0
        self._preset_label = None
        self._timer = None
        self.focus_of = EventFocus(model)   # NOTE [ Where the graph view looks ]

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(self._status(), id="status")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                g = GraphView(self.model, id="graph")
                g.border_title = "Graph · autograd nodes (loss at bottom)"
                yield g
                yield GraphLegend(g, id="graph-legend")
                mv = MemoryView(self.model, id="memory")
                mv.border_title = "Memory · live bytes by category"
                yield mv
                yield from memory_modes.compose(self.model)
                rv = RecordsView(self.model, id="records")   # shown by _show_records
                rv.border_title = "Records · the checkpoint file's records and storages"
                yield rv
            with Vertical(id="right"):
                if self.lesson_run is not None:
                    nv = Narrative(self.lesson_run, id="narrative")
                    nv.border_title = f"Lesson {self.lesson_run.lesson.number} · {self.lesson_run.lesson.title}"
                    yield nv
                ins = Inspector(self.model, id="inspector")
                ins.border_title = "Inspector"
                yield ins
                log = EventLog(self.model, id="log")
                log.border_title = "Events"
                yield log
                if self.has_output:
                    out = Log(id="output", highlight=False)
                    out.border_title = "Output · prints, errors (o: events)"
                    out.display = False
                    yield out
        yield Input(placeholder="search events (text, e.g. SinBackward0 or release), Enter to find", id="search")
        yield Footer()

    def on_mount(self) -> None:
        self._apply_mode()
        if self.lesson_run is not None:
            self.go_to_step(0)          # also focuses the panel the first step is about
        else:
            self._push_index()
            self.query_one("#graph").focus()

    def _apply_mode(self) -> None:
        lesson = self.lesson_run is not None
        both = self.size.height >= 40
        self.query_one("#inspector").display = (not lesson) or self.show_inspector or both
        if lesson:
            self.query_one("#narrative").display = both or not self.show_inspector
        self.set_class(lesson, "-lesson")
        self.set_class(both, "-tall")
        self.set_class(self.size.height < 30, "-short")
        self.query_one("#graph-legend", GraphLegend).max_lines = 3 if self.size.height >= 30 else 2
        self.call_after_refresh(self._fit_titles)

    def on_resize(self, event) -> None:
        self._apply_mode()
        self.query_one("#status", Static).update(self._status(), layout=False)

    def _titles(self) -> dict:
        """Each panel's title wordings, longest first (NOTE [ Fitting the screen ] rule 2)."""
        t = {"#graph": ["Graph · autograd nodes (loss at bottom)", "Graph · autograd (loss at bottom)",
                        "Graph (loss at bottom)", "Graph"]}
        if self.lesson_run is not None:
            L = self.lesson_run.lesson
            t["#narrative"] = [f"Lesson {L.number} · {L.title}", f"Lesson {L.number}"]
            if self.zoom:
                k = self.step + 1
                t["#memory"] = [f"Memory · live bytes, step {k} (z: all)", f"Memory · step {k} (z: all)",
                                f"Memory, step {k} (z: all)", f"Memory · step {k}"]
            else:
                t["#memory"] = ["Memory · live bytes, whole run (z: step)", "Memory · whole run (z: step)",
                                "Memory · run (z: step)", "Memory · run"]
        else:
            t["#memory"] = ["Memory · live bytes by category", "Memory · live bytes", "Memory"]
        if self.has_output:
            t["#output"] = ["Output · prints, errors (o: events)", "Output (o: events)", "Output"]
        t["#records"] = ["Records · the checkpoint file's records and storages", "Records · records and storages",
                         "Records"]
        return t

    def _fit_titles(self) -> None:
        for sel, wordings in self._titles().items():
            for w in self.query(sel):
                if w.size.width:
                    w.border_title = fit_title(wordings, w.size.width)

    # ------------------------------------------------------------ state -> panels

    def _status(self) -> str:
        m = self.model
        n = len(m)
        if n == 0:
            wait = "waiting for events…" if self.follow and not self.finished else "no events"
            return f" {self.title_text} │ {wait} │ ? help"
        i = m.clamp(self.index)
        e = m.events[i]
        play = f"▶ playing {SPEEDS[self.speed]} events/s" if self.playing else "paused"
        return fit_status(self.title_text, short_title(self.title_text), (i, n),
                          PHASE_WORDS.get(e.get("phase"), e.get("phase")), f"{nbytes(m.memory.total[i])} live",
                          play, self.size.width or 200, not self.playing)

    def _push_index(self) -> None:
        i = self.model.clamp(self.index)
        nid = self.focus_of.node(i)
        graph = self.query_one("#graph", GraphView)
        if graph.index != i:     # one scan of the graph's rows: NOTE [ Redrawing only changed lines ] rule 7
            graph.set_reactive(GraphView.current, nid)
        for sel in ("#graph", "#memory", "#inspector", "#log"):
            w = self.query_one(sel)
            w.index = i
        memory_modes.push_index(self, i)
        self.query_one("#status", Static).update(self._status(), layout=False)
        self._show_records(i)
        graph.current = nid
        keep = self.focus_of.region_anchor(i)
        if nid is None and keep is None:
            keep = self.focus_of.nearby(i)        # NOTE [ Where the graph view looks ] rule 5
        graph.look_at(nid, self.focus_of.region_nodes(i), keep)
        self._sync_legend()
        if self.lesson_run is not None:
            owner = self.lesson_run.step_of(i)
            if owner != self.step:
                self.set_reactive(TraceScreen.step, owner)
                self.query_one("#narrative", Narrative).step = owner
            self._memory_window()

    def _show_records(self, i: int) -> None:
        """A trace about files (it saves or loads, and has no autograd graph): the records panel
        takes the place of the graph and the memory chart (tui/records_view.py)."""
        rv = self.query_one("#records", RecordsView)
        files = not self.model.nodes and rv.has_files()
        if rv.display != files:
            rv.display = files
            for w in self.query("#graph, #graph-legend, #memory"):
                w.display = not files
        rv.index = i

    def _memory_window(self) -> None:
        """Lessons: the memory chart spans the current step (z shows the whole run)."""
        mv = self.query_one("#memory", MemoryView)
        if self.window is not None:
            mv.window = self.window
        elif self.lesson_run is not None and self.zoom:
            r = self.lesson_run.steps[self.step]
            mv.window = (r.start, r.end)
        else:
            mv.window = None
        mv.border_title = fit_title(self._titles()["#memory"], mv.size.width or 200)

    def _sync_legend(self) -> None:
        """The graph's legend names the marks drawn now (NOTE [ Graph marks ] rule 4)."""
        self.query_one("#graph-legend", GraphLegend).marks = tuple(self.query_one("#graph", GraphView).marks_now())

    def watch_zoom(self) -> None:
        if self.is_mounted:
            self._memory_window()

    def watch_index(self) -> None:
        if self.is_mounted:
            self._push_index()

    def watch_selected(self, old, new) -> None:
        if not self.is_mounted:
            return
        self.query_one("#graph", GraphView).selected = new
        self.query_one("#inspector", Inspector).selected = new
        self._sync_legend()
        if new is not None and self.lesson_run is not None and self.size.height < 40:
            self.show_inspector = True

    def watch_show_inspector(self) -> None:
        if self.is_mounted:
            self._apply_mode()

    def watch_playing(self, playing: bool) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if playing:
            self._timer = self.set_interval(max(1 / SPEEDS[self.speed], 1 / FPS), self._tick)
        if self.is_mounted:
            self.query_one("#status", Static).update(self._status(), layout=False)

    def watch_speed(self) -> None:
        if self.playing:
            self.watch_playing(True)
        elif self.is_mounted:
            self.query_one("#status", Static).update(self._status(), layout=False)

    def _tick(self) -> None:
        if self.index >= len(self.model) - 1:
            self.playing = False
        else:  # fast speeds move several events per redraw
            self.index = self.model.clamp(self.index + max(1, SPEEDS[self.speed] // FPS))

    # ------------------------------------------------------------ actions

    def action_step(self, d: int) -> None:
        self.index = self.model.clamp(self.index + d)

    def action_node(self, d: int) -> None:
        """To the next/previous event about a graph node; with a node selected, about that node."""
        rec = self.model.nodes.get(self.selected) if self.selected is not None else None
        if rec is None:
            self.index = self.model.next_node_event(self.index, d)
            return
        idx = rec.event_indices()
        later = [k for k in idx if k > self.index] if d > 0 else [k for k in idx if k < self.index]
        if later:
            self.index = later[0] if d > 0 else later[-1]
        else:
            self.notify(f"No {'later' if d > 0 else 'earlier'} event about {rec.name}.", timeout=3)

    def action_phase(self, d: int) -> None:
        self.index = self.model.next_phase(self.index, d)

    def action_first(self) -> None:
        self.index = 0

    def action_last(self) -> None:
        self.index = self.model.clamp(len(self.model) - 1)

    def action_play(self) -> None:
        if not self.playing and self.index >= len(self.model) - 1:
            self.index = 0
        self.playing = not self.playing

    def action_speed(self, d: int) -> None:
        self.speed = max(0, min(len(SPEEDS) - 1, self.speed + d))

    def action_peak(self, category: str | None = None) -> None:
        """To the live-bytes peak (p) or the activation peak (P) of what the chart shows (a lesson
        step, or the whole run): NOTE [ Memory replay ] rule 6."""
        mv = self.query_one("#memory", MemoryView)
        lo, hi = mv._range()
        if hi <= lo:
            lo, hi = 0, len(self.model)
        at, peak = mv.peak_in(lo, hi, category)
        where = f"step {self.step + 1}" if mv.window is not None else "the run"
        phase = PHASE_WORDS.get(self.model.events[at].get("phase"), "") if len(self.model) else ""
        if category is None:
            self.notify(f"Live-bytes peak of {where}: {nbytes(peak)} after event #{at} ({phase}). "
                        "P: the activation peak.", timeout=4)
        else:
            self.notify(f"Activation peak of {where}: {nbytes(peak)} of activations after event #{at} "
                        f"({phase}). p: the live-bytes peak.", timeout=4)
        self.index = at

    def action_lesson_step(self, d: int) -> None:
        if self.lesson_run is None:
            self.notify("Not in a lesson: ] and [ move between lesson steps.", timeout=3)
            return
        self.go_to_step(max(0, min(len(self.lesson_run.steps) - 1, self.step + d)))

    def go_to_step(self, k: int) -> None:
        """Show lesson step k and move to the event and panel its focus names."""
        r = self.lesson_run.steps[k]
        self.step = k
        nv = self.query_one("#narrative", Narrative)
        nv.step = k
        self.selected = None
        if nv.pending(k):                 # NOTE [ Questions ]: the step plays once its questions are answered
            self.set_reactive(TraceScreen.index, r.start)
            self._push_index()
            nv.focus()
            return
        target = r.focus_index() if r.end > r.start else r.start
        self.set_reactive(TraceScreen.index, target)
        self._push_index()
        self.call_after_refresh(self._push_index)   # again once panels that appeared (the legend) took their room
        panel = r.step.focus.panel
        self.show_inspector = False
        memory_modes.apply_focus(self, r)           # NOTE [ Memory focus ] in lessons/_format.py
        widget = {"graph": "#graph", "memory": memory_modes.IDS[self.memory_mode], "log": "#log", "inspector": "#graph",
                  "narrative": "#narrative", "records": "#records"}[panel]
        self.query_one(widget).focus()
        nid = self.focus_of.node(target)
        if nid is not None and panel == "inspector":  # select the node, keep the lesson text in view
            self.set_reactive(TraceScreen.selected, nid)
            self.query_one("#graph", GraphView).selected = nid
            self.query_one("#inspector", Inspector).selected = nid
            if not self.query_one("#inspector").display:
                self.notify("This step is about the selected node: press i to inspect it.", timeout=4)

    def open_at_failure(self) -> None:
        """A run whose backward raised: the cursor on the node it failed in, that node selected and
        the changed saved tensor named (replay/failure.py)."""
        from replay.failure import failed_backward
        f = failed_backward(self.model.events)
        if f is None:
            return
        self.index = f.at
        if f.node is not None and f.node in self.model.nodes:
            self.selected = f.node
        self.notify(f.words(), severity="error", timeout=15)

    async def action_answer(self, n: int) -> None:
        """Answer the current lesson step's question with choice n; the step plays when none is left."""
        if self.lesson_run is None:
            return
        nv = self.query_one("#narrative", Narrative)
        if await nv.answer(n) and not nv.pending(self.step):
            self.go_to_step(self.step)

    def action_overview(self) -> None:
        g = self.query_one("#graph", GraphView)
        g.overview = not g.overview
        self.notify("Graph overview: every node as ■, the normal view framed; click to go there (v: back)"
                    if g.overview else "Graph: the normal view", timeout=3)

    def action_graph_zoom(self, step: int) -> None:
        graph_keys.zoom(self, step)

    def action_graph_fit(self) -> None:
        graph_keys.fit(self)

    def action_graph_pan(self, dx: int, dy: int) -> None:
        self.query_one("#graph", GraphView).pan(dx, dy)

    def action_graph_fold(self) -> None:
        graph_keys.fold(self)

    def action_graph_fold_all(self) -> None:
        graph_keys.fold_all(self)

    def action_memory_mode(self) -> None:
        self.memory_mode = memory_modes.next_mode(self.memory_mode)
        view = self.query_one(memory_modes.IDS[self.memory_mode])
        if self.memory_mode != "chart" and view.display:
            view.focus()                    # its keys work at once (NOTE [ Memory views ] rule 1)

    def watch_memory_mode(self) -> None:
        if self.is_mounted:
            memory_modes.show(self, self.memory_mode)

    def action_window_mark(self, which: str) -> None:
        self.window = memory_modes.mark(self, which, self.model.clamp(self.index))

    def action_window_preset(self) -> None:
        self.window = memory_modes.next_preset(self)

    def action_window_clear(self) -> None:
        self.window = None
        self.notify("Window cleared: the memory views show the whole run (or the lesson step).", timeout=3)

    def watch_window(self) -> None:
        if self.is_mounted:
            memory_modes.set_window(self, self.window)
            self._memory_window()

    def on_lifetimes_view_go_to(self, message) -> None:
        self.index = message.index          # NOTE [ A storage's story ] rule 2

    def on_holders_view_row_chosen(self, message) -> None:
        memory_modes.show_holders_row(self, message.storages)

    def on_memory_view_window_chosen(self, message) -> None:
        self.window = (message.lo, message.hi)

    def action_select_current(self) -> None:
        """Select (and inspect) the node the event at the cursor is about."""
        nid = self.query_one("#graph", GraphView).current
        if nid is None:
            self.notify("This event is not about a graph node.", timeout=3)
            return
        self.selected = nid

    def action_zoom(self) -> None:
        if self.lesson_run is None:
            self.notify("z zooms the memory chart to a lesson step; this trace has no steps.", timeout=3)
            return
        self.zoom = not self.zoom

    def action_keep_freed(self) -> None:
        """f: draw nodes whose object died greyed ("freed") instead of leaving them out."""
        g = self.query_one("#graph", GraphView)
        g.keep_freed = not g.keep_freed
        self._sync_legend()
        self.notify("Freed nodes shown greyed (✝ freed)." if g.keep_freed
                    else "Freed nodes hidden: the graph shows only what is alive.", timeout=3)

    def action_toggle_inspector(self) -> None:
        if self.lesson_run is None:
            return
        self.show_inspector = not self.show_inspector

    def action_deselect(self) -> None:
        search = self.query_one("#search", Input)
        if search.display:
            search.display = False
            self.query_one("#graph").focus()
            return
        self.selected = None
        memory_modes.clear_holders_row(self)        # NOTE [ Memory views ] rule 4
        if self.lesson_run is not None:
            self.show_inspector = False

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "output":          # only a run has the script's output: no footer key elsewhere
            return self.has_output
        return True

    def action_output(self, show: bool | None = None) -> None:
        """o: the Output panel (the script's print output and errors) in place of the events."""
        if not self.has_output:
            return
        out = self.query_one("#output", Log)
        out.display = (not out.display) if show is None else show
        self.query_one("#log").display = not out.display

    def add_output(self, text: str) -> None:
        """More of the script's stdout/stderr arrived (``glassgrad run``)."""
        if self.has_output and text:
            self.query_one("#output", Log).write(text)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_close(self) -> None:
        self.playing = False
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()

    def action_write_graph(self) -> None:
        try:
            path, note = write_step_graph(self.model, self.index, self.outdir)
        except (OSError, IndexError) as exc:     # IndexError: a trace with no events has no step to draw
            self.notify(f"Could not write the picture: {exc}", severity="error")
            return
        self.notify(f"Wrote {path}" + (f" ({note})" if note else ""), timeout=6)

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.value = self.query_text
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_text = event.value.strip()
        event.input.display = False
        self.query_one("#graph").focus()
        if self.query_text:
            self.action_search_next(1)

    def action_search_next(self, d: int) -> None:
        q = self.query_text.lower()
        if not q:
            self.notify("Press / to search first.", timeout=3)
            return
        n = len(self.model)
        i = self.index
        for _ in range(n):
            i = (i + d) % n
            e = self.model.events[i]
            if q in event_line(e).lower() or q == str(e.get("kind")):
                self.index = i
                return
        self.notify(f"No event matches {self.query_text!r}.", severity="warning", timeout=3)

    # ------------------------------------------------------------ messages from panels

    def on_graph_view_node_clicked(self, msg: GraphView.NodeClicked) -> None:
        self.selected = msg.node_id

    def on_event_log_event_clicked(self, msg: EventLog.EventClicked) -> None:
        self.index = msg.index

    # ------------------------------------------------------------ streaming

    def add_events(self, events) -> None:
        """More events arrived (``glassgrad run``): fold them in and follow the newest one."""
        at_end = self.index >= len(self.model) - 1
        self.model.extend(events)
        self.grew(at_end)

    def grew(self, at_end: bool) -> None:
        """Events were folded into the model: the panels read it again, and the cursor follows the
        newest event when it was ``at_end`` of a followed run."""
        self.reload_panels()
        if self.follow and at_end:
            self.index = len(self.model) - 1
        else:
            self.query_one("#status", Static).update(self._status(), layout=False)

    def reload_panels(self) -> None:
        """The model grew: the panels that draw the whole trace read it again."""
        for sel in ("#graph", "#memory", "#log"):
            self.query_one(sel).reload()

    def set_title(self, text: str, finished: bool = False) -> None:
        self.title_text = text
        self.finished = self.finished or finished
        self.query_one("#status", Static).update(self._status(), layout=False)
