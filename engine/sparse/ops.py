"""The sparse ops: the constructor, coalesce, to_dense/to_sparse, values(), mm and sum.

Each op computes in arrays (``kernels.py``), wraps its result in new storages, and when grad
mode is on and an input requires grad, leaves the node PyTorch leaves (names recorded from
PyTorch), saving what PyTorch saves (NOTE [ Sparse gradients in flight ] in ``nodes.py``).
"""
from __future__ import annotations

import numpy as np

from .. import functional as E
from ..backend import dtypes as _dtype
from ..core import grad_mode
from ..core.tensor import Tensor
from . import kernels as K
from .layout import sparse_coo
from .nodes import SparseAccumulateGrad, SparseNode, record_op
from .tensor import SparseCooTensor, _refuse

_CPU_ONLY = "glassgrad keeps sparse tensors on the CPU only; move the tensors there with .cpu() first"


def _tracks(*ts) -> bool:
    return grad_mode.is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in ts)


def _attach(out, node, op, inputs):
    if node is not None:
        out._grad_fn = node
    record_op(op, inputs, out, node)
    return out


# ---- the constructor -----------------------------------------------------------------------------
class _Construct(SparseNode):
    def backward(self, g):                  # NOTE [ Sparse gradients in flight ] 1: the values' gradient
        return [g.astype(self._values_dtype, copy=False)]


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """``torch.sparse_coo_tensor``: a sparse tensor over ``indices`` (sparse_dim, nnz) and ``values``."""
    if not isinstance(indices, Tensor):
        indices = E.tensor(indices, dtype=_dtype.int64)
    elif indices.dtype is not _dtype.int64:
        indices = indices.to(_dtype.int64)
    if not isinstance(values, Tensor):
        values = E.tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sd, nnz = indices.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        got = values.shape[0] if values.ndim else 1
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
                           f"nnz from values: {got}")
    if size is None:
        top = indices._data.max(axis=1) + 1 if nnz else np.zeros(sd, dtype=np.int64)
        size = tuple(int(s) for s in top) + tuple(values.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sd + values.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sd}, dense_dim = {values.ndim - 1}")
    _check_indices(indices._data, size)
    if values.device.type != "cpu" or (device is not None and str(device).split(":")[0] != "cpu"):
        raise NotImplementedError(_CPU_ONLY)
    out = SparseCooTensor._make(_alias(indices), _alias(values), size, bool(is_coalesced))
    node = None
    if _tracks(values):
        node = _Construct("SparseCooTensorWithDimsAndTensorsBackward0", [values])
        node._values_dtype = values._data.dtype
        node.save_sparse("result", out)
    elif requires_grad:
        out.requires_grad_(True)
    return _attach(out, node, "sparse_coo_tensor", [indices, values])


def _check_indices(idx, size):
    """PyTorch's invariant checks: every index in ``0 <= i < size`` (glassgrad always checks)."""
    for d in range(idx.shape[0]):
        if idx.shape[1] and idx[d].min() < 0:
            raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
        if idx.shape[1] and idx[d].max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                               f"index {int(idx[d].max())}")


def _alias(t):
    return Tensor._wrap(t._data, t._storage)


# ---- coalesce, to_dense, to_sparse, values() -----------------------------------------------------------
class _Coalesce(SparseNode):
    def backward(self, g):                  # rule 1: each uncoalesced entry takes its sum's gradient
        return [g[self._inverse]]


def coalesce(sp: SparseCooTensor) -> SparseCooTensor:
    """Repeated indices summed, indices sorted row-major (``self`` when already coalesced)."""
    if sp._coalesced:
        return sp
    idx, val, inverse = K.coalesce_arrays(sp._indices_t._data, sp._values_t._data, sp.shape)
    out = SparseCooTensor._make(Tensor._wrap(idx), Tensor._wrap(val), sp.shape, True)
    node = None
    if _tracks(sp):
        node = _Coalesce("CoalesceBackward0", [sp])
        node._inverse = inverse
    return _attach(out, node, "coalesce", [sp])


class _ToDense(SparseNode):
    def backward(self, g):
        return [g[tuple(self.saved("self_indices")._data)]]


