"""Small training programs, written once for any module with PyTorch's API (engine or torch).

Each ``build_<name>(torch)`` seeds, builds the program's model, data and optimizer, and
returns ``step()``: one training step as a learner writes it. The data are made from
formulas, not from a generator, so both sides train on the same numbers.

``python -m bench._programs REPS`` (in an interpreter with PyTorch) prints PyTorch's seconds
per step of each program as JSON, for ``python -m bench --torch-python PATH``.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_linear_fit(torch):
    """Tiny tensors: fit y = 3x + 2 with two scalar parameters and a hand-written SGD update."""
    x = torch.linspace(-1.0, 1.0, 32).unsqueeze(1)
    y = 3.0 * x + 2.0 + 0.1 * torch.sin(7.0 * x)
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)

    def step():
        loss = ((x * w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in (w, b):
                p -= 0.1 * p.grad
                p.grad.zero_()
        return loss
    return step


def build_tiny_mlp(torch):
    """Tiny tensors: a 2-16-2 classifier, cross-entropy, Adam, batch 32."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    t = torch.linspace(0.0, 6.0, 32)
    x = torch.stack([t.cos() * t, t.sin() * t], dim=1) / 6.0
    y = (torch.arange(32) % 2).long()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


TAGGER_DATA = [(["The", "dog", "ate", "the", "apple"], ["DET", "NN", "V", "DET", "NN"]),
               (["Everybody", "read", "that", "book"], ["NN", "V", "DET", "NN"])]


def build_lstm_tagger(torch):
    """PyTorch's LSTM part-of-speech tagger tutorial: embedding 6, LSTM 6, one sentence per update, SGD."""
    torch.manual_seed(1)
    nn, F = torch.nn, torch.nn.functional
    word_to_ix, tag_to_ix = {}, {"DET": 0, "NN": 1, "V": 2}
    for sent, _ in TAGGER_DATA:
        for word in sent:
            word_to_ix.setdefault(word, len(word_to_ix))

    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            return F.log_softmax(tag_space, dim=1)

    model = LSTMTagger(6, 6, len(word_to_ix), len(tag_to_ix))
    loss_function = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.tensor([word_to_ix[w] for w in s], dtype=torch.long),
             torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)) for s, tags in TAGGER_DATA]

    def step():
        for sentence_in, targets in data:
            model.zero_grad()
            tag_scores = model(sentence_in)
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
        return loss
    return step


def load_char_gpt(torch):
    """examples/char_gpt.py with its ``import engine as torch`` bound to ``torch``."""
    saved = sys.modules.get("engine")
    sys.modules["engine"] = torch
    try:
        spec = importlib.util.spec_from_file_location(f"char_gpt_on_{torch.__name__}",
                                                      os.path.join(ROOT, "examples", "char_gpt.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        if saved is None:
            del sys.modules["engine"]
        else:
            sys.modules["engine"] = saved


def build_char_gpt(torch):
    """examples/char_gpt.py's model at its default size, one AdamW step on a fixed batch of 16 x 32."""
    ex = load_char_gpt(torch)
    torch.manual_seed(0)
    cfg = ex.GPTConfig(vocab_size=52)
    model = ex.GPT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.99), weight_decay=0.1)
    n = 16 * cfg.block_size
    xb = torch.tensor([(7 * i + 3) % cfg.vocab_size for i in range(n)], dtype=torch.long).view(16, cfg.block_size)
    yb = torch.tensor([(7 * i + 10) % cfg.vocab_size for i in range(n)], dtype=torch.long).view(16, cfg.block_size)

    def step():
        _, loss = model(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss
    return step


PROGRAMS = {"linear_fit": build_linear_fit, "tiny_mlp": build_tiny_mlp, "lstm_tagger": build_lstm_tagger,
            "char_gpt": build_char_gpt}


def tiny_mul(torch, n: int = 16):
    """The operands of the per-op measurement: two gradient-tracked ``n``-element float32 tensors."""
    a = torch.linspace(0.5, 1.5, n).requires_grad_()
    b = torch.linspace(-1.0, 1.0, n).requires_grad_()
    return a, b


def inner_for(step, target_s: float = 0.02) -> int:
    """How many calls make one timed run of about ``target_s`` seconds (at least one)."""
    t0 = time.perf_counter()
    step()
    return max(1, int(target_s / max(time.perf_counter() - t0, 1e-7)))


def _torch_side(reps: int) -> dict:
    import torch

    from ._timing import median_time
    n = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "1"
    torch.set_num_threads(int(n) if n.isdigit() else 1)      # NOTE [ Program benchmark ] rule 5 in programs.py
    out = {"version": torch.__version__, "programs": {}}
    for name, build in PROGRAMS.items():
        step = build(torch)
        step()
        out["programs"][name] = median_time(step, reps, inner=inner_for(step))
    a, b = tiny_mul(torch)
    out["mul"] = median_time(lambda: a * b, reps, inner=10_000)
    return out


if __name__ == "__main__":
    print(json.dumps(_torch_side(int(sys.argv[1]))))
