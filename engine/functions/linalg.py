"""torch.*'s products beyond matmul (rows in engine/ops/blas.py, engine/ops/reduce/norm.py): ``tensordot``,
``baddbmm``, ``addbmm``, ``addmv``, ``addr`` (NOTE [ beta and alpha ]), ``cross``, ``inner``, ``ger``,
``vdot``, and the distances ``cdist`` and ``dist``.

Where PyTorch builds a function from other ops (tensordot, inner, ger) glassgrad composes the same ops,
so the graph shows the same nodes. glassgrad has no complex dtype: ``vdot`` is ``dot`` with its own node.
torch.linalg is engine/linalg.py.
"""
from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from ..core.operators import _broadcast_check, _shape_str
from .matmul import dot
from . import matmul
from .views import expand, permute, reshape, view
from ..core.dispatch import apply, broadcast_mismatch
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from ..linalg import torch_norm
from .dims import reduce_dims as _dims, wrap_dim as _wrap_dim
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor


def _inplace(name, target, inputs, attrs=None):
    return apply(_O[name], inputs, attrs, inplace=target)


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (without ``dim``: the first dim of size 3, with
    PyTorch's deprecation warning). LinalgCrossBackward0 keeps both inputs."""
    _broadcast_check(input, other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        sizes = [k for k, s in enumerate(shape) if s == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        d = sizes[0]
    else:
        if input.ndim != other.ndim:
            raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
        d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return apply(_O["cross"], [input, other], {"dim": d})


# ---- products --------------------------------------------------------------------------------------
def tensordot(a, b, dims=2):
    """Contract ``dims`` (a count of trailing/leading dims, or two lists of dims). As PyTorch: permute
    the contracted dims together, reshape both to matrices, mm, and view the result."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da, db = [_wrap_dim(d, a.ndim) for d in da], [_wrap_dim(d, b.ndim) for d in db]
    for p, q in zip(da, db):
        if a.shape[p] != b.shape[q]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[p]} in dim {p} and "
                               f"second has size {b.shape[q]} in dim {q}")
    ra = [k for k in range(a.ndim) if k not in da]
    rb = [k for k in range(b.ndim) if k not in db]
    m = math.prod(a.shape[k] for k in ra)
    n = math.prod(b.shape[k] for k in rb)
    kk = math.prod(a.shape[k] for k in da)
    ma = reshape(permute(a, tuple(ra + da)), (m, kk))
    mb = reshape(permute(b, tuple(db + rb)), (kk, n))
    return reshape(matmul.mm(ma, mb), tuple(a.shape[k] for k in ra) + tuple(b.shape[k] for k in rb))


# NOTE [ beta and alpha ]
# 1. The add* products compute ``beta * input + alpha * (product)``; input broadcasts to the
#    product's shape (PyTorch's expand error when it cannot).
# 2. With ``beta == 0`` input is ignored: NaN and inf in it do not reach the result.
# 3. The node keeps the operands the other operand's gradient reads (as mm), never ``input``.
def _expand_error(target, shape):
    lead = len(target) - len(shape)
    if lead < 0 or broadcast_mismatch(target, shape) or any(
            s != 1 and s != target[k + lead] for k, s in enumerate(shape)):
        for k in range(len(shape) - 1, -1, -1):
            if lead >= 0 and shape[k] != 1 and shape[k] != target[k + lead]:
                raise RuntimeError(f"The expanded size of the tensor ({target[k + lead]}) must match the existing "
                                   f"size ({shape[k]}) at non-singleton dimension {k + lead}.  Target sizes: "
                                   f"{list(target)}.  Tensor sizes: {list(shape)}")
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(target)}): the number of sizes "
                           f"provided ({len(target)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")


def _same_dtype(*xs):
    for x in xs[1:]:
        if x.dtype is not xs[0].dtype:
            raise RuntimeError(f"expected scalar type {_short(xs[0].dtype)} but found {_short(x.dtype)}")


def _product(name, input, a, b, beta, alpha, target):
    _same_dtype(input, a, b)
    _expand_error(target, tuple(input.shape))
    attrs = {k: v for k, v in (("beta", beta), ("alpha", alpha)) if v != 1}
    return apply(_O[name], [input, a, b], attrs or None)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for (b, n, m) @ (b, m, p) (NOTE [ beta and alpha ])."""
    for x in (batch1, batch2):
        if x.ndim != 3:
            raise RuntimeError(f"batch{1 if x is batch1 else 2} must be a 3D tensor")
    bs, n, m = batch1.shape
    if tuple(batch2.shape[:2]) != (bs, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {m}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    return _product("baddbmm", input, batch1, batch2, beta, alpha, (bs, n, batch2.shape[2]))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])`` (NOTE [ beta and alpha ])."""
    for x in (batch1, batch2):
        if x.ndim != 3:
            raise RuntimeError(f"batch{1 if x is batch1 else 2} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    return _product("addbmm", input, batch1, batch2, beta, alpha, (batch1.shape[1], batch2.shape[2]))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (NOTE [ beta and alpha ])."""
    if mat.ndim != 2 or vec.ndim != 1 or mat.shape[1] != vec.shape[0] or input.ndim > 1 or (
            input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        if mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1:
            raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                               f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if input.dtype is not mat.dtype or mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_short(input.dtype)}, "
                           f"{_short(mat.dtype)}, and {_short(vec.dtype)}")
    return _product("addmv", input, mat, vec, beta, alpha, (mat.shape[0],))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (NOTE [ beta and alpha ])."""
    for k, v in ((1, vec1), (2, vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument vec{k}, but got {v.ndim}-D")
    return _product("addr", input, vec1, vec2, beta, alpha, (vec1.shape[0], vec2.shape[0]))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of ``x1`` (..., P, M) and of ``x2`` (..., R, M).
    CdistBackward0 keeps both and the result; for p = 2 with more than 25 rows on either side,
    PyTorch's default takes its matrix-product route, and the node is EuclideanDistBackward0."""
    for k, x in ((1, x1), (2, x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, X{k} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{k} got: {_short(x.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    if batch:
        x1 = expand(x1, batch + tuple(x1.shape[-2:])) if tuple(x1.shape[:-2]) != batch else x1
        x2 = expand(x2, batch + tuple(x2.shape[-2:])) if tuple(x2.shape[:-2]) != batch else x2
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                     (compute_mode == "use_mm_for_euclid_dist_if_necessary" and (r1 > 25 or r2 > 25)))
    if mm:
        out = apply(_O["euclidean_dist"], [x1, x2])
        return view(out, tuple(out.shape))
    return apply(_O["cdist"], [x1, x2], {"p": builtins.float(p)})


def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast). DistBackward0 keeps both and the result."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_short(input.dtype)} instead.")
    _broadcast_check(input, other)
    return apply(_O["dist"], [input, other], {"p": p})


def _product_(name):
    def f(self, a, b, *, beta=1, alpha=1):
        _same_dtype(self, a, b)
        attrs = {k: v for k, v in (("beta", beta), ("alpha", alpha)) if v != 1}
        return _inplace(name, self, [self, a, b], attrs or None)
    f.__name__ = name + "_"
    return f


# ---- inner / ger / vdot / renorm ------------------------------------------------------------------
def inner(input, other):
    """Sum over the last dims: ``tensordot(input, other, [[-1], [-1]])`` as PyTorch builds it (permute,
    view to matrices, ``mm``, view back); a 0-d operand multiplies."""
    _need_tensor("inner", input)
    _need_tensor("inner", other, "other", 2)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got shapes "
                           f"{_shape_str(input.shape)} and {_shape_str(other.shape)}")
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    k = input.shape[-1]
    a = permute(input, tuple(builtins.range(input.ndim)))
    b = permute(other, (other.ndim - 1,) + tuple(builtins.range(other.ndim - 1)))
    ra, rb = tuple(input.shape[:-1]), tuple(other.shape[:-1])
    if input.ndim == 1 and other.ndim == 1:
        return view(dot(a, b), ())
    m, n = math.prod(ra), math.prod(rb)
    ma = view(a, (m, k)) if input.is_contiguous() else reshape(a, (m, k))
    if not other.is_contiguous():
        mb = reshape(b, (k, n))
    elif k == 1 or n == 1:
        mb = view(b, (k, n))
    else:   # a strided alias of other's memory: PyTorch's _reshape_alias
        mb = apply(_O["view"], [b], {"shape": (k, n)}, node_name="ReshapeAliasBackward0")
    return view(matmul.mm(ma, mb), ra + rb)


def ger(input, vec2):
    """The outer product of two 1-D tensors (the older name of ``outer``): ``input.reshape(n, 1) * vec2``."""
    _need_tensor("ger", input)
    _need_tensor("ger", vec2, "vec2", 2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return reshape(input, (input.shape[0], 1)) * vec2


def vdot(input, other):
    """``sum(conj(input) * other)`` of two 1-D tensors; glassgrad is real, so this is ``dot`` with its own
    node (VdotBackward0, keeping both)."""
    _need_tensor("vdot", input)
    _need_tensor("vdot", other, "other", 2)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_short(input.dtype)} and {_short(other.dtype)}")
    if input.numel() != other.numel():
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.numel()}] and src [{other.numel()}] to "
                           "have the same number of elements, but got "
                           f"{input.numel()} and {other.numel()} elements respectively")
    return apply(_O["vdot"], [input, other])


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The 2-norm (Frobenius for matrices) over ``dim`` or everything; any other ``p`` (numbers,
    'nuc') goes through engine.linalg, as PyTorch's torch.norm does."""
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_short(input.dtype)}")
    if p not in ("fro", 2, 2.0) or (isinstance(dim, (tuple, list)) and len(dim) > 2):
        return torch_norm(input, p, dim, keepdim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    return apply(_O["norm"], [input], {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


__all__ = ["cross", "tensordot", "baddbmm", "addbmm", "addmv", "addr", "cdist", "dist", "inner", "ger", "vdot", "norm",
           "svd"]


def svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``U, S, V`` with ``input = U diag(S) V^T`` (PyTorch keeps it beside
    ``torch.linalg.svd``, which returns ``Vh``); ``compute_uv=False`` gives zero-filled U and V."""
    from .. import linalg as _linalg
    from .. import return_types
    if out is not None:
        raise TypeError("svd(): glassgrad does not take out= here; use the returned tensors")
    U, S, Vh = _linalg.svd(input, full_matrices=not some)
    V = Vh.mT
    if not compute_uv:
        from ..core.grad_mode import no_grad
        with no_grad():
            U, V = U.detach() * 0, V.detach() * 0
    return return_types.svd(U, S, V)
