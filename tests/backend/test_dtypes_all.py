"""Every dtype PyTorch has in common with glassgrad, against tables recorded from PyTorch 2.13
(tests/fixtures/make_dtypes_reference.py): promote_types for every pair, the result dtype (or the
error type) of binary ops for every pair of real dtypes and of unary ops and reductions for every
real dtype, and integer arithmetic (wrapping, int8 with uint8, bitwise ops, uint8 masks)."""
from __future__ import annotations

import builtins
import json
import os
import warnings

import pytest

import engine

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "dtypes_reference.json")) as _f:
    REF = json.load(_f)


def mk(name):
    return engine.tensor(REF["x"], dtype=engine.float32).to(getattr(engine, name))


def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(fn().dtype).replace("torch.", "")
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def same(got, want):
    """The same dtype, or both an error of the same type."""
    if ":" in want:
        return got.split(":")[0] == want.split(":")[0]
    return got == want


def test_promote_types_is_pytorchs_for_every_pair():
    wrong = {}
    for key, want in REF["promote_types"].items():
        a, b = key.split(",")
        got = str(engine.promote_types(getattr(engine, a), getattr(engine, b))).replace("torch.", "")
        if got != want:
            wrong[key] = (got, want)
    assert wrong == {}
    assert len(REF["promote_types"]) == 144


@pytest.mark.parametrize("op", sorted(REF["binary_code"]))
def test_binary_result_dtypes_for_every_pair(op):
    code = REF["binary_code"][op]
    wrong = {}
    for key, want in REF["binary"].items():
        name, a, b = key.split(",")
        if name != op:
            continue
        got = outcome(lambda a=a, b=b: eval(code, {"torch": engine, "a": mk(a), "b": mk(b)}))
        if not same(got, want):
            wrong[(a, b)] = (got, want)
    assert wrong == {}


@pytest.mark.parametrize("op", sorted(REF["unary_code"]))
def test_unary_and_reduction_result_dtypes_for_every_dtype(op):
    code = REF["unary_code"][op]
    wrong = {}
    for key, want in REF["unary"].items():
        name, a = key.split(",")
        if name != op:
            continue
        got = outcome(lambda a=a: eval(code, {"torch": engine, "a": mk(a)}))
        if not same(got, want):
            wrong[a] = (got, want)
    assert wrong == {}


def test_element_size_and_nbytes_of_every_dtype():
    for name, size in REF["element_size"].items():
        d = getattr(engine, name)
        assert d.itemsize == size
        t = engine.zeros(5, 3, dtype=d)
        assert t.element_size() == size and t.nbytes == 15 * size and t.dtype is d


INTEGER_CASES = {
    "uint8_add_wraps": lambda u, i8: u + 10, "uint8_mul_wraps": lambda u, i8: u * 2,
    "uint8_sub_wraps": lambda u, i8: u - 251, "int8_add_wraps": lambda u, i8: i8 + 1, "int8_neg": lambda u, i8: -i8,
    "int8_plus_uint8": lambda u, i8: i8 + u,
    "int_div": lambda u, i8: engine.tensor([7, -7, 2], dtype=engine.int16) / 2,
    "int_floor_div": lambda u, i8: engine.tensor([7, -7, 2], dtype=engine.int16) // 2,
    "cmp": lambda u, i8: u > 100, "and": lambda u, i8: u & 7, "or": lambda u, i8: i8 | 3,
    "xor": lambda u, i8: u ^ i8, "not_uint8": lambda u, i8: ~u, "shift": lambda u, i8: u << 1,
    "byte_of_bool": lambda u, i8: (u > 100).byte(),
    "int16_sum": lambda u, i8: engine.tensor([30000, 30000], dtype=engine.int16).sum(),
    "uint8_sum": lambda u, i8: u.sum(), "bool_sum": lambda u, i8: (u > 0).sum(),
    "uint8_mean_error": lambda u, i8: u.mean(),
    "float_to_uint8": lambda u, i8: engine.tensor([1.7, 255.2, 3.9]).byte(),
    "float_to_int8": lambda u, i8: engine.tensor([-1.7, 100.2, 3.9]).char(),
}


@pytest.mark.parametrize("case", sorted(INTEGER_CASES))
def test_integer_arithmetic_as_pytorch(case):
    want = REF["integers"][case]
    u = engine.tensor([250, 3, 128], dtype=engine.uint8)
    i8 = engine.tensor([-128, 5, 127], dtype=engine.int8)
    if "error" in want:
        kind, msg = want["error"].split(": ", 1)
        with pytest.raises(getattr(builtins, kind)) as e:
            INTEGER_CASES[case](u, i8)
        assert str(e.value) == msg
        return
    r = INTEGER_CASES[case](u, i8)
    assert str(r.dtype) == "torch." + want["dtype"]
    assert r.tolist() == want["values"]


def test_uint8_mask_indexes_as_a_bool_mask_with_pytorchs_deprecation_warning():
    want = REF["integers"]["uint8_mask"]
    x = engine.tensor([10.0, 20.0, 30.0, 40.0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        picked = x[engine.tensor([1, 0, 1, 1], dtype=engine.uint8)]
    assert picked.tolist() == want["values"]
    msgs = [str(m.message) for m in w]
    assert len(msgs) == 1 and msgs[0] == want["warnings"][0].split(" (Triggered internally")[0]
