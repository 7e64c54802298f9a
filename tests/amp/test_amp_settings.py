"""engine.amp, engine.backends and the process-wide switches: PyTorch scripts that set them run unchanged."""
from __future__ import annotations

import warnings

import pytest

import engine
import engine.nn as nn
from engine import amp


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(amp, "_warned", set())
    saved = dict(engine.backend.settings._state)
    yield
    engine.backend.settings._state.update(saved)


def test_autocast_keeps_dtypes_and_warns_once_when_enabled():
    x = engine.randn(2, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with engine.autocast("cpu", enabled=False):
            assert (x @ x).dtype is engine.float32
        assert w == []
        with engine.autocast("cpu"):
            assert (x @ x).dtype is engine.float32          # no bfloat16 to cast to (NOTE [ Mixed precision ] 1)
        with engine.cuda.amp.autocast():
            pass
    assert len(w) == 1 and str(w[0].message).startswith("In CPU autocast, but the target dtype is not supported.")

    @engine.autocast("cpu", enabled=False)
    def f(t):
        return t * 2

    assert f(x).tolist() == (x * 2).tolist()
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        engine.autocast(engine.device("cpu"))


def test_grad_scaler_is_the_identity_pytorch_gives_when_disabled():
    model = nn.Linear(3, 1)
    opt = engine.optim.SGD(model.parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="GradScaler: glassgrad trains in float32"):
        scaler = engine.amp.GradScaler("cuda")
    loss = model(engine.randn(4, 3)).pow(2).mean()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and not scaler.is_enabled()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    before = model.weight.detach().clone()
    grad = model.weight.grad.clone()
    scaler.step(opt)
    scaler.update()
    assert (model.weight.detach() - (before - 0.1 * grad)).abs().max().item() < 1e-7
    assert scaler.state_dict() == {}
    assert engine.cuda.amp.GradScaler is engine.amp.GradScaler


def test_backend_flags_are_settable_and_report_no_cudnn_or_mps():
    engine.backends.cudnn.benchmark = True
    engine.backends.cudnn.deterministic = True
    engine.backends.cuda.matmul.allow_tf32 = True
    assert engine.backends.cudnn.benchmark and not engine.backends.cudnn.is_available()
    assert not engine.backends.mps.is_available() and not engine.backends.mps.is_built()


def test_process_switches_as_pytorch_names_them():
    engine.set_num_threads(3)
    assert engine.get_num_threads() == 3
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
        engine.set_num_threads(0)
    assert engine.get_float32_matmul_precision() == "highest"
    engine.set_float32_matmul_precision("high")
    assert engine.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="fast is not one of 'highest', 'high', or 'medium'"):
        engine.set_float32_matmul_precision("fast")
    assert engine.get_float32_matmul_precision() == "high"
    assert not engine.are_deterministic_algorithms_enabled()
    engine.use_deterministic_algorithms(True, warn_only=True)
    assert engine.are_deterministic_algorithms_enabled() and engine.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(TypeError, match=r"argument 'mode' \(position 1\) must be bool, not str"):
        engine.use_deterministic_algorithms("x")
