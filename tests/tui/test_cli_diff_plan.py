"""glassgrad diff and glassgrad plan from the command line."""
import engine as torch
from tui.cli import main


def _save(path, batch):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    with torch.record() as tr:
        m(torch.randn(batch, 8)).sum().backward()
    tr.save(path)


def test_diff_prints_both_peaks_and_the_nodes_that_save_differently(tmp_path, capsys):
    _save(tmp_path / "a.jsonl", 16)
    _save(tmp_path / "b.jsonl", 4)
    assert main(["diff", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--png", str(tmp_path / "d.png")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("A = a.jsonl (") and "B = b.jsonl (" in out
    assert "the forward graphs have the same nodes" in out
    assert "TanhBackward0 saves 1.0 KiB in A, 256 B in B" in out
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"


def test_diff_of_a_missing_file_says_so(tmp_path, capsys):
    assert main(["diff", str(tmp_path / "nope.jsonl"), str(tmp_path / "nope2.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_plan_runs_through_the_glassgrad_command(tmp_path, capsys):
    script = tmp_path / "chain.py"
    script.write_text("import engine as torch\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())\n"
                      "example_input = torch.randn(8, 4)\n")
    assert main(["plan", str(script), "--png", str(tmp_path / "p.png")]) == 0
    assert capsys.readouterr().out.startswith("2 layers; one forward costs")
