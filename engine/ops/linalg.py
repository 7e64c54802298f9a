"""Linear algebra for the op table: vector_norm, inv, det, slogdet, solve, cholesky, qr, svd, eigh, pinv,
cross (LinalgVectorNormBackward0, LinalgInvExBackward0, LinalgDetBackward0, ...).

Kernels call ``xp.linalg`` (the array API's linalg extension; CuPy has it too). Backward formulas
are the standard matrix-calculus ones (real matrices), written against ``F.*`` so a recorded
backward works; the few matrix solves they need go through ``_la`` (NOTE [ Linalg backward ]).

Ops with several outputs (slogdet, qr, svd, eigh) run through ``apply_multi``
(NOTE [ Several outputs ] in core/dispatch.py).
"""
from __future__ import annotations

import math

from ..core.primitives import _keep
from ..core.table import op


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a matrix the factorization cannot handle (singular, not PD).
    Named ``_LinAlgError`` as PyTorch's class is (torch._C._LinAlgError)."""


LinAlgError = _LinAlgError


# ---- helpers for backward formulas ----------------------------------------------------------------
# NOTE [ Linalg backward ]
# 1. A formula needing a solve or an inverse calls ``_la(F)``, that is ``F.linalg``: on arrays, the
#    array namespace's linalg; on Tensors (create_graph), ``engine.linalg`` itself (registered with
#    core/fns.py, rule 5: ops never import the library), so the backward is recorded.
# 2. Masks (tril, the identity) are built from ``F.iota`` and broadcast over batch dims.
def _la(F):
    return F.linalg


def _iota2(F, n, like):
    return F.iota(n, 0, 2, like), F.iota(n, 1, 2, like)


def _eye_mask(F, n, like):
    r, c = _iota2(F, n, like)
    return F.eq(r, c)


def _tril(F, x, strict=False):
    r, c = _iota2(F, F.shape(x)[-1], x)
    return F.where(F.gt(r, c) if strict else F.ge(r, c), x, 0.0)


def _triu(F, x):
    r, c = _iota2(F, F.shape(x)[-1], x)
    return F.where(F.le(r, c), x, 0.0)


def _diag_embed(F, v):
    return F.where(_eye_mask(F, F.shape(v)[-1], v), F.expand_dims(v, -1), 0.0)


def _inv(F, a):
    return _la(F).inv(a)


def _solve(F, a, b):
    return _la(F).solve(a, b)


def _mT(F, x):
    return F.mT(x)


# ---- vector_norm ----------------------------------------------------------------------------------
def _vnorm_fwd(xp, a, ord=2.0, dim=None, keepdim=False):
    x = xp.abs(a)
    if ord == math.inf:
        return xp.max(x, axis=dim, keepdims=keepdim)
    if ord == -math.inf:
        return xp.min(x, axis=dim, keepdims=keepdim)
    if ord == 0:
        return xp.sum(xp.astype(x != 0, a.dtype), axis=dim, keepdims=keepdim)
    if ord == 1:
        return xp.sum(x, axis=dim, keepdims=keepdim)
    if ord == 2:
        return xp.sqrt(xp.sum(x * x, axis=dim, keepdims=keepdim))
    return xp.sum(x ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)


def _vnorm_bwd(F, g, s):
    """PyTorch's norm_backward: ``g * sign(x) |x|^(p-1) / norm^(p-1)``, 0 where the norm is 0;
    for +-inf the gradient is shared among the elements that reach the norm."""
    p, x = s.ord, s.self
    if p == 0:
        return (None,)     # PyTorch: no gradient at all, the input's .grad stays None
    g = _keep(F, g, s, s.shapes[0])
    if p == 1:
        return (F.sign(x) * g,)
    res = _keep(F, s.result, s, s.shapes[0])
    if p in (math.inf, -math.inf):
        hit = F.eq(F.abs(x), res)
        count = F.sum(F.where(hit, 1.0, 0.0 * x), axis=s.dim, keepdims=True)
        return (F.where(hit, F.sign(x) * (g / count), 0.0),)
    zero = F.eq(res, 0.0)
    safe = F.where(zero, 1.0, res)
    if p == 2:
        return (F.where(zero, 0.0, g * x / safe),)
    ax = F.abs(x)
    scaled = F.sign(x) * ax ** (p - 1.0)
    if p < 1:
        scaled = F.where(F.eq(x, 0.0), 0.0, scaled)
    return (F.where(zero, 0.0, scaled * g / safe ** (p - 1.0)),)


