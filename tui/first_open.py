"""The first open of a big trace: its start on screen at once, the rest folded in as it is read.

NOTE [ A first open ]
1. A trace of :data:`BIG` bytes or more with no saved index (``has_index``, NOTE [ Trace index ]
   in engine/trace_index.py) is opened by :class:`FirstOpen`: the screen starts on an empty
   followed model (NOTE [ A followed run ] in replay/index.py) and a reader thread builds the
   index as any open does, handing each piece's events on once they passed every check
   (rule 9 there). The app folds them in on its own thread, :data:`CHUNK` events at a time
   and at most :data:`FOLD_BUDGET` seconds a tick, so keys and the mouse are answered while
   the rest is read. A key waits for the tick it arrives in: while the learner uses the keys
   or the mouse (an input in the last :data:`ACTIVE` second), a tick folds
   :data:`BUSY_CHUNK` events at a time for at most :data:`BUSY_BUDGET` seconds, so a held
   arrow key steps at its own pace and the reading goes on slower (``budget``). A piece
   whose text the build found plain skips the text check (NOTE [ Text from a trace ] rule 5).
2. The reader stays at most :data:`QUEUE` pieces ahead of the fold: parsed events waiting
   to be folded in stay few, and memory grows as the model does, not as the file does.
3. The title says how far it has read (after a second, how long the rest should take at
   the pace so far); the cursor stays where the learner put it (the
   start, unless they moved), never jumping to the newest event as a run does. The panels
   that draw the whole trace (graph, memory chart, event log) catch up at most every
   :data:`SHOW_EVERY` seconds, and never spend more than a fifth of the time: redrawing
   them costs more the longer the trace grows.
4. When the whole file is read and folded, ``settle`` points the model at the trace opened
   through its new index, and the folded model is saved beside it, a slice at a time
   (NOTE [ A saved model ] rule 4 in replay/model_cache.py): the next open of the file is an
   ordinary fast one.
5. A problem found later in the file (a damaged or truncated line) ends the reading: the
   error is shown, the title says only the first N events are shown, and those stay
   browsable (each passed its checks). Nothing is saved beside the trace.
6. Leaving the screen or the app stops the reader at its next piece.
7. The cyclic garbage collector is off while the file is read (NOTE [ GC while loading ] in
   tui/gcpause.py): a full collection over a model of a million events stalls a key for
   hundreds of milliseconds. When the reading ends it is on again, the model frozen out of
   later collections first when the app asks (``freeze``, as `glassgrad view` does).
8. The reader leaves the interpreter to the app's thread as the lifetimes' thread does
   (NOTE [ Lifetimes on a thread ] rule 6 in tui/lifetimes_work.py): it reads :data:`PIECE`
   bytes a piece and pauses after each (about 15 ms of its work), under the long switch
   interval, so a step no longer waits 5 ms for the interpreter each time NumPy gives it up.
   On a million events the longest step while reading went from 24-26 ms to 13-15 ms, the
   first screen from 0.29-0.33 s to 0.21-0.25 s (a smaller first piece), the whole read the
   same (29 s). (These pieces once seemed to delay the first screen: the bench then waited
   for the app to go idle, which a busier reader put off; it now times the first frame drawn
   with the trace's events.)
"""
from __future__ import annotations

import gc
import os
import threading
import time
from collections import deque

from engine.trace import Trace
from engine.trace_head import has_index, read_head
from engine.trace_index import Lines
from replay.index import settle
from replay.model import TraceModel

from .gcpause import paused_gc
from .lifetimes_work import long_switch
from .model_saver import ModelSaver
from .trace_screen import TraceScreen

BIG = 8 << 20          # rule 1: bytes from which a trace without an index is opened this way
QUEUE = 3              # rule 2: pieces read and not yet folded in, at most
PIECE = 128 * 1024     # rule 8: bytes the reader reads and checks before it pauses
FOLD_BUDGET = 0.03     # rule 1: seconds of folding in a tick
CHUNK = 500            # rule 1: events folded in at a time
BUSY_BUDGET = 0.005    # rule 1: the same while the learner uses the keys or the mouse
BUSY_CHUNK = 100
ACTIVE = 1.0           # rule 1: seconds after a key or mouse event that the learner counts as using them
SHOW_EVERY = 0.5       # rule 3: seconds between redraws of the whole-trace panels while reading
TICK = 0.04


def budget(app) -> tuple:
    """Rule 1: (seconds of folding, events a chunk) for this tick: less of both while the
    learner has used the keys or the mouse in the last :data:`ACTIVE` seconds."""
    if time.monotonic() - getattr(app, "last_input", float("-inf")) < ACTIVE:
        return BUSY_BUDGET, BUSY_CHUNK
    return FOLD_BUDGET, CHUNK


def fold_head(model, queue, size: int = CHUNK) -> None:
    """Fold into ``model`` the first ``size`` events of the piece (``Lines``) at the head of
    ``queue``, leaving the rest of it there (rule 1; `glassgrad run` folds the same way)."""
    lines = queue[0]
    chunk = lines if len(lines) <= size else Lines(lines[:size], lines.start, lines.ends[:size])
    with paused_gc():
        model.extend(chunk, len(chunk) if lines.plain else 0)
    if chunk is lines:
        queue.popleft()
    else:
        queue[0] = Lines(lines[size:], lines.ends[size - 1], lines.ends[size:], lines.plain)


