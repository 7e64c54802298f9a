"""Memory accounting's share of a training step, not recording (NOTE [ Program benchmark ] rule 4)."""
from __future__ import annotations

import contextlib
import gc
import time


@contextlib.contextmanager
def no_accounting():
    """Storages made inside skip the memory accounting for their whole life: ``on_alloc`` marks
    them freed, so their free and category moves skip it too. For measuring only: the counters
    miss those storages."""
    from engine.memory import state
    real = state.on_alloc

    def skip(st):
        st.freed = True
    state.on_alloc = skip
    try:
        yield
    finally:
        state.on_alloc = real


def switch_works() -> bool:
    """Whether the core still reaches the accounting through ``engine.memory.state.on_alloc``."""
    import engine
    with no_accounting():
        t = engine.ones(3)
    return t._storage.freed


def calls_per_step(step, steps: int = 10) -> tuple:
    """(storages made, category moves) per ``step()``, counted at the accounting's entry points."""
    from engine.memory import state
    counts = [0, 0]
    real_alloc, real_move = state.on_alloc, state.on_move

    def alloc(st):
        counts[0] += 1
        real_alloc(st)

    def move(st, old, new):
        counts[1] += 1
        real_move(st, old, new)
    state.on_alloc, state.on_move = alloc, move
    try:
        for _ in range(steps):
            step()
    finally:
        state.on_alloc, state.on_move = real_alloc, real_move
    return counts[0] / steps, counts[1] / steps


class _Stand:
    """A stand-in storage with the fields the accounting reads."""

    __slots__ = ("base", "device", "id", "nbytes", "saved")

    def __init__(self, sid, device):
        self.id, self.device, self.base, self.saved, self.nbytes = sid, device, "other", 0, 64


def cost_per_storage(reps: int = 7, n: int = 8192) -> tuple:
    """Seconds of accounting per storage (its alloc and its free) and per category move, each the
    fastest of ``reps`` runs over ``n`` stand-ins; the deferred replays they trigger are included."""
    from engine import events
    from engine.backend.device import CPU
    from engine.memory import state
    stands = [_Stand(events.new_id(), CPU) for _ in range(n)]
    best_pair = best_move = float("inf")
    for _ in range(reps):
        gc.disable()
        try:
            t0 = time.perf_counter()
            for s in stands:
                state.on_alloc(s)
                state.on_free(s)
            t1 = time.perf_counter()
            for s in stands:
                state.on_move(s, "other", "activation")
                state.on_move(s, "activation", "other")
            t2 = time.perf_counter()
        finally:
            gc.enable()
        best_pair = min(best_pair, (t1 - t0) / n)
        best_move = min(best_move, (t2 - t1) / (2 * n))
    return best_pair, best_move
