"""The event bus: engine code calls :func:`emit`; a recorder (``engine.record()``) collects.

NOTE [ Recording costs nothing when off ]
1. ``emit`` is only reached through ``if _events.active:`` guards at call sites that
   build costly fields, so with no recorder the engine pays one global read per site.
2. Events carry ``seq``, ``t`` (seconds since recording began) and ``phase``; the
   recorder stamps them, callers pass only the kind's own fields.
3. Tensors, storages and nodes are named by integer ids that are unique per process.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading

# the memory categories of a storage, in the order every view stacks them (docs/memory-model.md)
CATEGORIES = ("parameter", "gradient", "activation", "optimizer", "input", "other")

active = False          # True while at least one recorder listens
_recorders: list = []
_lock = threading.Lock()
_phase = threading.local()
_region = threading.local()

_ids = itertools.count(1)
new_id = _ids.__next__

_ENGINE_DIR = os.path.dirname(os.path.abspath(__file__))


def phase() -> str:
    return getattr(_phase, "value", "forward")


class phase_scope:
    """Set the phase (forward/backward/recompute/optimizer) for events inside the block."""

    __slots__ = ("value", "old")

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = phase()
        _phase.value = self.value

    def __exit__(self, *exc):
        _phase.value = self.old


def region() -> int | None:
    """Id of the checkpoint region the current op runs in, if any."""
    return getattr(_region, "value", None)


def set_region(value):
    old = region()
    _region.value = value
    return old


def emit(kind: str, **fields) -> None:
    for rec in _recorders:
        rec._append(kind, fields)


def add_recorder(rec) -> None:
    global active
    with _lock:
        _recorders.append(rec)
        active = True


def remove_recorder(rec) -> None:
    global active
    with _lock:
        if rec in _recorders:
            _recorders.remove(rec)
        active = bool(_recorders)


def user_frame():
    """(file, line) of the innermost frame outside the engine package."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_ENGINE_DIR):
        f = f.f_back
    if f is None:
        return None, None
    return f.f_code.co_filename, f.f_lineno
