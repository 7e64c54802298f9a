"""torch.*'s tensors built from others (rows in engine/ops/shape/): ``diagonal`` (a view), ``diag``,
``diagflat`` (a view, then diag_embed), ``diag_embed``, ``trace``, ``block_diag``, ``kron`` (views and a
multiply, as PyTorch), ``meshgrid``, ``cartesian_prod`` (meshgrid, flatten, stack), ``combinations``
(meshgrid, masks, stack), and, without a graph, ``tril_indices``, ``triu_indices`` and ``unravel_index``.
"""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from ..backend import dtypes as _dtype
from ..core.operators import mul
from .arithmetic import le, logical_and, lt
from ..backend.layout import contiguous_format
from .factories import arange, clone, empty, ones, tensor
from .indexing import masked_select
from .views import expand, flatten, reshape, stack, view
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .dims import wrap_dim as _wrap_dim
from ..backend.dtypes import short_name as _short
from .args import need_tensor as _need_tensor, host as _host


def _shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _on(array, like):
    """A host array as a tensor on ``like``'s device (no graph)."""
    return tensor(np.array(array), device=like.device)


# ---- diagonals and shapes --------------------------------------------------------------------------
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the matrices in dims ``dim1``, ``dim2``, as a new last dim. A view:
    it shares the input's storage and version counter (DiagonalBackward0)."""
    a, b = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_O["diagonal"], [input], {"offset": int(offset), "dim1": a, "dim2": b})


def diag(input, diagonal=0):
    """A 1-D input becomes the diagonal ``diagonal`` of a square matrix (DiagEmbedBackward0); a 2-D
    input gives that diagonal as a new tensor (a copy: DiagonalBackward0_copy)."""
    if input.ndim == 1:
        return apply(_O["diag_embed"], [input], {"offset": int(diagonal)})
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return apply(_O["diagonal_copy"], [input], {"offset": int(diagonal), "dim1": 0, "dim2": 1})


def trace(input):
    """The sum of the main diagonal of a matrix (int64 for integers). TraceBackward0 keeps nothing."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(_O["trace"], [input])


def _unsafe_view(x, shape):
    x = x if x.is_contiguous() else clone(x, memory_format=contiguous_format)
    return apply(_O["view"], [x], {"shape": tuple(shape)}, node_name="UnsafeViewBackward0")


def kron(input, other):
    """The Kronecker product. As PyTorch: both viewed with interleaved size-1 dims, multiplied
    (MulBackward0 keeps the two views) and the product viewed back (UnsafeViewBackward0)."""
    _need_tensor("kron", other, "other", 2)
    nd = builtins.max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = _unsafe_view(input, tuple(v for s in sa for v in (s, 1)))
    b = _unsafe_view(other, tuple(v for s in sb for v in (1, s)))
    return _unsafe_view(mul(a, b), tuple(p * q for p, q in zip(sa, sb)))


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-D or 1-D tensors: each viewed along its own dim and expanded
    (ViewBackward0, ExpandBackward0). ``indexing="xy"`` swaps the first two dims of the grid."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for k, t in enumerate(tensors):
        pos = (1 - k if k < 2 else k) if swap else k
        shape = [1] * len(tensors)
        shape[pos] = -1
        out.append(expand(view(t, tuple(shape)), tuple(sizes)))
    return tuple(out)


# ---- constructors from shapes ---------------------------------------------------------------------------
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of ``input`` on the diagonal ``offset`` of new dims ``dim1``, ``dim2`` (a new
    tensor, zeros elsewhere: DiagEmbedBackward0)."""
    _need_tensor("diag_embed", input)
    n = input.ndim + 1
    a, b = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_O["diag_embed_dims"], [input], {"offset": int(offset), "dim1": a, "dim2": b})


def diagflat(input, offset=0):
    """The flattened input on the diagonal ``offset`` of a square matrix."""
    _need_tensor("diagflat", input)
    return diag_embed(reshape(input, -1), offset)


def block_diag(*tensors):
    """Each tensor (0-D as 1x1, 1-D as a row) on the diagonal of a zero matrix, in order
    (BlockDiagBackward0, keeps nothing); dtypes promote as in cat."""
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return empty((1, 0))
    return apply(_O["block_diag"], list(tensors))


def _vector_check(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t.shape)}")


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, one row each (meshgrid, flatten,
    stack: StackBackward0 over UnsafeViewBackward0 <- CloneBackward0 <- ExpandBackward0)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _vector_check(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([flatten(g) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Every length-``r`` combination of the elements of a 1-D tensor, in order (as
    ``itertools.combinations``, or ``combinations_with_replacement``), one row each. Composed as
    PyTorch: grids of the tensor, masked where the indices rise; glassgrad's masked selection
    shows IndexBackward0 where PyTorch shows MaskedSelectBackward0."""
    _vector_check(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty((0,), dtype=input.dtype, device=input.device)
    n = input.shape[0]
    grids = meshgrid(*([input] * r), indexing="ij")
    idx = meshgrid(*([arange(n, device=input.device)] * r), indexing="ij")
    mask = ones(tuple(grids[0].shape), dtype=_dtype.bool_, device=input.device)
    for i in range(r - 1):
        rise = le(idx[i], idx[i + 1]) if with_replacement else lt(idx[i], idx[i + 1])
        mask = logical_and(mask, rise)
    return stack([masked_select(g, mask) for g in grids], 1)


def _tri_indices(name, row, col, offset, dtype, device, lower):
    if dtype is not None and dtype is not _dtype.int64:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_short(dtype)}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=_dtype.int64, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """Row and column indices (2 x N, int64) of the lower triangle of a ``row`` x ``col`` matrix."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """Row and column indices (2 x N, int64) of the upper triangle of a ``row`` x ``col`` matrix."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, False)


def unravel_index(indices, shape):
    """Flat indices as a tuple of coordinate tensors for ``shape`` (negative and too-large indices
    wrap, as PyTorch's)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices.dtype is not _dtype.int64:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    rest = _host(indices).astype(np.int64)
    out = []
    for size in reversed(shape):
        out.append(np.mod(rest, size) if size else np.zeros_like(rest))
        rest = np.floor_divide(rest, size) if size else rest
    return tuple(_on(c, indices) for c in reversed(out))


__all__ = ["diagonal", "diag", "kron", "meshgrid", "diag_embed", "diagflat", "block_diag", "cartesian_prod",
           "combinations", "tril_indices", "triu_indices", "unravel_index"]
