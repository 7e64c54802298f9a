"""A build hands each piece's checked events on as it reads (NOTE [ Trace index ] rule 9)."""
import json

import pytest

import engine.trace_head as th
import engine.trace_index as ti
from engine.trace import Trace, TraceFormatError
from tests.replay.traces import RECORDED


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def saved(tmp_path):
    p = tmp_path / "t.jsonl"
    RECORDED["training loop"]().save(p)
    return p


def test_the_pieces_are_the_trace_events_with_their_line_offsets(saved, monkeypatch):
    monkeypatch.setattr(ti, "PIECE", 2048)
    got = []
    tr = Trace.open(saved, pieces=got.append)
    assert len(got) > 3                                   # several pieces, each handed on once
    events = [e for piece in got for e in piece]
    assert events == Trace.load(saved).events
    raw = saved.read_bytes()
    off = tr.index.offsets
    k = 0
    for piece in got:
        assert piece.start == off[k] and piece.ends == off[k + 1:k + 1 + len(piece)].tolist()
        for e, end in zip(piece, piece.ends):
            line = raw[off[k]:end]
            assert line.endswith(b"\n") and json.loads(line) == e
            k += 1
        assert piece.plain                                  # recorded text is plain (trace_text rule 5)
    assert k == len(tr)


def test_pieces_before_a_damaged_line_are_handed_on_and_the_build_still_fails(saved, monkeypatch, tmp_path):
    monkeypatch.setattr(ti, "PIECE", 2048)
    lines = saved.read_text().splitlines()
    bad_at = len(lines) - 5
    lines[bad_at] = lines[bad_at][:-9]                       # cut inside the JSON
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    got = []
    with pytest.raises(TraceFormatError, match=f"line {bad_at + 1}:"):
        Trace.open(bad, pieces=got.append)
    n = sum(len(p) for p in got)
    assert 0 < n < bad_at - 1 and [e for p in got for e in p] == Trace.load(saved).events[:n]
    assert not th.has_index(bad)


def test_has_index_names_the_file_as_it_is_now(saved):
    assert not th.has_index(saved)
    Trace.open(saved)
    assert th.has_index(saved)
    with open(saved, "a") as f:                             # the trace changed: its index no longer names it
        f.write("\n")
    assert not th.has_index(saved)


def test_read_head_checks_the_header_line(saved, tmp_path):
    meta, _ = th.read_head(saved)
    assert meta == Trace.load(saved).meta
    other = tmp_path / "other.jsonl"
    other.write_text('{"format": "something-else", "version": 1}\n')
    with pytest.raises(TraceFormatError, match="not a glassgrad trace"):
        th.read_head(other)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(TraceFormatError, match="empty file"):
        th.read_head(empty)


def test_a_followed_files_reader_holds_the_events_folded_in_so_far(saved, tmp_path):
    from engine.trace_index import FollowedEvents, LineTail

    tail, followed = LineTail(saved, piece=4096), FollowedEvents(saved)
    lines = tail.read()
    followed.add(lines.start, lines.ends, list(lines))
    r = followed.reader()
    more = tail.read()
    followed.add(more.start, more.ends, list(more))
    events = Trace.load(saved).events
    assert len(r) == len(lines) < len(followed) and list(r) == events[:len(lines)]
    assert r.of_kinds(("op",)) == [(i, e) for i, e in enumerate(events[:len(lines)]) if e["kind"] == "op"]
    r.close()
