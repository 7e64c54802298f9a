"""engine.backends and the process-wide switches: PyTorch scripts that set them run unchanged."""
from __future__ import annotations

import pytest

import engine


@pytest.fixture(autouse=True)
def fresh_settings():
    saved = dict(engine.backend.settings._state)
    yield
    engine.backend.settings._state.update(saved)


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
