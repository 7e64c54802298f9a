"""``engine.linalg``: torch.linalg's norms, inverses, determinants, solves and factorizations.

Each op is one node, named as PyTorch names it (rows in engine/ops/linalg.py); the matrix norms
are composed as PyTorch composes them (an ``AmaxBackward0`` over a ``LinalgVectorNormBackward0``,
a sum of singular values). Batch dims lead, as in PyTorch; matrices are real (float32/float64).
"""
from __future__ import annotations

import math
import sys

from . import return_types
from .backend import dtypes as _dtype
from .core import fns
from .core.dispatch import apply, apply_multi
from .core.operators import _broadcast_check, mul
from .core.tensor import Tensor, _wrap_dim
from .core.table import OPS
from .functions import build, reductions
from .functions.arithmetic import lt, ne
from .functions.factories import clone, eye, zeros
from .functions.indexing import where
from .functions.matmul import matmul, mm
from .functions.reductions import amax, amin
from .functions.views import permute, reshape, unsqueeze, view
from .ops.linalg import LinAlgError

__all__ = ["LinAlgError", "vector_norm", "matrix_norm", "norm", "inv", "det", "slogdet", "solve", "cholesky",
           "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv", "matrix_rank", "cross", "lstsq", "matrix_power",
           "multi_dot", "vecdot", "diagonal", "inv_ex", "cholesky_ex"]

slogdet_result = return_types.linalg_slogdet
qr_result = return_types.linalg_qr
svd_result = return_types.linalg_svd
eigh_result = return_types.linalg_eigh
lstsq_result = return_types.linalg_lstsq


# ---- checks, in PyTorch's words ----------------------------------------------------------------------
def _type_name(dt):
    return _dtype.SHORT_NAMES[dt.name]


def _tensor(A, fname):
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument 'A' must be Tensor, not {type(A).__name__}")


def _check(A, name, square=False):
    _tensor(A, name)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(A.dtype)}")
    if A.dtype.itemsize == 2:     # PyTorch's words for inv and slogdet; its other kernels name themselves
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_type_name(A.dtype)}")


def _num(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


# ---- norms -------------------------------------------------------------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all dims when None); ord may be 0, +-inf, any number."""
    _tensor(x, "linalg_vector_norm")
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(x.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    dims = None if dim is None else tuple(sorted({_wrap_dim(d, x.ndim) for d in ((dim,) if isinstance(dim, int)
                                                                                 else dim)}))
    if dims == () or x.ndim == 0:       # a 0-d tensor's dim 0 is the tensor itself (NOTE [ A 0-d tensor's one dim ])
        dims = None
    reduced = x.numel() if dims is None else math.prod(x.shape[d] for d in dims)
    if reduced == 0 and (ord < 0 or ord == math.inf):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {_num(ord)} norm on an empty tensor because the "
                           "operation does not have an identity")
    return apply(OPS["linalg_vector_norm"], [x], {"ord": float(ord), "dim": dims, "keepdim": bool(keepdim)})


def _move_last(A, d0, d1):
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    return permute(A, tuple(rest) + (d0, d1))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro', 'nuc', +-1, +-2, +-inf norms of the matrices in ``dim`` (composed as PyTorch composes them)."""
    _tensor(A, "linalg_matrix_norm")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A.dtype)}")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        sv = svdvals(_move_last(A, d0, d1))
        out = reductions.sum(sv, -1) if ord == "nuc" else (amax(sv, -1) if ord == 2 else amin(sv, -1))
        if keepdim:
            for d in sorted((d0, d1)):
                out = unsqueeze(out, d)
        return out
    if ord in (1, -1, math.inf, -math.inf):
        a, b = (d1, d0) if abs(ord) == math.inf else (d0, d1)
        if not keepdim and a < b:
            b -= 1
        col = vector_norm(A, 1, a, keepdim)
        return amax(col, b, keepdim) if ord > 0 else amin(col, b, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {_num(ord)} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (1 dim, or a 1-D input) or a matrix norm (2 dims, or a 2-D input), as torch.linalg.norm."""
    _tensor(A, "linalg_norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    if A.ndim == 1 and not isinstance(ord, str):
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


def torch_norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The old ``torch.norm``: 'fro' is the 2-norm of ``dim`` (all dims by default), 'nuc' a matrix
    norm, a number a vector norm over ``dim``."""
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dims) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        if dims is None:
            dims = list(range(input.ndim))
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


