"""A LLaMA-style attention block: RMSNorm, rotary position embeddings through complex numbers, SwiGLU.

The rotary embedding turns each pair of query/key features into a complex number and multiplies
it by ``e^(i * position * frequency)`` (``torch.polar``, ``view_as_complex``, ``view_as_real``),
as LLaMA's reference code does. Run it with ``glassgrad run examples/programs/rope_attention.py``.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

dim, n_heads, seq_len, batch = 16, 2, 6, 2
head_dim = dim // n_heads


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)             # complex64


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, n_heads, head_dim)
        xk = self.wk(x).view(bsz, seqlen, n_heads, head_dim)
        xv = self.wv(x).view(bsz, seqlen, n_heads, head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(head_dim) + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, xv)
        return self.wo(output.transpose(1, 2).contiguous().view(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self, hidden_dim=32):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = RMSNorm(dim)
        self.ffn_norm = RMSNorm(dim)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            if p.dim() > 1:
                wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
                p.copy_(wave.reshape(p.shape) / math.sqrt(p.shape[-1]))


block = TransformerBlock()
init_weights(block)
freqs_cis = precompute_freqs_cis(head_dim, seq_len)
mask = torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1)
position = torch.arange(batch * seq_len * dim, dtype=torch.float32).view(batch, seq_len, dim)
x = torch.sin(0.13 * position)
target = torch.cos(0.07 * position)
optimizer = torch.optim.Adam(block.parameters(), lr=1e-2)

for step in range(8):
    optimizer.zero_grad()
    loss = F.mse_loss(block(x, freqs_cis, mask), target)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f}")
