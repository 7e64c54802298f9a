"""``std_mean`` and ``var_mean``: one node gives both outputs (StdMeanBackward0, VarMeanBackward0).

As PyTorch: var_mean keeps ``self``; std_mean keeps ``self`` and ``result0`` (the std). The node
gets both outputs' gradients (NOTE [ Several outputs ] in engine/core/dispatch.py), and the input's
gradient is the spread's part plus the mean's part, ``g_mean / n`` spread over the reduced dims.
"""
from __future__ import annotations

from ...core.primitives import _count, _dof_scale, _inverse_count, _keep, _mean_fwd, _var_fwd
from ...core.table import op


OUTPUTS = ("result0", "result1")


def _var_mean_fwd(xp, a, dim=None, correction=1, keepdim=False):
    return _var_fwd(xp, a, dim, correction, keepdim), _mean_fwd(xp, a, dim, keepdim)


def _std_mean_fwd(xp, a, dim=None, correction=1, keepdim=False):
    v, m = _var_mean_fwd(xp, a, dim, correction, keepdim)
    return xp.sqrt(v), m


def _centered(F, s):
    """(x - mean(x)) * 2 / (n - correction): d var / dx."""
    x, shape = s.self, s.shapes[0]
    mean = F.sum(x, axis=s.dim, keepdims=True) * _inverse_count(shape, s.dim)
    return _dof_scale(F, x - mean, _count(shape, s.dim), s.correction, s.dim)


def _with_mean_part(F, s, part, g_mean):
    if g_mean is None:
        return (part,)
    shape = s.shapes[0]
    m = F.broadcast_to(_keep(F, g_mean, s, shape), shape) * _inverse_count(shape, s.dim)
    return (m if part is None else part + m,)


def _var_mean_bwd(F, g, s):
    g_var, g_mean = g
    part = None if g_var is None else _keep(F, g_var, s, s.shapes[0]) * _centered(F, s)
    return _with_mean_part(F, s, part, g_mean)


def _std_mean_bwd(F, g, s):
    """d std = d var / (2 std), 0 where the std is 0 (as StdBackward0)."""
    g_std, g_mean = g
    part = None
    if g_std is not None:
        shape = s.shapes[0]
        res = _keep(F, s.result0, s, shape)
        safe = F.where(F.eq(res, 0.0), 1.0, res)
        part = F.where(F.eq(res, 0.0), 0.0, _keep(F, g_std, s, shape) / (2.0 * safe)) * _centered(F, s)
    return _with_mean_part(F, s, part, g_mean)


op("var_mean", "VarMeanBackward0", ("self",), _var_mean_fwd, _var_mean_bwd, save={"self": ()}, promote=False,
   aux=("multi",))
op("std_mean", "StdMeanBackward0", ("self",), _std_mean_fwd, _std_mean_bwd, save={"self": (), "result0": ()},
   promote=False, aux=("multi",))
