"""F.interpolate(mode="bicubic") against values and input gradients recorded from PyTorch 2.13
(tests/fixtures/bicubic_reference.json, made by tests/fixtures/make_bicubic_reference.py): both
align_corners settings, sizes and scale factors, down- and upsampling."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine
import engine.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "fixtures", "bicubic_reference.json"), encoding="utf-8") as _f:
    REF = json.load(_f)


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: json.dumps(c["kwargs"]))
def test_bicubic_matches_pytorch(case):
    x = engine.tensor(REF["input"], dtype=engine.float64, requires_grad=True)
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    out = F.interpolate(x, mode="bicubic", **kw)
    assert out.grad_fn.name() == "UpsampleBicubic2DBackward0"     # one node, as PyTorch's
    np.testing.assert_allclose(out.detach().numpy(), np.array(case["out"]), rtol=1e-12, atol=1e-12)
    g = engine.arange(1, out.numel() + 1, dtype=engine.float64).reshape(out.shape) / out.numel()
    out.backward(g)
    np.testing.assert_allclose(x.grad.numpy(), np.array(case["grad"]), rtol=1e-12, atol=1e-12)


def test_bicubic_refuses_integers_and_other_ranks():
    with pytest.raises(NotImplementedError, match="^\"compute_indices_weights_cubic\" not implemented for 'Long'$"):
        F.interpolate(engine.ones(1, 1, 2, 2, dtype=engine.long), size=(3, 3), mode="bicubic")   # PyTorch 2.13's words
    with pytest.raises(NotImplementedError, match="^Got 3D input, but bicubic mode needs 4D input$"):
        F.interpolate(engine.ones(1, 1, 2), size=3, mode="bicubic")


def test_interpolate_refuses_inputs_without_spatial_dims_in_pytorchs_words():
    with pytest.raises(NotImplementedError) as e:
        F.interpolate(engine.ones(3, 3), scale_factor=2, mode="nearest")
    assert str(e.value) == ("Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for the modes: nearest | "
                            "linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got nearest)")
