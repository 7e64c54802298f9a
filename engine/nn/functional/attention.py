"""``F.scaled_dot_product_attention``: ``softmax(q k^T * scale + mask) v``, composed from matmul, softmax
and dropout, so each step shows in the graph."""
from __future__ import annotations

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core.tensor import Tensor
from .activation import softmax
from .dropouts import dropout


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    d = query.shape[-1]
    s = (1.0 / d ** 0.5) if scale is None else scale
    scores = E.matmul(query, E.transpose(key, -2, -1)) * s
    if is_causal:
        L, S = query.shape[-2], key.shape[-2]
        causal = E.ones(L, S, dtype=_dtype.bool_, device=query.device)
        causal = Tensor._wrap(causal._storage.xp.tril(causal._data))
        scores = E.masked_fill(scores, E.logical_not(causal), float("-inf"))
    if attn_mask is not None:
        scores = E.masked_fill(scores, E.logical_not(attn_mask), float("-inf")) if attn_mask.dtype is _dtype.bool_ \
            else scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p:
        attn = dropout(attn, dropout_p)
    return E.matmul(attn, value)
