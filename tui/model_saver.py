"""The folded model saved beside a trace's new index without stalling the app (NOTE [ A saved
model ] rule 4 in replay/model_cache.py): read a slice at a time on the app's timer, written on
a thread, finished at once if the app quits first."""
from __future__ import annotations

import threading
import time

from replay import model_cache

BUDGET = 0.006      # seconds of reading the model in a tick
TICK = 0.02


class ModelSaver:
    """Saves ``model`` beside its index ``idx``; ``done`` once the file is written (or was not)."""

    def __init__(self, app, model, idx) -> None:
        self.done, self.written, self._thread = False, None, None
        path = model_cache.path_of(idx)
        if path is None:
            self.done = True
            return
        self._steps = model_cache.save_steps(model, path, write=self._write)
        self._timer = app.set_interval(TICK, self._tick)

    def _write(self, path, header, arrays) -> bool:
        self._thread = threading.Thread(target=self._write_now, args=(path, header, arrays), daemon=True)
        self._thread.start()
        return True

    def _write_now(self, path, header, arrays) -> None:
        self.written = model_cache.write_npz(path, header, arrays)
        self.done = True

    def _tick(self) -> None:
        t0 = time.perf_counter()
        while self._step() and time.perf_counter() - t0 < BUDGET:      # one slice at least
            pass

    def _step(self) -> bool:
        """One slice; False once the reading is over (the file is then being written, or was not)."""
        if self._steps is None:
            return False
        try:
            next(self._steps)
            return True
        except StopIteration as end:
            self._steps = None
            self._timer.stop()
            if not end.value:               # not written: a model the arrays cannot hold
                self.written, self.done = False, True
            return False

    def finish_now(self) -> None:
        """Read the rest and write the file before returning (the app is quitting)."""
        if not self.done:
            while self._step():
                pass
        if self._thread is not None:
            self._thread.join()