op("linalg_vector_norm", "LinalgVectorNormBackward0", ("self",), _vnorm_fwd, _vnorm_bwd,
   save={"self": (), "result": ()}, promote=False)


# ---- inv, det, slogdet, solve -----------------------------------------------------------------------
def _inv_fwd(xp, a):
    try:
        return (xp.linalg.inv(a),)
    except Exception as e:  # noqa: BLE001 - LAPACK's LinAlgError (NumPy, CuPy): PyTorch's words instead
        raise_singular(xp, a, "linalg.inv", e)


def _inv_bwd(F, g, s):
    gi = _mT(F, s.inverse)
    return (-F.matmul(gi, F.matmul(g[0], gi)),)


op("linalg_inv", "LinalgInvExBackward0", ("A",), _inv_fwd, _inv_bwd, save={"inverse": ()}, promote=False,
   aux=("multi",))


def _det_bwd(F, g, s):
    """``g det(A) A^-T`` (A invertible)."""
    scale = F.expand_dims(F.expand_dims(g * s.result, -1), -1)
    return (scale * _mT(F, _inv(F, s.A)),)


op("linalg_det", "LinalgDetBackward0", ("A",), lambda xp, a: xp.linalg.det(a), _det_bwd,
   save={"A": (), "result": ()}, promote=False)


def _slogdet_fwd(xp, a):
    r = xp.linalg.slogdet(a)
    return r[0], r[1]


def _slogdet_bwd(F, g, s):
    if g[1] is None:
        return (None,)
    return (F.expand_dims(F.expand_dims(g[1], -1), -1) * _mT(F, _inv(F, s.A)),)


op("linalg_slogdet", "LinalgSlogdetBackward0", ("A",), _slogdet_fwd, _slogdet_bwd,
   save={"A": (), "sign": ()}, promote=False, aux=("multi",))


def _solve_fwd(xp, a, b, left=True, vector=False):
    if vector:
        b = xp.expand_dims(b, axis=-1)
    try:
        if left:
            x = xp.linalg.solve(a, b)
        else:
            x = _swap(xp, xp.linalg.solve(_swap(xp, a), _swap(xp, b)))
    except Exception as e:  # noqa: BLE001
        raise_singular(xp, a, "torch.linalg.solve", e)
    return x[..., 0] if vector else x


def _swap(xp, x):
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return xp.permute_dims(x, tuple(axes))


def _solve_bwd(F, g, s):
    """AX = B: gB = A^-T g, gA = -gB X^T (XA = B: gB = g A^-1 ... the transposes of those)."""
    x = s.result
    if s.vector:
        g, x = F.expand_dims(g, -1), F.expand_dims(x, -1)
    a = s.A
    if s.left:
        gb = _solve(F, _mT(F, a), g)
        ga = -F.matmul(gb, _mT(F, x))
    else:
        gb = _mT(F, _solve(F, a, _mT(F, g)))
        ga = -F.matmul(_mT(F, x), gb)
    if s.vector:
        gb = F.reshape(gb, F.shape(gb)[:-1])
    return (ga if s.needs[0] else None, gb if s.needs[1] else None)


op("linalg_solve", "LinalgSolveExBackward0", ("A", "B"), _solve_fwd, _solve_bwd,
   save={"A": (), "result": ()}, promote=False)


