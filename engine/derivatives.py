"""The op table: each op's forward kernel, what it saves, and its backward formula.

In the spirit of PyTorch's derivatives.yaml: one entry per differentiable op, naming
the grad_fn PyTorch would show, the tensors it saves (and for which input gradients),
and ``bwd(F, grad, saved)`` returning one gradient per argument. Kernels call only
``xp.*`` (the array API); formulas call only ``F.*`` (NOTE [ One formula, two
currencies ] in core/fns.py). Everything not in this table is composed from it.

The rows live in engine/core/primitives.py (the ones the core needs) and engine/ops/ (every other
family, beside its kernels); importing this module registers them all (engine/ops/__init__.py is
the one registry).
"""
from __future__ import annotations

from .core.table import OPS, SLOT as _SLOT, op  # noqa: F401
from .core.primitives import *  # noqa: F401,F403
from .core.primitives import (_clone_fwd, _count, _dof_inverse, _inverse, _inverse_count,  # noqa: F401
                              _keep, _mean_fwd, _rebuild_index, _var_fwd)
from . import ops as _ops  # noqa: F401  (every family's rows: OPS is full)
