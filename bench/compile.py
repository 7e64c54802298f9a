"""engine.compile on a GELU/LayerNorm MLP: step time and saved activations, eager vs compiled.

Times are medians of interleaved runs of one training step (forward, backward, zero_grad);
the first compiled call (tracing) is timed on its own. Saved bytes are what the step's
forward keeps for backward: eager's nodes vs the min-cut partitioner's choice.
"""
from __future__ import annotations

import time

from ._timing import interleaved, min_ratio
from .registry import Row, section


@section("compile", "engine.compile: GELU/LayerNorm MLP, eager vs compiled", order=50)
def run(cfg):
    import engine
    from engine import nn
    width, batch = (512, 128) if not cfg.quick else (64, 16)
    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.LayerNorm(2 * width),
                          nn.Linear(2 * width, width))
    x = engine.randn(batch, width)
    compiled = engine.compile(model)

    def step(f):
        y = f(x)
        (y * y).mean().backward()
        model.zero_grad()

    t0 = time.perf_counter()
    step(compiled)
    first = time.perf_counter() - t0
    art = compiled.last
    t = interleaved({"eager": lambda: step(model), "compiled": lambda: step(compiled)}, cfg.reps)
    return [
        Row("eager step", t["eager"] * 1e3, "ms"),
        Row("compiled step", t["compiled"] * 1e3, "ms", note=min_ratio("compiled", "eager")),
        Row("first compiled call (trace + compile + run)", first * 1e3, "ms"),
        Row("saved for backward, eager", f"{art.eager_saved_bytes:,}", "B"),
        Row("saved for backward, compiled", f"{art.compiled_saved_bytes:,}", "B",
            goal=f"<= {art.eager_saved_bytes}", ok=art.compiled_saved_bytes <= art.eager_saved_bytes),
        Row("fused kernels", str(len(art.kernels))),
    ]
