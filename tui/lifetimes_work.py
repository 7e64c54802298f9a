"""The storages' lifetimes of a big trace, worked out on a thread while the app stays live.

NOTE [ Lifetimes on a thread ]
1. Below :data:`ON_THREAD` events the lifetimes are worked out when first asked for, at
   once (a lesson's trace: milliseconds). From it on, asking starts a thread and gets None
   until the answer is ready; the lifetimes and holders views say how far it has got, and
   the app answers keys meanwhile (a million-event trace: a few seconds).
2. The thread reads the events through a reader of its own (``events.reader()``: its own
   file descriptor and cache), never the one the panels read, and the trace's index columns,
   which nothing changes (NOTE [ A pass over some kinds ] in replay/event_stream.py).
3. A model that grows (a followed run, a first open) is worked out for the events it had
   when the thread started; asked again after more arrived, the last answer is given while
   a new thread works out the longer one.
4. When an answer is ready, ``on_ready`` is called on the app's thread.
5. The thread also makes the answer's spans (NOTE [ Lifetime spans ] in replay/spans.py), so
   the first bands and holders the views ask of it cost milliseconds, not a pass over every
   lifetime on the app's thread (a tenth of a second at a million events).
6. The thread leaves the GIL to the app's thread: a key waits for the thread's next pause,
   not for Python's turn. Python takes the GIL from a running thread every switch interval
   (5 ms) for any other that waits, so a key handled while the thread ran lost the GIL to it
   every 5 ms, and waited for it again after each wait for input. So while a thread runs:
   a. the switch interval is :data:`SWITCH` (50 ms; Python's own again when the last thread
      ends, before the spans, which pause nowhere): the thread does not take the GIL from a
      key being handled;
   b. the thread gives the GIL up itself (``time.sleep(0)``) at each ``progress`` call of
      ``lifetimes``: every ``PROGRESS_EVERY`` (256) events of its pass and lifetimes of its
      last loop, about a millisecond apart, so a key, or the input thread, waits at most
      that long to start.
   Either alone was not enough, in the same measurement: pauses every 1,024 events under the
   5 ms interval left a 10 ms key 30 ms of wall time at the median (36 ms before), the long
   interval with a pause every 1,024 events 14 ms (22 ms before). Measured on
   a million-event trace, 10 ms of work on the app's thread every 40 ms while the thread ran
   (two shared cores): a key took 18-19 ms of wall time at the median, 27-29 ms at the 90th
   percentile and up to 133 ms before; 10.0 ms, 14-15 ms and 25-33 ms after. The thread alone
   took 3.5 s before and 3.9 s after (a pause yields the core too).
"""
from __future__ import annotations

import sys
import threading
import time
from types import SimpleNamespace

from replay.lifetimes import lifetimes

ON_THREAD = 50_000
SWITCH = 0.05           # rule 6a: seconds, the switch interval while a thread runs

_threads = {"running": 0, "interval": None}     # rule 6a: how many run, and the interval to put back
_lock = threading.Lock()


def long_switch(on: bool) -> None:
    """Rule 6a: the long switch interval while any thread runs, Python's own again after the last."""
    with _lock:
        if on:
            if _threads["running"] == 0:
                _threads["interval"] = sys.getswitchinterval()
                sys.setswitchinterval(max(SWITCH, _threads["interval"]))
            _threads["running"] += 1
        elif _threads["running"] > 0:
            _threads["running"] -= 1
            if _threads["running"] == 0:
                sys.setswitchinterval(_threads["interval"])


class LifetimesWork:
    """The lifetimes of one model, as ready as they are (rules 1-4)."""

    def __init__(self, model, call_soon, on_ready):
        self.model = model
        self.call_soon = call_soon          # runs a function on the app's thread (App.call_from_thread)
        self.on_ready = on_ready
        self.result, self.key = None, None  # the last answer, and the event count it is for
        self.busy_for = None                # the event count the running thread works out
        self.done, self.total = 0, 0        # its progress
        self.error = None                   # why the last thread could not work them out

    def get(self):
        """The lifetimes for the model as it is now, the last ones while newer are worked out, or None."""
        n = len(self.model.events)
        if n == self.key:
            return self.result
        if n < ON_THREAD:
            self.result, self.key = lifetimes(self.model), n
            return self.result
        if self.busy_for is None:
            self._start(n)
        return self.result

    @property
    def working(self) -> bool:
        return self.busy_for is not None

    def _start(self, n: int) -> None:
        m = self.model
        reader = m.events.reader() if hasattr(m.events, "reader") else list(m.events[:n])
        view = SimpleNamespace(events=reader, index=m.index if len(reader) == n else None, meta=m.meta)
        self.busy_for, self.done, self.total = n, 0, n
        long_switch(True)                                               # rule 6a
        threading.Thread(target=self._run, args=(view, n), daemon=True).start()

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, max(1, total)
        time.sleep(0)                                   # rule 6b: the GIL to whoever waits for it

    def _run(self, view, n: int) -> None:
        try:
            try:
                lts = lifetimes(view, progress=self._progress)
            finally:
                long_switch(False)              # rule 6a: the spans (a tenth of a second) pause nowhere
            lts.spans                                               # rule 5
        except Exception as exc:  # noqa: BLE001 - a trace that changed on disk: say so in the view
            self.call_soon(self._failed, exc)
            return
        finally:
            close = getattr(view.events, "close", None)
            if close is not None:
                close()
        self.call_soon(self._ready, lts, n)

    def _ready(self, lts, n: int) -> None:
        self.result, self.key, self.busy_for = lts, n, None
        self.on_ready()

    def _failed(self, exc) -> None:
        self.busy_for = None
        self.error = exc
        self.on_ready()

    def status(self) -> str:
        """What the views say while there is no answer yet (rule 1)."""
        if self.error is not None:
            return f"The storages' lifetimes could not be worked out: {self.error}"
        pct = 100 * self.done // max(1, self.total)
        return (f"Working out the storages' lifetimes over {self.busy_for or 0:,} events… {pct}% "
                "(the other panels work meanwhile)")
