"""engine.hub over local directories: entry points, dependencies, trust, errors."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import engine as torch

HUB = Path(__file__).resolve().parents[2] / "examples" / "hub"
XOR_IN = [[0., 0.], [0., 1.], [1., 0.], [1., 1.]]


@pytest.fixture(autouse=True)
def fresh_trust(monkeypatch):
    monkeypatch.setattr(torch.hub, "_trusted", set())


def make_repo(tmp_path, body: str) -> Path:
    (tmp_path / "hubconf.py").write_text(textwrap.dedent(body))
    return tmp_path


def test_example_hub_lists_and_loads():
    assert torch.hub.list(HUB, trust_repo=True) == ["linear_regressor", "xor_mlp"]
    model = torch.hub.load(str(HUB), "xor_mlp")                      # trusted above, in this process
    assert model(torch.tensor(XOR_IN)).argmax(1).tolist() == [0, 1, 1, 0]
    weights = torch.load(HUB / "xor_mlp.pt")
    assert list(weights) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), weights["0.weight"].numpy())
    reg = torch.hub.load(HUB, "linear_regressor", 5, out_features=2)
    assert isinstance(reg, torch.nn.Linear) and tuple(reg.weight.shape) == (2, 5)
    untrained = torch.hub.load(HUB, "xor_mlp", pretrained=False)
    assert not np.array_equal(untrained[0].weight.detach().numpy(), weights["0.weight"].numpy())


def test_help_returns_docstring():
    doc = torch.hub.help(HUB, "linear_regressor", trust_repo=True)
    assert doc == "An untrained nn.Linear(in_features, out_features), initialised from manual_seed(seed)."


def test_untrusted_directory_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    repo = make_repo(tmp_path, f"""
        open({str(marker)!r}, "w").close()
        def model():
            return 1
    """)
    for trust in (None, "check", False):
        with pytest.raises(RuntimeError, match=r"Untrusted repository: .* pass trust_repo=True"):
            torch.hub.list(repo, trust_repo=trust)
        with pytest.raises(RuntimeError, match="Untrusted repository"):
            torch.hub.load(repo, "model", trust_repo=trust)
    assert not marker.exists()
    assert torch.hub.load(repo, "model", trust_repo=True) == 1
    assert marker.exists()
    assert torch.hub.load(repo, "model") == 1                 # remembered for this process
    with pytest.raises(RuntimeError, match="Untrusted repository"):
        torch.hub.load(repo, "model", trust_repo=False)       # False always refuses
    with pytest.raises(ValueError, match="trust_repo must be"):
        torch.hub.list(repo, trust_repo="yes")


def test_missing_dependencies_listed(tmp_path):
    repo = make_repo(tmp_path, """
        dependencies = ["numpy", "glassgrad_no_such_pkg_a", "glassgrad_no_such_pkg_b"]
        def model():
            return 1
    """)
    assert torch.hub.list(repo, trust_repo=True) == ["model"]   # list does not check, as in torch
    with pytest.raises(RuntimeError) as e:
        torch.hub.load(repo, "model")
    assert str(e.value) == "Missing dependencies: glassgrad_no_such_pkg_a, glassgrad_no_such_pkg_b"
    with pytest.raises(RuntimeError, match="Missing dependencies"):
        torch.hub.help(repo, "model")


def test_unknown_private_and_non_callable_entries(tmp_path):
    repo = make_repo(tmp_path, """
        NAME = "not callable"
        def _helper():
            return 0
        def alpha(x=1):
            return x
        class Beta:
            pass
    """)
    assert torch.hub.list(repo, trust_repo=True) == ["Beta", "alpha"]
    for bad in ("gamma", "_helper", "NAME"):
        with pytest.raises(RuntimeError) as e:
            torch.hub.load(repo, bad)
        assert str(e.value) == f"Cannot find callable {bad} in hubconf. Available entry points: Beta, alpha"
    with pytest.raises(ValueError, match="model should be a string"):
        torch.hub.load(repo, 3)
    assert torch.hub.load(repo, "alpha", 7) == 7 and torch.hub.load(repo, "alpha", x=2) == 2


def test_sources_and_missing_hubconf(tmp_path):
    with pytest.raises(RuntimeError, match="offline and local-only"):
        torch.hub.load("pytorch/vision", "resnet18", source="github")
    with pytest.raises(ValueError, match='Unknown source: "http"'):
        torch.hub.list(HUB, source="http")
    with pytest.raises(FileNotFoundError, match="hubconf.py not found"):
        torch.hub.list(tmp_path, trust_repo=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        torch.hub.list(tmp_path / "nope", trust_repo=True)


def test_hubconf_imports_its_siblings_and_sys_path_is_restored(tmp_path):
    (tmp_path / "helpers_for_hub_test.py").write_text("VALUE = 41\n")
    repo = make_repo(tmp_path, """
        def model():
            import helpers_for_hub_test
            return helpers_for_hub_test.VALUE + 1
    """)
    before = list(sys.path)
    assert torch.hub.load(repo, "model", trust_repo=True) == 42
    assert sys.path == before
    sys.modules.pop("helpers_for_hub_test", None)
