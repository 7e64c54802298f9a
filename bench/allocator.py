"""Replaying the accounting log (NOTE [ Deferred counters ], NOTE [ Fast replay ]): cost per entry."""
from __future__ import annotations

from ._timing import median_time
from .registry import Row, section

SIZES, BATCH = (8, 8, 8, 4), 4      # a tiny MLP: per-op overhead, and so the log, dominates its step


def record_log(steps: int):
    """The log entries (allocs, frees, category moves) that ``steps`` tiny training steps append,
    and the step itself."""
    from engine.memory import state as _state

    from .mlp import build
    step, _, _ = build(SIZES, BATCH)
    for _ in range(3):
        step()
    _state._flush_both()
    limit, _state.PENDING_LIMIT = _state.PENDING_LIMIT, 1 << 62   # hold the whole log
    try:
        for _ in range(steps):
            step()
        log = list(_state._pending)
    finally:
        _state.PENDING_LIMIT = limit
        _state._flush_both()
    return log, step


def replay(log) -> None:
    """Feed ``log`` to fresh allocator models in ``PENDING_LIMIT`` chunks, as a replay does."""
    from engine.memory import allocator as _allocator
    from engine.memory import state as _state
    models, limit = {}, _state.PENDING_LIMIT
    for i in range(0, len(log), limit):
        _allocator.replay(models, log[i:i + limit])


def apply_counters(log) -> None:
    """Apply ``log`` to fresh counters in ``PENDING_LIMIT`` chunks (state's ``_apply``)."""
    from engine.memory import state as _state
    saved, _state._devices = _state._devices, {}
    try:
        limit = _state.PENDING_LIMIT
        for i in range(0, len(log), limit):
            _state._apply(log[i:i + limit])
    finally:
        _state._devices = saved


@section("allocator", "Accounting log: replaying a tiny MLP step's entries (8-8-8-4, batch 4)", order=25)
def run(cfg):
    steps = 1000 if not cfg.quick else 200
    log, step = record_log(steps)
    reps = max(cfg.reps, 5)
    model = median_time(lambda: replay(log), reps) / len(log)
    counters = median_time(lambda: apply_counters(log), reps) / len(log)
    per_step = median_time(step, reps, inner=50)
    share = (model + counters) * len(log) / steps / per_step
    return [Row("allocator model replay", model * 1e9, "ns/entry", note=f"{len(log)} entries from {steps} steps"),
            Row("counters replay", counters * 1e9, "ns/entry"),
            Row("log entries per step", len(log) / steps, "", note="allocs, frees and category moves"),
            Row("replay share of the step", 100 * share, "%", note=f"step {per_step * 1e6:.0f} us")]
