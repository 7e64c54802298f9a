"""Integer and bool inputs to dropout, normalisation, pooling and their neighbours: PyTorch's result dtype
or its error type and message, and its mixed-dtype refusals of normalisation parameters.

Expected outcomes were recorded from PyTorch 2.13 into tests/fixtures/learner_fidelity_reference.json by
tests/fixtures/make_learner_fidelity_reference.py; each case is the same expression run with engine.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine as torch
from tests.fixtures.outcome import outcome

F = torch.nn.functional
with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "learner_fidelity_reference.json")) as _f:
    REF = json.load(_f)

# PyTorch resizes uint8 images in these modes; glassgrad's interpolate takes floating point input only
UINT8_IMAGES = {"uint8|F.interpolate(t, scale_factor=2)", "uint8|F.interpolate(t[0], scale_factor=2)",
                "uint8|F.interpolate(t, scale_factor=2, mode='bilinear')"}


@pytest.mark.parametrize("key", sorted(k for k in REF["errors"] if k not in UINT8_IMAGES))
def test_outcome_matches_pytorch(key):
    dt, _, expr = key.rpartition("|")
    ns = {"torch": torch, "F": F}
    if dt:
        ns["t"] = torch.ones(1, 2, 4, 4, dtype=getattr(torch, dt))
    assert outcome(expr, ns) == REF["errors"][key]


@pytest.mark.parametrize("key", sorted(UINT8_IMAGES))
def test_interpolate_refuses_uint8_images_in_its_own_words(key):
    expr = key.partition("|")[2]
    got = outcome(expr, {"torch": torch, "F": F, "t": torch.ones(1, 2, 4, 4, dtype=torch.uint8)})
    assert REF["errors"][key]["dtype"] == "torch.uint8"
    assert got["error"] == "NotImplementedError" and got["message"].startswith("glassgrad's interpolate takes")


def test_avg_pool3d_of_int64_truncates_each_windows_mean_as_pytorch():
    ref = REF["avg_pool3d_int64"]
    for code, values in ((ref["code"], ref["values"]), (ref["code2"], ref["values2"])):
        got = eval(code, {"torch": torch, "F": F})
        assert got.dtype is torch.int64
        np.testing.assert_array_equal(got.numpy(), np.array(values))
