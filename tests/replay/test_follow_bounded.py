"""A followed run (NOTE [ A followed run ] in replay/index.py): offsets kept, events read back, memory bounded."""
import json
import os
import tracemalloc

import pytest

from engine import trace_lines
from engine.trace import Trace
from engine.trace_index import FOLLOW_CACHE, FollowedEvents, LineTail
from replay.index import settle
from replay.model import TraceModel
from tests.replay.test_scale import same_answers
from tests.replay.traces import RECORDED

HEADER = json.dumps({"format": trace_lines.FORMAT, "version": trace_lines.VERSION}) + "\n"


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _write_part(path, events, cut: int | None = None):
    """What the run's worker writes: its header, then one line an event (the last ``cut`` bytes left off)."""
    data = (HEADER + "".join(json.dumps(e) + "\n" for e in events)).encode("utf-8")
    path.write_bytes(data if cut is None else data[:-cut])
    return data


def _follow(path, piece: int):
    """The model a followed run builds, reading ``path`` ``piece`` bytes at a time as the app's reader does."""
    m, tail = TraceModel.followed(path), LineTail(path, piece=piece)
    while True:
        lines = tail.read()
        if not lines and tail.pos + len(tail._rest) >= os.path.getsize(path):
            break
        if lines:
            m.extend(lines)
    tail.close()
    return m


@pytest.fixture(scope="module")
def training():
    tr = RECORDED["training loop"]()
    return tr, json.loads(json.dumps(tr.events))


def test_a_followed_model_answers_as_the_model_of_the_whole_trace(tmp_path, training):
    tr, events = training
    part = tmp_path / "run.jsonl.part"
    _write_part(part, events)
    m = _follow(part, piece=997)                      # pieces end mid-line
    assert isinstance(m.events, FollowedEvents) and len(m) == len(events)
    same_answers(m, TraceModel(json.loads(json.dumps(events))))
    tr.save(str(tmp_path / "run.jsonl"))
    saved = Trace.open(str(tmp_path / "run.jsonl"))
    assert settle(m, saved) and m.index is saved.index and m.events is saved.events
    same_answers(m, TraceModel.from_trace(Trace.load(str(tmp_path / "run.jsonl"))))
    with pytest.raises(TypeError):
        m.extend([])                                  # settled: a model of the whole saved file


def test_a_saved_trace_of_another_length_is_not_used(tmp_path, training):
    tr, events = training
    part = tmp_path / "run.jsonl.part"
    _write_part(part, events[:-5])
    m = _follow(part, piece=1 << 16)
    tr.save(str(tmp_path / "run.jsonl"))
    assert not settle(m, Trace.open(str(tmp_path / "run.jsonl")))
    assert m.index is None and isinstance(m.events, FollowedEvents) and len(m) == len(events) - 5


