"""The caching allocator model's replay (NOTE [ Deferred allocator model ]): cost per log entry."""
from __future__ import annotations

from ._timing import median_time
from .registry import Row, section

SIZES, BATCH = (8, 8, 8, 4), 4      # a tiny MLP: per-op overhead, and so the log, dominates its step


def record_log(steps: int):
    """The allocator log entries that ``steps`` tiny training steps append, and the step itself."""
    from engine.memory import allocator as _allocator
    from engine.memory import state as _state

    from .mlp import build
    step, _, _ = build(SIZES, BATCH)
    for _ in range(3):
        step()
    hook = _allocator.hook
    hook.flush()
    hook.LOG_LIMIT = 1 << 62            # hold the whole log (an instance attribute, removed below)
    limit, _state.PENDING_LIMIT = _state.PENDING_LIMIT, 1 << 62   # nor let the counters' limit flush it
    try:
        for _ in range(steps):
            step()
        log = list(hook._log)
    finally:
        del hook.LOG_LIMIT
        _state.PENDING_LIMIT = limit
        _state._flush_both()
    return log, step


def replay(log) -> None:
    """Feed ``log`` to fresh models in ``LOG_LIMIT`` chunks, as the hook does."""
    from engine.memory import allocator as _allocator
    hook = _allocator.AllocatorHook()
    limit = hook.LOG_LIMIT
    for i in range(0, len(log), limit):
        hook._log = log[i:i + limit]
        hook._flush()


@section("allocator", "Allocator model: replaying the log of a tiny MLP step (8-8-8-4, batch 4)", order=25)
def run(cfg):
    steps = 1000 if not cfg.quick else 200
    log, step = record_log(steps)
    reps = max(cfg.reps, 5)
    per_entry = median_time(lambda: replay(log), reps) / len(log)
    per_step = median_time(step, reps, inner=50)
    share = per_entry * len(log) / steps / per_step
    return [Row("replay", per_entry * 1e9, "ns/entry", note=f"{len(log)} entries from {steps} steps"),
            Row("log entries per step", len(log) / steps, ""),
            Row("replay share of the step", 100 * share, "%", note=f"step {per_step * 1e6:.0f} us")]