# ---- cholesky, qr ------------------------------------------------------------------------------------
def _cholesky_fwd(xp, a, upper=False):
    try:
        low = xp.linalg.cholesky(a)
    except Exception as e:  # noqa: BLE001
        raise_not_pd(xp, a, e)
    return (_swap(xp, low) if upper else low,)


def _cholesky_bwd(F, g, s):
    """PyTorch's cholesky_backward: ``L^-T Phi(L^T gL) L^-1``, symmetrized (Phi: the lower
    triangle with the diagonal halved)."""
    low, gl = s.L, g[0]
    if s.upper:
        low, gl = _mT(F, low), _mT(F, gl)
    linv = _inv(F, low)
    phi = _tril(F, F.matmul(_mT(F, low), gl))
    phi = F.where(_eye_mask(F, F.shape(phi)[-1], phi), phi * 0.5, phi)
    ga = F.matmul(F.matmul(_mT(F, linv), phi), linv)
    return ((ga + _mT(F, ga)) * 0.5,)


op("linalg_cholesky", "LinalgCholeskyExBackward0", ("self",), _cholesky_fwd, _cholesky_bwd,
   save={"L": ()}, promote=False, aux=("multi",))


def _qr_fwd(xp, a, mode="reduced"):
    q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = xp.zeros((0,), dtype=a.dtype)
    return q, r


def _qr_bwd(F, g, s):
    """PyTorch's linalg_qr_backward for m >= n: ``[gQ + Q sym(triu(gR R^T - Q^T gQ))] R^-T``."""
    if s.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    q, r = s.Q, s.R
    gq, gr = g
    m, n = F.shape(q)[-2], F.shape(r)[-1]
    if m < n:
        raise NotImplementedError("glassgrad: the derivative of linalg.qr for wide matrices (more columns than "
                                  "rows) is not implemented")
    if s.mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gq is not None and gr is not None:
        ga = F.matmul(gr, _mT(F, r)) - F.matmul(_mT(F, q), gq)
    elif gq is not None:
        ga = -F.matmul(_mT(F, q), gq)
    else:
        ga = F.matmul(gr, _mT(F, r))
    t = _triu(F, ga)
    t = t + _mT(F, t)
    t = F.where(_eye_mask(F, F.shape(t)[-1], t), t * 0.5, t)
    ga = F.matmul(q, t)
    if gq is not None:
        ga = ga + gq
    # X R^T = ga  ->  X = (R^-1 ga^T)^T
    return (_mT(F, _solve(F, r, _mT(F, ga))),)


op("linalg_qr", "LinalgQrBackward0", ("A",), _qr_fwd, _qr_bwd, save={"Q": (), "R": ()}, promote=False,
   aux=("multi",))


# ---- svd, eigh ---------------------------------------------------------------------------------------
def _svd_fwd(xp, a, full_matrices=True):
    u, sv, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return u, sv, vh


