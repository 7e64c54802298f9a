"""Recording on vs off for the MLP training step (goal: on/off <= 1.25)."""
from __future__ import annotations

from ._timing import interleaved, min_ratio
from .mlp import BATCH, SIZES, build
from .registry import Row, goal_row, section


@section("recording", "Recording on vs off (MLP step)", order=30)
def run(cfg):
    import engine
    sizes, batch = (SIZES, BATCH) if not cfg.quick else ((784, 256, 256, 10), 64)
    step, _, _ = build(sizes, batch)
    counts = []

    def recorded():
        with engine.record() as tr:
            step()
        counts.append(len(tr.events))

    t = interleaved({"off": step, "on": recorded}, reps=max(cfg.reps, 3), warmup=2)
    return [Row("recording off", t["off"] * 1e3, "ms"),
            Row("recording on", t["on"] * 1e3, "ms", note=f"{counts[-1]} events per step"),
            goal_row("on / off", t["on"] / t["off"], 1.25, min_ratio("on", "off"))]
