"""The memory views' window presets, module phases and allocator replay of an opened trace (read through its
index: rule 4 of NOTE [ Windows ], rule 5 of NOTE [ Module memory ], rule 6 of NOTE [ Segments at an event ])
are those of the loaded trace, whose every event is walked."""
import dataclasses

import pytest

from engine.trace import Trace
from lessons import _runner, get
from replay.memory import devices
from replay.model import TraceModel
from replay.module_memory import module_memory
from replay.segments import SegmentsAt, devices_of, gap
from replay.windows import presets
from tests.replay.traces import RECORDED

KiB, MiB = 1 << 10, 1 << 20


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def both(path):
    """(loaded, opened) models of the trace file at ``path``; the opened one reads its events through the index."""
    loaded, opened = TraceModel.from_trace(Trace.load(path)), TraceModel.from_trace(Trace.open(path))
    assert getattr(loaded, "index", None) is None and opened.index is not None
    return loaded, opened


#: the recorded runs, and three lessons' traces (modules, checkpoints, lesson steps, several iterations)
TRACES = {**RECORDED, **{f"lesson {k}": (lambda k=k: _runner.run(get(k)).trace) for k in (5, 8, 16)}}


def saved(tmp_path, name) -> str:
    p = tmp_path / (name.replace(" ", "_").replace(",", "") + ".jsonl")
    TRACES[name]().save(p)
    return str(p)


def rows(found) -> list:
    return [dataclasses.astuple(r) for r in found]