def _svd_bwd(F, g, s):
    """PyTorch's svd_backward (real, distinct singular values)."""
    gu, gs, gvh = g
    u, sv, vh = s.U, s.S, s.Vh
    k = F.shape(sv)[-1]
    if s.full_matrices:
        u, vh = F.index(u, (Ellipsis, slice(0, k))), F.index(vh, (Ellipsis, slice(0, k), slice(None)))
        gu = F.index(gu, (Ellipsis, slice(0, k))) if gu is not None else None
        gvh = F.index(gvh, (Ellipsis, slice(0, k), slice(None))) if gvh is not None else None
    m, n = F.shape(u)[-2], F.shape(vh)[-1]
    if gu is None and gvh is None:
        if m >= n:
            return (F.matmul(u, F.expand_dims(gs, -1) * vh),)
        return (F.matmul(u * F.expand_dims(gs, -2), vh),)
    s_row, s_col = F.expand_dims(sv, -2), F.expand_dims(sv, -1)
    s2 = sv * sv
    e = F.expand_dims(s2, -2) - F.expand_dims(s2, -1)
    e = F.where(_eye_mask(F, k, e), 1.0, e)
    uhgu = vhgv = None
    if gu is not None:
        uhgu = F.matmul(_mT(F, u), gu)
        uhgu = uhgu - _mT(F, uhgu)
    if gvh is not None:
        vhgv = F.matmul(vh, _mT(F, gvh))
        vhgv = vhgv - _mT(F, vhgv)
    if uhgu is not None and vhgv is not None:
        ga = (uhgu * s_row + s_col * vhgv) / e
    elif uhgu is not None:
        ga = uhgu * (s_row / e)
    else:
        ga = s_col * (vhgv / e)
    if gs is not None:
        ga = ga + _diag_embed(F, gs)
    if m > n and gu is not None:
        ga = F.matmul(u, ga)
        gusinv = gu / s_row
        ga = ga + gusinv - F.matmul(u, F.matmul(_mT(F, u), gusinv))
        return (F.matmul(ga, vh),)
    if m < n and gvh is not None:
        ga = F.matmul(ga, vh)
        sinvgvh = gvh / s_col
        ga = ga + sinvgvh - F.matmul(F.matmul(sinvgvh, _mT(F, vh)), vh)
        return (F.matmul(u, ga),)
    return (F.matmul(u, F.matmul(ga, vh)) if m >= n else F.matmul(F.matmul(u, ga), vh),)


op("linalg_svd", "LinalgSvdBackward0", ("A",), _svd_fwd, _svd_bwd, save={"S": (), "U": (), "Vh": ()},
   promote=False, aux=("multi",))


def _eigh_fwd(xp, a, UPLO="L"):
    if UPLO == "U":
        a = _swap(xp, a)
    w, v = xp.linalg.eigh(a)
    return w, v


def _eigh_bwd(F, g, s):
    """``V (diag(gL) + sym(V^T gV) / E) V^T`` with ``E_ij = L_j - L_i`` (distinct eigenvalues)."""
    gl, gv = g
    w, v = s.eigenvalues, s.eigenvectors
    if gv is None:
        return (F.matmul(v * F.expand_dims(gl, -2), _mT(F, v)),)
    n = F.shape(w)[-1]
    e = F.expand_dims(w, -2) - F.expand_dims(w, -1)
    eye = _eye_mask(F, n, e)
    e = F.where(eye, 1.0, e)
    vtgv = F.matmul(_mT(F, v), gv)
    ga = F.where(eye, 0.0, (vtgv - _mT(F, vtgv)) * 0.5 / e)
    if gl is not None:
        ga = ga + _diag_embed(F, gl)
    return (F.matmul(v, F.matmul(ga, _mT(F, v))),)


op("linalg_eigh", "LinalgEighBackward0", ("self",), _eigh_fwd, _eigh_bwd,
   save={"eigenvalues": (), "eigenvectors": ()}, promote=False, aux=("multi",))


# ---- pinv, cross -------------------------------------------------------------------------------------
def _pinv_fwd(xp, a, rtol=None, hermitian=False):
    return xp.linalg.pinv(a, rtol=rtol)


def _pinv_bwd(F, g, s):
    return (_pinv_grad(F, g, s.self, s.result),)


def _pinv_grad(F, g, a, p):
    """PyTorch's pinv_backward (the products arranged to keep matrices smallest)."""
    m, n = F.shape(a)[-2], F.shape(a)[-1]
    ph, gh = _mT(F, p), _mT(F, g)
    mm = F.matmul
    if m <= n:
        k = mm(gh, p)
        kph = mm(k, ph)
        return -_mT(F, mm(p, k)) + kph - mm(mm(a, p), kph) + mm(mm(ph, p), gh - mm(k, a))
    k = mm(p, gh)
    phk = mm(ph, k)
    return -_mT(F, mm(k, p)) + mm(mm(gh - mm(a, k), p), ph) + phk - mm(mm(phk, p), a)


