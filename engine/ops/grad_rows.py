"""Backward rows: ops that are another row's backward formula, as PyTorch's ``tanh_backward``.

NOTE [ Backward rows ]
1. PyTorch's backward formulas call ops with derivatives.yaml rows of their own (``tanh_backward``,
   ``_softmax_backward_data``): with ``create_graph=True`` a second-order graph shows one
   ``TanhBackwardBackward0`` node, not the formula's parts.
2. ``grad_of(row, [(forward, arg, names)])`` makes table row ``row`` such an op: its inputs are the incoming
   gradient, then the forward node's saved values ``names`` (saved tensors or attributes); its output
   is the gradient of the forward row's argument ``arg``; its own ``bwd`` is the double-backward
   formula, written against ``F.*`` like any other, so third order works too. The forward node's
   attributes that the row's kernel names as keywords (``dim``, ``alpha``, ``reduction``) are its own.
3. Only a recorded backward (``F.differentiable``) runs backward rows, through the forward row's
   ``grad_bwd`` (engine/core/dispatch.py): the usual backward runs the forward formula on arrays,
   which computes the same values without a node.
4. Arguments no backward row covers take their gradients from the forward formula, which then sees
   only them as needed (``s.needs``).
"""
from __future__ import annotations

import functools
import inspect

from ..core.dispatch import apply
from ..core.table import OPS

_ROWS: dict = {}    # forward row name -> {argument index: (backward row, saved names, keyword names)}


def grad_of(name, forwards):
    """Rule 2: declare row ``name`` the backward row of each ``(forward row, argument, saved names)``."""
    row = OPS[name]
    params = inspect.signature(row.fwd).parameters
    keywords = tuple(k for k in list(params)[1:]
                     if k not in row.argpos and params[k].kind is not inspect.Parameter.VAR_POSITIONAL)
    for forward, arg, names in forwards:
        rows = _ROWS.setdefault(forward, {})
        rows[OPS[forward].argpos[arg]] = (row, tuple(names), keywords)
        OPS[forward].grad_bwd = functools.partial(_run_rows, rows)


def _run_rows(rows, F, g, s):
    """Rules 3 and 4: a recorded backward of a node whose op has backward rows."""
    node = s._node
    needs = node._needs
    s.needs = tuple(n and i not in rows for i, n in enumerate(needs))
    res = list(node._op.bwd(F, g, s)) if any(s.needs) else [None] * len(needs)
    for i, (row, names, keywords) in rows.items():
        if needs[i]:
            attrs = {k: node._attrs[k] for k in keywords if k in node._attrs}
            res[i] = apply(row, [g] + [getattr(s, k) for k in names], attrs)
    return res
