"""Reserved bytes in the app: the model's series, the memory panel's border, the inspector's words."""
from replay.model import TraceModel
from tui.app import GlassgradApp
from tui.inspector import Inspector, describe_event, reserved_change
from tui.memory_view import MemoryView

MiB = 1 << 20


def _ev(seq, kind, **f):
    return {"seq": seq, "t": 0.0, "phase": "forward", "kind": kind, **f}


EVENTS = [
    _ev(0, "mark", text="start"),
    _ev(1, "alloc", storage=1, bytes=1024, device="cpu", category="other", reserved=2 * MiB),        # new segment
    _ev(2, "alloc", storage=2, bytes=1024, device="cpu", category="other", reserved=2 * MiB),        # fits
    _ev(3, "alloc", storage=3, bytes=3 * MiB, device="cuda:0", category="other", reserved=20 * MiB),
    _ev(4, "free", storage=3, bytes=3 * MiB, device="cuda:0", category="other", reserved=20 * MiB),  # cached
    _ev(5, "empty_cache", device="cuda:0", bytes=20 * MiB, reserved=0),
    _ev(6, "mark", text="not memory", reserved=123),
]


def test_model_sums_each_devices_newest_reserved():
    m = TraceModel(EVENTS, {"memory_at_start": {"cpu": {"allocated": 0, "by_category": {}, "reserved": 2 * MiB}}})
    assert m.memory.has_reserved and m.memory.reserved_start == 2 * MiB
    assert m.memory.reserved == [2 * MiB, 2 * MiB, 2 * MiB, 22 * MiB, 22 * MiB, 2 * MiB, 2 * MiB]
    built = TraceModel(meta={"memory_at_start": {"cpu": {"reserved": 2 * MiB}}})
    for e in EVENTS:                    # streamed one by one: the same series
        built.extend([e])
    assert built.memory.reserved == m.memory.reserved


def test_a_trace_without_reserved():
    evs = [{k: v for k, v in e.items() if k != "reserved"} for e in EVENTS]
    m = TraceModel(evs)
    assert not m.memory.has_reserved and m.memory.reserved == [0] * len(evs)
    assert reserved_change(m, 1) == "" and "reserved" not in describe_event(m, 1).plain


def test_inspector_says_what_the_event_did_to_reserved():
    m = TraceModel(EVENTS)
    assert [reserved_change(m, i) for i in range(len(EVENTS))] == [
        "",
        "+2.00 MiB: a new segment (no cached block fitted)",
        "unchanged: fitted in a cached free block",
        "+20.00 MiB: a new segment (no cached block fitted)",
        "unchanged: the block stays cached for reuse",
        "-20.00 MiB: wholly free segments given back",
        "",
    ]
    text = describe_event(m, 3).plain
    assert "reserved  20971520 (20.00 MiB)\n" in text
    assert text.endswith("+20.00 MiB: a new segment (no cached block fitted)\n")


async def test_memory_panel_border_shows_reserved_at_the_cursor(mlp_trace):
    m = TraceModel.from_trace(mlp_trace)
    assert m.memory.has_reserved                 # the fixture was recorded with reserved on its events
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 36)) as pilot:
        s = pilot.app.screen
        mv = s.query_one(MemoryView)
        assert mv.reserved_text() == "reserved 2.00 MiB" and " reserved 2.00 MiB " in str(mv.border_subtitle)
        first = next(i for i, e in enumerate(m.events) if e["kind"] == "alloc")
        assert m.memory.reserved[first] == mlp_trace[first]["reserved"] == 2 * MiB
        await pilot.press("end")
        assert mv.reserved_text() == "reserved 2.00 MiB" and m.memory.reserved[-1] == 2 * MiB
        await pilot.press("home")
        ins = s.query_one(Inspector)
        assert "+2.00 MiB: a new segment" in ins.content().plain      # event 0 allocates the first segment


async def test_no_border_text_without_reserved(mlp_trace):
    for e in mlp_trace.events:
        e.pop("reserved", None)
    async with GlassgradApp("trace", trace=mlp_trace, title="t").run_test(size=(120, 36)) as pilot:
        assert not str(pilot.app.screen.query_one(MemoryView).border_subtitle or "")


async def test_border_follows_the_cursor():
    from engine.trace import Trace
    async with GlassgradApp("trace", trace=Trace(EVENTS), title="t").run_test(size=(100, 30)) as pilot:
        mv = pilot.app.screen.query_one(MemoryView)
        seen = []
        for _ in range(len(EVENTS)):
            seen.append(str(mv.border_subtitle or ""))
            await pilot.press("right")
        assert [("22.00 MiB" in x, "2.00 MiB" in x, "0 B" in x) for x in seen] == [
            (False, False, True), (False, True, False), (False, True, False), (True, True, False),
            (True, True, False), (False, True, False), (False, True, False)]


def test_every_way_a_model_is_made_names_the_devices_its_reserved_sums(tmp_path, monkeypatch):
    """NOTE [ Memory replay ] rule 3: a run on the GPU and the host sums both; the border says so."""
    import json

    from engine import trace_lines
    from engine.trace import Trace
    from tests.replay.test_follow_bounded import _follow

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    p = tmp_path / "two.jsonl"
    Trace(EVENTS).save(p)
    part = tmp_path / "two.jsonl.part"
    part.write_text(json.dumps({"format": trace_lines.FORMAT, "version": trace_lines.VERSION}) + "\n"
                    + "".join(json.dumps(e) + "\n" for e in EVENTS))
    made = {"events": TraceModel(EVENTS), "load": TraceModel.from_trace(Trace.load(p)),
            "index": TraceModel.from_trace(Trace.open(p)), "saved model": TraceModel.from_trace(Trace.open(p)),
            "followed": _follow(part, 64)}
    assert made["saved model"].index is not None
    for how, m in made.items():
        assert m.memory.reserved_devices == {"cpu", "cuda:0"}, how
        assert list(m.memory.reserved) == [0, 2 * MiB, 2 * MiB, 22 * MiB, 22 * MiB, 2 * MiB, 2 * MiB], how
    one = TraceModel([e for e in EVENTS if e.get("device") != "cuda:0"])
    assert one.memory.reserved_devices == {"cpu"}


async def test_the_border_names_the_devices_when_it_sums_several():
    from engine.trace import Trace
    async with GlassgradApp("trace", trace=Trace(EVENTS), title="t").run_test(size=(100, 30)) as pilot:
        mv = pilot.app.screen.query_one(MemoryView)
        pilot.app.screen.index = 3
        await pilot.pause()
        assert mv.reserved_text() == "reserved 22.00 MiB (cpu + cuda:0)"
        assert " reserved 22.00 MiB (cpu + cuda:0) " in str(mv.border_subtitle)
