"""The terminal app on big traces: open one as `glassgrad view` does, step through it, and follow a run.

Each open runs in a fresh process (``python -m bench.app open PATH``), so its time and its
resident memory are those of a `glassgrad view` that starts on the file: the first open shows
the start at once and reads the rest while the learner looks (NOTE [ A first open ] in
tui/first_open.py), building the trace's index (NOTE [ Trace index ] in engine/trace_index.py)
and saving its folded model (NOTE [ A saved model ] in replay/model_cache.py); the later ones
read them.
Traces are recorded once and kept in ``$TMPDIR/glassgrad-bench/``. The million-event trace
is opt-in: ``GLASSGRAD_BENCH_1M=1 python -m bench app``. The follow part records a 200-step
and a 1,000-step training run through `glassgrad run`'s worker while the app follows it
(NOTE [ A followed run ] in replay/index.py), and samples the app process's resident memory
and the time the app spends folding in each batch.
"""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from .registry import Row, section

_DIR = os.path.join(tempfile.gettempdir(), "glassgrad-bench")
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_MLP = '''# the MLP of _training_trace, as a script `glassgrad run` runs
import engine
import engine.nn.functional as F
from engine import nn, optim

engine.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x, y = engine.randn(16, 32), engine.randint(0, 10, (16,))
'''


def _training_trace(min_events: int):
    """Record SGD steps of the MLP of ``_MLP`` until the trace has ``min_events`` events."""
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


def _cached_trace(n: int) -> tuple:
    """(path, seconds spent recording or 0.0 when the file was there) of an ``n``-event trace."""
    path = os.path.join(_DIR, f"mlp-{n}.jsonl")
    if os.path.exists(path):
        return path, 0.0
    os.makedirs(_DIR, exist_ok=True)
    t0 = time.perf_counter()
    tr = _training_trace(n)
    tmp = f"{path}.{os.getpid()}.tmp"
    tr.save(tmp)
    os.replace(tmp, path)
    return path, time.perf_counter() - t0


