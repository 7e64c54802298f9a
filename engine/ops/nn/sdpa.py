"""The fused attention rows: ``_scaled_dot_product_flash_attention_for_cpu`` (and its ``_masked`` form),
PyTorch's CPU kernel behind ``F.scaled_dot_product_attention`` for 4-D inputs
(ScaledDotProductFlashAttentionForCpuBackward0).

NOTE [ Fused attention ]
1. One node computes ``softmax(q k^T * scale + mask) v`` and gives two outputs: the attention output
   (B, H, L, D) and the log-sum-exp of each row of scores (B, H, L), ``logsumexp``.
2. It saves ``query``, ``key``, ``value``, ``output``, ``logsumexp`` (and a float ``attn_mask``): never
   the (L, S) attention matrix. That is the memory lesson of flash attention: the saved bytes grow
   with L + S per row, not with L * S.
3. Backward rebuilds the attention matrix from what was saved, ``P = exp(q k^T * scale + mask - lse)``,
   then ``dV = P^T g``, ``dS = P * (g v^T - rowsum(g * output))``, ``dQ = dS k * scale``,
   ``dK = dS^T q * scale``.
4. ``is_causal`` masks the upper triangle (query i sees keys j <= i, aligned top-left, as PyTorch).
5. The output array is laid out like ``query`` (PyTorch's kernel allocates it so): after multi-head
   attention's ``permute(2, 0, 1, 3)`` the reshape of the output is then a view, as in PyTorch.
6. With ``create_graph=True`` (NOTE [ One formula, two currencies ] 4) the saved output and
   log-sum-exp are functions of q, k, v: the formula normalises ``P`` by its own row sums (the
   saved log-sum-exp only shifts the exponent, and cancels) and rebuilds the output as ``P v``,
   so second derivatives see how both depend on the inputs.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.table import op


def _scale(q_shape, scale):
    return (1.0 / math.sqrt(q_shape[-1])) if scale is None else scale


def _like_layout(xp, a, ref):
    """``a`` copied into the memory order of ``ref``'s strides (rule 5); other namespaces: ``a``."""
    if not (isinstance(a, np.ndarray) and isinstance(ref, np.ndarray)) or ref.flags.c_contiguous:
        return a
    order = sorted(range(ref.ndim), key=lambda i: -ref.strides[i])
    inverse = [order.index(i) for i in range(ref.ndim)]
    return np.ascontiguousarray(a.transpose(order)).transpose(inverse)


def _causal_keep(F, L, S, like):
    """bool (L, S): True where query i may see key j (j <= i)."""
    return F.le(F.iota(S, 1, 2, like), F.iota(L, 0, 2, like))


def _sdpa_fwd(xp, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    s = _scale(query.shape, scale)
    scores = xp.matmul(query, xp.matrix_transpose(key)) * s
    if attn_mask is not None:
        scores = scores + attn_mask
    if is_causal:
        L, S = scores.shape[-2], scores.shape[-1]
        keep = xp.reshape(xp.arange(S), (1, S)) <= xp.reshape(xp.arange(L), (L, 1))
        scores = xp.where(keep, scores, xp.asarray(-math.inf, dtype=scores.dtype))
    m = xp.max(scores, axis=-1, keepdims=True)
    e = xp.exp(scores - m)
    total = xp.sum(e, axis=-1, keepdims=True)
    out = xp.matmul(e / total, value)
    lse = xp.reshape(m + xp.log(total), tuple(m.shape[:-1]))
    return _like_layout(xp, out, query), lse


def _sdpa_bwd(F, g, s):
    g_out = g[0]
    if g_out is None:
        return None, None, None, None
    q, k, v, out, lse = s.query, s.key, s.value, s.output, s.logsumexp
    scale = _scale(s.shapes[0], s.scale)
    scores = F.matmul(q, F.mT(k)) * scale
    mask = s.attn_mask
    if mask is not None:
        scores = scores + mask
    p = F.exp(scores - F.expand_dims(lse, -1))                       # rule 3
    if s.is_causal:
        L, S = F.shape(scores)[-2], F.shape(scores)[-1]
        p = F.where(_causal_keep(F, L, S, scores), p, 0)
    if F.differentiable:
        # rule 6: lse is only a shift here (it cancels), and the output is rebuilt from q, k, v
        p = p / F.sum(p, -1, keepdims=True)
        out = F.matmul(p, v)
    dv = F.matmul(F.mT(p), g_out)
    dp = F.matmul(g_out, F.mT(v))
    ds = p * (dp - F.sum(g_out * out, -1, keepdims=True))
    dq = F.matmul(ds, k) * scale
    dk = F.matmul(F.mT(ds), q) * scale
    return dq, dk, dv, None


_SAVE = {"query": (), "key": (), "value": (), "output": (), "logsumexp": ()}
op("_scaled_dot_product_flash_attention_for_cpu", "ScaledDotProductFlashAttentionForCpuBackward0",
   ("query", "key", "value"), _sdpa_fwd, _sdpa_bwd, promote=False, save=_SAVE)
# the same kernel with a float mask, which it saves too (rule 2); the mask gets no gradient
op("_scaled_dot_product_flash_attention_for_cpu_masked", "ScaledDotProductFlashAttentionForCpuBackward0",
   ("query", "key", "value", "attn_mask"), _sdpa_fwd, _sdpa_bwd, promote=False, nondiff=("attn_mask",),
   save={**_SAVE, "attn_mask": ()})
