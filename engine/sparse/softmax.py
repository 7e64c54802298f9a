"""``torch.sparse.softmax``: softmax over the specified entries only (an unspecified one counts as -inf)."""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from . import kernels as K
from .nodes import SparseNode
from .ops import _attach, _tracks
from .tensor import SparseCooTensor, _refuse


def _groups(indices, shape, dim) -> np.ndarray:
    """Each entry's slice: the entries that share every sparse index but ``dim``'s."""
    rest = [d for d in range(indices.shape[0]) if d != dim]
    if not rest:
        return np.zeros(indices.shape[1], dtype=np.int64)
    return np.unique(K.linear_index(indices[rest], [shape[d] for d in rest]), return_inverse=True)[1].reshape(-1)


class _SparseSoftmax(SparseNode):
    def backward(self, g):     # NOTE [ Sparse gradients in flight ] 1: g is the result's entries' gradient
        y, grp = self.saved("result")._data, self._groups
        gy = np.zeros(int(grp.max()) + 1 if grp.size else 0, dtype=y.dtype)
        np.add.at(gy, grp, g * y)
        gx = y * (g - gy[grp])
        return [gx if self._inverse is None else gx[self._inverse]]


def softmax(input: SparseCooTensor, dim: int, dtype=None) -> SparseCooTensor:
    """Softmax along sparse dim ``dim`` over each slice's specified entries; the result is coalesced."""
    if not isinstance(input, SparseCooTensor) or input.dense_dim() != 0:
        _refuse("torch.sparse.softmax of a dense or hybrid tensor")
    if dtype is not None and dtype is not input.dtype:
        _refuse("torch.sparse.softmax with dtype")
    dim = dim % input.ndim
    idx, val, inverse = input._indices_t._data, input._values_t._data, None
    if not input._coalesced:
        idx, val, inverse = K.coalesce_arrays(idx, val, input.shape)
    grp = _groups(idx, input.shape, dim)
    top = np.full(int(grp.max()) + 1 if grp.size else 0, -np.inf, dtype=val.dtype)
    np.maximum.at(top, grp, val)
    e = np.exp(val - top[grp])
    total = np.zeros_like(top)
    np.add.at(total, grp, e)
    y = e / total[grp]
    out = SparseCooTensor._make(Tensor._wrap(np.ascontiguousarray(idx)), Tensor._wrap(y), input.shape, True)
    node = None
    if _tracks(input):
        node = _SparseSoftmax("SparseSoftmaxBackward0", [input])
        node._groups, node._inverse = grp, inverse
        node.save_sparse("self", input)
        node.save_sparse("result", out)
        node._attrs = {"dim": dim}
    return _attach(out, node, "sparse.softmax", [input])