def _steps(n):
    return sorted({0, 1, n // 3, n // 2, (2 * n) // 3, n - 2, n - 1} & set(range(n)))


@pytest.mark.parametrize("name", sorted(TRACES))
def test_presets_of_an_opened_trace_are_the_walked_ones(tmp_path, name):
    a, b = both(saved(tmp_path, name))
    want = presets(a.events)
    assert want and [w.label for w in want if w.label.startswith("forward #")]
    for got in (presets(b.events), presets(b)):
        assert got == want


@pytest.mark.parametrize("name", sorted(TRACES))
def test_module_phases_of_an_opened_trace_are_the_walked_ones_whole_and_in_windows(tmp_path, name):
    a, b = both(saved(tmp_path, name))
    whole = module_memory(a.events, 0, None, a.memory)
    if any(e.get("module") is not None for e in a.events if e["kind"] == "op"):
        assert whole and whole[0].module == "" and any(r.bwd for r in whole)
    assert rows(module_memory(b.events, 0, None, b.memory)) == rows(whole)
    assert rows(module_memory(b.events)) == rows(module_memory(a.events))         # a replay of its own
    assert rows(module_memory(b)) == rows(module_memory(a))
    for w in presets(a.events):
        assert rows(module_memory(b.events, w.lo, w.hi, b.memory)) == rows(module_memory(a.events, w.lo, w.hi, a.memory))


def _with_modules(tmp_path, moved: dict, last_key: bool = True) -> str:
    """The recorded training loop, the forward ops numbered in ``moved`` (their order among forward ops) set to
    run in another module; ``last_key=False`` writes those events' ``module`` before their other keys."""
    tr = RECORDED["training loop"]()
    ops = [e for e in tr.events if e["kind"] == "op" and e["phase"] == "forward"]
    for k, module in moved.items():
        e = ops[k]
        e["module"] = module
        if not last_key:
            rest = {x: v for x, v in e.items() if x != "module"}
            e.clear()
            e.update({"module": module, **rest})
    p = tmp_path / "moved.jsonl"
    tr.save(p)
    return str(p)


@pytest.mark.parametrize("last_key", [True, False])
def test_a_module_first_run_after_every_span_closed_still_gets_its_row(tmp_path, last_key):
    tr = RECORDED["training loop"]()
    ops = [e for e in tr.events if e["kind"] == "op" and e["phase"] == "forward"]
    mods = [e.get("module") for e in ops]
    assert None in mods and mods.count("0") < len(mods) // 2                 # spans close in the first step
    late = len(ops) - 2                                                     # an op of the last forward
    first = [r.module for r in module_memory(tr.events)]
    a, b = both(_with_modules(tmp_path, {late: "9.head"}, last_key))
    want = module_memory(a.events, 0, None, a.memory)
    assert [r.module for r in want] == first + ["9", "9.head"]
    assert rows(module_memory(b.events, 0, None, b.memory)) == rows(want)
    a, b = both(_with_modules(tmp_path, {late: None, late - 1: "0"}, last_key))     # modules met before only
    want = module_memory(a.events, 0, None, a.memory)
    assert [r.module for r in want] == first
    assert rows(module_memory(b.events, 0, None, b.memory)) == rows(want)


def check_segments(a, b, device, every):
    """Block maps, gap figures, pool and reserved figures alike at several events, forward, back and forward."""
    n = len(a)
    order = _steps(n) + _steps(n)[::-1] + [n - 1, 0, n // 2, n - 1, -5, n + 3]
    for x, y in ((a, b), (a.events, b.events)):           # with the meta's bytes alive at the start, and without
        sa, sb = SegmentsAt(x, device, every), SegmentsAt(y, device, every)
        for i in order:
            ma, mb = sa.at(i), sb.at(i)
            assert mb.snapshot() == ma.snapshot(), i
            assert gap(mb) == gap(ma), i
            assert sb.pool(i) == sa.pool(i) and sb.live_reserved(i) == sa.live_reserved(i), i
    return SegmentsAt(a, device, every)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_the_allocator_replay_of_an_opened_trace_is_the_walked_one(tmp_path, name):
    a, b = both(saved(tmp_path, name))
    assert devices_of(b) == devices_of(b.events) == devices(a.events) == ["cpu"]
    for every in (20000, 7):
        sa = check_segments(a, b, "cpu", every)
        assert any(gap(sa.at(i))["segments"] for i in range(len(a)))          # blocks were there to compare
    assert SegmentsAt(b, "cuda:0").at(len(b) - 1).snapshot() == []


def _ev(seq, kind, **f):
    return {"seq": seq, "t": seq / 1000, "phase": "forward", "kind": kind, **f}


def _mem(seq, kind, sid, n, dev, pool=None):
    pf = {} if pool is None else {"pool_used": pool[0], "pool_total": pool[1]}
    return _ev(seq, kind, storage=sid, bytes=n, device=dev, category="input", **pf)


# a GPU trace by hand: pool figures on cuda events, one free without them (the figures before it stay),
# an empty_cache, and the host's own storages
GPU = [
    _ev(0, "mark", text="start"),
    _mem(1, "alloc", 1, 4 * KiB, "cpu"),
    _mem(2, "alloc", 2, 3 * MiB, "cuda:0", (3 * MiB, 3 * MiB)),
    _mem(3, "alloc", 3, 1000, "cuda:0", (3 * MiB + KiB, 3 * MiB + KiB)),
    _mem(4, "free", 2, 3 * MiB, "cuda:0", (KiB, 3 * MiB + KiB)),
    _mem(5, "free", 3, 1000, "cuda:0"),
    _ev(6, "empty_cache", device="cuda:0", bytes=0),
    _mem(7, "alloc", 4, 5 * MiB, "cuda:0", (5 * MiB, 8 * MiB)),
    _mem(8, "free", 1, 4 * KiB, "cpu"),
]


def test_pool_figures_and_other_devices_of_an_opened_gpu_trace(tmp_path):
    p = tmp_path / "gpu.jsonl"
    Trace(GPU, meta={}).save(p)
    a, b = both(str(p))
    assert devices_of(b) == devices(a.events) == ["cpu", "cuda:0"]
    for every in (2, 20000):
        check_segments(a, b, "cuda:0", every)
        check_segments(a, b, "cpu", every)
    seg = SegmentsAt(b, "cuda:0")
    assert [seg.pool(i) for i in range(len(GPU))] == [
        None, None, (3 * MiB, 3 * MiB), (3 * MiB + KiB, 3 * MiB + KiB), (KiB, 3 * MiB + KiB),
        (KiB, 3 * MiB + KiB), (KiB, 3 * MiB + KiB), (5 * MiB, 8 * MiB), (5 * MiB, 8 * MiB)]
    assert [len(seg.at(i).segments) for i in (3, 6, 7)] == [2, 0, 1]       # empty_cache gave both back