def _rss_mib() -> float:
    """This process's resident memory now (Linux), else its peak."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2**20 if sys.platform == "darwin" else 1024)


# ---------------------------------------------------------------------- in the child process

async def _open_and_step(path: str, presses: int) -> dict:
    """Open ``path`` as `glassgrad view` does, time the first screen, then steps and jumps."""
    from textual.geometry import Region

    from replay.model import TraceModel
    from tui.app import GlassgradApp
    from tui.cli import _load
    from tui.gcpause import paused_gc
    from tui.trace_screen import TraceScreen

    t0 = time.perf_counter()
    with paused_gc(freeze=True):     # as `glassgrad view` does (NOTE [ GC while loading ])
        tr = _load(path, index=True)
        TraceModel.from_trace(tr)
    out = {"load": time.perf_counter() - t0, "events": len(tr)}
    app = GlassgradApp("trace", trace=tr, title="bench", freeze=True)     # as `glassgrad view` runs it
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(pilot.app.screen, TraceScreen):
            await pilot.pause(0.001)
        await _painted(pilot.app.screen)
        out["open"] = time.perf_counter() - t0
        out["rss_open"] = _rss_mib()
        if presses:
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
                out[label + " max"] = max(times)
                out[label + " p90"] = sorted(times)[int(0.9 * (len(times) - 1))]
        if presses:
            out.update(_memory_views(s.model))
    out["rss_peak"] = _peak_mib()
    return out


def _with_spans(lts):
    lts.spans           # as the app's thread makes them (NOTE [ Lifetimes on a thread ] rule 5)
    return lts


def _memory_views(m) -> dict:
    """Seconds each memory view's answer costs on the opened trace (the app asks on a thread or once)."""
    from replay.holders import holders
    from replay.lifetimes import bands, lifetimes
    from replay.module_memory import module_memory
    from replay.segments import SegmentsAt
    from replay.windows import presets

    n, out = len(m), {}

    def timed(label, fn):
        t = time.perf_counter()
        res = fn()
        out[label] = time.perf_counter() - t
        return res
    lts = timed("lifetimes", lambda: _with_spans(lifetimes(m)))
    timed("bands", lambda: bands(lts, 0, n, 30))
    timed("holders", lambda: holders(lts, n // 2, by="module"))
    timed("presets", lambda: presets(m))
    timed("module phases", lambda: module_memory(m.events, 0, n, m.memory))
    seg = SegmentsAt(m)
    timed("allocator at the end", lambda: seg.at(n - 1))
    timed("allocator step back", lambda: seg.at(n - 2))
    timed("allocator jump to the middle", lambda: seg.at(n // 2))
    return out


async def _painted(screen) -> None:
    """Until ``screen`` has been drawn once more: a first screen is timed to the first frame that
    shows the trace (waiting for the app to go idle timed a first open's reader instead)."""
    painted = asyncio.Event()
    screen.call_after_refresh(painted.set)
    await painted.wait()


def _timed_method(cls, name: str, into: list):
    """Time each call of ``cls.name`` into ``into`` (seconds); what puts the method back."""
    real = getattr(cls, name)

    def timed(self, *args):
        t = time.perf_counter()
        real(self, *args)
        into.append(time.perf_counter() - t)

    setattr(cls, name, timed)
    return lambda: setattr(cls, name, real)


async def _first_open(path: str, presses: int) -> dict:
    """Open ``path``, which has no index, as `glassgrad view` does (NOTE [ A first open ] in
    tui/first_open.py): time its first screen, steps while the rest is read, and the whole read."""
    from textual.geometry import Region

    from tui import first_open
    from tui.app import GlassgradApp

    first_open.BIG = 0            # the quick run's small trace is read the same way
    ticks: list = []              # seconds of folding a key pressed then could wait behind
    t0 = time.perf_counter()
    app = GlassgradApp("first_open", trace=path, title="bench")
    out: dict = {}
    untime = _timed_method(first_open.FirstOpen, "_tick", ticks)
    async with app.run_test(size=(120, 40)) as pilot:
        while app.first_open is None or app.first_open._shown is None:
            if time.perf_counter() - t0 > 60:
                raise RuntimeError("the first open showed nothing in 60 s")
            await pilot.pause(0.001)
        await _painted(app.first_open.screen)
        out["first screen"] = time.perf_counter() - t0
        out["rss_open"] = _rss_mib()
        s, opening = app.first_open.screen, app.first_open
        panels = list(s.query("#status, GraphView, MemoryView, EventLog, Inspector"))
        times = []
        ticks.clear()
        for _ in range(presses):
            if opening.done:
                break
            app.last_input = time.monotonic()      # as a key does (NOTE [ A first open ] rule 1)
            t = time.perf_counter()
            s.action_step(1)
            for w in panels:
                w.render_lines(Region(0, 0, w.size.width, w.size.height))
            times.append(time.perf_counter() - t)
            await pilot.pause(0.05)
        out["steps while reading"] = len(times)
        out["step"] = statistics.median(times) if times else 0.0
        out["step max"] = max(times, default=0.0)
        out["tick max"], out["ticks"] = max(ticks, default=0.0), len(ticks)
        untime()
        while not opening.done:
            if time.perf_counter() - t0 > 600:
                raise RuntimeError("the first open did not finish reading in 600 s")
            await pilot.pause(0.05)
        out["read"] = time.perf_counter() - t0
        out["events"] = len(opening.model)
        out["rss_read"] = _rss_mib()
    out["rss_peak"] = _peak_mib()
    return out


async def _follow(script: str, trace_out: str) -> dict:
    """Run ``script`` as `glassgrad run` does and sample this (the app's) process while it follows."""
    from tui.app import GlassgradApp

    app = GlassgradApp("run", script=script, out=trace_out, freeze=True)     # as `glassgrad run` starts it
    drains = []          # seconds the app spends folding in each batch: a key pressed then waits this long
    drain = app._drain
    folding = []         # (events folded in, resident MiB) as each batch begins: before the saved trace opens

    def timed_drain():
        s = getattr(app, "screen_run", None)
        if s is not None and app._pending and app._pending[0] is not None and type(app._pending[0]) is not tuple:
            folding.append((len(s.model), round(_rss_mib(), 1)))
        busy = bool(app._pending)
        t = time.perf_counter()
        drain()
        if busy:
            drains.append(time.perf_counter() - t)

    app._drain = timed_drain
    from tui import model_saver
    ticks: list = []     # seconds each tick of saving the model beside the index takes, once the run ended
    untime = _timed_method(model_saver.ModelSaver, "_tick", ticks)
    samples = []
    t0 = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            await pilot.pause(0.25)
            s = getattr(pilot.app, "screen_run", None)
            n = len(s.model) if s is not None else 0
            samples.append((round(time.perf_counter() - t0, 2), n, round(_rss_mib(), 1)))
            if s is not None and s.finished and (pilot.app.saver is None or pilot.app.saver.done):
                break
            if time.perf_counter() - t0 > 600:
                break
    untime()
    drains.sort()
    return {"samples": samples, "rss_peak": _peak_mib(), "seconds": time.perf_counter() - t0,
            "folding": folding, "drain_median": drains[len(drains) // 2] if drains else 0.0, "drain_max": drains[-1] if drains else 0.0,
            "save_ticks": len(ticks), "save_tick_max": max(ticks, default=0.0)}


def _child(argv) -> None:
    if argv[0] == "open":
        res = asyncio.run(_open_and_step(argv[1], int(argv[2])))
    elif argv[0] == "first":
        res = asyncio.run(_first_open(argv[1], int(argv[2])))
    else:
        res = asyncio.run(_follow(argv[1], argv[2]))
    print("BENCH-RESULT " + json.dumps(res))


# ---------------------------------------------------------------------- in the bench process

def _run_child(*args) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p))
    env.setdefault("CI", "")
    p = subprocess.run([sys.executable, "-m", "bench.app", *map(str, args)], capture_output=True, text=True,
                       env=env, cwd=_ROOT, timeout=900, check=False)
    for line in p.stdout.splitlines():
        if line.startswith("BENCH-RESULT "):
            return json.loads(line[len("BENCH-RESULT "):])
    raise RuntimeError(f"bench child failed: {(p.stderr or p.stdout)[-300:]}")


def _drop_index(path: str) -> None:
    from engine.trace_index import SUFFIX, sidecar_paths
    from replay.model_cache import SUFFIX as MODEL

    for p in sidecar_paths(path):
        for q in (p, p[: -len(SUFFIX)] + MODEL):
            try:
                os.remove(q)
            except OSError:
                pass


def _trace_rows(n: int, presses: int) -> list:
    path, t_rec = _cached_trace(n)
    _drop_index(path)
    first = _run_child("first", path, presses)              # builds and saves the index and the model
    later = [_run_child("open", path, 0) for _ in range(2)]
    steps = _run_child("open", path, presses)
    later.append(steps)
    k = f"{first['events']:,} events"
    rows = []
    if t_rec:
        rows.append(Row(f"{k}: record the trace", t_rec, "s"))
    rows += [Row(f"{k}: first open: first screen (the rest read as the learner looks)", first["first screen"], "s",
                 "<= 1.00", first["first screen"] <= 1.0),
             Row(f"{k}: first open: step while the rest is read (median of {first['steps while reading']})",
                 first["step"] * 1e3, "ms"),
             Row(f"{k}: first open: step while the rest is read (longest)", first["step max"] * 1e3, "ms"),
             Row(f"{k}: first open: a tick of folding a key waits behind, keys in use (longest of "
                 f"{first['ticks']})", first["tick max"] * 1e3, "ms"),
             Row(f"{k}: first open: whole file read, checked, indexed, folded, saved", first["read"], "s"),
             Row(f"{k}: first open: resident memory at its first screen", first["rss_open"], "MiB"),
             Row(f"{k}: first open: resident memory once read", first["rss_read"], "MiB"),
             Row(f"{k}: open with its index and model: first screen (median of 3 processes)",
                 statistics.median(o["open"] for o in later), "s", "<= 1.00",
                 statistics.median(o["open"] for o in later) <= 1.0),
             Row(f"{k}: of which reading the index and the saved model", statistics.median(o["load"] for o in later), "s"),
             Row(f"{k}: resident memory at the first screen", statistics.median(o["rss_open"] for o in later), "MiB",
                 "<= 1024", statistics.median(o["rss_open"] for o in later) <= 1024),
             Row(f"{k}: peak resident memory of the first open", first["rss_peak"], "MiB", "<= 1024",
                 first["rss_peak"] <= 1024)]
    for label in ("step", "step back", "next node", "next phase", "peak", "end"):
        rows.append(Row(f"{k}: {label}: new state + every panel redrawn (median)", steps[label] * 1e3, "ms",
                        "<= 16", steps[label] <= 0.016))
        if label + " p90" in steps and label not in ("peak", "end"):     # 3 of each jump: no 90th percentile
            rows.append(Row(f"{k}: {label}: the 90th percentile", steps[label + " p90"] * 1e3, "ms"))
        rows.append(Row(f"{k}: {label}: the longest of them", steps[label + " max"] * 1e3, "ms"))
    for label, what in (("lifetimes", "every storage's lifetime (the app works it out on a thread)"),
                        ("bands", "lifetimes view: the 30 largest bands of the whole trace"),
                        ("holders", "holders table at the middle event"),
                        ("presets", "window presets (W)"),
                        ("module phases", "module phases table (MemTracker's figures)"),
                        ("allocator at the end", "allocator view: segments at the last event, first time"),
                        ("allocator step back", "allocator view: then one step back"),
                        ("allocator jump to the middle", "allocator view: then a jump to the middle")):
        if label in steps:
            per_step = label in ("bands", "holders", "allocator step back")     # asked again at every step
            rows.append(Row(f"{k}: {what}", steps[label] * 1e3, "ms", "<= 16" if per_step else "",
                            steps[label] <= 0.016 if per_step else None))
    return rows


def _follow_rows(steps: int) -> list:
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "train.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(_MLP + f"for _ in range({steps}):\n    opt.zero_grad()\n"
                           "    F.cross_entropy(model(x), y).backward()\n    opt.step()\n")
        res = _run_child("follow", script, os.path.join(d, "run.jsonl"))
    s = res["samples"]
    n = s[-1][1]
    early = next((r for r in s if r[1] >= n // 4), s[0])
    rows = [Row(f"follow a {steps}-step run: events folded in", f"{n:,}", "events"),
            Row("  resident memory of the app at 1/4 of them", early[2], "MiB"),
            Row("  resident memory of the app at the end", s[-1][2], "MiB"),
            Row("  peak resident memory of the app", res["rss_peak"], "MiB")]
    f = res["folding"]
    if f:
        a, b = next((r for r in f if r[0] >= n // 4), f[0]), f[-1]
        rows.insert(3, Row(f"  resident memory of the app with {b[0]:,} events folded in (following)", b[1], "MiB"))
        if b[0] > a[0]:
            rows.append(Row(f"  growth per 1,000 events folded in while following ({a[0]:,} to {b[0]:,})",
                            (b[1] - a[1]) * 1000 / (b[0] - a[0]), "MiB"))
    if n > early[1]:
        rows.append(Row("  growth per 1,000 events, a quarter in to the end (saved trace opened)",
                        (s[-1][2] - early[2]) * 1000 / (n - early[1]), "MiB"))
    rows += [Row("  app time per batch folded in while following (median)", res["drain_median"] * 1e3, "ms"),
             Row("  app time per batch folded in while following (longest)", res["drain_max"] * 1e3, "ms"),
             Row(f"  app time per tick saving the model once the run ended (longest of {res['save_ticks']})",
                 res["save_tick_max"] * 1e3, "ms")]
    return rows


@section("app", "Terminal app: big traces and a followed run", order=70)
def run(cfg):
    rows = _trace_rows(20_000 if cfg.quick else 100_000, 10 if cfg.quick else 50)
    if os.environ.get("GLASSGRAD_BENCH_1M") and not cfg.quick:
        rows += _trace_rows(1_000_000, 50)
    rows += _follow_rows(20 if cfg.quick else 200)
    if not cfg.quick:
        rows += _follow_rows(1000)
    return rows


if __name__ == "__main__":
    _child(sys.argv[1:])