class _Stopped(Exception):
    """The screen or the app went away while the trace was being read (rule 6)."""


def wanted(path: str) -> bool:
    """Whether ``path`` is opened as a first open (rule 1)."""
    try:
        return os.path.getsize(path) >= BIG and not has_index(path)
    except OSError:
        return False


class FirstOpen:
    """One first open: its screen, its reader thread, and the app's timer that folds pieces in.
    TraceFormatError at once when the file's header is not a trace's."""

    def __init__(self, app, path: str, title: str | None = None, freeze: bool = False):
        self.app, self.path, self.freeze = app, path, freeze
        self.name = title or os.path.basename(path)
        self.size = os.path.getsize(path)
        self._started = None              # when the reading began (rule 3's estimate)
        meta, _ = read_head(path)
        self.model = TraceModel.followed(path, meta)
        self.screen = TraceScreen(self.model, title=self._title(0))
        self.error = None                 # rule 5
        self.done = False
        self.saver = None                 # rule 4: the settled model being saved
        self._pending: deque = deque()
        self._read_bytes = 0
        self._stop = False
        self._timer = None
        self._shown = None                # when the panels last caught up (rule 3)
        self._next_show = 0.0
        self._gc = None                   # rule 7: whether the collector was on before

    def _title(self, done: int) -> str:
        """Rule 3: how far it has read, and after a second how long the rest should take at this pace."""
        pct = 100 * done // max(1, self.size)
        spent = time.perf_counter() - self._started if self._started is not None else 0.0
        if spent < 1.0 or done <= 0 or done >= self.size:
            return f"{self.name} (first open: read {pct}%)"
        left = spent * (self.size - done) / done
        return f"{self.name} (first open: read {pct}%, about {max(1, round(left))} s left)"

    # ------------------------------------------------------------ the reader thread (rules 1-2)

    def start(self) -> None:
        self._started = time.perf_counter()
        self._gc = gc.isenabled()
        gc.disable()
        self.app.push_screen(self.screen)
        threading.Thread(target=self._read, daemon=True).start()
        self._timer = self.app.set_interval(TICK, self._tick)

    def stop(self) -> None:
        self._stop = True
        self._gc_back()

    def _gc_back(self) -> None:
        """Rule 7."""
        if self._gc is None:
            return
        if self.freeze:
            gc.freeze()
        if self._gc:
            gc.enable()
        self._gc = None

    def _piece(self, lines) -> None:
        while len(self._pending) >= QUEUE:
            if self._stop:
                raise _Stopped
            time.sleep(0.01)
        if self._stop:
            raise _Stopped
        self._pending.append(lines)
        time.sleep(0)                           # rule 8: the app's thread takes the interpreter here

    def _progress(self, done: int, size: int) -> None:
        self._read_bytes = done

    def _read(self) -> None:
        long_switch(True)                       # rule 8
        try:
            tr = Trace.open(self.path, progress=self._progress, pieces=self._piece, piece=PIECE)
        except _Stopped:
            return
        except Exception as exc:  # noqa: BLE001 - a damaged file: say so, keep what was read (rule 5)
            self._pending.append(("error", exc))
            return
        finally:
            long_switch(False)
        self._pending.append(("trace", tr))

    # ------------------------------------------------------------ the app's side (rules 1, 3-5)

    def _tick(self) -> None:
        if self._stop or not self.screen.is_attached:
            self.stop()
            self._timer.stop()
            return
        t0 = time.perf_counter()
        grew = False
        secs, size = budget(self.app)
        while self._pending:                    # a chunk at least, then while the budget lasts
            item = self._pending[0]
            if type(item) is tuple:
                self._pending.popleft()
                self._show()
                self._finish(*item)
                return
            fold_head(self.model, self._pending, size)
            grew = True
            if time.perf_counter() - t0 >= secs:
                break
        if grew and (self._shown is None or t0 >= self._next_show):
            self._show()

    def _show(self) -> None:
        """The panels and the title catch up with what is folded in (at most every SHOW_EVERY s)."""
        first = self._shown is None
        t0 = self._shown = time.perf_counter()
        s = self.screen
        s.reload_panels()
        if first:
            s._push_index()           # the panels learn that event 0 exists
            s.query_one("#inspector").watch_index()     # its index was 0 already: describe event 0 now
        if not self.done:
            s.set_title(self._title(self._read_bytes))
        self._next_show = t0 + max(SHOW_EVERY, 4 * (time.perf_counter() - t0))

    def _finish(self, what: str, value) -> None:
        self.done = True
        self._timer.stop()
        self._gc_back()
        s = self.screen
        if what == "trace":
            if settle(self.model, value):
                self.saver = ModelSaver(self.app, self.model, value.index)     # NOTE [ A saved model ] rule 4
            s.set_title(self.name, finished=True)
            self.app.notify(f"{self.name}: {len(self.model):,} events read and indexed; "
                            "later opens read the index", timeout=6)
            return
        self.error = value
        s.set_title(f"{self.name} (damaged: only its first {len(self.model):,} events are shown)", finished=True)
        self.app.notify(f"Cannot read all of {self.name}: {value}", severity="error", timeout=20)
