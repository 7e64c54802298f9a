"""``F.multi_head_attention_forward``: multi-head attention as PyTorch computes it, op for op, so that the
graph of ``nn.MultiheadAttention`` is PyTorch's graph.

NOTE [ Multi-head attention's graph ]
1. Self-attention (``query is key is value``) projects once: one ``linear`` with ``in_proj_weight``
   (one AddmmBackward0), then ``unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)
   .contiguous()`` and ``proj[0]``, ``proj[1]``, ``proj[2]`` (three SelectBackward0 off one
   CloneBackward0). ``key is value`` projects the query with the first E rows and key/value with
   the rest (SplitWithSizesBackward0); otherwise ``in_proj_weight.chunk(3)`` (SplitBackward0).
2. Heads: ``q.view(L, N*H, D).transpose(0, 1)`` (and k, v alike).
3. ``need_weights=True``: ``bmm(q * sqrt(1/D), k^T)`` (``baddbmm`` onto the mask), softmax,
   dropout, ``bmm`` with v; the weights are viewed (N, H, L, S) and averaged over heads.
4. ``need_weights=False``: q, k, v viewed (N, H, T, D) and ``F.scaled_dot_product_attention``: one
   fused node that keeps no attention matrix (NOTE [ Fused attention ]); its output,
   ``permute(2, 0, 1, 3)``, is viewed (L*N, E) for ``out_proj``.
5. Masks: a bool mask becomes a float one (-inf where True, ``_canonical_mask``); a key padding mask
   is viewed (N, 1, 1, S), expanded over heads and added to ``attn_mask``. ``is_causal`` is a hint:
   with ``need_weights=False`` and no key padding mask the mask is dropped and the kernel masks.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import functional as E
from ...backend import dtypes as _dtype
from ...core.dispatch import apply
from ...core.table import OPS
from .activation import softmax
from .attention import scaled_dot_product_attention
from .dropouts import dropout
from .linear_maps import linear


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """PyTorch's mask normalisation: bool masks become float masks (-inf where True)."""
    if mask is None:
        return None
    if mask.dtype is not _dtype.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if not mask.dtype.is_floating_point:
        mask = E.masked_fill(E.zeros_like(mask, dtype=target_type), mask, float("-inf"))
    return mask


def _view(t, *shape):
    """``t.view(*shape)`` by PyTorch's rule: also for a non-contiguous ``t`` whose strides allow the
    shape without a copy (rule 2's heads, rule 4's output); ``reshape`` (a copy) where they do not."""
    if t.is_contiguous():
        return t.view(*shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple(t.numel() // known if s == -1 else s for s in shape)
    a = t._data
    if isinstance(a, np.ndarray):
        try:
            np.reshape(a, shape, copy=False)
        except ValueError:
            return t.reshape(*shape)
        return apply(OPS["view"], [t], {"shape": tuple(shape)})
    return t.reshape(*shape)


def _none_or_dtype(t):
    return None if t is None else t.dtype


def _in_projection_packed(q, k, v, w, b=None):
    """The q, k, v projections from the packed ``in_proj_weight`` (NOTE [ Multi-head attention's graph ] 1)."""
    e = q.shape[-1]
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = linear(k, w_kv, b_kv)
        kv = kv.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Sequence-first (L, N, E) or unbatched (L, E) attention; returns ``(output, weights or None)``.

    Differs from PyTorch: no ``bias_k``/``bias_v``, ``add_zero_attn``, separate projection weights or
    static keys and values (NotImplementedError).
    """
    if bias_k is not None or bias_v is not None or add_zero_attn or use_separate_proj_weight or \
            static_k is not None or static_v is not None:
        raise NotImplementedError("glassgrad's multi_head_attention_forward has no bias_k, bias_v, add_zero_attn, "
                                  "separate projection weights or static_k/static_v")
    is_batched = query.dim() == 3
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None                                      # rule 5: the kernel masks
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None and attn_mask.dim() == 2:
        attn_mask = attn_mask.unsqueeze(0)
    q = _view(q, tgt_len, bsz * num_heads, head_dim).transpose(0, 1)          # rule 2
    k = _view(k, k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = _view(v, v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if key_padding_mask is not None:
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:                                                          # rule 3
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = E.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = E.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = E.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:                                                 # rule 4
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = _view(attn_mask, bsz, num_heads, -1, src_len)
    q = _view(q, bsz, num_heads, tgt_len, head_dim)
    k = _view(k, bsz, num_heads, src_len, head_dim)
    v = _view(v, bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = _view(out.permute(2, 0, 1, 3), bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if not is_batched:
        out = out.squeeze(1)
    return out, None