def test_events_are_read_back_by_offset_also_once_the_file_is_removed(tmp_path, training):
    _, events = training
    part = tmp_path / "run.jsonl.part"
    data = _write_part(part, events)
    m = _follow(part, piece=4096)
    ev = m.events
    assert list(ev._off) == [len(HEADER.encode())] + [data.index(b"\n", o) + 1 for o in ev._off[:-1]]
    ev._cache.clear()
    for i in (0, 1, len(events) // 2, len(events) - 1, -1):
        assert ev[i] == events[i]
    assert ev[3:9] == events[3:9] and list(ev) == events
    assert ev.of_kinds(("execute",), 10) == [(i, e) for i, e in enumerate(events) if i >= 10 and e["kind"] == "execute"]
    ev.hold()
    os.remove(part)
    ev._cache.clear()
    assert ev[5] == events[5] and ev[-1] == events[-1]
    with pytest.raises(IndexError):
        ev[len(events)]


def test_a_line_still_being_written_is_read_once_complete(tmp_path, training):
    _, events = training
    part = tmp_path / "run.jsonl.part"
    data = _write_part(part, events[:3], cut=7)       # the worker is mid-way through its third line
    tail = LineTail(part)
    first = tail.read()
    assert first == events[:2] and tail.pos == data.rindex(b"\n", 0, len(data) - 1) + 1
    assert tail.header == json.loads(HEADER) and first.start == len(HEADER)
    assert tail.read() == []                          # nothing more yet
    with open(part, "ab") as f:
        f.write(data[-7:] + (json.dumps(events[3]) + "\n{\"seq\": ").encode())
    more = tail.read()
    assert more == events[2:4] and more.start == first.ends[-1] and more.ends[-1] == tail.pos
    m = TraceModel.followed(part)
    m.extend(first)
    m.extend(more)
    m.events._cache.clear()
    assert [m.events[i] for i in range(4)] == events[:4]
    with pytest.raises(ValueError):                   # lines must follow the last ones folded in
        m.extend(more)


def _memory_lines(lo: int, hi: int) -> str:
    """Lines of a long run: each event allocates a storage or frees the one before."""
    out = []
    for i in range(lo, hi):
        k = "alloc" if i % 2 == 0 else "free"
        out.append(json.dumps({"seq": i, "t": 0.0, "phase": "forward", "kind": k, "storage": i // 2,
                               "bytes": 4096, "device": "cpu", "category": "activation", "note": "x" * 40}))
    return "\n".join(out) + "\n"


def test_fifty_thousand_streamed_lines_leave_a_bounded_number_of_events_held(tmp_path):
    part = tmp_path / "run.jsonl.part"
    part.write_text(HEADER)
    m, tail = TraceModel.followed(part), LineTail(part)
    held = []
    chunks = [_memory_lines(lo, lo + 5_000) for lo in range(0, 50_000, 5_000)]   # written untraced
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        parsed = [json.loads(s) for s in chunks[0].splitlines()]
        parsed_size = (tracemalloc.get_traced_memory()[0] - before) / 5_000     # what holding the events costs
        del parsed
        for lo, chunk in zip(range(0, 50_000, 5_000), chunks):
            with open(part, "a", encoding="utf-8") as f:
                f.write(chunk)
            while lines := tail.read():
                m.extend(lines)
                held.append(len(m.events._cache))
            if lo == 10_000:
                at_15k = tracemalloc.get_traced_memory()[0]
        per_event = (tracemalloc.get_traced_memory()[0] - at_15k) / 35_000
    finally:
        tracemalloc.stop()
    assert len(m) == 50_000 and max(held) <= FOLLOW_CACHE
    assert per_event < parsed_size / 4, (per_event, parsed_size)
    assert m.memory.total[-1] == 0 and m.memory.peak_bytes == 4096
    assert m.storage_at(7, 13) is None and m.storage_at(7, 14) == (4096, "activation", True)
    assert m.storage_at(7, 15) == (4096, "activation", False)
    m.events._cache.clear()
    assert m.events[49_999] == json.loads(_memory_lines(49_999, 50_000))


def test_bytes_alive_before_the_run_count_once_the_saved_trace_is_used(tmp_path, training):
    tr, events = training
    part = tmp_path / "run.jsonl.part"
    _write_part(part, events)
    m = _follow(part, piece=1 << 16)
    before = list(m.memory.total)
    tr.meta = dict(tr.meta, memory_at_start={"cpu": {"by_category": {"parameter": 4096}, "reserved": 8192}})
    tr.save(str(tmp_path / "run.jsonl"))
    assert settle(m, Trace.open(str(tmp_path / "run.jsonl")))
    assert list(m.memory.total) == [b + 4096 for b in before]
    same_answers(m, TraceModel.from_trace(Trace.load(str(tmp_path / "run.jsonl"))))


def _record_steps(steps: int):
    """A training run of ``steps`` SGD steps of a small MLP, recorded as ``glassgrad run`` records one."""
    import engine as torch
    import engine.nn.functional as F
    from engine import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 8), torch.tensor([0, 1, 2, 3])
    with torch.record() as tr:
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    return json.loads(json.dumps(tr.events))


def test_a_followed_training_run_holds_few_bytes_per_event_folded_in(tmp_path):
    """NOTE [ Settled nodes ]: each step's nodes are packed once its graph retires, its memory rows held
    as changes, so what the model holds grows by a few dozen bytes an event (it was ~180)."""
    events = _record_steps(160)
    part = tmp_path / "run.jsonl.part"
    _write_part(part, events)
    m, tail = TraceModel.followed(part), LineTail(part, piece=1 << 15)
    marks = []
    tracemalloc.start()
    try:
        while lines := tail.read():
            m.extend(lines)
            del lines
            if len(m) >= len(events) // 4 and len(marks) < 1 or len(m) == len(events):
                m.events._cache.clear()               # read-back events kept: FOLLOW_CACHE at most
                marks.append((len(m), tracemalloc.get_traced_memory()[0]))
    finally:
        tracemalloc.stop()
    (n0, b0), (n1, b1) = marks[0], marks[-1]
    assert n1 == len(events) and n1 - n0 > 10_000
    per_event = (b1 - b0) / (n1 - n0)
    assert per_event < 84, per_event                  # 0.08 MiB per 1,000 events
    assert len(m.nodes.live) < 100 and len(m._kept) >= 150     # the steps' graphs retired, their nodes packed
