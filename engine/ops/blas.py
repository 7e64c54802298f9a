"""Products beyond the core's matmul (PyTorch's "BLAS and LAPACK operations"): the matrix products with
an added input baddbmm, addbmm, addmv and addr (NOTE [ beta and alpha ] in engine/functions/linalg.py),
vdot, and the cross product along a dim.

Each row keeps what PyTorch's node keeps; the torch.* functions are in engine/functions/linalg.py.
"""
from __future__ import annotations

from ..core.fns import array_fns
from ..core.table import op


# ---- matrix products with an added input (NOTE [ beta and alpha ] in engine/functions/linalg.py)
def _scaled(x, k):
    return x if k == 1 else x * k


def _add_scaled(xp, c, prod, beta, alpha):
    prod = _scaled(prod, alpha)
    if beta == 0:        # the input is ignored, NaN and inf included
        return prod + xp.zeros_like(c) if tuple(c.shape) != tuple(prod.shape) else prod
    return _scaled(c, beta) + prod


def _addmm_scaled_fwd(xp, c, a, b, beta=1, alpha=1):
    return _add_scaled(xp, c, xp.matmul(a, b), beta, alpha)


# torch.addmm with beta or alpha other than 1 (the core's addmm row is the beta = alpha = 1 fast path):
# still one AddmmBackward0 node, as PyTorch's
op("addmm_scaled", "AddmmBackward0", ("self", "mat1", "mat2"), _addmm_scaled_fwd,
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.matmul(g, F.mT(s.mat2)), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(s.mat1), g), s.alpha) if s.needs[2] else None),
   save={"mat1": ("mat2",), "mat2": ("mat1",)}, promote=False)


op("baddbmm", "BaddbmmBackward0", ("self", "batch1", "batch2"),
   lambda xp, c, a, b, beta=1, alpha=1: _add_scaled(xp, c, xp.matmul(a, b), beta, alpha),
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.matmul(g, F.mT(s.batch2)), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(s.batch1), g), s.alpha) if s.needs[2] else None),
   save={"batch1": ("batch2",), "batch2": ("batch1",)}, promote=False)


def _addbmm_bwd(F, g, s):
    nb = s.shapes[1][0]
    ge = F.broadcast_to(F.expand_dims(g, axis=0), (nb,) + tuple(F.shape(g)))
    return (_scaled(g, s.beta) if s.needs[0] else None,
            _scaled(F.matmul(ge, F.mT(s.batch2)), s.alpha) if s.needs[1] else None,
            _scaled(F.matmul(F.mT(s.batch1), ge), s.alpha) if s.needs[2] else None)


op("addbmm", "AddbmmBackward0", ("self", "batch1", "batch2"),
   lambda xp, c, a, b, beta=1, alpha=1: _add_scaled(xp, c, xp.sum(xp.matmul(a, b), axis=0), beta, alpha),
   _addbmm_bwd, save={"batch1": ("batch2",), "batch2": ("batch1",)}, promote=False)
op("addmv", "AddmvBackward0", ("self", "mat", "vec"),
   lambda xp, c, m, v, beta=1, alpha=1: _add_scaled(xp, c, xp.matmul(m, v), beta, alpha),
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.expand_dims(g, axis=1) * F.expand_dims(s.vec, axis=0), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(s.mat), g), s.alpha) if s.needs[2] else None),
   save={"mat": ("vec",), "vec": ("mat",)}, promote=False)
op("addr", "AddrBackward0", ("self", "vec1", "vec2"),
   lambda xp, c, u, v, beta=1, alpha=1: _add_scaled(xp, c, xp.expand_dims(u, axis=1) * xp.expand_dims(v, axis=0),
                                                    beta, alpha),
   lambda F, g, s: (_scaled(g, s.beta) if s.needs[0] else None,
                    _scaled(F.matmul(g, s.vec2), s.alpha) if s.needs[1] else None,
                    _scaled(F.matmul(F.mT(g), s.vec1), s.alpha) if s.needs[2] else None),
   save={"vec1": ("vec2",), "vec2": ("vec1",)}, promote=False)


# ---- vdot: sum(conj(a) * b); glassgrad is real, so dot with its own node ----------------------------
op("vdot", "VdotBackward0", ("self", "other"), lambda xp, a, b: xp.sum(a * b),
   lambda F, g, s: (g * s.other if s.needs[0] else None, g * s.self if s.needs[1] else None),
   save={"other": ("self",), "self": ("other",)}, promote=False)


# ---- cross ----------------------------------------------------------------------------------------
def _cross(F, a, b, d):
    """The cross product along ``d`` from slices: works on arrays and on Tensors alike."""
    shape = tuple(max(p, q) for p, q in zip(F.shape(a), F.shape(b)))
    pre = (slice(None),) * d

    def c(x, k):
        return F.index(x, pre + (slice(k, k + 1),))

    parts = (c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
             c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0))
    out = None
    for k, p in enumerate(parts):
        p = F.broadcast_to(p, shape[:d] + (1,) + shape[d + 1:])
        t = F.scatter_add(shape, pre + (slice(k, k + 1),), p, p)
        out = t if out is None else out + t
    return out


def _cross_fwd(xp, a, b, dim):
    return _cross(array_fns(xp), a, b, dim)


op("cross", "LinalgCrossBackward0", ("self", "other"), _cross_fwd,
   lambda F, g, s: (_cross(F, s.other, g, s.dim) if s.needs[0] else None,
                    _cross(F, g, s.self, s.dim) if s.needs[1] else None),
   save={"other": ("self",), "self": ("other",)})


# ---- _unsafe_view: how matmul reads its mm/bmm result back in the output's shape --------------------
# The output shares the product's bytes but is not a view of it (no base, its own version counter), as
# PyTorch's _unsafe_view: an in-place op on a matmul result is an ordinary in-place op.
op("unsafe_view", "UnsafeViewBackward0", ("self",), lambda xp, a, shape: xp.reshape(a, shape),
   lambda F, g, s: (F.reshape(g, s.shapes[0]),), promote=False, alias=True)
