"""Recording: ``with engine.record() as trace:`` collects every event the engine emits."""
from __future__ import annotations

import json
import threading
import time

from . import _events

FORMAT = "glassgrad-trace"
VERSION = 1


class Trace:
    """A list of events (dicts) with ``seq``, ``t``, ``phase``, ``kind`` and the kind's fields."""

    def __init__(self, events=None, meta=None):
        self.events: list = list(events or [])
        self.meta: dict = dict(meta or {})
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    def __getitem__(self, i):
        return self.events[i]

    def _append(self, kind, fields):
        with self._lock:
            ev = {"seq": len(self.events), "t": round(time.perf_counter() - self._t0, 9),
                  "phase": _events.phase(), "kind": kind}
            ev.update(fields)
            self.events.append(ev)

    def mark(self, text: str, **fields) -> None:
        """Add a free-form lesson mark."""
        self._append("mark", {"text": text, **fields})

    def of_kind(self, *kinds) -> list:
        return [e for e in self.events if e["kind"] in kinds]

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps({"format": FORMAT, "version": VERSION, "meta": self.meta}) + "\n")
            for e in self.events:
                f.write(json.dumps(e) + "\n")

    @classmethod
    def load(cls, path) -> "Trace":
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        header = json.loads(lines[0])
        return cls([json.loads(line) for line in lines[1:] if line.strip()], header.get("meta"))


class record:
    """Context manager: ``with engine.record() as trace:`` records events into ``trace``."""

    def __init__(self, trace: Trace | None = None, **meta):
        self.trace = trace if trace is not None else Trace(meta=meta)

    def __enter__(self) -> Trace:
        _events.add_recorder(self.trace)
        return self.trace

    def __exit__(self, *exc):
        _events.remove_recorder(self.trace)
