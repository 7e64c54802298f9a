"""The event bus: engine code calls :func:`emit`; a recorder (``engine.record()``) collects.

NOTE [ Recording costs nothing when off ]
1. ``emit`` is only reached through ``if _events.active:`` guards at call sites that
   build costly fields, so with no recorder the engine pays one global read per site.
2. Events carry ``seq``, ``t`` (seconds since recording began) and ``phase``; the
   recorder stamps them, callers pass only the kind's own fields.
3. Tensors, storages and nodes are named by integer ids that are unique per process.

NOTE [ A recorder records its own thread ]
1. ``add_recorder`` notes the thread that starts the recorder; ``emit`` hands an event
   only to the recorders of the thread it runs in, so two threads recording at once
   each get their own events and never the other's.
2. An event emitted in a thread with no recorder of its own (a worker thread, a
   storage freed there) reaches no recorder.
3. ``_recorders`` is replaced, never mutated, so ``emit`` can walk it without the lock.

NOTE [ Module paths ]
1. While recording, ``nn.Module.__call__`` pushes the module's path in its outermost
   holder (``"blocks.0.attn"``; ``""`` for the outermost module itself) on this thread's
   stack and pops it when its forward returns or raises.
2. Every ``op`` event carries ``module``: the innermost path then, or None outside any
   module. Ops of a functional call inside a module's forward belong to that module.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading

# the memory categories of a storage, in the order every view stacks them (docs/memory-model.md)
CATEGORIES = ("parameter", "gradient", "activation", "optimizer", "input", "other")

active = False          # True while at least one recorder listens
_recorders: tuple = ()  # (recorder, thread ident) pairs (NOTE [ A recorder records its own thread ])
_lock = threading.Lock()
_phase = threading.local()
_region = threading.local()
_modules = threading.local()

_get_ident = threading.get_ident
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


def module() -> str | None:
    """Path of the innermost ``nn.Module`` being called in this thread (NOTE [ Module paths ])."""
    stack = getattr(_modules, "stack", None)
    return stack[-1] if stack else None


def enter_module(path: str) -> None:
    stack = getattr(_modules, "stack", None)
    if stack is None:
        stack = _modules.stack = []
    stack.append(path)


def exit_module() -> None:
    stack = getattr(_modules, "stack", None)
    if stack:
        stack.pop()


def emit(kind: str, **fields) -> None:
    me = _get_ident()
    if kind == "op" and "module" not in fields:           # NOTE [ Module paths ] rule 2
        stack = getattr(_modules, "stack", None)
        fields["module"] = stack[-1] if stack else None
    for rec, owner in _recorders:
        if owner == me:                                   # rule 1
            rec._append(kind, fields)


def add_recorder(rec) -> None:
    """Start sending ``rec`` the events of the calling thread (rule 1)."""
    global active, _recorders
    with _lock:
        _recorders = _recorders + ((rec, _get_ident()),)  # rule 3
        active = True


def remove_recorder(rec) -> None:
    global active, _recorders
    with _lock:
        _recorders = tuple(p for p in _recorders if p[0] is not rec)
        active = bool(_recorders)


def user_frame():
    """(file, line) of the innermost frame outside the engine package."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_ENGINE_DIR):
        f = f.f_back
    if f is None:
        return None, None
    return f.f_code.co_filename, f.f_lineno