# ---- inverse, determinants, solve -------------------------------------------------------------------
def inv(A):
    """``A^-1`` (LinalgInvExBackward0 keeps the inverse). A singular matrix raises LinAlgError."""
    _check(A, "linalg.inv", square=True)
    return apply_multi(OPS["linalg_inv"], [A], {}, ("inverse",))[0]


def _info(A, order):
    """LAPACK's info per matrix (0: fine), int64 shaped like A's batch dims, from ``order(matrix)``."""
    import numpy as np
    from .backend.gaps import from_numpy, to_numpy
    h = to_numpy(A._storage.xp, A._data)
    flat = h.reshape((-1,) + h.shape[-2:])
    info = np.array([order(m) for m in flat], dtype=np.int64).reshape(h.shape[:-2])
    return Tensor._wrap(from_numpy(A._storage.xp, info))


def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: info is 0, or (for a singular matrix) the 1-based index of the first zero
    pivot, whose inverse then reads NaN (PyTorch leaves LAPACK's partial result there)."""
    try:
        inverse = inv(A)
    except LinAlgError:
        if check_errors:
            raise
        from .ops.linalg import _zero_pivot
        info = _info(A, _zero_pivot)
        bad = reshape(ne(info, 0), tuple(info.shape) + (1, 1))
        from .core import grad_mode
        with grad_mode.no_grad():
            safe = where(bad, eye(A.shape[-1], dtype=A.dtype, device=A.device), A)
            inverse = where(bad, float("nan"), inv(safe))
        return return_types.linalg_inv_ex(inverse, info)
    return return_types.linalg_inv_ex(inverse, zeros(tuple(A.shape[:-2]), dtype=_dtype.int64, device=A.device))


def det(A):
    _check(A, "linalg.det", square=True)
    return apply(OPS["linalg_det"], [A])


def slogdet(A):
    """``(sign, log|det A|)``; the gradient flows through logabsdet."""
    _check(A, "linalg.slogdet", square=True)
    return slogdet_result(*apply_multi(OPS["linalg_slogdet"], [A], {}, ("sign", "logabsdet")))


def solve(A, B, *, left=True):
    """X with ``A X = B`` (``X A = B`` when ``left=False``); B may be a (batch of) vector(s)."""
    _check(A, "linalg.solve", square=True)
    _tensor(B, "linalg.solve")
    if B.dtype is not A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_type_name(A.dtype)} and B of type {_type_name(B.dtype)} instead")
    n = A.shape[-1]
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    if vector:
        ok = B.shape[-1] == n
    else:
        ok = B.ndim >= 2 and (B.shape[-2] if left else B.shape[-1]) == n
    if not ok:
        bs = "x".join(map(str, B.shape[-2:] if B.ndim >= 2 else B.shape))
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and {bs})")
    return apply(OPS["linalg_solve"], [A, B], {"left": bool(left), "vector": vector})


