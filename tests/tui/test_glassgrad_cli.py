"""The glassgrad command without a terminal: text and pictures instead of the app."""
import json
import os
import sys

import pytest

from tui import cli

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mlp_trace.jsonl")


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch, tmp_path):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("GLASSGRAD_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def test_interactive_is_false_in_ci():
    assert cli.interactive() is False


def test_lessons_lists_one_line_each(capsys):
    assert cli.main(["lessons"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["1", "first_graph"]
    assert [ln.split()[0] for ln in lines[:5]] == ["1", "2", "3", "4", "5"]


def test_lesson_prints_text_and_writes_pictures(capsys, tmp_path):
    assert cli.main(["lesson", "1"]) == 0
    out = capsys.readouterr().out
    assert "== Step 1/4: Forward builds a graph ==" in out
    assert "✓ backward ran SumBackward0 -> CosBackward0 -> SinBackward0" in out
    assert (tmp_path / "glassgrad-out" / "lesson_01_first_graph" / "trace.jsonl").exists()


def test_lesson_by_name_and_unknown_lesson(capsys):
    assert cli.main(["lesson", "inplace_versions", "--out", "pics"]) == 0
    assert "Lesson 4" in capsys.readouterr().out
    assert cli.main(["lesson", "42"]) == 2
    assert "no lesson '42'" in capsys.readouterr().err


def test_no_command_without_a_terminal_lists_and_runs_lesson_1(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(" 1  first_graph")
    assert "Lesson 1 · Your first graph" in out


def test_view_prints_a_summary(capsys):
    assert cli.main(["view", FIXTURE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mlp_trace.jsonl: 133 events")
    assert "peak live memory:" in out
    from tui import recent
    assert recent.load() == [os.path.abspath(FIXTURE)]


def test_view_bad_files_give_a_clear_message(capsys, tmp_path):
    assert cli.main(["view", "missing.jsonl"]) == 2
    assert "no such trace file: missing.jsonl" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n")
    assert cli.main(["view", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("glassgrad: ") and "bad.jsonl" in err and "Traceback" not in err


def test_the_worker_finds_this_checkout_installed_or_not(monkeypatch):
    import os
    import sys
    from tui.record_worker import command
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    argv, env = command("prog.py", "out.jsonl")
    assert argv == [sys.executable, "-m", "tui.record_worker", "prog.py", "out.jsonl"]
    assert env["PYTHONPATH"].split(os.pathsep) == [root, "/elsewhere"]


def test_run_records_a_script(capsys, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import engine as torch\n"
                      "x = torch.ones(3, requires_grad=True)\n"
                      "(x * 2).sum().backward()\n"
                      "print('grad', x.grad.tolist())\n")
    out_path = tmp_path / "run.jsonl"
    rc = cli.main(["run", str(script), "--out", str(out_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "prog.py:" in out and f"trace saved to {out_path}" in out
    lines = out_path.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "glassgrad-trace"
    kinds = [json.loads(ln)["kind"] for ln in lines[1:]]
    assert "backward_begin" in kinds and "execute" in kinds
    assert not (tmp_path / "run.jsonl.part").exists()


def test_run_reports_a_failing_script(capsys, tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("raise SystemExit(3)\n")
    assert cli.main(["run", str(script)]) == 3
    assert "exited with status 3" in capsys.readouterr().err
    assert cli.main(["run", "nowhere.py"]) == 2


def test_render_delegates_to_viz(capsys, monkeypatch):
    seen = []
    import types
    fake = types.ModuleType("viz.cli")
    fake.render_main = lambda argv: seen.append(argv) or 0
    monkeypatch.setitem(sys.modules, "viz.cli", fake)
    assert cli.main(["render", "t.jsonl", "--graph", "g.svg"]) == 0
    assert seen == [["t.jsonl", "--graph", "g.svg"]]


@pytest.mark.parametrize("argv", [[], ["lesson"], ["lessons"], ["run"], ["view"]])
def test_every_command_has_help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv + ["--help"])
    assert exc.value.code == 0
    assert "usage: glassgrad" in capsys.readouterr().out


BAD = ("import engine as torch\n"
       "def f(a):\n"
       "    return a @ torch.ones(4, 5)\n"
       "f(torch.ones(2, 3))\n")


def test_run_traceback_has_only_the_learners_frames(capfd, tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(BAD)
    assert cli.main(["run", str(script), "--out", "t.jsonl"]) == 1
    err = capfd.readouterr().err
    files = [ln.strip() for ln in err.splitlines() if ln.strip().startswith("File ")]
    assert len(files) == 2 and all("bad.py" in f for f in files), err
    assert "line 4, in <module>" in files[0] and "line 3, in f" in files[1]
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in err
    assert (tmp_path / "t.jsonl").exists() and not (tmp_path / "t.jsonl.error.json").exists()


def test_run_full_traceback_keeps_glassgrads_frames(capfd, tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(BAD)
    assert cli.main(["run", str(script), "--full-traceback"]) == 1
    err = capfd.readouterr().err
    assert "record_worker.py" in err and os.path.join("engine", "") in err


def test_run_syntax_error_writes_no_trace(capfd, tmp_path):
    script = tmp_path / "syn.py"
    script.write_text("x = 1\nif x\n    print(x)\n")
    assert cli.main(["run", str(script), "--out", "t.jsonl"]) == 1
    err = capfd.readouterr().err
    assert 'syn.py", line 2' in err and "if x" in err and "SyntaxError" in err
    assert "no trace was written" in err
    assert not any(p.name.startswith("t.jsonl") for p in tmp_path.iterdir())


def test_run_into_a_closed_pipe_ends_quietly(tmp_path):
    import subprocess

    script = tmp_path / "many.py"
    script.write_text("for i in range(200000):\n    print(i)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.Popen([sys.executable, "-m", "tui.cli", "run", str(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=root, env=dict(os.environ, CI="true"))
    assert p.stdout.readline() == b"0\n"
    p.stdout.close()                       # what head does after its lines
    err = p.stderr.read().decode()
    assert p.wait(60) == 0
    assert "BrokenPipeError" not in err and "Traceback" not in err, err


def test_lessons_names_the_modules_python_m_runs(capsys):
    import importlib

    assert cli.main(["lessons"]) == 0
    out = capsys.readouterr().out
    assert "python -m lessons.lesson_01_first_graph" in out
    importlib.import_module("lessons.lesson_01_first_graph")      # the module that line names exists
