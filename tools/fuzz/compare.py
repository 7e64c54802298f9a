"""Classify the disagreements between a PyTorch result and an engine result (see runner.Result).

Pure Python and NumPy: no PyTorch needed, so tests/test_fuzz_tool.py checks it in CI.
"""
from __future__ import annotations

import re

import numpy as np

# most harmful first; a case's category is the first of its findings in this order
CATEGORIES = [
    "wrong value",
    "wrong gradient",
    "wrong shape/dtype",
    "crash",
    "timeout",
    "raw exception",
    "missing error",
    "extra error",
    "different error type",
    "different grad_fn name",
    "different error message",
]
SEVERITY = {c: i for i, c in enumerate(CATEGORIES)}

TOL = {"float64": (1e-5, 1e-7), "float32": (1e-3, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2)}


def _words(msg: str) -> set:
    msg = msg.split("\n")[0].lower()
    msg = re.sub(r"[0-9]+", "#", msg)
    return {w for w in re.findall(r"[a-z_#]{3,}", msg)}


def similar_messages(a: str, b: str) -> bool:
    """Loose: the same first line up to numbers, or at least half the words in common."""
    wa, wb = _words(a), _words(b)
    if not wa and not wb:
        return True
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= 0.5


def _compatible_types(te: dict, ee: dict) -> bool:
    if te["type"] == ee["type"] or te["type"] in ee.get("mro", ()):
        return True
    # PyTorch's own subclasses of RuntimeError (LinAlgError, OutOfMemoryError) count as RuntimeError
    return "RuntimeError" in te.get("mro", ()) and te["type"] != "RuntimeError" and "RuntimeError" in ee.get("mro", ())


def compare_errors(te, ee, phase: str):
    """Findings for one phase's exceptions (``te`` from PyTorch, ``ee`` from the engine)."""
    if te is None and ee is None:
        return []
    if ee is not None and ee.get("type") == "Timeout":
        return [("timeout", f"{phase}: engine ran past its time limit")]
    tdesc = "no error" if te is None else f"{te['type']}: {te['message'][:200]}"
    if ee is not None and ee.get("raw"):
        return [("raw exception", f"{phase}: engine raised {ee['type']}: {ee['message'][:200]} at {ee.get('where', '')}; PyTorch: {tdesc}")]
    if ee is None:
        return [("missing error", f"{phase}: PyTorch raised {tdesc}; engine raised nothing")]
    edesc = f"{ee['type']}: {ee['message'][:200]}"
    if te is None:
        return [("extra error", f"{phase}: engine raised {edesc}; PyTorch raised nothing")]
    if not _compatible_types(te, ee):
        return [("different error type", f"{phase}: PyTorch {tdesc} / engine {edesc}")]
    if not similar_messages(te["message"], ee["message"]):
        return [("different error message", f"{phase}: PyTorch {tdesc} / engine {edesc}")]
    return []


def _close(t: np.ndarray, e: np.ndarray, dtype: str) -> bool:
    if t.dtype.kind in "biu":
        return np.array_equal(t, e)
    rtol, atol = TOL.get(dtype, (1e-5, 1e-7))
    try:
        t = t.astype(np.float64)
        e = e.astype(np.float64)
    except (TypeError, ValueError):
        return np.array_equal(t, e)
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(e, t, rtol=rtol, atol=atol, equal_nan=True))


def _short(a) -> str:
    return np.array2string(np.asarray(a), threshold=12, precision=5, separator=", ").replace("\n", "")


def compare_info(t, e, name: str, value_cat: str, check_grad_fn: bool = True):
    """Findings for one described value (``value_cat`` is "wrong value" or "wrong gradient")."""
    if t is None and e is None:
        return []
    if t is None or e is None:
        return [(value_cat, f"{name}: PyTorch {'None' if t is None else 'a tensor'}, engine {'None' if e is None else 'a tensor'}")]
    shape_cat = "wrong shape/dtype" if value_cat == "wrong value" else value_cat
    if t["kind"] != e["kind"]:
        return [(shape_cat, f"{name}: PyTorch gives a {t['kind']}, engine a {e['kind']}")]
    if t["kind"] == "py":
        tv, ev = t["value"], e["value"]
        if isinstance(tv, float) and isinstance(ev, (int, float)) and not isinstance(ev, bool):
            same = bool(np.isclose(tv, ev, rtol=1e-6, atol=1e-9, equal_nan=True))
        else:
            same = tv == ev and type(tv) is type(ev)
        return [] if same else [(value_cat, f"{name}: PyTorch {tv!r}, engine {ev!r}")]
    if t["kind"] == "seq":
        if len(t["items"]) != len(e["items"]):
            return [(shape_cat, f"{name}: PyTorch {len(t['items'])} items, engine {len(e['items'])}")]
        out = []
        for i, (a, b) in enumerate(zip(t["items"], e["items"])):
            out += compare_info(a, b, f"{name}[{i}]", value_cat, check_grad_fn)
        return out
    found = []
    if list(t["shape"]) != list(e["shape"]):
        return [(shape_cat, f"{name}: shape PyTorch {list(t['shape'])}, engine {list(e['shape'])}")]
    if t["dtype"] != e["dtype"]:
        found.append((shape_cat, f"{name}: dtype PyTorch {t['dtype']}, engine {e['dtype']}"))
    if e.get("unreadable"):
        found.append((value_cat, f"{name}: engine tensor unreadable: {e['unreadable']}"))
    elif not _close(np.asarray(t["values"]), np.asarray(e["values"]), t["dtype"]):
        found.append((value_cat, f"{name}: PyTorch {_short(t['values'])}, engine {_short(e['values'])}"))
    if check_grad_fn and t.get("grad_fn") != e.get("grad_fn"):
        found.append(("different grad_fn name", f"{name}.grad_fn: PyTorch {t.get('grad_fn')}, engine {e.get('grad_fn')}"))
    return found


def compare(t: dict, e: dict):
    """All findings for a case, as ``[(category, detail), ...]`` (empty: the backends agree)."""
    if t["fwd_error"] is not None or e["fwd_error"] is not None:
        return compare_errors(t["fwd_error"], e["fwd_error"], "forward")
    found = []
    for name, ti in t["outputs"].items():
        # "meta" outputs hold layout (is_contiguous, strides): a difference there is a shape finding
        cat = "wrong shape/dtype" if name.startswith("meta") else "wrong value"
        found += compare_info(ti, e["outputs"].get(name), name, cat)
    be = compare_errors(t["bwd_error"], e["bwd_error"], "backward")
    found += be
    if t["bwd_error"] is None and e["bwd_error"] is None:
        for leaf, tg in t["grads"].items():
            found += compare_info(tg, e["grads"].get(leaf), f"{leaf}.grad", "wrong gradient", check_grad_fn=False)
    return found


def primary(findings) -> str | None:
    """The most harmful category among ``findings`` (None when there are none)."""
    if not findings:
        return None
    return min((c for c, _ in findings), key=SEVERITY.__getitem__)