# ---- factorizations ----------------------------------------------------------------------------------
def cholesky(A, *, upper=False):
    """Lower ``L`` with ``L L^T = A`` (``upper=True``: ``U = L^T``); A must be positive-definite."""
    _check(A, "linalg.cholesky", square=True)
    return apply_multi(OPS["linalg_cholesky"], [A], {"upper": bool(upper)}, ("L",))[0]


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: info is 0, or the order of the first leading minor that is not positive-definite
    (L then reads NaN for that matrix)."""
    try:
        low = cholesky(A, upper=upper)
    except LinAlgError:
        if check_errors:
            raise
        import numpy as np

        def order(m):
            for k in range(1, m.shape[0] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    return k
            return 0
        info = _info(A, order)
        bad = reshape(ne(info, 0), tuple(info.shape) + (1, 1))
        from .core import grad_mode
        with grad_mode.no_grad():
            safe = where(bad, eye(A.shape[-1], dtype=A.dtype, device=A.device), A)
            low = where(bad, float("nan"), cholesky(safe, upper=upper))
        return return_types.linalg_cholesky_ex(low, info)
    return return_types.linalg_cholesky_ex(low, zeros(tuple(A.shape[:-2]), dtype=_dtype.int64, device=A.device))


def qr(A, mode="reduced"):
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    _check(A, "linalg.qr")
    return qr_result(*apply_multi(OPS["linalg_qr"], [A], {"mode": mode}, ("Q", "R")))


def svd(A, full_matrices=True):
    """``U, S, Vh`` with ``A = U diag(S) Vh`` (gradients assume distinct singular values)."""
    _check(A, "linalg.svd")
    return svd_result(*apply_multi(OPS["linalg_svd"], [A], {"full_matrices": bool(full_matrices)},
                                   ("U", "S", "Vh")))


def svdvals(A):
    """The singular values (descending); the node keeps U and Vh for the gradient, as PyTorch's."""
    _check(A, "linalg.svd")
    return apply_multi(OPS["linalg_svd"], [A], {"full_matrices": False}, ("U", "S", "Vh"))[1]


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (only the ``UPLO`` triangle is read)."""
    _uplo(UPLO)
    _check(A, "linalg.eigh", square=True)
    return eigh_result(*apply_multi(OPS["linalg_eigh"], [A], {"UPLO": UPLO}, ("eigenvalues", "eigenvectors")))


def eigvalsh(A, UPLO="L"):
    _uplo(UPLO)
    _check(A, "linalg.eigvalsh", square=True)
    return apply_multi(OPS["linalg_eigh"], [A], {"UPLO": UPLO}, ("eigenvalues", "eigenvectors"))[0]


def _pinv_check(A):
    _tensor(A, "linalg.pinv")
    if A.ndim < 2 or not A.dtype.is_floating_point:
        kind = _dtype.SHORT_NAMES[A.dtype.name]
        raise RuntimeError(f"linalg.pinv({kind}{{{list(A.shape)}}}): expected a tensor with 2 or more dimensions "
                           "of float, double, cfloat or cdouble types")


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse; singular values below ``rtol * max`` count as zero."""
    _pinv_check(A)
    if atol is not None:
        raise NotImplementedError("glassgrad's linalg.pinv takes rtol only, not atol")
    return apply(OPS["linalg_pinv"], [A], {"rtol": rtol, "hermitian": bool(hermitian)})


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above ``max(atol, rtol * largest)`` (int64, no gradient)."""
    _tensor(A, "linalg.matrix_rank")
    if not A.dtype.is_floating_point:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    xp = A._storage.xp
    s = xp.linalg.svdvals(A._data)
    if rtol is None:
        eps = 2.220446049250313e-16 if A.dtype is _dtype.float64 else 1.1920928955078125e-07
        rtol = 0.0 if (atol is not None and atol > 0) else eps * max(A.shape[-2], A.shape[-1])
    smax = xp.max(s, axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), dtype=s.dtype)
    tol = xp.maximum(smax * rtol, xp.asarray(0.0 if atol is None else atol, dtype=s.dtype))
    return Tensor._wrap(xp.sum(xp.astype(s > tol, xp.int64), axis=-1))


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims)."""
    _tensor(input, "linalg.cross")
    _broadcast_check(input, other)
    nd = max(input.ndim, other.ndim)
    d = _wrap_dim(dim, nd)
    sa, sb = (input.shape[d - nd + input.ndim] if d - nd + input.ndim >= 0 else 1,
              other.shape[d - nd + other.ndim] if d - nd + other.ndim >= 0 else 1)
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} and {sb}")
    return apply(OPS["linalg_cross"], [input, other], {"dim": d - nd})


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B``, ``pinv(A) B`` (LinalgLstsqBackward0). ``residuals`` and
    ``singular_values`` come back empty and ``rank`` is A's numerical rank, as with PyTorch's default
    CPU driver ('gelsy')."""
    _check(A, "linalg.lstsq")
    _tensor(B, "linalg.lstsq")
    if B.dtype is not A.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_type_name(A.dtype)} and other's dtype {_type_name(B.dtype)}")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    (x,) = apply_multi(OPS["linalg_lstsq"], [A, B], {"vector": vector}, ("solution",))
    empty = zeros(0, dtype=A.dtype, device=A.device)
    return lstsq_result(x, empty, matrix_rank(A.detach()), zeros(0, dtype=A.dtype, device=A.device))


# ---- products ------------------------------------------------------------------------------------------
def matrix_power(A, n):
    """``A^n`` by repeated squaring, as PyTorch composes it (n = 2, 3 directly; n < 0 powers ``inv(A)``;
    n = 0 the identity, through a clone and a copy so the graph still reaches A)."""
    _tensor(A, "linalg.matrix_power")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        out = clone(A)
        out.copy_(eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)))
        return out
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return clone(A)
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    result = z = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def multi_dot(tensors):
    """``A @ B @ ...`` in the cheapest order (the first may be a row vector, the last a column vector)."""
    ts = list(tensors)
    k = len(ts)
    if k < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {k}")
    for i, t in enumerate(ts):
        want = (1, 2) if i in (0, k - 1) else (2,)
        if t.ndim not in want:
            which = "the first tensor" if i == 0 else ("the last tensor" if i == k - 1 else f"tensor {i}")
            raise RuntimeError(f"multi_dot(): {which} must be {'1D or 2D' if len(want) == 2 else '2D'} but got "
                               f"{t.ndim}D")
    shape = ((ts[0].shape[0],) if ts[0].ndim == 2 else ()) + ((ts[-1].shape[1],) if ts[-1].ndim == 2 else ())
    if ts[0].ndim == 1:
        ts[0] = unsqueeze(ts[0], 0)
    if ts[-1].ndim == 1:
        ts[-1] = unsqueeze(ts[-1], 1)
    for i in range(k - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    if k == 2:
        out = mm(ts[0], ts[1])
    elif k == 3:
        left = dims[0] * dims[1] * dims[2] + dims[0] * dims[2] * dims[3]
        right = dims[1] * dims[2] * dims[3] + dims[0] * dims[1] * dims[3]
        out = mm(mm(ts[0], ts[1]), ts[2]) if left < right else mm(ts[0], mm(ts[1], ts[2]))
    else:
        out = _chain(ts, _chain_order(dims), 0, k - 1)
    return view(out, shape)


def _chain_order(p):
    """The classic matrix-chain dynamic programme: split[i][j] is where A_i..A_j splits best."""
    k = len(p) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for m in range(i, j):
                c = cost[i][m] + cost[m + 1][j] + p[i] * p[m + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, m
    return split


def _chain(ts, split, i, j):
    if i == j:
        return ts[i]
    m = split[i][j]
    return mm(_chain(ts, split, i, m), _chain(ts, split, m + 1, j))


def vecdot(x, y, *, dim=-1):
    """``sum(x * y, dim)``: the dot product along ``dim``, broadcasting the rest."""
    return reductions.sum(mul(x, y), dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices (a view), as torch.diagonal with the last two dims by default."""
    return build.diagonal(A, offset, dim1, dim2)


# ---- the torch.* and Tensor spellings -----------------------------------------------------------------
def logdet(A):
    """``log det A`` (nan for a negative determinant), from slogdet as PyTorch computes it."""
    sign, logabs = slogdet(A)
    return where(lt(sign, 0), float("nan"), logabs)


inverse = inv


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def torch_slogdet(A):
    """``torch.slogdet``: linalg.slogdet's result as a ``torch.return_types.slogdet``."""
    return return_types.slogdet(*slogdet(A))


def _bind_tensor_methods():
    Tensor.det = det
    Tensor.inverse = inv
    Tensor.slogdet = torch_slogdet
    Tensor.logdet = logdet
    Tensor.pinverse = pinverse


_bind_tensor_methods()


fns.register("linalg", tensor=sys.modules[__name__])   # F.linalg in backward formulas (core/fns.py rule 5)
