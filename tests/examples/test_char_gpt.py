"""examples/char_gpt.py, the nanoGPT-style character model: PyTorch's values, a falling loss, a trace.

The values are PyTorch's (tests/fixtures/char_gpt_reference.json, recorded from PyTorch 2.13 on
the CPU by tests/fixtures/make_char_gpt_reference.py, which runs the example's own code on
PyTorch). Inputs and parameters are rebuilt here from the same formulas.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import engine as torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "char_gpt.py")
with open(os.path.join(ROOT, "tests", "fixtures", "char_gpt_reference.json"), encoding="utf-8") as _f:
    REF = json.load(_f)


def pattern(shape, offset):
    n = math.prod(shape)
    return (0.5 * np.sin(0.37 * np.arange(n, dtype=np.float64) + offset)).astype(np.float32).reshape(shape)


def tokens(shape, vocab, offset):
    n = math.prod(shape)
    return ((7 * np.arange(n) + offset) % vocab).astype(np.int64).reshape(shape)


@pytest.fixture(scope="module")
def ex():
    spec = importlib.util.spec_from_file_location("char_gpt_example", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def set_parameters(model):
    with torch.no_grad():
        for k, (_, p) in enumerate(model.named_parameters(), start=1):
            p.copy_(torch.from_numpy(pattern(tuple(p.shape), 0.1 * k)))


def graph_names(fn):
    names, seen, stack = [], set(), [fn]
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        names.append(f.name().replace("torch::autograd::", ""))
        stack.extend(reversed([n for n, _ in f.next_functions]))
    return names


def close(got, want, tol=2e-6):
    np.testing.assert_allclose(got.detach().numpy(), np.asarray(want, dtype=np.float32), rtol=tol, atol=tol)


def test_the_example_is_plain_pytorch_code():
    with open(SCRIPT, encoding="utf-8") as f:
        src = f.read()
    assert "import engine as torch  # `import torch` works the same\n" in src
    assert "engine." not in src                 # nothing glassgrad-only: the same file runs on PyTorch
    assert "q, k, v = self.c_attn(x).split(self.n_embd, dim=2)" in src
    assert "k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)" in src
    assert "y = y.transpose(1, 2).contiguous().view(B, T, C)" in src


def test_attention_block_forward_backward_and_graph_are_pytorchs(ex):
    ref = REF["attention"]
    c = ref["config"]
    block = ex.CausalSelfAttention(ex.GPTConfig(block_size=c["block_size"], n_head=c["n_head"], n_embd=c["n_embd"],
                                                dropout=0.0, bias=True))
    set_parameters(block)
    x = torch.from_numpy(pattern((c["B"], c["T"], c["n_embd"]), 2.0)).requires_grad_()
    out = block(x)
    (out * torch.from_numpy(pattern(tuple(out.shape), 3.0))).sum().backward()
    close(out, ref["out"])
    close(x.grad, ref["grads"]["x"])
    for name, p in block.named_parameters():
        close(p.grad, ref["grads"][name])
    assert sorted(n for n, _ in block.named_parameters()) == sorted(k for k in ref["grads"] if k != "x")
    assert graph_names(out.grad_fn) == [n.replace("torch::autograd::", "") for n in ref["graph"]]


def test_whole_model_loss_and_gradients_are_pytorchs(ex):
    ref = REF["gpt"]
    c = ref["config"]
    model = ex.GPT(ex.GPTConfig(**{k: v for k, v in c.items() if k not in ("B", "T")}))
    assert [n for n, _ in model.named_parameters()] == ref["names"]   # the tied lm_head.weight is listed once
    assert model.lm_head.weight is model.transformer.wte.weight
    set_parameters(model)
    idx = torch.from_numpy(tokens((c["B"], c["T"]), c["vocab_size"], 3))
    targets = torch.from_numpy(tokens((c["B"], c["T"]), c["vocab_size"], 4))
    logits, loss = model(idx, targets)
    loss.backward()
    close(logits, ref["logits"])
    assert loss.item() == pytest.approx(ref["loss"], rel=1e-6)
    for name, p in model.named_parameters():
        close(p.grad, ref["grads"][name], tol=1e-5)


def test_a_few_training_steps_lower_the_loss(ex, capsys):
    cfg = ex.GPTConfig(block_size=16, n_layer=1, n_head=2, n_embd=16)
    losses = ex.main(steps=30, batch_size=8, lr=1e-2, config=cfg, print_every=10, sample_length=5)
    out = capsys.readouterr().out
    assert len(losses) == 30
    assert losses[0] == pytest.approx(math.log(cfg.vocab_size), abs=0.1)   # small init: near-uniform predictions
    assert sum(losses[-5:]) / 5 < losses[0] - 0.6, losses
    printed = [float(line.split("loss ")[1]) for line in out.splitlines() if line.startswith("step")]
    assert printed == [round(losses[i], 4) for i in (0, 10, 20, 29)]
    assert out.splitlines()[-1].startswith("sample: ")


def test_glassgrad_run_records_the_example_by_module(ex, tmp_path):
    trace = tmp_path / "run.jsonl"
    env = dict(os.environ, CHAR_GPT_STEPS="2",
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    res = subprocess.run([sys.executable, "-c", "import sys, tui.cli; sys.exit(tui.cli.main(sys.argv[1:]))",
                          "run", SCRIPT, "--text", "--out", str(trace)],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert "step    1  loss " in res.stdout and f"trace saved to {trace}" in res.stdout
    from engine.trace import Trace
    from replay.model import TraceModel

    model = TraceModel.from_trace(Trace.load(str(trace)))
    ops = [e for e in model.events if e["kind"] == "op"]
    modules = {e.get("module") for e in ops}
    assert {"transformer.h.0.attn.c_attn", "transformer.h.1.attn", "transformer.h.0.mlp.gelu", "lm_head"} <= modules
    kinds = [e["kind"] for e in model.events]
    assert kinds.count("backward_begin") == 2 and kinds.count("optimizer_step") == 2
    words = res.stdout.split()
    n_params, vocab = int(words[0]), int(words[2])       # "28160 parameters, 52 distinct characters, ..."
    first_backward = kinds.index("backward_begin")
    assert model.memory.live_of("parameter", first_backward) == 4 * n_params   # float32, the tied matrix once
    # before the tying, the embedding's own (vocab, n_embd) matrix was alive beside lm_head's
    peak = max(model.memory.live_of("parameter", i) for i in range(first_backward))
    assert peak == 4 * (n_params + vocab * ex.GPTConfig().n_embd)
