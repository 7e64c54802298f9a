"""``import torch`` is glassgrad inside ``glassgrad run`` (NOTE [ import torch inside glassgrad run ]
in tui/torch_alias.py): what it maps, what it refuses and in which words, and that it ends with the run."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types

import pytest

import engine
from engine.trace import Trace
from tui import cli, record_worker
from tui.torch_alias import TorchAlias, torch_alias
from tui.torch_modules import MODULES


def _aliases_installed() -> bool:
    return any(isinstance(f, TorchAlias) for f in sys.meta_path)


def test_torch_and_its_submodules_are_glassgrads_modules():
    with torch_alias():
        import torch
        import torch.nn as nn  # noqa: PLR0402 - the form tutorials write
        import torch.nn.functional as F
        from torch import Tensor
        from torch.optim.lr_scheduler import StepLR
        from torch.utils.data import DataLoader

        assert torch is engine and sys.modules["torch"] is engine                       # rule 2
        assert nn is engine.nn and sys.modules["torch.nn"] is engine.nn
        assert F is engine.nn.functional and sys.modules["torch.nn.functional"] is engine.nn.functional
        assert sys.modules["torch.utils.data"] is engine.utils.data
        assert sys.modules["torch.optim.lr_scheduler"] is engine.optim.lr_scheduler
        assert (Tensor, StepLR, DataLoader) == (engine.Tensor, engine.optim.lr_scheduler.StepLR,
                                               engine.utils.data.DataLoader)
        # rule 7: the modules keep their own names and specs, so glassgrad imports itself as engine.*
        assert (engine.__name__, engine.__spec__.name, engine.nn.__spec__.name) == ("engine", "engine", "engine.nn")
        assert engine.nn.functional.__loader__ is engine.nn.functional.__spec__.loader


def test_modules_glassgrad_keeps_as_attributes():
    with torch_alias():
        import torch.backends.cudnn as cudnn  # noqa: PLR0402 - the form tutorials write
        from torch.cuda.amp import GradScaler

        assert cudnn is engine.backends.cudnn and sys.modules["torch.backends.cudnn"] is cudnn   # rule 3
        assert GradScaler is engine.cuda.amp.GradScaler
        assert engine.cuda.__path__ == []             # a package for the import system while the alias is on
        assert not hasattr(cudnn, "__spec__") and not hasattr(cudnn, "__path__")
    assert not hasattr(engine.cuda, "__path__") and not hasattr(engine.backends, "__path__")   # rule 8


@pytest.mark.parametrize("name, message", [
    ("torch.utils.tensorboard", "glassgrad does not implement torch.utils.tensorboard yet"),          # rule 4
    ("torch.cuda.nvtx", "glassgrad does not implement torch.cuda.nvtx yet"),
    ("torch._dynamo", "glassgrad does not implement torch._dynamo (a private part of PyTorch)"),       # rule 5
    ("torch.core", "No module named 'torch.core'"),                                                    # rule 6
    ("torch.nn.tensorboard", "No module named 'torch.nn.tensorboard'"),
])
def test_a_module_glassgrad_lacks_is_refused_in_words(name, message):
    assert (name in MODULES) == message.endswith(" yet")
    with torch_alias(), pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module(name)
    assert str(info.value) == message
    assert info.value.name == name


def test_the_alias_ends_with_the_block_and_gives_back_what_was_there():
    earlier = types.ModuleType("torch")                    # e.g. a real PyTorch imported before
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "torch" or k.startswith("torch.")}
    sys.modules["torch"] = earlier
    try:
        with torch_alias():
            import torch
            import torch.nn

            assert torch is engine and _aliases_installed()
        assert sys.modules["torch"] is earlier and "torch.nn" not in sys.modules
        assert not _aliases_installed()
    finally:
        del sys.modules["torch"]
        sys.modules.update(saved)


def test_the_worker_runs_import_torch_records_and_leaves_no_alias(tmp_path, monkeypatch, capsys):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "from torch import nn\n"
        "model = nn.Linear(3, 2)\n"
        "loss = model(torch.ones(4, 3)).pow(2).mean()\n"
        "loss.backward()\n"
        "print(torch.__name__, type(loss).__module__)\n")
    out = tmp_path / "run.jsonl"
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert "torch" not in sys.modules
    assert record_worker.main([str(script), str(out)]) == 0
    assert capsys.readouterr().out == "engine engine.core.tensor\n"
    assert "torch" not in sys.modules and not _aliases_installed()
    tr = Trace.load(str(out))
    ops = [(e["op"], e["line"]) for e in tr.events if e["kind"] == "op" and e["file"] == str(script)]
    assert ops == [("t", 4), ("addmm", 4), ("pow_scalar", 4), ("mean", 4)]       # nn.Linear, pow, mean
    assert sum(e["kind"] == "backward_begin" for e in tr.events) == 1


def test_glassgrad_run_of_a_program_needing_a_missing_module_says_which(tmp_path):
    script = tmp_path / "board.py"
    script.write_text("import torch\nfrom torch.utils.tensorboard import SummaryWriter\n")
    out = tmp_path / "run.jsonl"
    argv, env = record_worker.command(str(script), str(out))
    res = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=str(tmp_path), timeout=120,
                         check=False)
    assert res.returncode == 1
    assert res.stderr.splitlines()[-1] == \
        "ModuleNotFoundError: glassgrad does not implement torch.utils.tensorboard yet"
    assert "torch_alias" not in res.stderr                  # the learner's frames only
    with open(f"{out}.error.json", encoding="utf-8") as f:
        err = json.load(f)
    assert (err["type"], err["line"], os.path.basename(err["file"])) == ("ModuleNotFoundError", 2, "board.py")


def test_glassgrad_run_help_says_import_torch_is_glassgrad(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Inside the script `import torch` is glassgrad, even where PyTorch is installed" in text
