"""`glassgrad run --full-traceback` hands the worker its setting without changing the caller's environment."""
import os

from tui import cli


def test_full_traceback_is_the_workers_only(capfd, tmp_path, monkeypatch):
    monkeypatch.delenv("GLASSGRAD_FULL_TRACEBACK", raising=False)
    script = tmp_path / "bad.py"
    script.write_text("import engine as torch\ntorch.ones(2, 3) @ torch.ones(4, 5)\n")
    assert cli.main(["run", str(script), "--full-traceback", "--out", str(tmp_path / "t.jsonl")]) == 1
    assert "record_worker.py" in capfd.readouterr().err           # the worker saw it
    assert "GLASSGRAD_FULL_TRACEBACK" not in os.environ
    monkeypatch.setenv("GLASSGRAD_FULL_TRACEBACK", "0")
    cli.main(["run", str(script), "--full-traceback", "--out", str(tmp_path / "u.jsonl")])
    assert os.environ["GLASSGRAD_FULL_TRACEBACK"] == "0"