op("linalg_pinv", "LinalgPinvBackward0", ("self",), _pinv_fwd, _pinv_bwd, save={"self": (), "result": ()},
   promote=False)


def _lstsq_fwd(xp, a, b, vector=False):
    if vector:
        b = xp.expand_dims(b, axis=-1)
    x = xp.matmul(xp.linalg.pinv(a), b)
    return (x[..., 0] if vector else x,)


def _lstsq_bwd(F, g, s):
    """PyTorch's linalg_lstsq_backward: through ``pinv(A)``, recomputed from A."""
    gx, a, b = g[0], s.self, s.b
    if s.vector:
        gx, b = F.expand_dims(gx, -1), F.expand_dims(b, -1)
    p = _la(F).pinv(a)
    ga = _pinv_grad(F, F.matmul(gx, _mT(F, b)), a, p) if s.needs[0] else None
    gb = F.matmul(_mT(F, p), gx) if s.needs[1] else None
    if gb is not None and s.vector:
        gb = F.reshape(gb, F.shape(gb)[:-1])
    return ga, gb


op("linalg_lstsq", "LinalgLstsqBackward0", ("self", "b"), _lstsq_fwd, _lstsq_bwd,
   save={"b": ("self",), "self": (), "solution": ()}, promote=False, aux=("multi",))


def _cross(F, a, b, dim):
    if F.differentiable:
        return F.linalg.cross(a, b, dim=dim)
    return F.linalg.cross(a, b, axis=dim)


op("linalg_cross", "LinalgCrossBackward0", ("self", "other"),
   lambda xp, a, b, dim=-1: xp.linalg.cross(a, b, axis=dim),
   lambda F, g, s: (_cross(F, s.other, g, s.dim) if s.needs[0] else None,
                    _cross(F, g, s.self, s.dim) if s.needs[1] else None),
   save={"other": ("self",), "self": ("other",)})


# ---- PyTorch's LAPACK errors, found on the host once a factorization failed ------------------------
def _host(xp, a):
    from ..backend.gaps import to_numpy
    return to_numpy(xp, a)


def _batches(h):
    import numpy as np
    return h.reshape((-1,) + h.shape[-2:]) if h.ndim > 2 else h[np.newaxis]


def _zero_pivot(m) -> int:
    """1-based index of the first exactly zero pivot of LU with partial pivoting (LAPACK's info), else 0."""
    import numpy as np
    u = np.array(m, copy=True)
    n = u.shape[0]
    first = 0
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            first = first or k + 1
            continue
        u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return first


def raise_singular(xp, a, name, err):
    if "LinAlgError" not in type(err).__name__:
        raise err
    h = _host(xp, a)
    for b, m in enumerate(_batches(h)):
        k = _zero_pivot(m)
        if k:
            where = f"(Batch element {b}): " if h.ndim > 2 else ""
            if name == "linalg.inv":
                raise LinAlgError(f"{name}: {where}The diagonal element {k} is zero, the inversion could not be "
                                  "completed because the input matrix is singular.") from None
            raise LinAlgError(f"{name}: {where}The solver failed because the input matrix is singular.") from None
    raise LinAlgError(f"{name}: the input matrix is singular.") from None


def raise_not_pd(xp, a, err):
    import numpy as np
    if "LinAlgError" not in type(err).__name__:
        raise err
    h = _host(xp, a)
    for b, m in enumerate(_batches(h)):
        for k in range(1, m.shape[0] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                where = f"(Batch element {b}): " if h.ndim > 2 else ""
                raise LinAlgError(f"linalg.cholesky: {where}The factorization could not be completed because the "
                                  f"input is not positive-definite (the leading minor of order {k} is not "
                                  "positive-definite).") from None
    raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                      "positive-definite.") from None
