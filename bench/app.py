"""The terminal app on a 100k-event trace: open it (goal: under 1 s) and step through it (goal: under 50 ms)."""
from __future__ import annotations

import asyncio
import gc
import os
import statistics
import tempfile
import time

from .registry import Row, section


def _training_trace(min_events: int):
    """Record SGD steps of a small MLP until the trace has ``min_events`` events."""
    import engine
    import engine.nn.functional as F
    from engine import nn, optim

    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = engine.randn(16, 32), engine.randint(0, 10, (16,))
    with engine.record() as tr:
        while len(tr) < min_events:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    return tr


async def _open(path: str):
    """Load the file and start the app on it, as `glassgrad view` does; returns (seconds to load, app, pilot cm)."""
    from engine.trace import Trace
    from tui.app import GlassgradApp
    from tui.gcpause import paused_gc

    with paused_gc(freeze=True):     # as `glassgrad view` does (NOTE [ GC while loading ]); undone after
        tr = Trace.load(path)
    return GlassgradApp("trace", trace=tr, title="bench")


async def _time_open(path: str) -> tuple:
    from tui.trace_screen import TraceScreen

    t0 = time.perf_counter()
    app = await _open(path)
    t_load = time.perf_counter() - t0
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(pilot.app.screen, TraceScreen):
            await pilot.pause(0.001)
        await pilot.pause()
        t_open = time.perf_counter() - t0
    gc.unfreeze()
    del app
    gc.collect()      # the next open starts from a heap like a fresh `glassgrad view`'s, not one holding this app
    return t_load, t_open


async def _drive(path: str, presses: int) -> dict:
    from tui.trace_screen import TraceScreen

    opens = [await _time_open(path) for _ in range(3)]
    out = {"load": statistics.median(o[0] for o in opens), "open": statistics.median(o[1] for o in opens)}
    app = await _open(path)
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(pilot.app.screen, TraceScreen):
            await pilot.pause(0.001)
        await pilot.pause()
        from textual.geometry import Region

        s = pilot.app.screen
        panels = list(s.query("#status, GraphView, MemoryView, EventLog, Inspector"))

        def redraw():  # what a frame costs: every panel renders its visible lines
            for w in panels:
                w.render_lines(Region(0, 0, w.size.width, w.size.height))

        for action, label in ((lambda: s.action_step(1), "step"), (lambda: s.action_node(1), "next node"),
                              (lambda: s.action_phase(1), "next phase"), (s.action_peak, "peak"),
                              (s.action_last, "end"), (lambda: s.action_step(-1), "step back")):
            times = []
            for _ in range(presses if label.startswith(("step", "next")) else 3):
                if label in ("peak", "end"):   # from the start each time, so the jump really moves
                    s.action_first()
                    redraw()
                    await pilot.pause()
                t = time.perf_counter()
                action()
                redraw()
                times.append(time.perf_counter() - t)
                await pilot.pause()
            out[label] = statistics.median(times)
        times = []
        for _ in range(presses):
            t = time.perf_counter()
            await pilot.press("right")
            times.append(time.perf_counter() - t)
        out["press"] = statistics.median(times)
    gc.unfreeze()
    return out


@section("app", "Terminal app: 100k-event trace", order=70)
def run(cfg):
    n = 20_000 if cfg.quick else 100_000
    t0 = time.perf_counter()
    tr = _training_trace(n)
    t_rec = time.perf_counter() - t0
    n_events = len(tr)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.jsonl")
        tr.save(path)
        del tr                # `glassgrad view` opens the file in a process that holds no recording
        gc.collect()
        res = asyncio.run(_drive(path, 10 if cfg.quick else 30))
    rows = [Row(f"record the trace ({n_events:,} events)", t_rec, "s"),
            Row("load + validate the file (median of 3)", res["load"], "s")]
    rows.append(Row("open: load, model, first screen (median of 3)", res["open"], "s", "<= 1.00", res["open"] <= 1.0))
    for label in ("step", "step back", "next node", "next phase", "peak", "end"):
        rows.append(Row(f"{label}: new state + every panel redrawn", res[label] * 1e3, "ms", "<= 50",
                        res[label] <= 0.05))
    rows.append(Row("step as a key press under Pilot (includes its idle waits)", res["press"] * 1e3, "ms"))
    return rows
