"""A tiny nanoGPT-style language model whose attention is ``F.scaled_dot_product_attention``.

It learns to continue a repeating character pattern. Run it with
``glassgrad run examples/programs/tiny_gpt.py``.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

text = "hello glass box. " * 8
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
vocab_size, block_size, n_embd, n_head = len(chars), 8, 16, 2


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(n_embd, dim=2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.block = Block()
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        _, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        logits = self.lm_head(self.ln_f(self.block(x)))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
            p.copy_(wave.reshape(p.shape) / math.sqrt(p.shape[-1]))


def get_batch(step, batch_size=4):
    """Batch ``step``: windows starting at fixed, spread-out offsets (no random sampling)."""
    ix = [(7 * (step * batch_size + i)) % (len(data) - block_size) for i in range(batch_size)]
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


model = GPT()
init_weights(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)

for step in range(20):
    xb, yb = get_batch(step)
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f}")
