"""A trace opened through its index (NOTE [ Trace index ]): the same events and refusals as Trace.load,
a sidecar that is trusted only when it names the file, and never code run from it."""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import trace_index
from engine.trace import Trace, TraceFormatError, safe_value

FIXTURE = Path(__file__).parents[1] / "tui" / "fixtures" / "mlp_trace.jsonl"


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def trace_file(tmp_path):
    p = tmp_path / "t.jsonl"
    shutil.copy(FIXTURE, p)
    return p


def _same_trace(a, b):
    """An opened trace holds the loaded one's events, made safe for a terminal (rule 5)."""
    assert len(a) == len(b) and list(a.events) == [safe_value(e) for e in b.events]
    assert a.meta == b.meta and a.created == b.created
    assert a.warnings == b.warnings and a.plain_events == b.plain_events


def test_an_old_trace_without_an_index_opens_and_gets_one(trace_file):
    tr = Trace.open(trace_file)
    _same_trace(tr, Trace.load(trace_file))
    assert tr.notes == [] and tr.index.stored_at == str(trace_file) + ".ggidx.npz"
    again = Trace.open(trace_file)
    assert again.notes == [] and again.index.stored_at == tr.index.stored_at
    _same_trace(again, Trace.load(trace_file))
    assert again.events[-1] == Trace.load(trace_file).events[-1] and again.events[3:6] == tr.events[3:6]


def test_the_index_columns_say_what_the_events_say(trace_file):
    tr = Trace.open(trace_file)
    idx = tr.index
    for i, e in enumerate(Trace.load(trace_file).events):
        assert idx.kinds[idx.kind[i]] == e["kind"]
        node = e.get("node")
        node = node.get("id") if isinstance(node, dict) else node
        assert idx.node[i] == (node if isinstance(node, int) else -1)
        assert idx.storage[i] == (e["storage"] if isinstance(e.get("storage"), int) else -1)
        if e["kind"] in ("alloc", "free"):
            assert idx.nbytes[i] == e["bytes"] and idx.reserved[i] == e.get("reserved", -1)
            assert idx.devices[idx.device[i]] == e["device"]