def to_dense(sp: SparseCooTensor) -> Tensor:
    out = Tensor._wrap(K.to_dense_array(sp._indices_t._data, sp._values_t._data, sp.shape))
    node = None
    if _tracks(sp):
        node = _ToDense("ToDenseBackward0", [sp])
        node.save_sparse("self", sp)
    return _attach(out, node, "to_dense", [sp])


class _ToSparse(SparseNode):
    def backward(self, g):
        return [K.to_dense_array(self._indices, g, self._shape)]


def to_sparse(t: Tensor, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> SparseCooTensor:
    """A dense tensor's non-zero elements as a coalesced COO tensor (all dims sparse)."""
    if sparse_dim not in (None, t.ndim) or dense_dim or layout not in (None, sparse_coo) or blocksize is not None:
        _refuse("to_sparse with sparse_dim, dense_dim or a layout other than torch.sparse_coo")
    if t.device.type != "cpu":
        raise NotImplementedError(_CPU_ONLY)
    arr = np.asarray(t._data)
    nz = np.nonzero(arr)
    idx = np.stack(nz).astype(np.int64).reshape(arr.ndim, -1)
    out = SparseCooTensor._make(Tensor._wrap(idx), Tensor._wrap(np.ascontiguousarray(arr[nz])), t.shape, True)
    node = None
    if _tracks(t):
        node = _ToSparse("ToSparseBackward1", [t])
        node._indices, node._shape = idx, tuple(t.shape)
        node._attrs = {"self_self_sym_blocksize_opt": None}
    return _attach(out, node, "to_sparse", [t])


class _Values(SparseNode):
    def backward(self, g):                  # rule 1: the values' gradient is the sparse gradient's entries
        return [g]


def values_of(sp: SparseCooTensor) -> Tensor:
    """``sp.values()``: the values, with a ValuesBackward0 node when ``sp`` requires grad."""
    out = _alias(sp._values_t)
    node = None
    if _tracks(sp):
        node = _Values("ValuesBackward0", [sp])
        node.save_sparse("self", sp)
    return _attach(out, node, "values", [sp])


# ---- products -----------------------------------------------------------------------------------------
def _mm_checks(a: SparseCooTensor, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {type(x).__name__}")
    if x.is_sparse:
        _refuse("the product of two sparse tensors")
    if a.ndim != 2 or a.dense_dim() != 0 or x.ndim != 2:
        _refuse(f"mm of a {a.ndim}-D sparse tensor and a {x.ndim}-D tensor")
    if x.shape[0] != a.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {a.shape[1]}, got {x.shape[0]}")
    if x.device.type != "cpu":
        raise NotImplementedError(_CPU_ONLY)
    if x.dtype is not a.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR.get(a.dtype.name, a.dtype.name)} but found "
                           f"{_SCALAR.get(x.dtype.name, x.dtype.name)}")


_SCALAR = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
           "int32": "Int", "bool": "Bool"}      # PyTorch's ScalarType names


class _Mm(SparseNode):
    """MmBackward0 (``torch.mm``): the sparse operand's gradient is dense (NOTE [ Sparse gradients in flight ] 2)."""

    def backward(self, g):
        a, x = self._needs
        gx = ga = None
        if x:
            sp = self._saved_self
            gx = K.spmm_grad_dense(sp._indices_t._data, sp._values_t._data, g, sp.shape[1])
        if a:
            xd = self.saved("mat2")._data
            if isinstance(self.next_functions[0][0], SparseAccumulateGrad):
                ga = g @ xd.T
            else:
                ga = K.spmm_grad_sparse(self._indices, g, xd)
        return [ga, gx]


class _SparseAddmm(SparseNode):
    """SparseAddmmBackward0 (``torch.sparse.mm``): the sparse operand's gradient has its pattern."""

    def backward(self, g):
        a, x = self._needs
        sp = self._saved_mat1
        idx = sp._indices_t._data
        ga = K.spmm_grad_sparse(idx, g, self.saved("mat2")._data) if a else None
        gx = K.spmm_grad_dense(idx, sp._values_t._data, g, sp.shape[1]) if x else None
        return [None, ga, gx]


