"""The reduction family: rows that fold a dim (or all of them) into fewer values.

``stats.py``: prod, nansum, median/nanmedian, kthvalue, mode, aminmax and histogram.
``moments.py``: var_mean and std_mean (one node, two outputs). ``scan.py``: the running reductions
cumsum, cumprod, logcumsumexp, cummax and cummin. ``norm.py``: the vector norm, renorm, and the
distances cdist and dist.

sum, mean, var, std, logsumexp, amax/amin and max/min are core rows (engine/core/primitives.py); the
torch.* functions are in engine/functions/reduce.py.
"""
from __future__ import annotations

from . import stats, moments, scan, norm  # noqa: F401
