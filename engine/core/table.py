"""The op table's schema: one row per differentiable op, as PyTorch's derivatives.yaml.

A row (``op(name, node, args, fwd, bwd, save=..., **flags)``) names:

- ``node``: the grad_fn PyTorch shows (``MulBackward0``);
- ``args``: the tensor-or-scalar arguments, in order (``*rest`` for a variadic tail);
- ``fwd(xp, *arrays, **attrs)``: the kernel, written only against the array API (``xp.*``);
- ``save``: saved name -> the arguments whose gradients need it (``()``: any of them).
  A saved name is an argument (``self``, ``other``), ``result`` (the output) or an aux
  output of the kernel; ``mul`` keeps ``other`` only when ``self`` needs a gradient;
- ``bwd(F, grad, s)``: one gradient per argument (None where not needed), written only
  against ``F.*`` (NOTE [ One formula, two currencies ] in core/fns.py). ``s`` reads the
  saved tensors and attributes by name, ``s.needs[i]`` says whether argument i needs a
  gradient, ``s.shapes``/``s.dtypes`` are the inputs' shapes and dtypes.

Flags: ``promote`` (PyTorch's type promotion of tensor arguments), ``float_op`` (integer
results lift to the default float dtype), ``view`` (the output shares the input's storage),
``alias`` (the output shares the input's storage but is no view: PyTorch's ``_unsafe_view``),
``aux`` (extra kernel outputs, each saved and returnable), ``nondiff`` (arguments that never
get a gradient, so no edge: indices, targets, masks), ``out_dtype``.

The rows the core needs are in ``core/primitives.py``; every other family's rows are in
``engine/ops/``. Everything not in the table is composed from it.
"""
from __future__ import annotations

import inspect


class OpDef:
    __slots__ = ("name", "node", "args", "fwd", "bwd", "save", "promote", "float_op", "differentiable", "aux",
                 "view", "alias", "grad_bwd", "variadic", "out_dtype", "defaults", "nondiff", "argpos", "saves_args",
                 "plain", "plans", "layout")

    def __init__(self, name, node, args, fwd, bwd=None, save=None, promote=True, float_op=False,
                 differentiable=True, aux=(), view=False, out_dtype=None, nondiff=(), alias=False):
        self.name = name
        self.node = node
        self.variadic = bool(args) and args[-1].startswith("*")
        self.args = tuple(a.lstrip("*") for a in args)
        self.fwd = fwd
        self.bwd = bwd
        self.save = dict(save or {})   # saved name -> tuple of arg names whose grads need it (() = any)
        self.promote = promote
        self.float_op = float_op
        self.differentiable = differentiable and bwd is not None
        self.aux = aux
        self.view = view
        self.alias = alias
        self.plain = not (aux or view or alias)    # NOTE [ Direct path ] 1 (core/dispatch.py)
        self.plans: dict = {}                      # needs -> the saved names they want (dispatch._save)
        self.out_dtype = out_dtype
        self.nondiff = frozenset(nondiff)  # args that never get a gradient: no edge (NOTE [ Dispatch ] 6)
        self.argpos = {a: i for i, a in enumerate(self.args)}
        self.saves_args = any(k in self.argpos for k in self.save)   # an input, not only result/aux
        self.defaults = {k: p.default for k, p in inspect.signature(fwd).parameters.items()
                         if p.default is not inspect.Parameter.empty}
        self.grad_bwd = None   # a recorded backward's formula if not bwd (NOTE [ Backward rows ], ops/grad_rows.py)
        self.layout = None     # fn(out, arrays) -> out laid out as PyTorch's (NOTE [ Output layout ], backend/layout.py)



OPS: dict[str, OpDef] = {}


def op(name, node, args, fwd, bwd=None, save=None, **kw):
    """Add row ``name`` to the table (a name is taken once: a second row would silently replace the first)."""
    if name in OPS:
        raise ValueError(f"op table row {name!r} is defined twice")
    OPS[name] = OpDef(name, node, args, fwd, bwd, save, **kw)
    return OPS[name]


class _Slot:
    """Where an index template (``x[i, :, j]``) takes the next index tensor."""

    def __repr__(self):
        return "<tensor>"


SLOT = _Slot()