def mm(a: SparseCooTensor, x: Tensor) -> Tensor:
    """``torch.mm(sparse, dense)`` (also ``@``, ``torch.matmul``, ``torch.spmm``): MmBackward0."""
    _mm_checks(a, x)
    out = Tensor._wrap(K.spmm(a._indices_t._data, a._values_t._data, x._data, a.shape[0]))
    node = None
    if _tracks(a, x):
        node = _Mm("MmBackward0", [a, x])
        node._needs = (a.requires_grad, x.requires_grad)
        node._indices = a._indices_t._data
        if x.requires_grad:
            node.save_sparse("self", a)
        if a.requires_grad:
            node.save("mat2", x)
    return _attach(out, node, "mm", [a, x])


def spmm(input, mat2) -> Tensor:
    """``torch.spmm``: ``torch.mm`` with a sparse or dense first operand."""
    return mm(input, mat2) if isinstance(input, SparseCooTensor) else E.mm(input, mat2)


def sparse_mm(mat1, mat2, reduce=None) -> Tensor:
    """``torch.sparse.mm``: SparseAddmmBackward0; a sparse ``mat1`` gets a sparse gradient."""
    if reduce is not None:
        _refuse("torch.sparse.mm with reduce")
    if not isinstance(mat1, SparseCooTensor):
        return E.mm(mat1, mat2)
    _mm_checks(mat1, mat2)
    out = Tensor._wrap(K.spmm(mat1._indices_t._data, mat1._values_t._data, mat2._data, mat1.shape[0]))
    node = None
    if _tracks(mat1, mat2):
        node = _SparseAddmm("SparseAddmmBackward0", [None, mat1, mat2])
        node._needs = (mat1.requires_grad, mat2.requires_grad)
        node.save_sparse("mat1", mat1)
        if mat1.requires_grad:
            node.save("mat2", mat2)
        node._attrs = {"alpha": 1, "beta": 0}
    return _attach(out, node, "sparse.mm", [mat1, mat2])


# ---- sum -------------------------------------------------------------------------------------------------
class _SparseSum(SparseNode):
    def backward(self, g):
        if self._inverse is None:          # summed over every sparse dim: each entry gets all of g
            return [np.broadcast_to(g, (self._nnz,) + g.shape).copy()]
        return [g[self._inverse]]


def sparse_sum(sp: SparseCooTensor, dim=None, dtype=None):
    """``torch.sparse.sum``: over everything (dense 0-d), or over sparse dims (sparse, coalesced)."""
    if not isinstance(sp, SparseCooTensor):
        return E.sum(sp) if dim is None else E.sum(sp, dim)
    if dtype is not None:
        _refuse("torch.sparse.sum with dtype")
    if dim is None:
        return E.sum(values_of(coalesce(sp)))      # PyTorch's graph: SumBackward0 <- ValuesBackward0 <- Coalesce
    dims = sorted({d % sp.ndim for d in ((dim,) if isinstance(dim, int) else dim)})
    sd = sp.sparse_dim()
    if any(d >= sd for d in dims):
        _refuse("torch.sparse.sum over dense dims")
    idx, val = sp._indices_t._data, sp._values_t._data
    keep = [d for d in range(sd) if d not in dims]
    if keep:
        kept_shape = tuple(sp.shape[d] for d in keep) + tuple(sp.shape[sd:])
        oi, ov, inverse = K.coalesce_arrays(idx[keep], val, kept_shape)
        out = SparseCooTensor._make(Tensor._wrap(oi), Tensor._wrap(ov), kept_shape, True)
    else:
        inverse = None
        out = Tensor._wrap(np.asarray(val.sum(axis=0)))
    node = None
    if _tracks(sp):
        node = _SparseSum("SparseSumBackward0", [sp])
        node._inverse, node._nnz = inverse, sp._nnz()
        node.save_sparse("self", sp)
        node._attrs = {"dim": tuple(dims)}
    return _attach(out, node, "sparse.sum", [sp])



SparseCooTensor._ops.update(values=values_of, coalesce=coalesce, to_dense=to_dense, sum=sparse_sum, mm=mm)
