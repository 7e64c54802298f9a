"""``torch.sparse``: sparse COO tensors, with gradients.

``engine.sparse_coo_tensor(indices, values, size)`` or ``dense.to_sparse()`` makes one;
``engine.sparse.mm`` / ``torch.mm`` multiply it by a dense matrix, ``engine.sparse.sum`` sums it,
``engine.sparse.softmax`` takes a softmax over its specified entries.
How a sparse tensor is built: NOTE [ A sparse COO tensor ] (``tensor.py``); how its gradients
travel: NOTE [ Sparse gradients in flight ] (``nodes.py``).
"""
from __future__ import annotations

from .layout import layout, sparse_coo, strided
from .ops import sparse_mm as mm
from .ops import sparse_sum as sum
from .softmax import softmax
from .tensor import SparseCooTensor

__all__ = ["SparseCooTensor", "layout", "mm", "softmax", "sparse_coo", "strided", "sum"]


def __getattr__(name):
    from ..missing import missing
    raise missing("torch.sparse", name)   # NOTE [ Missing names ] in engine/missing.py
