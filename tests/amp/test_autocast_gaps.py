"""The composites PyTorch's CPU autocast lists cast that the op table alone does not reach
(``index_copy``, ``adaptive_avg_pool3d``), what the multi-output linalg ops do, and ``numpy()`` of a
bfloat16 tensor. Expected values were recorded from PyTorch 2.13 (CPU) with the same calls."""
import numpy as np
import pytest

import engine
import engine.nn.functional as F


def _next_names(t):
    return [None if n is None else n.name() for n, _ in t.grad_fn.next_functions]


def test_index_copy_runs_in_the_widest_input_dtype():
    with engine.autocast("cpu", dtype=engine.bfloat16):
        src = engine.full((1, 2), 1.3, dtype=engine.bfloat16, requires_grad=True)
        r = engine.zeros(3, 2).index_copy(0, engine.tensor([1]), src)
        assert r.dtype is engine.float32 and r.grad_fn.name() == "IndexCopyBackward0"
        assert _next_names(r) == [None, "ToCopyBackward0"]                # PyTorch's graph
        assert r.tolist() == [[0.0, 0.0], [1.296875, 1.296875], [0.0, 0.0]]
        src = engine.full((1, 2), 1.3, requires_grad=True)
        r = engine.zeros(3, 2, dtype=engine.bfloat16).index_copy(0, engine.tensor([1]), src)
        assert r.dtype is engine.float32 and _next_names(r) == [None, "torch::autograd::AccumulateGrad"]
    r.sum().backward()
    assert src.grad.dtype is engine.float32 and src.grad.tolist() == [[1.0, 1.0]]


def test_index_copy_outside_autocast_keeps_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"^index_copy_\(\): self and source expected to have the same dtype, "
                                           r"but got \(self\) Float and \(source\) BFloat16$"):
        engine.zeros(3, 2).index_copy(0, engine.tensor([1]), engine.ones(1, 2, dtype=engine.bfloat16))


def test_adaptive_avg_pool3d_runs_in_float32():
    with engine.autocast("cpu", dtype=engine.bfloat16):
        x = engine.randn(1, 2, 4, 4, 4, dtype=engine.bfloat16, requires_grad=True)
        y = F.adaptive_avg_pool3d(x, 2)
    assert y.dtype is engine.float32 and y.grad_fn.name() == "AdaptiveAvgPool3DBackward0"
    assert _next_names(y) == ["ToCopyBackward0"]


def test_linalg_of_a_bfloat16_input_under_autocast_is_refused():
    """PyTorch casts these to float32 under CPU autocast; glassgrad checks the dtype at the linalg entry
    first (docs/mixed-precision.md, "What it does not do"). A float32 input works as outside autocast."""
    m = engine.randn(3, 3)
    with engine.autocast("cpu", dtype=engine.bfloat16):
        with pytest.raises(RuntimeError, match="^linalg.qr: Low precision dtypes not supported. Got BFloat16$"):
            engine.linalg.qr(m.bfloat16())
        q, r = engine.linalg.qr(m)
    assert q.dtype is r.dtype is engine.float32


def test_numpy_of_bfloat16_is_pytorchs_type_error():
    t = engine.ones(2, dtype=engine.bfloat16)
    with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
        t.numpy()
    with pytest.raises(RuntimeError, match="^Can't call numpy\\(\\) on Tensor that requires grad"):
        t.clone().requires_grad_().numpy()                  # PyTorch checks requires_grad first
    assert t.half().numpy().dtype == np.float16               # float16 is NumPy's own
    assert t.float().numpy().tolist() == [1.0, 1.0]
    assert engine.allclose(t, t) and t.tolist() == [1.0, 1.0]   # the engine's own readers still work
