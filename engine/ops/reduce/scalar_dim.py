"""Rows run along the one dim of a 0-d tensor (NOTE [ A 0-d tensor's one dim ] 3, in
engine/functions/dims.py): ``along_one_dim(row)`` is ``row`` with its arrays seen as shape ``(1,)``.

The derived row keeps the row's name, grad_fn name and what the node saves, so events and the graph
show PyTorch's node (SoftmaxBackward0, SortBackward0, MaxBackward0, ...). It is not a row of its own in
the one table: it is the same row, read through a reshape.
"""
from __future__ import annotations

from ...core.table import OpDef

_DERIVED: dict = {}


def _one(xp, a, shape):
    """``a`` reshaped to ``shape`` when it holds exactly one value (a ``topk`` with k=0 holds none)."""
    if not hasattr(a, "shape") or tuple(a.shape) == shape or tuple(a.shape) not in ((), (1,)):
        return a
    return xp.reshape(a, shape)


def _out_shape(attrs):
    """The shape of each output of the 1-d run: ``(1,)``, or ``()`` when the op drops the dim."""
    return () if attrs.get("keepdim", True) is False else (1,)


class _SeenAsOneDim:
    """A node's saved values and attributes, with its 0-d inputs as shape (1,) and its outputs as the
    1-d run made them."""

    def __init__(self, s, row, F):
        self._s, self._row, self._F = s, row, F
        self.needs = s.needs

    def __getattr__(self, name):
        v = getattr(self._s, name)
        if name == "shapes":
            v = [(1,) if sh == () else sh for sh in v]
        elif hasattr(v, "shape") and tuple(self._F.shape(v)) == ():
            if name in self._row.argpos:
                v = self._F.reshape(v, (1,))
            else:                                   # ``result`` or an aux output
                keep = getattr(self._s, "keepdim", True)
                v = self._F.reshape(v, (1,)) if keep is not False else v
        self.__dict__[name] = v
        return v


def along_one_dim(row):
    """``row`` for 0-d inputs: the kernel and the backward formula see every 0-d array as shape
    ``(1,)`` and hand back shape ``()``; created once per row."""
    if row.name in _DERIVED:
        return _DERIVED[row.name]

    def fwd(xp, *arrays, **attrs):
        out = row.fwd(xp, *[_one(xp, a, (1,)) if hasattr(a, "shape") and not a.shape else a for a in arrays],
                      **attrs)
        if row.aux:
            out, aux = out
            return _one(xp, out, ()), {k: _one(xp, v, ()) for k, v in aux.items()}
        if isinstance(out, tuple):
            return tuple(_one(xp, o, ()) for o in out)
        return _one(xp, out, ())

    bwd = None
    if row.bwd is not None:
        def bwd(F, g, s):
            keep = getattr(s, "keepdim", True)
            shape = (1,) if keep is not False else ()
            if isinstance(g, tuple):
                g = type(g)(None if x is None else F.reshape(x, shape) for x in g)
            else:
                g = F.reshape(g, shape)
            grads = row.bwd(F, g, _SeenAsOneDim(s, row, F))
            return tuple(F.reshape(r, ()) if r is not None and shape_in == () and tuple(F.shape(r)) == (1,) else r
                         for r, shape_in in zip(grads, s.shapes))

    args = row.args[:-1] + ("*" + row.args[-1],) if row.variadic else row.args
    derived = OpDef(row.name, row.node, args, fwd, bwd, save=row.save, promote=row.promote, float_op=row.float_op,
                    differentiable=row.differentiable, aux=row.aux, view=row.view, out_dtype=row.out_dtype,
                    nondiff=row.nondiff)
    derived.defaults = row.defaults
    _DERIVED[row.name] = derived
    return derived
