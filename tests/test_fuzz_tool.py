"""The differential fuzzer's own logic (tools/fuzz), checked without PyTorch.

Running cases needs PyTorch beside the project (docs/fuzzing.md); generating them and classifying a
pair of results does not, so that is what CI checks here.
"""
from __future__ import annotations

import numpy as np
import pytest

from tools.fuzz import compare as C
from tools.fuzz.core import Choices, values_for
from tools.fuzz.generate import FAMILIES, family_of, generate, replay
from tools.fuzz.runner import error_info, is_raw

# -- generation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generation_is_deterministic_for_a_seed(family):
    for index in range(25):
        p1, c1 = generate(7, index, family)
        p2, c2 = generate(7, index, family)
        assert p1.text() == p2.text()
        assert c1 == c2
        # replaying the recorded choice sequence gives the same program again (what --shrink edits)
        p3, c3 = replay(family, c1)
        assert p3.text() == p1.text() and c3 == c1
        compile(p1.text(), "<fuzz>", "exec")     # every program is valid Python


def test_mixed_run_family_and_program_depend_only_on_seed_and_index():
    fams = [family_of(3, k) for k in range(300)]
    assert fams == [family_of(3, k) for k in range(300)]
    assert set(fams) == set(FAMILIES)            # the weights reach every family
    texts = {generate(3, k)[0].text() for k in range(60)}
    assert len(texts) > 50                       # different cases, different programs
    assert generate(3, 5)[0].text() != generate(4, 5)[0].text()


def test_choices_shrink_towards_the_first_option_and_values_are_exact():
    c = Choices(None, [5, 0, 999])
    assert c.int(1, 4) == 4                      # clamped to the range
    assert c.pick(["a", "b"]) == "a"
    assert c.chance(0.5) is True
    assert Choices(None, []).chance(0.9) is False  # past the end of a replayed sequence: 0
    v = values_for("x", (3, 4), "normal")
    assert v.shape == (3, 4) and len(set(v.ravel().tolist())) == 12      # distinct: no ties
    assert np.array_equal(v.astype(np.float32).astype(np.float64), v)  # exact in float32
    assert (values_for("p", (5,), "prob") > 0).all() and (values_for("p", (5,), "prob") < 1).all()
    assert (values_for("q", (6,), "positive") > 0).all()


# -- classification -----------------------------------------------------------------------------

def tensor(values, dtype="float64", grad_fn=None, shape=None):
    a = np.asarray(values, dtype=np.float64 if dtype.startswith("float") else np.int64)
    return {"kind": "tensor", "shape": list(a.shape if shape is None else shape), "dtype": dtype,
            "values": a, "grad_fn": grad_fn, "requires_grad": grad_fn is not None}


def result(out=None, grads=None, fwd_error=None, bwd_error=None):
    return {"fwd_error": fwd_error, "outputs": {} if out is None else {"out": out},
            "out_requires_grad": bool(out and out.get("grad_fn")), "bwd_error": bwd_error,
            "grads": grads or {}}


def err(type_, message, raw=False, mro=None):
    return {"type": type_, "mro": mro or [type_, "Exception", "BaseException", "object"],
            "message": message, "raw": raw, "where": ""}


def categories(t, e):
    return C.primary(C.compare(t, e))


def test_agreeing_results_have_no_findings():
    t = result(tensor([1.0, 2.0], grad_fn="MulBackward0"), {"x": tensor([0.5, 0.5])})
    e = result(tensor([1.0, 2.0 + 1e-12], grad_fn="MulBackward0"), {"x": tensor([0.5, 0.5])})
    assert C.compare(t, e) == [] and categories(t, e) is None


def test_values_that_differ_are_a_wrong_value():
    t = result(tensor([1.0, 2.0], grad_fn="MulBackward0"))
    e = result(tensor([1.0, 2.5], grad_fn="MulBackward0"))
    assert categories(t, e) == "wrong value"
    # float32 gets a looser tolerance than float64
    assert categories(result(tensor([1.0], "float32")), result(tensor([1.0001], "float32"))) is None
    assert categories(result(tensor([1.0])), result(tensor([1.0001]))) == "wrong value"


def test_gradients_none_versus_tensor_and_wrong_values():
    t = result(tensor([3.0], grad_fn="SumBackward0"), {"x": tensor([1.0, 1.0]), "w": None})
    assert categories(t, result(tensor([3.0], grad_fn="SumBackward0"), {"x": tensor([1.0, 2.0]), "w": None})) == "wrong gradient"
    assert categories(t, result(tensor([3.0], grad_fn="SumBackward0"), {"x": None, "w": None})) == "wrong gradient"
    assert categories(t, result(tensor([3.0], grad_fn="SumBackward0"), {"x": tensor([1.0, 1.0]), "w": tensor([0.0])})) == "wrong gradient"


