"""Run one program on one backend and record what happened, as plain data.

``torch`` in the program is PyTorch or ``engine``; ``F`` and ``nn`` are that backend's
``nn.functional`` and ``nn``. The program runs in two phases, each caught separately: the forward
(inputs and body, which define ``out``) and the backward (``FOOTER_BACKWARD``, run only when
``out`` is a tensor that requires grad on that backend). A ``Result`` is a dict:

    {"fwd_error": err | None, "outputs": {name: info}, "out_requires_grad": bool,
     "bwd_error": err | None, "grads": {leaf: info | None}}

where ``err`` is ``{"type", "mro", "message", "raw", "where"}`` and a tensor ``info`` is
``{"kind": "tensor", "shape", "dtype", "values" (a NumPy array), "grad_fn", "requires_grad"}``.
"""
from __future__ import annotations

import ast
import importlib
import linecache
import os
import re
import signal
import warnings

import numpy as np

from .core import FOOTER_BACKWARD

TIMEOUT_S = 20


class CaseTimeout(Exception):
    pass


_MODULES = {}


def backend(name):
    """(torch-like module, its functional, its nn), imported on first use."""
    if name not in _MODULES:
        mod = importlib.import_module("torch" if name == "torch" else "engine")
        _MODULES[name] = (mod, mod.nn.functional, mod.nn)
    return _MODULES[name]


def engine_root():
    mod = backend("engine")[0]
    return os.path.dirname(os.path.abspath(mod.__file__))


_RAISE_LINES: dict[str, set] = {}


def _raise_lines(path):
    """Line numbers of the ``raise`` statements of a source file (cached)."""
    if path not in _RAISE_LINES:
        lines = set()
        try:
            with open(path) as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Raise):
                    lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        except (OSError, SyntaxError, ValueError):
            pass
        _RAISE_LINES[path] = lines
    return _RAISE_LINES[path]


def is_raw(exc: BaseException, root: str | None) -> tuple[bool, str]:
    """Whether ``exc`` escaped from NumPy or Python internals rather than a deliberate ``raise``.

    Deliberate: the innermost frame is a ``raise`` statement in the backend's own source, or the
    program text itself (``<fuzz>``: an unpacking or attribute error of the program). Raw: an
    exception class from NumPy, a frame inside NumPy/array-api-compat/the standard library, or a
    backend line that is not a ``raise`` (``shape[3]`` on a short tuple, a division by zero).
    """
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False, ""
    path, line = last.tb_frame.f_code.co_filename, last.tb_lineno
    where = f"{path}:{line}"
    if root is None:
        return False, where
    mod = type(exc).__module__ or ""
    if mod.startswith(("numpy", "array_api", "cupy")):
        return True, where
    if path == "<fuzz>":
        return False, where
    if os.path.abspath(path).startswith(root + os.sep):
        return line not in _raise_lines(path), where
    return True, where


# phrases of NumPy's and Python's own messages: an engine error that is a deliberate ``raise`` but
# carries one of these still speaks in NumPy's words, not PyTorch's
NUMPY_WORDS = re.compile(
    r"is out of bounds for array of dimension|zero-size array to reduction operation|"
    r"return arrays must be of ArrayType|operands could not be broadcast together|did not contain a loop|"
    r"tuple index out of range|duplicate value in 'axis'|INDICES element is out of DATA bounds|"
    r"Attempting to broadcast a dimension|cannot broadcast a non-scalar|`indices` and `arr` must have|"
    r"bind_methods\.<locals>|ufunc '|for axis \d+ with size|has no attribute")


def error_info(exc: BaseException, root: str | None) -> dict:
    raw, where = is_raw(exc, root)
    if root is not None and where and not raw:
        src = linecache.getline(where.rsplit(":", 1)[0], int(where.rsplit(":", 1)[1])).strip()
        where = where + "  " + src[:120]
    return {"type": type(exc).__name__, "mro": [c.__name__ for c in type(exc).__mro__],
            "message": str(exc)[:600], "raw": raw, "where": where,
            "numpy_words": bool(root is not None and NUMPY_WORDS.search(str(exc)))}


def _is_tensor(v, mod):
    return isinstance(v, mod.Tensor)


def describe(v, mod, depth=0) -> dict:
    """A backend-neutral description of a program value."""
    if _is_tensor(v, mod):
        t = v.detach()
        try:
            vals = np.array(t.cpu().numpy(), copy=True)
        except Exception as e:  # noqa: BLE001 - a tensor that cannot be read is itself a finding
            vals = np.array([])
            return {"kind": "tensor", "shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", ""),
                    "values": vals, "grad_fn": None, "requires_grad": bool(v.requires_grad),
                    "unreadable": f"{type(e).__name__}: {e}"}
        gf = v.grad_fn
        return {"kind": "tensor", "shape": [int(s) for s in v.shape],
                "dtype": str(v.dtype).replace("torch.", ""), "values": vals,
                "grad_fn": None if gf is None else gf.name().replace("torch::autograd::", ""),
                "requires_grad": bool(v.requires_grad)}
    if isinstance(v, (list, tuple)) and depth < 3:
        return {"kind": "seq", "items": [describe(i, mod, depth + 1) for i in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"kind": "py", "value": v}
    if isinstance(v, mod.dtype):
        return {"kind": "py", "value": str(v).replace("torch.", "")}
    if isinstance(v, tuple) or type(v).__name__ == "Size":
        return {"kind": "py", "value": list(v)}
    return {"kind": "py", "value": f"<{type(v).__name__}>"}


def _alarm(signum, frame):
    raise CaseTimeout(f"case ran past {TIMEOUT_S} s")


def _reset(mod):
    mod.set_default_dtype(mod.float32)
    mod.set_grad_enabled(True)


def run(program, name: str) -> dict:
    """Run ``program`` on backend ``name`` ("torch" or "engine") and describe the outcome."""
    mod, fn, nn = backend(name)
    root = engine_root() if name == "engine" else None
    _reset(mod)
    ns = {"torch": mod, "F": fn, "nn": nn, "__name__": "__fuzz__"}
    res = {"fwd_error": None, "outputs": {}, "out_requires_grad": False, "bwd_error": None, "grads": {}}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(program.source(), "<fuzz>", "exec"), ns)  # noqa: S102 - the fuzzer's own text
            except CaseTimeout as e:
                res["fwd_error"] = {"type": "Timeout", "mro": ["Timeout"], "message": str(e), "raw": False, "where": ""}
                return res
            except Exception as e:  # noqa: BLE001
                res["fwd_error"] = error_info(e, root)
                return res
            for nm in program.compare:
                res["outputs"][nm] = describe(ns.get(nm, "<undefined>"), mod)
            out = ns.get("out")
            res["out_requires_grad"] = bool(_is_tensor(out, mod) and out.requires_grad)
            if program.backward and res["out_requires_grad"]:
                try:
                    exec(compile(FOOTER_BACKWARD, "<fuzz>", "exec"), ns)  # noqa: S102
                except CaseTimeout as e:
                    res["bwd_error"] = {"type": "Timeout", "mro": ["Timeout"], "message": str(e), "raw": False, "where": ""}
                except Exception as e:  # noqa: BLE001
                    res["bwd_error"] = error_info(e, root)
            for leaf in program.leaves:
                try:
                    g = eval(f"{leaf}.grad", ns)
                except Exception:  # noqa: BLE001
                    g = None
                res["grads"][leaf] = None if g is None else describe(g, mod)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return res
