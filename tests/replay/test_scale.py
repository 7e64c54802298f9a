"""A model made from a trace's index (NOTE [ A model from an index ]) answers as the model of the loaded trace."""
import asyncio
import json

import pytest

from engine.trace import Trace, TraceFormatError
from replay.model import TraceModel
from replay.model_cache import SavedNodes
from replay.nodes import Node
from tests.replay.conftest import FIXTURE
from tests.replay.traces import RECORDED


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


_NODE_FIELDS = [f for f in Node.__slots__ if f not in ("op_at", "leaf_at", "saved")]


def _steps(n):
    return sorted({0, 1, n // 3, n // 2, (2 * n) // 3, n - 2, n - 1} & set(range(n)))


def same_answers(a: TraceModel, b: TraceModel) -> None:
    """Every question the app, the pictures and the lessons ask, answered alike at several steps."""
    n = len(b)
    assert len(a) == n and list(a.events) == list(b.events) and a.meta == b.meta
    ma, mb = a.memory, b.memory
    assert list(ma.total) == list(mb.total) and list(ma.reserved) == list(mb.reserved)
    assert list(ma.snaps) == list(mb.snaps) and ma.categories == mb.categories
    for f in ("peak_index", "peak_bytes", "act_peak_index", "act_peak_bytes", "has_reserved", "reserved_start",
              "baseline"):
        assert getattr(ma, f) == getattr(mb, f), f
    assert a.phase_starts == b.phase_starts and a.node_events == b.node_events and a.marks == b.marks
    assert sorted(a.nodes) == sorted(b.nodes) and sorted(a.regions()) == sorted(b.regions())
    assert [(g.first, g.spent, g.died, g.hide, g.hide_kept, g.joins) for g in a.graphs()] == \
        [(g.first, g.spent, g.died, g.hide, g.hide_kept, g.joins) for g in b.graphs()]
    for nid, nb in b.nodes.items():
        na = a.nodes[nid]
        assert [getattr(na, f) for f in _NODE_FIELDS] == [getattr(nb, f) for f in _NODE_FIELDS], nid
        assert [[getattr(x, f) for f in x.__slots__] for x in na.saved] == \
            [[getattr(x, f) for f in x.__slots__] for x in nb.saved]
    assert [(r.nodes, r.recompute, r.drops) for r in a.regions().values()] == \
        [(r.nodes, r.recompute, r.drops) for r in b.regions().values()]
    storages = {e.get("storage") for e in b.events if e.get("kind") in ("alloc", "free", "category")}
    for i in _steps(n):
        for keep in (False, True):
            va, vb = a.view(i, keep), b.view(i, keep)
            assert (va.ids, va.since, va.start) == (vb.ids, vb.since, vb.start)
        assert (a.current(i), a.in_backward(i), a.iteration(i), a.step_of(i)) == \
            (b.current(i), b.in_backward(i), b.iteration(i), b.step_of(i))
        assert a.roots(0, i) == b.roots(0, i)
        for nid in b.nodes:
            assert (a.state(nid, i), a.saved_state(nid, i), a.recomputed(nid, i), a.freed(nid, i)) == \
                (b.state(nid, i), b.saved_state(nid, i), b.recomputed(nid, i), b.freed(nid, i))
            assert [s.state(i) for s in a.nodes[nid].saved] == [s.state(i) for s in b.nodes[nid].saved]
        assert ma.live_at(i) == mb.live_at(i)
        for cat in (None, "activation", "gradient"):
            assert ma.peak_in(i // 2, i + 1, cat) == mb.peak_in(i // 2, i + 1, cat)
        for sid in storages:
            assert a.storage_at(sid, i) == b.storage_at(sid, i)
        for d in (1, -1):
            assert (a.next_node_event(i, d), a.next_phase(i, d)) == (b.next_node_event(i, d), b.next_phase(i, d))


def _both(path):
    plain = TraceModel.from_trace(Trace.load(path))
    opened = TraceModel.from_trace(Trace.open(path))
    assert opened.index is not None and plain.index is None
    return opened, plain


@pytest.mark.parametrize("name", list(RECORDED))
def test_an_opened_recording_answers_as_the_loaded_one(tmp_path, name):
    p = tmp_path / "t.jsonl"
    RECORDED[name]().save(p)
    same_answers(*_both(p))
    opened, plain = _both(p)                      # the second open reads the saved index and model
    assert opened.index.stored_at == str(p) + ".ggidx.npz" and isinstance(opened.nodes, SavedNodes)
    same_answers(opened, plain)


def test_the_committed_fixture_answers_alike():
    same_answers(TraceModel.from_trace(Trace.open(FIXTURE, index=False)), TraceModel.from_trace(Trace.load(FIXTURE)))


def test_an_opened_model_is_not_extended(tmp_path):
    p = tmp_path / "t.jsonl"
    RECORDED["training loop"]().save(p)
    m = TraceModel.from_trace(Trace.open(p))
    with pytest.raises(TypeError, match="holds the whole file"):
        m.extend([])


# ---- bad input: what a view cannot show, and no crash -------------------------------------------------

def _rewrite(src, dst, keep=lambda e: True, edit=lambda e: e, meta=None):
    with open(src, encoding="utf-8") as f:
        lines = f.read().splitlines()
    head = json.loads(lines[0])
    if meta is not None:
        head["meta"] = meta(head["meta"])
    out = [json.dumps(head)] + [json.dumps(edit(e)) for e in map(json.loads, lines[1:]) if keep(e)]
    dst.write_text("\n".join(out) + "\n")


def _browse(model):
    """Open the app's trace screen on ``model`` and walk it: every key that moves, redrawn each time."""
    from tests.tui.conftest import host_screen

    async def go():
        app = host_screen(model)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for key in ("right", "n", "p", "end", "home", "left", "]", "["):
                await pilot.press(key)
                await pilot.pause()
            return app.screen
    return asyncio.run(go())


def _no_memory(p, out):
    _rewrite(p, out, keep=lambda e: e["kind"] not in ("alloc", "free", "category", "empty_cache"),
             meta=lambda m: {k: v for k, v in m.items() if k != "memory_at_start"})


def _older(p, out):     # written before events carried "reserved" and before memory_at_start had it
    def meta(m):
        return {**m, "memory_at_start": {d: {k: v for k, v in s.items() if k != "reserved"}
                                         for d, s in m.get("memory_at_start", {}).items()}}
    _rewrite(p, out, edit=lambda e: {k: v for k, v in e.items() if k != "reserved"}, meta=meta)


def test_a_trace_without_memory_events_opens_and_shows_no_bytes(tmp_path):
    p, out = tmp_path / "t.jsonl", tmp_path / "nomem.jsonl"
    RECORDED["training loop"]().save(p)
    _no_memory(p, out)
    opened, plain = _both(out)
    same_answers(opened, plain)
    assert set(opened.memory.total) == {0} and not opened.memory.has_reserved
    assert opened.storage_at(1, len(opened) - 1) is None
    _browse(opened)


def test_a_trace_from_before_reserved_bytes_opens_without_them(tmp_path):
    p, out = tmp_path / "t.jsonl", tmp_path / "old.jsonl"
    RECORDED["training loop"]().save(p)
    _older(p, out)
    opened, plain = _both(out)
    same_answers(opened, plain)
    assert not opened.memory.has_reserved and set(opened.memory.reserved) == {0}
    _browse(opened)


def test_a_truncated_trace_is_refused_where_it_breaks_and_a_cut_one_opens(tmp_path):
    p = tmp_path / "t.jsonl"
    RECORDED["training loop"]().save(p)
    raw = p.read_bytes()
    cut = raw[: raw.rindex(b"\n", 0, len(raw) // 2) + 1]
    (tmp_path / "cut.jsonl").write_bytes(cut + cut.splitlines(keepends=True)[-1][:25])
    line = cut.count(b"\n") + 1
    with pytest.raises(TraceFormatError, match=rf"line {line}: truncated: the last line is incomplete"):
        Trace.open(tmp_path / "cut.jsonl")
    (tmp_path / "cut.jsonl").write_bytes(cut)        # a run stopped between two events
    opened, plain = _both(tmp_path / "cut.jsonl")
    same_answers(opened, plain)
    _browse(opened)


def test_bytes_on_a_device_no_event_touches_count_from_the_start(tmp_path):
    p, out = tmp_path / "t.jsonl", tmp_path / "two.jsonl"
    RECORDED["training loop"]().save(p)
    extra = {"allocated": 4096, "by_category": {"input": 4096}, "reserved": 2 << 20}
    _rewrite(p, out, meta=lambda m: {**m, "memory_at_start": {**m.get("memory_at_start", {}), "cuda:0": extra}})
    opened, plain = _both(out)
    same_answers(opened, plain)
    assert opened.memory.reserved[0] >= 2 << 20 and opened.memory.live_at(0)["input"] >= 4096


# ---- the saved model (NOTE [ A saved model ]) ----------------------------------------------------------

def _saved(tmp_path):
    p = tmp_path / "t.jsonl"
    RECORDED["checkpoint, non-reentrant"]().save(p)
    TraceModel.from_trace(Trace.open(p))
    return p, tmp_path / "t.jsonl.ggmodel.npz"


@pytest.mark.parametrize("damage", ["garbage", "truncate", "pickle", "missing", "lengths", "foreign_nodes",
                                    "memory"])
def test_a_damaged_saved_model_is_made_again_with_a_note(tmp_path, damage):
    import numpy as np

    p, side = _saved(tmp_path)
    if damage == "garbage":
        side.write_bytes(b"PK\x03\x04 not really")
    elif damage == "truncate":
        side.write_bytes(side.read_bytes()[:200])
    else:
        with np.load(side, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        if damage == "pickle":
            arrays["runs"] = np.array([{"x": 1}], dtype=object)
        elif damage == "missing":
            del arrays["g_first"]
        elif damage == "lengths":
            arrays["n_created"] = arrays["n_created"][:-1]
        elif damage == "memory":
            arrays["m_snaps"] = arrays["m_snaps"][:, :2].copy()
        else:
            arrays["gj_node"] = arrays["gj_node"] + 10_000
        with open(side, "wb") as f:
            np.savez(f, **arrays)
    tr = Trace.open(p)
    opened = TraceModel.from_trace(tr)
    assert len(tr.notes) == 1 and tr.notes[0].startswith(f"the saved model {side} was made again: ")
    assert not isinstance(opened.nodes, SavedNodes)
    same_answers(opened, TraceModel.from_trace(Trace.load(p)))
    tr = Trace.open(p)                               # made again and saved: trusted next time
    assert isinstance(TraceModel.from_trace(tr).nodes, SavedNodes) and tr.notes == []


def test_a_saved_model_of_another_version_of_the_trace_is_not_used(tmp_path):
    p, side = _saved(tmp_path)
    first = side.read_bytes()
    with open(p, "a", encoding="utf-8") as f:
        f.write(json.dumps({"seq": 10**6, "t": 99.0, "phase": "forward", "kind": "mark", "text": "more"}) + "\n")
    tr = Trace.open(p)
    opened = TraceModel.from_trace(tr)
    assert tr.notes == [] and not isinstance(opened.nodes, SavedNodes) and side.read_bytes() != first
    same_answers(opened, TraceModel.from_trace(Trace.load(p)))
    assert opened.marks[-1][1]["text"] == "more"


def test_glassgrad_view_opens_through_the_index_and_says_what_it_rebuilt(tmp_path, monkeypatch, capsys):
    import contextlib

    import tui.app
    import tui.gcpause
    from tui import cli

    monkeypatch.setenv("GLASSGRAD_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tui.gcpause, "paused_gc", lambda freeze=False: contextlib.nullcontext())  # tests never freeze
    shown = []
    monkeypatch.setattr(tui.app.GlassgradApp, "run", lambda self: shown.append(self.trace))
    p, side = _saved(tmp_path)
    (tmp_path / "t.jsonl.ggidx.npz").write_bytes(b"broken")
    assert cli.cmd_view(str(p), text=False) == 0
    (tr,) = shown
    assert tr.index is not None and isinstance(tr.model.nodes, SavedNodes)    # the same trace: its model holds
    assert capsys.readouterr().err == \
        f"glassgrad: the index {tmp_path / 't.jsonl.ggidx.npz'} was rebuilt: it is not an index (not a zip archive)\n"
    side.write_bytes(b"broken")
    assert cli.cmd_view(str(p), text=False) == 0
    assert not isinstance(shown[1].model.nodes, SavedNodes) and capsys.readouterr().err == \
        f"glassgrad: the saved model {side} was made again: it is not a saved model (not a zip archive)\n"
    assert cli.cmd_view(str(p), text=False) == 0     # both saved again: read back, nothing to say
    assert isinstance(shown[2].model.nodes, SavedNodes) and capsys.readouterr().err == ""
    same_answers(TraceModel.from_trace(shown[2]), TraceModel.from_trace(Trace.load(p)))


def test_a_streamed_model_holds_one_copy_of_each_key_and_answers_alike():
    tr = RECORDED["training loop"]()
    events = [json.loads(json.dumps(e)) for e in tr.events]      # one line at a time, as a stream is read
    assert len({id(next(iter(e))) for e in events}) == len(events)  # every event its own "seq"
    stream = TraceModel(None, tr.meta)
    for k in range(0, len(events), 7):
        stream.extend(events[k:k + 7])
    same_answers(stream, TraceModel(json.loads(json.dumps(tr.events)), tr.meta))
    firsts = [next(iter(e)) for e in stream.events]
    assert firsts[0] == "seq" and all(k is firsts[0] for k in firsts)
    phases = [e["phase"] for e in stream.events if e["phase"] == "forward"]
    assert all(p is phases[0] for p in phases)


def test_a_model_saved_a_slice_at_a_time_is_the_model_saved_at_once(tmp_path, monkeypatch):
    """NOTE [ A saved model ] rule 4: ``save_steps`` yields between slices and writes what ``save`` writes."""
    import numpy as np

    from replay import model_cache

    p, side = _saved(tmp_path)
    whole = dict(np.load(side, allow_pickle=False))
    m = TraceModel.from_trace(Trace.load(p))
    m_opened = TraceModel.from_trace(Trace.open(p))
    monkeypatch.setattr(model_cache, "SLICE", 3)
    out = tmp_path / "sliced.ggmodel.npz"
    writes = []
    steps = model_cache.save_steps(m_opened, str(out), write=lambda *a: writes.append(a) or model_cache.write_npz(*a))
    slices = 0
    while True:
        try:
            next(steps)
            slices += 1
        except StopIteration as done:
            assert done.value is True
            break
    nodes = len(m.nodes)
    assert nodes > 3 * 3 and slices >= nodes // 3                  # a yield every 3 nodes read
    assert len(writes) == 1 and writes[0][0] == str(out)
    sliced = dict(np.load(out, allow_pickle=False))
    assert sorted(sliced) == sorted(whole)
    for k, a in whole.items():
        assert np.array_equal(sliced[k], a), k
