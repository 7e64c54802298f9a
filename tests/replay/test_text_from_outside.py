"""Text from a trace reaches no terminal raw: the model, the words, the picture and `view --text`
carry a crafted op name's escape sequences as visible escapes."""
from __future__ import annotations

import dataclasses
import json
import re
import unicodedata

import pytest

from engine.trace import Trace, safe_text, safe_value
from replay.graph import graph_at
from replay.model import TraceModel
from replay.words import event_line

EVIL = "mul\x1b]0;pwned\x07\x1b[31m"
SHOWN = "mul\\x1b]0;pwned\\x07\\x1b[31m"     # what a reader sees instead
TI = {"id": 2, "storage": 1, "shape": [2], "dtype": "float32", "bytes": 8, "storage_bytes": 8, "device": "cpu",
      "requires_grad": True, "leaf": True, "grad_fn": None, "name": "layer\x1b[2J.weight"}


def _unsafe(s: str) -> list:
    """The characters of ``s`` a terminal would act on: controls other than newline and tab, bidi controls."""
    return [c for c in s if (unicodedata.category(c) == "Cc" and c not in "\n\t")
            or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]


def _strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(k)
            yield from _strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x)


def _trace_text() -> str:
    head = {"format": "glassgrad-trace", "version": 1, "meta": {"script": "a\x1b[Hb.py"},
            "created": "2026-11-22T18:37:31+00:00"}
    out = dict(TI, id=4, storage=3, leaf=False, requires_grad=True, grad_fn=5, name=None)
    node = {"id": 5, "name": "Evil\x1b]0;pwned\x07Backward0", "next": [[6, 0, "AccumulateGrad"]], "saved": [],
            "attrs": {"dim\x1b": "x\x9b1m"}}
    evs = [
        {"kind": "alloc", "storage": 3, "bytes": 8, "device": "cpu", "category": "other"},
        {"kind": "leaf", "node": 6, "name": "AccumulateGrad", "tensor": TI},
        {"kind": "op", "op": EVIL, "inputs": [TI], "output": out, "node": node, "file": "/tmp/\x1b[31mx.py",
         "line": 3, "region": None},
        {"kind": "mark", "text": "note\u202eevil\x1b[0m", "line\x07": "multi\nline"},
        {"kind": "x\x1b[2Jkind"},
    ]
    lines = [json.dumps(head)]
    lines += [json.dumps({"seq": i, "t": 0.1 * i, "phase": "forward", **e}) for i, e in enumerate(evs)]
    return "\n".join(lines) + "\n"


def test_safe_text_escapes_controls_and_keeps_lines():
    assert safe_text(EVIL) == SHOWN
    assert safe_text("a\u202eb\x00c\x7fd\x9be") == "a\\u202eb\\x00c\\x7fd\\x9be"
    assert safe_text("two\nlines\tand ünïcode →") == "two\nlines\tand ünïcode →"
    assert safe_text(SHOWN) == SHOWN                       # idempotent


def test_safe_value_copies_only_what_changes():
    clean = {"a": [1, "x", {"b": None}]}
    assert safe_value(clean) is clean
    dirty = {"a": 1, "b": ["ok", EVIL], "c": {"k\x1b": "v"}}
    got = safe_value(dirty)
    assert got == {"a": 1, "b": ["ok", SHOWN], "c": {"k\\x1b": "v"}}
    assert dirty["b"][1] == EVIL                            # the input is not changed


def test_model_holds_only_safe_text():
    tr = Trace.loads(_trace_text(), "evil.jsonl")
    assert tr.events[2]["op"] == EVIL                       # the trace keeps what the file says
    m = TraceModel.from_trace(tr)
    strings = [s for e in m.events for s in _strings(e)] + list(_strings(m.meta))
    assert strings and all(not _unsafe(s) for s in strings)
    assert m.events[2]["op"] == SHOWN and m.meta["script"] == "a\\x1b[Hb.py"
    assert m.nodes[5].name == "Evil\\x1b]0;pwned\\x07Backward0"
    assert m.events[3]["line\\x07"] == "multi\nline"
    assert m.events[0] is tr.events[0]                     # a clean event is not copied


def test_words_and_graph_of_the_model_are_safe():
    m = TraceModel.from_trace(Trace.loads(_trace_text(), "evil.jsonl"))
    lines = [event_line(e) for e in m.events]
    assert any("pwned" in s for s in lines) and not [c for s in lines for c in _unsafe(s)]
    g = graph_at(m, 2)
    names = [s for n in g.nodes.values() for s in _strings(dataclasses.asdict(n))]
    assert "Evil\\x1b]0;pwned\\x07Backward0" in names and not [c for s in names for c in _unsafe(s)]


def test_graph_picture_source_is_safe():
    from viz.graph_dot import graph_picture
    pic = graph_picture(Trace.loads(_trace_text(), "evil.jsonl"), 2)
    assert "pwned" in pic.source and not _unsafe(pic.source)


def test_view_text_prints_no_escape_sequence(tmp_path, capsys):
    from tui.cli import main
    p = tmp_path / "evil.jsonl"
    p.write_text(_trace_text())
    assert main(["view", "--text", str(p)]) == 0
    out = capsys.readouterr().out
    assert "x\\x1b[2Jkind 1" in out and not _unsafe(out)


@pytest.mark.parametrize("bad", ['{"seq": 0, "t": 0, "phase": "\\u001b]0;pwned\\u0007", "kind": "mark"}\n',
                                 ('{"seq": 0, "t": 0, "phase": "forward", "kind": "alloc", "storage": 1, '
                                  '"bytes": 1, "device": "cpu", "category": "\\u001b[31m"}\n')])
def test_errors_about_a_file_quote_its_text_safely(tmp_path, capsys, bad):
    from tui.cli import main
    p = tmp_path / "bad\x1b[31m.jsonl"
    p.write_text(json.dumps({"format": "glassgrad-trace", "version": 1}) + "\n" + bad)
    assert main(["view", "--text", str(p)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"line 2: ", err) and not _unsafe(err)


@pytest.mark.parametrize("s", [EVIL, "a\rb", "a\x00", "a\x7f", "a\x9bb", "x\u202ey", "x\u2066y", "\b", "\f"])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_plain_json_never_misses_unsafe_text(s, ascii_only):
    from engine.trace import plain_json
    assert safe_text(s) != s
    assert not plain_json(json.dumps({"op": s}, ensure_ascii=ascii_only))


def test_a_plain_trace_skips_the_walk_and_a_dirty_one_does_not():
    dirty = Trace.loads(_trace_text(), "evil.jsonl")
    assert dirty.plain_events == 0
    clean_text = _trace_text().replace("\\u001b", "").replace("\\u0007", "").replace("\\u202e", "").replace(
        "\\u009b", "")
    clean = Trace.loads(clean_text, "clean.jsonl")
    assert clean.plain_events == len(clean) == 5
    m = TraceModel.from_trace(clean)
    assert all(a is b for a, b in zip(m.events, clean.events))
    assert not [c for e in m.events for s in _strings(e) for c in _unsafe(s)]
