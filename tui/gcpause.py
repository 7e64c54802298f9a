"""Loading a big trace makes ~100k dicts at once; the cyclic GC would rescan them many times over.
Stepping through one leaves textual's cyclic garbage behind: NOTE [ GC between keys ] below.

NOTE [ GC while loading ]
1. ``paused_gc()`` turns the cyclic collector off while a trace is read and its
   model built (reference counting still frees everything as usual).
2. The real app then calls ``gc.freeze()`` (``freeze=True``) so the loaded
   events, which live as long as the app, are left out of later collections.
   `glassgrad view` makes an opened trace's model inside that block too (the model
   is kept on the trace, ``trace.model``), so a million-event model is never
   scanned by a collection. Tests never freeze: a frozen cycle would never be
   collected in their process.
3. A model that grows while the app runs is kept out the same way: a first open turns
   the collector off until the file is read (NOTE [ A first open ] rule 7), and
   `glassgrad run` freezes what it folded in after each batch it follows.
"""
from __future__ import annotations

import gc
import time
from contextlib import contextmanager


@contextmanager
def paused_gc(freeze: bool = False):
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


# NOTE [ GC between keys ]
# A step allocates thousands of objects; what lives a few frames (a panel's cached lines) reaches
# the oldest generation, and a full collection, scanning everything not frozen, came every ~8
# steps and took 5-60 ms inside a key's handling (textual's strips also held themselves in a
# cycle, ~2,000 objects a step, until NOTE [ Strips without a cycle ] in tui/strip_cycles.py).
#   1. While the app runs, the collector's automatic full collections are off (the oldest
#      generation's threshold is out of reach); the young generations collect as usual (under
#      1.5 ms). The threshold is put back when the app ends.
#   2. A timer looks every ``EVERY`` seconds: when something reached the oldest generation since
#      the last full collection and no key or mouse event came for ``QUIET`` seconds, it collects
#      all generations. While keys keep coming (a held arrow key, playing), it collects once
#      ``FORCE`` young collections piled up, as Python's own rhythm would, but between two keys.
#   3. It never collects while the collector is off (``paused_gc``, a first open reading its file):
#      that would scan the half-loaded model the pause keeps out of reach.
#   4. Only the real app that shows one trace for its whole life does any of this (`glassgrad
#      view`, `glassgrad run`: ``GlassgradApp(freeze=True)`` on a trace); tests, and the home
#      screen that opens traces one after another (whose models are not frozen), keep Python's
#      own rhythm. It also freezes what survives its first full collection (the screen's widgets,
#      styles and what the first screen worked out): they live as long as the app, so later full
#      collections scan only what came after (rule 2 of NOTE [ GC while loading ]). What of it
#      dies later in a cycle (a screen's worth of cached lines) is never freed: a bounded cost, once.

class GCBetweenKeys:
    """Rules 1-4 of NOTE [ GC between keys ] for one app: ``start(app)`` on mount, ``stop()`` on unmount,
    ``input()`` on each key or mouse event."""

    EVERY = 0.1
    QUIET = 0.1
    FORCE = 10
    OFF = 1 << 30          # rule 1: a threshold the oldest generation never reaches

    def __init__(self, on: bool = True, freeze: bool = False) -> None:
        self.on = on
        self.freeze = freeze
        self._freeze_next = freeze
        self._last_input = 0.0
        self._threshold = None
        self._timer = None
        self.collections = 0       # full collections it made (for tests and the bench)

    def start(self, app) -> None:
        if not self.on:
            return
        self._threshold = gc.get_threshold()
        gc.set_threshold(self._threshold[0], self._threshold[1], self.OFF)
        self._timer = app.set_interval(self.EVERY, self.tick, name="gc between keys")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._threshold is not None:
            gc.set_threshold(*self._threshold)
            self._threshold = None

    def input(self) -> None:
        self._last_input = time.monotonic()

    def due(self) -> bool:
        """Rules 2-3: a full collection now?"""
        piled = gc.get_count()[2]
        if not piled or not gc.isenabled():
            return False
        return piled >= self.FORCE or time.monotonic() - self._last_input >= self.QUIET

    def tick(self) -> None:
        if self.due():
            self.collect()

    def collect(self) -> None:
        gc.collect()
        self.collections += 1
        if self._freeze_next:
            self._freeze_next = False
            gc.freeze()
