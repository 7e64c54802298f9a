"""GlassgradApp: the Textual application (home screen, lessons, traces, live runs)."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import tempfile
import threading
import time
from collections import deque

from textual import events
from textual.app import App

from engine.trace_index import LineTail
from replay.index import settle
from replay.model import TraceModel

from . import first_open, strip_cycles
from .first_open import SHOW_EVERY, budget, fold_head
from .gcpause import GCBetweenKeys, paused_gc
from .home_screen import HomeScreen
from .lifetimes_work import long_switch
from .model_saver import ModelSaver
from .record_worker import command
from .trace_screen import TraceScreen

strip_cycles.patch()           # NOTE [ Strips without a cycle ] in tui/strip_cycles.py

FOLLOW_PIECE = 128 * 1024      # bytes of a followed run read at a time (NOTE [ A followed run ] rule 1)
FOLLOW_QUEUE = 4               # pieces parsed and not yet folded in, at most


class GlassgradApp(App):
    CSS_PATH = "glassgrad.tcss"
    TITLE = "glassgrad"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, start: str = "home", *, lesson=None, lesson_run=None, trace=None, title: str | None = None,
                 script: str | None = None, out: str | None = None, recent: list | None = None,
                 lessons: list | None = None, first_screen=None, freeze: bool = False) -> None:
        super().__init__()
        self.first_screen = first_screen    # start="screen": a screen of its own (glassgrad plan, glassgrad diff)
        self.freeze = freeze                # freeze what a first open loaded out of later collections (tui/gcpause.py)
        self.start = start
        self.lesson_key = lesson
        self.lesson_run = lesson_run
        self.trace = trace
        self.trace_title = title
        self.script = script
        self.out = out
        self.recent = recent
        self.lessons_list = lessons
        self._pending: deque = deque()
        self._proc = None
        self._saved = None                  # the run's saved trace, opened through its index
        self._shown_len, self._next_show = 0, 0.0    # events the panels last showed, and when next
        self._closed = False
        self.first_open = None              # a big trace being read (NOTE [ A first open ] in tui/first_open.py)
        self.saver = None                   # a settled model being saved beside its index (tui/model_saver.py)
        self.last_input = float("-inf")     # when the last key or mouse event came (time.monotonic)
        one = freeze and start in ("trace", "first_open", "run")     # the real app, one trace for its life
        self.gc_between_keys = GCBetweenKeys(one, one)               # NOTE [ GC between keys ] in tui/gcpause.py

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self.gc_between_keys.input()
            self.last_input = time.monotonic()      # NOTE [ A first open ] rule 1: folding gives way
        await super().on_event(event)

    def on_mount(self) -> None:
        self.gc_between_keys.start(self)
        if self.start == "home":
            import lessons

            from . import recent

            ls = self.lessons_list if self.lessons_list is not None else lessons.all_lessons()
            rc = self.recent if self.recent is not None else recent.load()
            self.push_screen(HomeScreen(ls, rc))
        elif self.start == "lesson":
            if self.lesson_run is not None:
                self._push_lesson(self.lesson_run)
            else:
                self.open_lesson(self.lesson_key)
        elif self.start == "first_open":
            self.open_trace(self.trace, self.trace_title)
        elif self.start == "trace":
            with paused_gc():
                model = TraceModel.from_trace(self.trace)
            self.push_screen(TraceScreen(model, title=self.trace_title or "trace"))
        elif self.start == "run":
            self._start_run()
        elif self.start == "screen":
            self.push_screen(self.first_screen)

    # ------------------------------------------------------------ opening things

    def open_lesson(self, key) -> None:
        import lessons
        from lessons import _runner

        self._push_lesson(_runner.run(lessons.get(key)))

    def _push_lesson(self, lr) -> None:
        L = lr.lesson
        self.push_screen(TraceScreen(TraceModel.from_trace(lr.trace), title=f"Lesson {L.number} · {L.title}",
                                     lesson_run=lr))

    def open_trace(self, path: str, title: str | None = None) -> None:
        from engine.trace import Trace

        if first_open.wanted(path):          # NOTE [ A first open ]
            try:
                self.first_open = first_open.FirstOpen(self, path, title, freeze=self.freeze)
            except Exception as exc:  # noqa: BLE001 - a file that cannot be read: say why, stay
                self.notify(f"Cannot open {path}: {exc}", severity="error")
                return
            self.first_open.start()
            return
        try:
            with paused_gc():
                tr = Trace.open(path)      # through its index (NOTE [ Trace index ])
                model = TraceModel.from_trace(tr)
        except Exception as exc:
            self.notify(f"Cannot open {path}: {exc}", severity="error")
            return
        self.push_screen(TraceScreen(model, title=os.path.basename(path)))

    # ------------------------------------------------------------ glassgrad run

    def _start_run(self) -> None:
        out = self.out or os.path.join(tempfile.mkdtemp(prefix="glassgrad-"), "run.jsonl")
        self.out = out
        part = out + ".part"
        self.screen_run = TraceScreen(TraceModel.followed(part), title=f"run {os.path.basename(self.script)}",
                                      follow=True, output=True)
        self.push_screen(self.screen_run)
        self._log = open(out + ".log", "w", encoding="utf-8")
        self._log_reader = open(out + ".log", encoding="utf-8", errors="replace")
        argv, env = command(self.script, out)
        self._proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      cwd=os.getcwd(), env=env)
        threading.Thread(target=self._tail, args=(part,), daemon=True).start()
        self._drain_timer = self.set_interval(0.05, self._drain)

    def _tail(self, part: str) -> None:
        """Reader thread: follow the worker's streaming file and queue the events of its complete
        lines with their offsets (NOTE [ A followed run ] in replay/index.py); at the end, the saved
        trace opened through its index (or None), then None."""
        from engine.trace import Trace

        tail = LineTail(part, piece=FOLLOW_PIECE)
        long_switch(True)               # as a first open's reader (NOTE [ A first open ] rule 8)
        try:
            while True:
                if len(self._pending) >= FOLLOW_QUEUE:      # the app folds what is read before more is parsed
                    if self._closed:
                        break
                    time.sleep(0.02)
                    continue
                done = self._proc.poll() is not None
                lines = tail.read()
                if lines:
                    self._pending.append(lines)
                    time.sleep(0)                       # the app's thread takes the interpreter here
                    continue
                if done:        # it ended before this read: the file is read (a line left incomplete never ends)
                    break
                time.sleep(0.05)
        finally:
            long_switch(False)
        tail.close()
        while self._pending and not self._closed:     # everything read is folded in before the saved trace opens
            time.sleep(0.02)
        saved = None
        if self._proc.returncode is not None and os.path.exists(self.out):
            try:
                saved = Trace.open(self.out)      # as glassgrad view opens it (NOTE [ Trace index ])
            except Exception:  # noqa: BLE001 - a trace that cannot be opened: the followed events stay
                saved = None
        self._pending.append(("saved", saved))
        self._pending.append(None)  # end of run

    def _read_output(self) -> None:
        text = self._log_reader.read()
        if text:
            self.screen_run.add_output(text)

    def _drain(self) -> None:
        """Fold in what the reader queued, a chunk at a time for at most ``budget`` seconds, so keys
        are answered while a fast run streams, and let the panels catch up at most every SHOW_EVERY
        seconds (NOTE [ A first open ] rules 1 and 3 in tui/first_open.py)."""
        self._read_output()
        s = self.screen_run
        at_end = s.index >= self._shown_len - 1       # on the newest event the learner has seen
        t0 = time.perf_counter()
        grew = False
        secs, size = budget(self)
        while self._pending:                    # a chunk at least, then while the budget lasts
            head = self._pending[0]
            if head is None:
                self._pending.popleft()
                if grew or self._shown_len != len(s.model):
                    s.grew(at_end)
                self._finish_run(self._saved)
                return
            if type(head) is tuple:
                self._saved = self._pending.popleft()[1]
                continue
            fold_head(s.model, self._pending, size)
            grew = True
            if time.perf_counter() - t0 >= secs:
                break
        if grew:
            if self.freeze:         # what is folded in lives as long as the app (NOTE [ GC while loading ] 3)
                gc.freeze()
            if t0 >= self._next_show:        # the panels catch up as a first open's do (rule 3 there)
                s.grew(at_end)
                self._shown_len = len(s.model)
                self._next_show = t0 + max(SHOW_EVERY, 4 * (time.perf_counter() - t0))

    def _finish_run(self, saved=None) -> None:
        rc = self._proc.returncode
        self._log.close()
        self._read_output()
        self._log_reader.close()
        model = self.screen_run.model
        if saved is None or not settle(model, saved):     # NOTE [ A followed run ] rule 4
            try:
                model.events.hold()
            except OSError:
                pass
        else:               # a later view of the run reads the folded model (NOTE [ A saved model ] rule 4)
            self.saver = ModelSaver(self, model, saved.index)
        try:
            os.remove(self.out + ".part")
        except OSError:
            pass
        name = os.path.basename(self.script)
        if rc == 0:
            from . import recent

            recent.remember(self.out)
            self.screen_run.set_title(f"run {name} (finished)", finished=True)
            self.notify(f"{name} finished: {len(self.screen_run.model)} events, trace in {self.out}", timeout=8)
        else:
            err = _read_error(self.out + ".error.json")
            s = self.screen_run
            if err is None:     # exited with a status of its own (sys.exit(3)) or was killed
                s.set_title(f"run {name} (failed, exit {rc})", finished=True)
                self.notify(f"{name} failed (exit {rc}): {_tail_lines(self.out + '.log', 3)}. "
                            "o: its output.", severity="error", timeout=15)
            else:
                where = f"{os.path.basename(err['file'])}:{err['line']}" if err.get("line") else name
                s.set_title(f"run {name} (failed: {err['type']} at {where})", finished=True)
                s.add_output("\n" + error_block(err, started=len(s.model) > 0))
                s.action_output(True)
                self.notify(f"{name} failed at {where}: {err['type']}: {err['message']}. "
                            "The Output panel (o) has the traceback.", severity="error", timeout=15)
                s.open_at_failure()           # NOTE [ A failed backward ] in replay/failure.py
        self._pending.clear()
        self._drain_timer.stop()

    def on_unmount(self) -> None:
        self._closed = True
        saver = self.saver or getattr(self.first_open, "saver", None)
        if saver is not None:
            saver.finish_now()
        self.gc_between_keys.stop()
        if self.first_open is not None:
            self.first_open.stop()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()


def _read_error(path: str) -> dict | None:
    """The worker's account of the script's error (NOTE [ The learner's traceback ]), if it raised."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def error_block(err: dict, started: bool = True) -> str:
    """The script's error for the Output panel: its file and line, the line itself, the error."""
    where = f"{err['file']}, line {err['line']}" if err.get("line") else err["file"]
    lines = [f"✗ {err['type']} in {where}"]
    if err.get("source"):
        lines.append(f"    {err['line']} | {err['source']}")
        if err.get("offset"):
            lines.append(" " * (4 + len(str(err["line"])) + 3 + err["offset"] - 1) + "^")
    lines.append(f"  {err['type']}: {err['message']}")
    if not started:
        lines.append("  The script did not start (it does not compile): no trace was written.")
    return "\n".join(lines) + "\n"


def _tail_lines(path: str, n: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return " / ".join(f.read().strip().splitlines()[-n:])
    except OSError:
        return ""
