"""The shape family: rows that move elements rather than compute new ones.

``views.py``: split/chunk/unbind, unfold, narrow_copy, flip, roll, rot90, repeat, tril/triu and the
diagonals (diagonal, diag_embed, trace). ``embed.py``: one tensor written into a copy of a larger one
(select/slice/diagonal_scatter, diag_embed over any dims, block_diag).
``index.py``: reads and writes at index tensors: gather, sort's values, index_select, take,
masked_select, index_put, put, masked_fill, masked_scatter, scatter (NOTE [ Scatter ]), index_reduce,
fill, copy and unique. ``index_dim.py``: whole slices along a dim: scatter_add, index_add,
index_fill, index_copy and scatter_reduce (NOTE [ Index along a dim ]). ``einsum.py``: einsum.
``strided.py``: PyTorch's stride rule for ``view`` and ``as_strided`` (NOTE [ Strided views ]).
``view_history.py``: a view's grad_fn rebuilt after an in-place change of its base (NOTE [ A view's
grad_fn after an in-place op ]).

view, permute, transpose, squeeze, unsqueeze, expand, slicing, indexing, cat and stack are core rows
(engine/core/primitives.py); the torch.* functions are in engine/functions/shape.py and index.py.
"""
from __future__ import annotations

from . import views, embed, index, index_dim, einsum, strided, view_history  # noqa: F401
