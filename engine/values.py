"""Opt-in value capture: ``engine.record(values=True)`` summarises what tensors hold.

NOTE [ Value capture ]
1. Off by default, so memory figures stay exact and recording stays cheap. On, an op hook
   (NOTE [ Op hooks ] in engine/core/hooks.py) summarises every op's output, and a
   post-accumulate hook on every leaf an op reads summarises its gradient each time
   backward writes it.
2. A summary is a ``values`` event: ``tensor``, ``storage``, ``numel``, ``grad`` (True for a
   leaf's gradient) and, over the finite elements, ``min``, ``max``, ``mean``, ``std``,
   ``norm`` (the 2-norm), the ``nan`` and ``inf`` counts, and a histogram of ``HIST_BINS``
   counts between ``lo`` and ``hi``. Numbers without finite elements are null.
3. A tensor of more than ``cap`` elements (``values_cap``, a million by default) is not
   read: its event says ``refused`` with the count and the cap, so nothing silently costs
   gigabytes or minutes.
4. Summaries are computed on the host from the tensor's array; the capture holds no
   reference to any tensor, and its hooks do nothing once the recording has ended (they
   are removed when it ends).
"""
from __future__ import annotations

import math

import numpy as np

from . import events as _events
from .core.hooks import op_hooks, push_op_hook

HIST_BINS = 16
DEFAULT_CAP = 1_000_000


def _host(t):
    a = t._data
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def summary(t, cap: int = DEFAULT_CAP) -> dict:
    """Rule 2 for one tensor (rule 3 past the cap)."""
    n = int(t.numel())
    out = {"tensor": t._id, "storage": t._storage.id, "numel": n}
    if n > cap:
        out["refused"] = f"{n:,} elements is over the values cap of {cap:,}"
        return out
    a = _host(t)
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    if not np.issubdtype(a.dtype, np.number):
        out["refused"] = f"{a.dtype} values are not summarised"
        return out
    flat = a.reshape(-1).astype(np.float64)
    finite = flat[np.isfinite(flat)]
    out["nan"] = int(np.isnan(flat).sum())
    out["inf"] = int(np.isinf(flat).sum())
    if finite.size == 0:
        out.update(min=None, max=None, mean=None, std=None, norm=None, hist=[], lo=None, hi=None)
        return out
    lo, hi = float(finite.min()), float(finite.max())
    counts, _ = np.histogram(finite, bins=HIST_BINS, range=(lo, hi if hi > lo else lo + 1.0))
    out.update(min=lo, max=hi, mean=float(finite.mean()), std=float(finite.std()),
               norm=float(math.sqrt(float(np.dot(finite, finite)))), hist=[int(c) for c in counts], lo=lo, hi=hi)
    return out


class ValueCapture:
    """The op hook and gradient hooks of one recording (rules 1, 4)."""

    def __init__(self, cap: int = DEFAULT_CAP):
        if not isinstance(cap, int) or cap < 0:
            raise ValueError(f"values_cap must be a non-negative number of elements, got {cap!r}")
        self.cap = cap
        self.on = False
        self._handles = []
        self._watched = set()          # ids of the leaves that have a gradient hook
        self._push = None

    def before(self, op, inputs, attrs, inplace):
        return None

    def after(self, op, inputs, attrs, result):
        if not (self.on and _events.active):
            return
        _events.emit("values", grad=False, **summary(result, self.cap))
        for t in inputs:
            if getattr(t, "_requires_grad", False) and t.grad_fn is None and t._id not in self._watched:
                self._watched.add(t._id)
                self._handles.append(t.register_post_accumulate_grad_hook(self._grad_written))

    def _grad_written(self, leaf):
        if self.on and _events.active and leaf.grad is not None:
            ev = summary(leaf.grad, self.cap)
            ev["leaf"] = leaf._id
            _events.emit("values", grad=True, **ev)

    def start(self) -> None:
        self.on = True
        self._push = push_op_hook(self)
        self._push.__enter__()

    def stop(self) -> None:
        self.on = False
        if self._push is not None:
            op_hooks.stack = tuple(h for h in op_hooks.stack if h is not self)
            self._push = None
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._watched.clear()
