"""The special-function family: kernels written against the array API, in float64, rounded once.

``erfinv.py``: erfinv (NOTE [ erfinv ]) and sgn. ``gamma.py``: lgamma, digamma, polygamma, mvlgamma
(NOTE [ Gamma-family kernels ]). ``torch_special.py``: erfc, exp2, entr, i0, i1, ndtri, log_ndtr and
xlog1py, the rows behind engine/special.py (NOTE [ special kernels ]).

The families give backward formulas their own verbs (``F.erfinv``, ``F.digamma``, ``F.i0`` ...) through
``core.fns.register``; the torch.* functions are in engine/functions/special.py and engine/special.py.
"""
from __future__ import annotations

from . import erfinv, gamma, torch_special  # noqa: F401
