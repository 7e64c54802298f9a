"""Complex tensors against PyTorch's recorded answers (tests/fixtures/complex/, make_complex_reference.py):
the rotary-embedding program and other programs (values and gradients), reprs, errors, grad_fn names."""
from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import engine as torch

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "complex")
with open(os.path.join(FIX, "complex_reference.json")) as _f:
    REF = json.load(_f)
_spec = importlib.util.spec_from_file_location("complex_programs", os.path.join(FIX, "programs.py"))
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)


def _decode(rec):
    a = np.array(rec["real"], dtype=np.float64)
    if "imag" in rec:
        a = a + 1j * np.array(rec["imag"], dtype=np.float64)
    return a.reshape(rec["shape"])


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program_values_and_gradients_match_pytorch(name):
    got = programs.PROGRAMS[name](torch)
    want = REF["programs"][name]
    assert sorted(got) == sorted(want)
    for key, rec in want.items():
        t = got[key]
        assert str(t.dtype) == "torch." + rec["dtype"], key
        assert list(t.shape) == rec["shape"], key
        tol = 1e-5 if rec["dtype"] in ("float32", "complex64") else 1e-12
        np.testing.assert_allclose(t.detach().numpy(), _decode(rec), rtol=tol, atol=tol, err_msg=key)


@pytest.mark.parametrize("expr", programs.REPRS)
def test_repr_as_pytorch_prints_it(expr):
    assert repr(eval(expr)) == REF["reprs"][expr]


@pytest.mark.parametrize("expr", programs.ERRORS)
def test_error_type_and_message_as_pytorch(expr):
    kind, msg = REF["errors"][expr]
    with pytest.raises(Exception) as info:
        eval(expr)
    assert type(info.value).__name__ == kind
    assert str(info.value) == msg


@pytest.mark.parametrize("expr", programs.GRAD_FNS)
def test_grad_fn_names_as_pytorch(expr):
    fn = eval(expr).grad_fn
    assert (None if fn is None else fn.name()) == REF["grad_fns"][expr]
