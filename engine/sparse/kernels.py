"""Array kernels of the sparse ops (NumPy: sparse tensors live on the CPU)."""
from __future__ import annotations

import numpy as np


def linear_index(indices: np.ndarray, sparse_shape) -> np.ndarray:
    """Each entry's row-major position among the sparse dims."""
    if indices.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    return np.ravel_multi_index(tuple(indices), tuple(sparse_shape)).astype(np.int64)


def coalesce_arrays(indices, values, shape):
    """(indices, values, inverse): repeated indices summed, indices sorted row-major; entry k of
    the input went to entry ``inverse[k]`` of the output."""
    sd = indices.shape[0]
    lin = linear_index(indices, shape[:sd])
    uniq, inverse = np.unique(lin, return_inverse=True)
    out_idx = np.stack(np.unravel_index(uniq, tuple(shape[:sd]))).astype(np.int64).reshape(sd, -1)
    out_val = np.zeros((uniq.shape[0],) + values.shape[1:], dtype=values.dtype)
    np.add.at(out_val, inverse.reshape(-1), values)
    return out_idx, out_val, inverse.reshape(-1)


def first_of_each(indices, sparse_shape) -> np.ndarray:
    """Positions of each distinct index's first entry, in sorted index order."""
    _, first = np.unique(linear_index(indices, sparse_shape), return_index=True)
    return first


def to_dense_array(indices, values, shape) -> np.ndarray:
    out = np.zeros(tuple(shape), dtype=values.dtype)
    np.add.at(out, tuple(indices), values)
    return out


def spmm(indices, values, dense, n_rows) -> np.ndarray:
    """``A @ dense`` for a 2-D sparse A: each entry (i, j, v) adds ``v * dense[j]`` to row i."""
    out = np.zeros((n_rows, dense.shape[1]), dtype=np.result_type(values, dense))
    np.add.at(out, indices[0], values[:, None] * dense[indices[1]])
    return out


def spmm_grad_sparse(indices, grad, dense) -> np.ndarray:
    """The gradient of A's entries in ``A @ dense``: ``grad[i] . dense[j]`` for entry (i, j)."""
    return np.einsum("kp,kp->k", grad[indices[0]], dense[indices[1]])


def spmm_grad_dense(indices, values, grad, n_cols) -> np.ndarray:
    """``A^T @ grad``, the dense operand's gradient."""
    return spmm(indices[::-1], values, grad, n_cols)
