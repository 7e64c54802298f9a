"""The random draws that keep a graph: normal (NormalBackward1/2/3), bernoulli and poisson.

The draws come in as a last, gradient-free input, drawn by the torch.* functions on glassgrad's
generator (engine/functions/random.py); the kernel is a copy of them, so it stays pure.
"""
from __future__ import annotations

from ..core.table import op


# ---- draws that keep a graph: the gradient is zero, as PyTorch's (not a reparameterisation) ------------
def _draw_fwd(xp, *arrays):
    return xp.asarray(arrays[-1], copy=True)   # the drawn values (the last input), as a new tensor


def _zero_bwd(n):
    def bwd(F, g, s):
        return tuple((g * 0.0 if s.needs[k] else None) for k in range(n)) + (None,)
    return bwd


op("normal_mean", "NormalBackward1", ("mean", "sample"), _draw_fwd, _zero_bwd(1), promote=False,
   nondiff=("sample",))
op("normal_std", "NormalBackward2", ("std", "sample"), _draw_fwd, _zero_bwd(1), promote=False, nondiff=("sample",))
op("normal_both", "NormalBackward3", ("mean", "std", "sample"), _draw_fwd, _zero_bwd(2), promote=False,
   nondiff=("sample",))
op("bernoulli", "BernoulliBackward0", ("self", "sample"), _draw_fwd, _zero_bwd(1), promote=False,
   nondiff=("sample",))


# ---- poisson: the draws come in as a second, gradient-free input (the kernel stays a pure copy) -------
op("poisson", "PoissonBackward0", ("self", "sample"), lambda xp, rate, sample: xp.asarray(sample, copy=True),
   lambda F, g, s: (g * 0.0, None), promote=False, nondiff=("sample",))
