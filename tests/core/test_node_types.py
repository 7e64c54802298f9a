"""A node's Python type, name() and repr as PyTorch's (NOTE [ Node types ] in engine/core/graph.py).

Expected values were recorded from PyTorch 2.13 into tests/fixtures/learner_fidelity_reference.json by
tests/fixtures/make_learner_fidelity_reference.py; each case is the same expression run with engine.
"""
from __future__ import annotations

import json
import os
import re

import pytest

import engine as torch
from engine.core.dispatch import OP_TYPES, OpNode
from engine.core.graph import Node

F = torch.nn.functional
with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "learner_fidelity_reference.json")) as _f:
    REF = json.load(_f)


def _ns():
    ns = {"torch": torch, "F": F}
    exec(REF["node_setup"], ns)  # noqa: S102 - the recorded setup, run as PyTorch ran it
    return ns


@pytest.mark.parametrize("expr", sorted(REF["nodes"]))
def test_type_name_repr_and_printed_name_match_pytorch(expr):
    want = REF["nodes"][expr]
    t = eval(expr, _ns())
    fn = t.grad_fn
    assert type(fn).__name__ == want["type"]
    assert fn.name() == want["name"]
    assert isinstance(fn, Node)
    printed = repr(t).rsplit(", ", 1)[-1]
    assert printed == want["printed"]
    kids = [[type(n).__name__, str(type(n)), n.name()] for n, _ in fn.next_functions if n is not None]
    assert kids == want["next"]
    if "torch." in want["class"]:     # a custom Function's class lives in the library's module, named as torch's
        assert str(type(fn)) == want["class"].replace("torch.", "engine.")
        assert re.sub(r" at 0x[0-9a-f]+>$", ">", repr(fn)) == want["repr"].replace("torch.", "engine.")
    else:
        assert str(type(fn)) == want["class"]
        assert re.sub(r" at 0x[0-9a-f]+>$", ">", repr(fn)) == want["repr"]


def test_one_class_per_name_made_once_and_still_an_op_node():
    x = torch.ones(3, requires_grad=True)
    a, b = x * 2, x * 3
    assert type(a.grad_fn) is type(b.grad_fn) is OP_TYPES["MulBackward0"]
    assert type(a.grad_fn).__base__ is OpNode and isinstance(a.grad_fn, OpNode)
    assert type((x + 1).grad_fn) is not type(a.grad_fn)


def test_traces_keep_the_bare_name_of_a_cpp_node():
    x = torch.ones(3, requires_grad=True)
    with torch.record() as tr:
        y = x.clone()
        y[0] = 2.0
        y.sum().backward()
    names = {e.get("name") for e in tr.events if e.get("kind") == "execute"}
    assert "CopySlices" in names and not any("::" in (n or "") for n in names)
    ops = [e for e in tr.events if e.get("kind") == "op" and e.get("node")]
    assert all("::" not in e["node"]["name"] for e in ops)
