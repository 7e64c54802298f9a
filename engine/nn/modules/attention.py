"""``MultiheadAttention`` and a small pre-LN ``TransformerBlock``."""
from __future__ import annotations

from ... import functional as E
from ..functional import mha as _mha
from ..functional.mha import _canonical_mask, _none_or_dtype
from .. import init
from ..parameter import Parameter
from .activation import GELU
from .container import Sequential
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module
from .normalization import LayerNorm


class MultiheadAttention(Module):
    """Scaled dot-product attention over ``num_heads`` heads, with PyTorch's parameters and names.

    ``forward(query, key, value)`` returns ``(output, weights)``; weights are averaged
    over heads unless ``average_attn_weights=False``, and ``None`` when
    ``need_weights=False``. A bool ``attn_mask``/``key_padding_mask`` marks positions
    that may *not* be attended (True = masked), as in PyTorch. The graph is PyTorch's (NOTE [ Multi-head
    attention's graph ] in engine/nn/functional/mha.py); ``engine.nn.teaching_view()`` writes the
    attention out instead (NOTE [ Teaching view ]).

    Differs from PyTorch: no ``kdim``/``vdim``/``add_bias_kv``/``add_zero_attn``.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                             f"and num_heads={num_heads} instead")
        if embed_dim % num_heads != 0:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("glassgrad's MultiheadAttention has no add_bias_kv, add_zero_attn, kdim, vdim")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(E.empty(3 * embed_dim, embed_dim, device=device, dtype=dtype))
        if bias:
            self.in_proj_bias = Parameter(E.empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """PyTorch's ordinary (training) path, op for op (NOTE [ Multi-head attention's graph ] in
        engine/nn/functional/mha.py): one in-projection, three selects, then the fused attention node
        when ``need_weights=False``, written-out attention (bmm, softmax, bmm) when it is True."""
        batched = query.dim() == 3
        bf = self.batch_first and batched
        n = query.shape[0 if bf else 1] if batched else 1
        L = query.shape[-2] if not batched else query.shape[1 if bf else 0]
        S = key.shape[-2] if not batched else key.shape[1 if bf else 0]
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {query.shape[-1]}")
        need_mask(is_causal, attn_mask)   # is_causal is only a hint that attn_mask is causal
        _check_masks(attn_mask, key_padding_mask if batched or key_padding_mask is None
                     else E.unsqueeze(key_padding_mask, 0), n, self.num_heads, L, S)
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if bf:       # keep the "is" relations the in-projection looks at
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = _mha.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, None, None,
            False, self.dropout, self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        return (out.transpose(1, 0) if bf else out), weights


def _check_masks(attn_mask, key_padding_mask, n: int, h: int, L: int, S: int) -> None:
    """PyTorch's shape checks (and words) for attn_mask and key_padding_mask."""
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(L, S)}.")
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (n * h, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(n * h, L, S)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != n:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {n}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != S:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {S}, but got {key_padding_mask.shape[1]}")


def need_mask(is_causal, attn_mask) -> None:
    """PyTorch's error for ``is_causal=True`` without the mask it describes."""
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")


def causal_mask(L: int, S: int, device=None):
    """A bool (L, S) mask that is True above the diagonal (the positions a query may not see)."""
    rows = E.unsqueeze(E.arange(L, device=device), 1)
    cols = E.unsqueeze(E.arange(S, device=device), 0)
    return E.gt(cols, rows)


class TransformerBlock(Module):
    """A pre-LN transformer block: ``x + attn(ln1(x))``, then ``x + mlp(ln2(x))`` (MLP with GELU).

    glassgrad's own small block (PyTorch's nearest is ``nn.TransformerEncoderLayer(norm_first=True)``).
    Input is (batch, sequence, embed_dim).
    """

    def __init__(self, embed_dim: int, num_heads: int, mlp_ratio: int = 4, dropout: float = 0.0,
                 causal: bool = False, device=None, dtype=None):
        super().__init__()
        self.causal = causal
        self.ln1 = LayerNorm(embed_dim, device=device, dtype=dtype)
        self.attn = MultiheadAttention(embed_dim, num_heads, dropout=dropout, batch_first=True, device=device,
                                       dtype=dtype)
        self.ln2 = LayerNorm(embed_dim, device=device, dtype=dtype)
        hidden = mlp_ratio * embed_dim
        self.mlp = Sequential(Linear(embed_dim, hidden, device=device, dtype=dtype), GELU(),
                              Linear(hidden, embed_dim, device=device, dtype=dtype), Dropout(dropout))

    def forward(self, x, attn_mask=None):
        h = self.ln1(x)
        if self.causal and attn_mask is None:
            attn_mask = causal_mask(x.shape[-2], x.shape[-2], x.device)
        a, _ = self.attn(h, h, h, attn_mask=attn_mask, need_weights=False, is_causal=self.causal)
        x = x + a
        return x + self.mlp(self.ln2(x))

    def extra_repr(self) -> str:
        return "causal=True" if self.causal else ""
