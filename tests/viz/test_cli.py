"""`glassgrad render` (viz.cli.render_main): help, outputs, and clear errors."""
import shutil
import subprocess
import sys

import pytest

from viz.cli import render_main

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz `dot` is not installed (apt-get install graphviz)")


@pytest.fixture
def trace_file(mlp_trace, tmp_path):
    p = tmp_path / "run.jsonl"
    mlp_trace[0].save(p)
    return p


def test_help_shows_examples(capsys):
    assert render_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: glassgrad render")
    assert "examples:" in out and "--compare checkpointed.jsonl" in out and "--expand-modules" in out


def test_nothing_to_draw(trace_file, capsys):
    assert render_main([str(trace_file)]) == 2
    assert "nothing to draw: give --graph OUT, --memory OUT, --perfetto OUT and/or --snapshot OUT" in capsys.readouterr().err


def test_step_and_phase_exclude_each_other(trace_file, tmp_path, capsys):
    assert render_main([str(trace_file), "--graph", str(tmp_path / "g.dot"), "--step", "3",
                        "--phase", "backward"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_missing_trace(tmp_path, capsys):
    assert render_main([str(tmp_path / "nope.jsonl"), "--graph", str(tmp_path / "g.svg")]) == 2
    assert f"trace file '{tmp_path / 'nope.jsonl'}' does not exist" in capsys.readouterr().err


def test_bad_formats_and_folders(trace_file, tmp_path, capsys):
    assert render_main([str(trace_file), "--graph", str(tmp_path / "g.jpg")]) == 2
    assert "unsupported file type .jpg; use one of .svg, .png, .pdf, .dot, .gv" in capsys.readouterr().err
    assert render_main([str(trace_file), "--memory", str(tmp_path / "m.dot")]) == 2
    assert "use one of .png, .svg, .pdf" in capsys.readouterr().err
    assert render_main([str(trace_file), "--graph", str(tmp_path / "no" / "g.svg")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.jpg"))


def test_step_out_of_range(trace_file, tmp_path, capsys):
    n = sum(1 for _ in open(trace_file)) - 1
    assert render_main([str(trace_file), "--graph", str(tmp_path / "g.dot"), "--step", str(n)]) == 2
    assert f"--step {n} is out of range: the trace has {n} events (0..{n - 1}, or -{n}..-1" in capsys.readouterr().err


def test_not_a_trace(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n")
    assert render_main([str(bad), "--graph", str(tmp_path / "g.dot")]) == 2
    assert f"cannot read trace '{bad}'" in capsys.readouterr().err


def test_dot_text_and_memory_with_progress(trace_file, tmp_path, capsys):
    g, m = tmp_path / "g.dot", tmp_path / "m.png"
    assert render_main([str(trace_file), "--graph", str(g), "--memory", str(m), "--phase", "backward"]) == 0
    err = capsys.readouterr().err
    assert "reading" in err and f"wrote {g}" in err and f"wrote {m}" in err
    src = g.read_text()
    assert src.startswith("digraph autograd {") and "0.weight" in src and "(backward)" in src
    assert m.read_bytes().startswith(b"\x89PNG")
    assert render_main([str(trace_file), "--graph", str(g), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_compare_needs_memory(trace_file, tmp_path, capsys):
    assert render_main([str(trace_file), "--graph", str(tmp_path / "g.dot"), "--compare", str(trace_file)]) == 2
    assert "--compare draws memory" in capsys.readouterr().err
    assert render_main([str(trace_file), "--memory", str(tmp_path / "c.svg"), "--compare", str(trace_file)]) == 0
    assert "<svg" in (tmp_path / "c.svg").read_text()


@needs_dot
def test_renders_images(trace_file, tmp_path):
    for fmt, magic in (("svg", b"<?xml"), ("png", b"\x89PNG"), ("pdf", b"%PDF")):
        out = tmp_path / f"g.{fmt}"
        assert render_main([str(trace_file), "--graph", str(out), "--step", "30", "-q"]) == 0
        assert out.read_bytes().startswith(magic)


def test_missing_dot_exit_status(trace_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert render_main([str(trace_file), "--graph", str(tmp_path / "g.png"), "-q"]) == 1
    assert "sudo apt-get install graphviz" in capsys.readouterr().err


def test_python_m_viz():
    r = subprocess.run([sys.executable, "-m", "viz", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "examples:" in r.stdout


def test_empty_trace(tmp_path, capsys):
    import engine
    with engine.record() as tr:
        pass
    p = tmp_path / "empty.jsonl"
    tr.save(p)
    assert render_main([str(p), "--graph", str(tmp_path / "g.dot")]) == 2
    assert "has no events: nothing to draw" in capsys.readouterr().err


def test_negative_step_counts_from_the_end_and_is_documented(trace_file, tmp_path, capsys):
    n = sum(1 for _ in open(trace_file)) - 1
    assert render_main([str(trace_file), "--graph", str(tmp_path / "a.dot"), "--step", "-5", "-q"]) == 0
    assert render_main([str(trace_file), "--graph", str(tmp_path / "b.dot"), "--step", str(n - 5), "-q"]) == 0
    assert (tmp_path / "a.dot").read_text() == (tmp_path / "b.dot").read_text()
    assert render_main([str(trace_file), "--graph", str(tmp_path / "c.dot"), "--step", str(-n - 1)]) == 2
    assert f"or -{n}..-1 counting from the end" in capsys.readouterr().err
    try:
        render_main(["--help"])
    except SystemExit:
        pass
    assert "-1 is the last event" in " ".join(capsys.readouterr().out.split())


def test_render_writes_perfetto_and_snapshot_exports(tmp_path, capsys):
    import json
    import pickle

    import engine as torch
    from viz.cli import render_main
    with torch.record() as tr:
        (torch.ones(3, requires_grad=True) * 2).sum().backward()
    tr.save(tmp_path / "t.jsonl")
    rc = render_main([str(tmp_path / "t.jsonl"), "--perfetto", str(tmp_path / "p.json"),
                      "--snapshot", str(tmp_path / "s.pickle")])
    assert rc == 0
    err = capsys.readouterr().err
    assert "open it at ui.perfetto.dev" in err and "open it at pytorch.org/memory_viz" in err
    assert json.loads((tmp_path / "p.json").read_text())["traceEvents"]
    assert set(pickle.loads((tmp_path / "s.pickle").read_bytes())) == {"segments", "device_traces"}
    assert render_main([str(tmp_path / "t.jsonl"), "--graph", str(tmp_path / "g.svg"), "--time-budget", "0"]) == 2