def test_shape_and_dtype():
    assert categories(result(tensor(2.0)), result(tensor([2.0]))) == "wrong shape/dtype"
    assert categories(result(tensor([2], "int32")), result(tensor([2], "int64"))) == "wrong shape/dtype"


def test_grad_fn_names():
    t = result(tensor([1.0], grad_fn="TanhBackwardBackward0"))
    e = result(tensor([1.0], grad_fn="MulBackward0"))
    assert categories(t, e) == "different grad_fn name"


def test_raw_exception_where_pytorch_raises_its_own():
    t = result(fwd_error=err("RuntimeError", "index 5 is out of bounds for dimension 0 with size 3"))
    e = result(fwd_error=err("IndexError", "index 5 is out of bounds for axis 0 with size 3", raw=True))
    assert categories(t, e) == "raw exception"
    # raw also when PyTorch raises nothing (an engine crash where PyTorch computes)
    assert categories(result(tensor([1.0])), e) == "raw exception"


def test_missing_extra_and_different_errors():
    ok = result(tensor([1.0]))
    boom = err("RuntimeError", "start (3) + length (2) exceeds dimension size (4).")
    assert categories(result(fwd_error=boom), ok) == "missing error"
    assert categories(ok, result(fwd_error=boom)) == "extra error"
    other = err("ValueError", "start (3) + length (2) exceeds dimension size (4).")
    assert categories(result(fwd_error=boom), result(fwd_error=other)) == "different error type"
    worded = err("RuntimeError", "narrow: bad arguments")
    assert categories(result(fwd_error=boom), result(fwd_error=worded)) == "different error message"
    # the same message up to numbers agrees; so does a subclass of PyTorch's type
    same = err("RuntimeError", "start (1) + length (9) exceeds dimension size (2).")
    assert categories(result(fwd_error=boom), result(fwd_error=same)) is None
    sub = err("IndexSubError", "start (1) + length (9) exceeds dimension size (2).",
              mro=["IndexSubError", "RuntimeError", "Exception", "BaseException", "object"])
    assert categories(result(fwd_error=boom), result(fwd_error=sub)) is None


def test_backward_errors_and_severity_order():
    t = result(tensor([1.0], grad_fn="SinBackward0"),
               bwd_error=err("RuntimeError", "one of the variables needed for gradient computation has been modified by an inplace operation"))
    e = result(tensor([1.0], grad_fn="SinBackward0"), {"x": None})
    assert categories(t, e) == "missing error"
    # a case with a wrong value and a grad_fn difference counts as a wrong value
    t2 = result(tensor([1.0], grad_fn="AddmmBackward0"))
    e2 = result(tensor([9.0], grad_fn="AddBackward0"))
    assert {c for c, _ in C.compare(t2, e2)} == {"wrong value", "different grad_fn name"}
    assert categories(t2, e2) == "wrong value"
    assert C.CATEGORIES.index("wrong value") < C.CATEGORIES.index("raw exception") < C.CATEGORIES.index("different error message")


def test_is_raw_tells_a_deliberate_raise_from_an_escaped_one(tmp_path):
    pkg = tmp_path / "fakeengine"
    pkg.mkdir()
    (pkg / "ops.py").write_text(
        "def deliberate(n):\n"
        "    raise RuntimeError(\n"
        "        f'index {n} is out of bounds')\n"
        "def escaped(shape):\n"
        "    return shape[5]\n")
    ns = {}
    exec(compile((pkg / "ops.py").read_text(), str(pkg / "ops.py"), "exec"), ns)  # noqa: S102
    root = str(pkg)
    for fn, arg, raw in ((ns["deliberate"], 5, False), (ns["escaped"], (1, 2), True)):
        with pytest.raises(Exception) as info:
            fn(arg)
        assert is_raw(info.value, root)[0] is raw
    with pytest.raises(Exception) as info:
        np.zeros(2).sum(axis=3)                  # NumPy's AxisError
    assert is_raw(info.value, root)[0] is True
    assert error_info(info.value, root)["raw"] is True
    # an error of the program text itself is not raw
    with pytest.raises(Exception) as info:
        exec(compile("a, b = (1, 2, 3)", "<fuzz>", "exec"), {})  # noqa: S102
    assert is_raw(info.value, root)[0] is False
