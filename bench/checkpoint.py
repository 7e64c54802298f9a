"""Checkpointing a 64-layer MLP: peak memory and step time, none vs sqrt(n) segments vs the planner.

Every figure is a ratio to the step without checkpointing, measured in one run. Peaks are
``max_memory_allocated`` minus what is allocated before the step (parameters, their
gradients, the input); the planner's predicted peak is shown beside the measured one.
"""
from __future__ import annotations

import gc
import math

from ._timing import interleaved
from .registry import Row, section

LAYERS = 64


def _model(width):
    import engine
    import engine.nn as nn
    engine.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(LAYERS)])


def _step(run, x):
    out = run(x)
    loss = out.sum()
    del out
    loss.backward()


def _peak(run, x) -> int:
    import engine.memory as M
    gc.collect()
    base = M.memory_allocated()
    M.reset_peak_memory_stats()
    _step(run, x)
    return M.max_memory_allocated() - base


@section("checkpoint", "Checkpointing: 64-layer MLP, peak memory and step time", order=40)
def run(cfg):
    import engine
    from engine.utils import planner
    from engine.utils.checkpoint import checkpoint_sequential
    width, batch = (256, 128) if not cfg.quick else (32, 32)
    model = _model(width)
    x = engine.randn(batch, width)
    _step(model, x)                                   # .grad exists; later steps accumulate in place
    seg = int(math.isqrt(LAYERS))
    stats = planner.measure(model, x)
    curve = planner.tradeoff(stats)
    none_peak = curve[0][0]
    forward_cost = sum(s.cost for s in stats)
    variants = {"none": (model, none_peak, 0.0)}
    seq_segs = planner.sequential_plan(LAYERS, seg)
    seq_pred, seq_cost = planner.evaluate(stats, seq_segs)
    variants[f"checkpoint_sequential({seg})"] = (
        lambda h: checkpoint_sequential(model, seg, h, use_reentrant=False), seq_pred, seq_cost)
    lowest = curve[-1][0]
    for label, budget in (("planner, budget = sqrt(n) peak", seq_pred),
                          ("planner, budget = 1/4 of none", max(lowest, none_peak // 4)),
                          ("planner, lowest peak", lowest)):
        p = planner.plan_from_stats(stats, budget)
        variants[f"{label} ({len(p.segments)} segments)"] = (p.apply(model), p.peak_bytes, p.cost)
    peaks = {k: _peak(v[0], x) for k, v in variants.items()}
    times = interleaved({k: (lambda r=v[0]: _step(r, x)) for k, v in variants.items()},
                        reps=max(cfg.reps, 3), warmup=1)
    rows = [Row("none: peak above base", peaks["none"] / 1024, "KiB", note=f"width {width}, batch {batch}"),
            Row("none: step time", times["none"] * 1e3, "ms")]
    for k, (_, predicted, cost) in variants.items():
        if k == "none":
            continue
        exact = "predicted = measured" if predicted == peaks[k] else f"predicted {predicted}"
        rows.append(Row(f"{k}: peak / none", peaks[k] / peaks["none"], "x", note=exact))
        rows.append(Row(f"{k}: time / none", times[k] / times["none"], "x",
                        note=f"recompute {cost / forward_cost:.0%} of a forward"))
    p_same = planner.plan_from_stats(stats, seq_pred)
    rows.append(Row("planner cost / checkpoint_sequential cost, same peak budget", p_same.cost / seq_cost, "x",
                    note="the planner is optimal for its cost model (<= 1)"))
    return rows