def test_a_changed_trace_gets_a_new_index(trace_file):
    Trace.open(trace_file)
    more = Trace.load(trace_file)
    more.events.append({"seq": more.events[-1]["seq"] + 1, "t": 9.0, "phase": "forward", "kind": "mark",
                        "text": "added"})
    more.save(trace_file)
    tr = Trace.open(trace_file)
    assert tr.notes == [] and len(tr) == len(more) and tr.events[-1]["text"] == "added"
    # same size and mtime, other bytes in the middle: the first/last blocks differ too for a small file
    text = trace_file.read_text().replace('"text": "added"', '"text": "other"')
    st = os.stat(trace_file)
    trace_file.write_text(text)
    os.utime(trace_file, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert Trace.open(trace_file).events[-1]["text"] == "other"


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "wrong_lengths", "bad_offsets", "no_header"])
def test_a_damaged_index_is_rebuilt_with_a_note(trace_file, damage):
    side = Path(Trace.open(trace_file).index.stored_at)
    raw = side.read_bytes()
    if damage == "truncate":
        side.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        side.write_bytes(b"\x00not a zip" * 50)
    elif damage == "empty":
        side.write_bytes(b"")
    else:
        with np.load(side, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        if damage == "wrong_lengths":
            arrays["kind"] = arrays["kind"][:-1]
        elif damage == "bad_offsets":
            arrays["offsets"] = arrays["offsets"][::-1].copy()
        else:
            del arrays["header"]
        with open(side, "wb") as f:
            np.savez(f, **arrays)
    tr = Trace.open(trace_file)
    assert len(tr.notes) == 1 and tr.notes[0].startswith(f"the index {side} was rebuilt: ")
    _same_trace(tr, Trace.load(trace_file))
    assert Trace.open(trace_file).notes == []      # the rebuilt one is good


def test_an_index_holding_a_pickle_is_refused_and_nothing_runs(trace_file, tmp_path):
    side = Path(Trace.open(trace_file).index.stored_at)
    with np.load(side, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    ran = tmp_path / "ran"
    arrays["kind"] = np.array([_Boom(str(ran))], dtype=object)
    with open(side, "wb") as f:
        np.savez(f, **arrays)
    tr = Trace.open(trace_file)
    assert tr.notes == [f"the index {side} was rebuilt: it holds a pickled object, which is never loaded"]
    assert not ran.exists()
    _same_trace(tr, Trace.load(trace_file))


class _Boom:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_an_index_from_another_trace_is_not_trusted(trace_file, tmp_path):
    other = tmp_path / "other.jsonl"
    with engine.record() as tr0:
        engine.randn(3, requires_grad=True).sin().sum().backward()
    tr0.save(other)
    shutil.copy(str(Trace.open(other).index.stored_at), str(trace_file) + ".ggidx.npz")
    tr = Trace.open(trace_file)
    assert tr.notes == []           # another version of the file: rebuilt quietly
    _same_trace(tr, Trace.load(trace_file))


def test_a_read_only_directory_uses_the_cache_then_memory(trace_file, tmp_path, monkeypatch):
    real_save = trace_index.save
    beside = str(trace_file) + ".ggidx.npz"
    monkeypatch.setattr(trace_index, "save", lambda idx, paths: real_save(idx, [p for p in paths if p != beside]
                                                                            + ["/proc/no/such/dir/x.npz"]))
    tr = Trace.open(trace_file)
    assert tr.index.stored_at.startswith(str(tmp_path / "cache" / "glassgrad" / "index"))
    assert not os.path.exists(beside) and Trace.open(trace_file).index.stored_at == tr.index.stored_at
    monkeypatch.setattr(trace_index, "save", lambda idx, paths: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache2"))
    tr = Trace.open(trace_file)
    assert tr.index.stored_at is None and tr.notes == [
        "the trace's index could not be saved (no writable place); it is kept in memory"]
    _same_trace(tr, Trace.load(trace_file))


def _bodies():
    head = json.dumps({"format": "glassgrad-trace", "version": 1, "meta": {}}) + "\n"
    ev = '{"seq": 0, "t": 0.0, "phase": "forward", "kind": "mark", "text": "a"}\n'
    return {
        "empty": "",
        "blank header": "\n",
        "header only, no newline": head[:-1],
        "truncated header": head[:20],
        "newer version": head.replace('"version": 1', '"version": 2') + ev,
        "version zero": head.replace('"version": 1', '"version": 0') + ev,
        "truncated last line": head + ev + ev.replace('"seq": 0', '"seq": 1')[:30],
        "bad json in the middle": head + ev + "{nope}\n" + ev,
        "blank line": head + ev + "\n" + ev,
        "seq goes back": head + ev + ev,
        "missing field": head + ev.replace(', "text": "a"', ""),
        "not utf-8": head + ev[:-3] + "\xff\"}\n",
        "unknown kind": head + ev.replace('"mark"', '"future"'),
        "escape in text": head + ev.replace('"a"', '"\\u001b[31mred"'),
        "last line without newline": head + ev[:-1],
    }


@pytest.mark.parametrize("name", list(_bodies()))
def test_open_refuses_what_load_refuses_in_the_same_words(tmp_path, name):
    body = _bodies()[name]
    p = tmp_path / "t.jsonl"
    p.write_bytes(body.encode().replace("\xff".encode(), b"\xff"))
    try:
        want = Trace.load(p)
    except TraceFormatError as e:
        with pytest.raises(TraceFormatError) as got:
            Trace.open(p)
        assert str(got.value) == str(e)
        assert not os.path.exists(str(p) + ".ggidx.npz")
        return
    tr = Trace.open(p)
    _same_trace(tr, want)
    if name == "escape in text":
        assert tr.events[0]["text"] == "\\x1b[31mred" and tr.plain_events == 0


def test_a_trace_bigger_than_one_piece_is_read_in_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_index, "PIECE", 512)
    p = tmp_path / "t.jsonl"
    shutil.copy(FIXTURE, p)
    _same_trace(Trace.open(p), Trace.load(p))
    bad = p.read_text().splitlines(keepends=True)
    bad[-5] = bad[-5].replace('"seq": ', '"seq": -')
    p.write_text("".join(bad))
    with pytest.raises(TraceFormatError, match=rf"line {len(bad) - 4}: seq -\d+ does not increase"):
        Trace.open(p)


def test_a_file_changed_after_opening_says_so(trace_file):
    tr = Trace.open(trace_file)
    trace_file.write_text(trace_file.read_text().replace("{", "["))
    with pytest.raises(TraceFormatError, match="line 2: the trace changed since it was opened"):
        tr.events[0]


def test_a_directory_or_fifo_is_refused(tmp_path):
    with pytest.raises(TraceFormatError, match="Is a directory"):
        Trace.open(tmp_path)
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(TraceFormatError, match="not a regular file"):
        Trace.open(fifo)


def test_a_first_open_reports_its_progress_and_a_later_one_reads_the_index(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_index, "PIECE", 4096)
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURE, path)
    size = path.stat().st_size
    seen = []
    Trace.open(path, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) > 1 and all(total == size for _, total in seen)
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == size
    again = []
    Trace.open(path, progress=lambda done, total: again.append(done))
    assert again == []
