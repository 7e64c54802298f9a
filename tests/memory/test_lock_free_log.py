"""NOTE [ Deferred counters ] 5 and NOTE [ Deferred allocator model ] 5: outside a trace storages log
their allocs, frees and category moves without a lock, and no entry is lost when threads append
while another thread replays."""
from __future__ import annotations

import sys
import threading

import engine
from engine.memory import allocator as _allocator
from engine.memory import state


def test_appends_from_threads_during_replays_are_all_applied(monkeypatch):
    monkeypatch.setattr(state, "PENDING_LIMIT", 64)             # replays all the time
    monkeypatch.setattr(_allocator.hook, "LOG_LIMIT", 64)
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)                                   # threads switch between any two bytecodes
    before = engine.memory.memory_stats("cpu")
    per_thread, rounds, width = 4, 300, 5
    stop = threading.Event()

    def work(k):
        keep = []
        for i in range(rounds):
            t = engine.ones(width + k, requires_grad=True)
            keep.append(t * 2.0)                                  # an output saves nothing; t dies below
            if len(keep) > 3:
                keep.pop(0)
            engine.tanh(keep[-1])                                  # saves its result: a move and back
        keep.clear()

    def reader():
        while not stop.is_set():
            engine.memory.memory_allocated("cpu")                  # replays the counters
            engine.memory.memory_reserved("cpu")                   # replays the model
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(per_thread)]
        r = threading.Thread(target=reader)
        r.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        r.join()
    finally:
        sys.setswitchinterval(old_interval)
    after = engine.memory.memory_stats("cpu")
    made = after["allocation.all.allocated"] - before["allocation.all.allocated"]
    freed = after["allocation.all.freed"] - before["allocation.all.freed"]
    assert made == freed == per_thread * rounds * 3                # ones, the product, tanh (which saves its result)
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert after["allocation.all.current"] == before["allocation.all.current"]
    assert after.get("allocated_bytes.activation.current", 0) == before.get("allocated_bytes.activation.current", 0)
    assert after["active_bytes.all.current"] == before["active_bytes.all.current"]
    assert not state._pending and not _allocator.hook._log


class _Stand:
    """A stand-in storage with the fields the accounting reads."""

    def __init__(self, nbytes):
        from engine import events
        from engine.backend.device import CPU
        self.id, self.device, self.base, self.saved, self.nbytes = events.new_id(), CPU, "other", 0, nbytes


def test_an_entry_appended_while_a_replay_applies_others_is_applied_too(monkeypatch):
    # what another thread does between two of a replay's entries, done here at that moment
    before = engine.memory.memory_stats("cpu")
    first, late = _Stand(1000), _Stand(24)
    real_apply = state._apply

    def apply_then_append(entries):
        real_apply(entries)
        if late.id not in seen:
            seen.add(late.id)
            state.on_alloc(late)
    seen: set = set()
    monkeypatch.setattr(state, "_apply", apply_then_append)
    state.on_alloc(first)
    engine.memory.memory_allocated("cpu")              # replays: first, then late arrives mid-replay
    monkeypatch.undo()
    mid = engine.memory.memory_stats("cpu")
    assert mid["allocated_bytes.all.current"] - before["allocated_bytes.all.current"] == 1024
    assert mid["allocation.all.current"] - before["allocation.all.current"] == 2
    state.on_free(first)
    state.on_free(late)
    assert engine.memory.memory_stats("cpu")["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
