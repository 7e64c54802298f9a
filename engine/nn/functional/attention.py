"""``F.scaled_dot_product_attention``: ``softmax(q k^T * scale + mask) v``.

As PyTorch on the CPU: 4-D inputs without dropout run one fused node
(ScaledDotProductFlashAttentionForCpuBackward0, NOTE [ Fused attention ] in engine/ops/nn/sdpa.py)
that saves q, k, v, the output and the log-sum-exp, not the attention matrix; other inputs (3-D,
dropout) and the teaching view (NOTE [ Teaching view ] in teaching.py) compose it from matmul,
softmax and dropout, so each step shows in the graph and the softmax keeps the attention matrix.
"""
from __future__ import annotations

import math

from ... import functional as E
from ...backend import dtypes as _dtype
from ...core.dispatch import apply_multi
from ...core.table import OPS
from ...core.tensor import Tensor
from .activation import softmax
from .dropouts import dropout
from .teaching import is_teaching_view


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(q k^T * scale + mask) v`` over the last two dims (a bool mask: True = may attend).

    Differs from PyTorch: ``enable_gqa`` with fewer key/value heads than query heads is not supported.
    """
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        raise NotImplementedError("glassgrad's scaled_dot_product_attention has no grouped-query attention")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if (query.dim() == 4 and key.dim() == 4 and value.dim() == 4 and dropout_p == 0.0 and not is_teaching_view()
            and query.dtype.is_floating_point):
        return _fused(query, key, value, attn_mask, is_causal, scale)
    return _written_out(query, key, value, attn_mask, dropout_p, is_causal, scale)


def _fused(query, key, value, attn_mask, is_causal, scale):
    """The flash-attention row; a bool mask becomes the float mask it saves (0 where True, -inf where False)."""
    if attn_mask is not None and attn_mask.dtype is _dtype.bool_:
        attn_mask = E.masked_fill(E.zeros(tuple(attn_mask.shape), dtype=query.dtype, device=query.device),
                                  E.logical_not(attn_mask), -math.inf)
    name = "_scaled_dot_product_flash_attention_for_cpu" + ("_masked" if attn_mask is not None else "")
    inputs = [query, key, value] + ([attn_mask] if attn_mask is not None else [])
    out, _lse = apply_multi(OPS[name], inputs, {"dropout_p": 0.0, "is_causal": bool(is_causal), "scale": scale},
                            ("output", "logsumexp"))
    return out


def _written_out(query, key, value, attn_mask, dropout_p, is_causal, scale):
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
