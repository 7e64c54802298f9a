"""``engine.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal`` built on
``parametrize.register_parametrization``, as ``torch.nn.utils.parametrizations``.

NOTE [ Orthogonal maps ]
1. ``orthogonal`` turns a tall n x k matrix X (a wide one is transposed first) into one with
   orthonormal columns; ``use_trivialization=True`` (the default) also keeps a buffer ``base``
   and returns ``base @ map(X)``, so X starts at (minus) the identity and the map is only ever
   evaluated near it.
2. ``matrix_exp`` and ``cayley`` read the lower triangle of X, embed it in an n x n matrix and
   make it skew-symmetric, ``A = X - X^T``; then ``Q = expm(A)`` or ``Q = (I - A/2)^{-1}(I + A/2)``,
   cut to k columns.
3. ``householder`` reads the strictly lower part of X as k Householder reflectors, with
   ``tau = 2 / (1 + |v|^2)`` (each reflector orthogonal), multiplies them out and flips each
   column by the sign of X's diagonal.
4. Differs from PyTorch: all three maps are composed from engine ops, so the graph shows the
   pieces (``matrix_exp`` is a degree-18 Taylor polynomial after scaling by a power of two, then
   squared back: a chain of MmBackward0 nodes rather than one LinalgMatrixExpBackward0;
   ``householder_product`` is k rank-one updates rather than one
   LinalgHouseholderProductBackward0). The values agree to rounding.
"""
from __future__ import annotations

import math
from enum import Enum, auto

import numpy as np

from ...backend.dtype_info import finfo
from ... import functional as E
from ... import linalg
from ...core.dispatch import apply
from ...core.tensor import Tensor
from ...core.grad_mode import no_grad
from ...core.table import OPS
from ..functional.distance import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim


# ---- weight norm ---------------------------------------------------------------------------------
class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        g = norm_except_dim(weight, 2, self.dim)
        return (g.clone() if g.ndim == 0 else g), weight     # a 0-d NumPy result is a scalar, not an array


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """``module.<name> = g * v / ||v||`` with ``g`` (``original0``, the norms over every dim but ``dim``)
    and ``v`` (``original1``) kept under ``module.parametrizations.<name>``.

    Differs from PyTorch: no load_state_dict hook mapping old ``<name>_g``/``<name>_v`` keys."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---- spectral norm -------------------------------------------------------------------------------
def _vdot(u, w):
    return apply(OPS["dot"], [u, w], node_name="VdotBackward0")


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        """u, v <- normalize(W v), normalize(W^T u), in place in the buffers, outside autograd."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = normalize(E.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = normalize(E.mv(weight_mat.mT, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _vdot(u, E.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _conv_transpose_types():
    return ConvTranspose1d, ConvTranspose2d, ConvTranspose3d


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None):
    """``module.<name> = W / sigma(W)``, sigma the largest singular value of W (viewed as a matrix with
    ``dim`` first) estimated by power iteration: buffers ``_u``, ``_v`` start from 15 iterations and take
    ``n_power_iterations`` more on each access in training mode; eval mode reuses them."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_types()) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ----------------------------------------------------------------------------------
class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _eye_like(n, k, like):
    return E.eye(n, k, dtype=like.dtype, device=like.device)


def matrix_exp(A):
    """``expm(A)`` of a (batch of) square matrices from engine ops (NOTE [ Orthogonal maps ] 4):
    scale by 2^-s so the 1-norm is at most 1/2, sum the Taylor series to degree 18 in Horner form,
    square s times."""
    n = A.shape[-1]
    with no_grad():
        norm = float(E.max(E.sum(E.abs(A), -2)).item()) if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 and math.isfinite(norm) else 0
    X = A * (0.5 ** s) if s else A
    eye = _eye_like(n, n, A)
    Q = eye
    for j in range(18, 0, -1):
        Q = eye + E.matmul(X, Q) * (1.0 / j)
    for _ in range(s):
        Q = E.matmul(Q, Q)
    return Q


def householder_product(A, tau):
    """The first k columns of ``H_1 H_2 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` column i of
    A below the diagonal and 1 on it (``torch.linalg.householder_product``, composed)."""
    n, k = A.shape[-2], A.shape[-1]
    V = E.tril(A, -1) + _eye_like(n, k, A)
    Y = E.expand(_eye_like(n, k, A), tuple(A.shape))
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        Y = Y - t * E.matmul(v, E.matmul(v.mT, Y))
    return Y


def _geqrf(A):
    """LAPACK's geqrf (reflectors below the diagonal, R on and above it, and ``tau``), on the host."""
    a = A.detach().cpu().numpy()
    n, k = a.shape[-2], a.shape[-1]
    flat = a.reshape(-1, n, k)
    out = np.empty_like(flat)
    taus = np.empty(flat.shape[:1] + (min(n, k),), dtype=a.dtype)
    for b in range(flat.shape[0]):
        h, t = np.linalg.qr(flat[b], mode="raw")
        out[b], taus[b] = h.T, t
    return (E.tensor(out.reshape(a.shape), dtype=A.dtype, device=A.device),
            E.tensor(taus.reshape(a.shape[:-2] + (min(n, k),)), dtype=A.dtype, device=A.device))


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = E.cat([X, E.expand(X.new_zeros(n, n - k), tuple(X.shape[:-2]) + (n, n - k))], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                eye = _eye_like(n, n, A)
                Q = linalg.solve(E.add(eye, A, alpha=-0.5), E.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).long().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = _geqrf(Q)
            d = A.diagonal(dim1=-2, dim2=-1)
            d.copy_(E.where(E.eq(tau, 0.0), -E.sign(d), E.sign(d)))
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = E.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(E.cat([Q, N], dim=-1))
        self.base = Q
        neg_id = E.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _eye_like(k, k, Q)
    eps = 10.0 * n * finfo(Q.dtype).eps
    return E.allclose(Q.mT @ Q, eye, atol=eps)


def _make_orthogonal(A):
    """The Q of ``A = QR`` with R's diagonal made non-negative."""
    Q, R = linalg.qr(A)
    return Q * E.sgn(R.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2)


def orthogonal(module, name: str = "weight", orthogonal_map: str | None = None, *, use_trivialization: bool = True):
    """Keep ``module.<name>`` (a matrix or batch of matrices) orthogonal: ``orthogonal_map`` is
    ``"matrix_exp"`` (default for square), ``"cayley"`` or ``"householder"`` (default otherwise);
    NOTE [ Orthogonal maps ]."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


__all__ = ["orthogonal", "spectral_norm", "weight_norm"]
