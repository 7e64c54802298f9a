"""GradScaler against PyTorch 2.13 (tests/fixtures/make_amp_reference.py): a six-step run with an inf
injected at step 2 and a NaN at step 5 gives PyTorch's scales, growth tracker, skipped steps and
weights; PyTorch's errors for misuse; the state dict; the deprecated names."""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest

import engine

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "amp_reference.json")) as _f:
    REF = json.load(_f)


def setup():
    w = engine.tensor([[0.5, -0.25, 1.0]], requires_grad=True)
    opt = engine.optim.SGD([w], lr=0.1)
    x = engine.tensor([[1.0, 2.0, -1.0], [0.5, -1.0, 2.0]])
    return w, opt, x


def test_a_run_with_injected_infs_matches_pytorch_step_by_step():
    w, opt, x = setup()
    scaler = engine.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    for i, want in enumerate(REF["scaler"]["steps"]):
        opt.zero_grad()
        loss = (x @ w.t()).pow(2).mean()
        scaled = scaler.scale(loss)
        assert scaled.grad_fn.name() == "MulBackward0"
        scaled.backward()
        assert np.allclose(w.grad.tolist(), want["grad_scaled"], rtol=1e-6)      # gradients carry the scale
        if i == 2:
            w.grad[0, 1] = math.inf
        if i == 5:
            w.grad[0, 0] = math.nan
        if i == 3:
            scaler.unscale_(opt)
            assert np.allclose(w.grad.tolist(), np.array(want["grad_scaled"]) / scaler.get_scale(), rtol=1e-6)
        before = w.detach().clone()
        scaler.step(opt)
        stepped = not bool((before == w.detach()).all())
        scaler.update()
        assert (loss.item(), scaled.item()) == pytest.approx((want["loss"], want["scaled_loss"]), rel=1e-6)
        assert stepped == want["stepped"], i
        assert scaler.get_scale() == want["scale"] and scaler._get_growth_tracker() == want["tracker"], i
        assert np.allclose(w.tolist(), want["w"], rtol=1e-6, atol=1e-7), i
    assert scaler.state_dict() == REF["scaler"]["state_dict"]


def test_state_dict_round_trip_and_setters():
    s = engine.amp.GradScaler("cpu", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)
    assert s.get_scale() == 8.0 and s.is_enabled()
    assert s.state_dict() == {"scale": 8.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 3,
                              "_growth_tracker": 0}
    t = engine.amp.GradScaler("cpu")
    t.load_state_dict(s.state_dict())
    assert t.state_dict() == s.state_dict()
    t.set_growth_factor(3.0)
    t.set_backoff_factor(0.75)
    t.set_growth_interval(7)
    assert (t.get_growth_factor(), t.get_backoff_factor(), t.get_growth_interval()) == (3.0, 0.75, 7)
    with pytest.raises(RuntimeError, match="The source state dict is empty, possibly because it was saved from a "
                                           "disabled instance of GradScaler."):
        t.load_state_dict({})
    off = engine.amp.GradScaler("cpu", enabled=False)
    assert off.state_dict() == {} and off.get_scale() == 1.0 and off.scale(engine.ones(1)).item() == 1.0


def test_misuse_raises_pytorchs_errors():
    w, opt, x = setup()
    s = engine.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None."):
        s.unscale_(opt)
    s.scale((x @ w.t()).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this optimizer since the last "
                                           r"update\(\)."):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called since the last update\(\)."):
        s.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)."):
        s.unscale_(opt)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update."):
        s.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported if GradScaler is enabled."):
        s.step(opt, closure=lambda: None)
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        engine.amp.GradScaler("cpu", growth_factor=1.0)
    h = engine.ones(2, dtype=engine.float16, requires_grad=True)
    hopt = engine.optim.SGD([h], lr=0.1)
    s2 = engine.amp.GradScaler("cpu", init_scale=2.0)
    s2.scale(h.sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        s2.unscale_(hopt)
    s.update(4.0)
    assert s.get_scale() == 4.0


def test_scale_of_several_outputs_and_bfloat16_gradients_under_autocast():
    s = engine.amp.GradScaler("cpu", init_scale=4.0)
    a, b = engine.ones(2), engine.ones(3)
    sa, sb = s.scale([a, b])
    assert sa.tolist() == [4.0, 4.0] and sb.tolist() == [4.0] * 3
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        s.scale([1.0])
    lin = engine.nn.Linear(3, 2)
    opt = engine.optim.SGD(lin.parameters(), lr=0.5)
    with engine.autocast("cpu"):
        loss = lin(engine.ones(4, 3)).float().sum()
    s.scale(loss).backward()
    g = lin.weight.grad.clone()
    before = lin.weight.detach().clone()
    s.step(opt)
    assert lin.weight.grad.dtype is engine.float32
    assert np.allclose(lin.weight.tolist(), (before - 0.5 * g / 4.0).tolist(), atol=1e-6)


def test_cuda_scaler_without_a_gpu_and_the_deprecated_names():
    if not engine.cuda.is_available():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = engine.cuda.amp.GradScaler()
        assert [(type(m.message), str(m.message)) for m in w] == [
            (FutureWarning, ("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                             "`torch.amp.GradScaler('cuda', args...)` instead.")),
            (UserWarning, "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")]
        assert not s.is_enabled() and s.get_scale() == 1.0
    from engine.cpu.amp import GradScaler      # importable as PyTorch programs import it
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.GradScaler\(args...\)` is deprecated."):
        c = GradScaler(init_scale=2.0)
    assert c.is_enabled() and c.get_scale() == 2.0 and GradScaler is engine.cpu.amp.GradScaler
