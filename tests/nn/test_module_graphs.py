"""The graphs of MultiheadAttention, TransformerEncoderLayer, scaled_dot_product_attention, LSTM and GRU
are PyTorch's graphs (tests/fixtures/module_graphs_reference.json, recorded from PyTorch 2.13 on the CPU
by tests/fixtures/record_module_graphs.py).

Each case builds the module with PyTorch's parameters, runs the recorded inputs, forms the same loss
and compares the whole graph node by node in the same depth-first walk: node names, edges (which node
and output each ``next_functions`` entry points at), the leaf each AccumulateGrad feeds, and every saved
tensor's shape, dtype and bytes; then the forward values and the gradients. Deliberate differences,
each with its reason, are in ALLOWED.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import nn

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "fixtures", "module_graphs_reference.json"), encoding="utf-8") as _f:
    CASES = json.load(_f)["cases"]

# (node name, saved attribute) -> why glassgrad's saved tensor differs from PyTorch's
ALLOWED = {
    ("MulBackward0", "_saved_other"): "a Python number operand (q * sqrt(1/E)) stays a number, not an 8-byte "
                                      "0-d float64 wrapped-number tensor (as tests/core/test_saved_tensors.py)",
    ("MkldnnRnnLayerBackward0", "_saved_result3"): "the workspace: oneDNN's is an opaque uint8 buffer rounded to "
                                                   "4 KiB pages; glassgrad's holds exactly the gates and cell "
                                                   "states its backward reads, in float32 (NOTE [ Fused LSTM "
                                                   "layer ] 3): checked by workspace_bytes below",
}


def workspace_bytes(node):
    """NOTE [ Fused LSTM layer ] 3: four gates and the cell state per step, batch row and unit, float32."""
    T, N, _ = node._saved_input.shape
    H = node._saved_hx_.shape[1]
    return 5 * T * N * H * 4


def pattern(shape, offset):
    n = math.prod(shape)
    return np.sin(0.37 * np.arange(n, dtype=np.float64) + offset).astype(np.float32).reshape(shape)


def cotangent(shape, k):
    n = math.prod(shape)
    return np.cos(0.11 * np.arange(n, dtype=np.float64) + k).astype(np.float32).reshape(shape)


def walk(root, names):
    """The fixture's walk: depth first, a node numbered when first reached, next_functions in order."""
    order, nodes = {}, []

    def visit(fn):
        if id(fn) in order:
            return order[id(fn)]
        order[id(fn)] = len(nodes)
        entry = {"name": fn.name(), "node": fn}
        nodes.append(entry)
        if hasattr(fn, "variable"):
            entry["variable"] = names[id(fn.variable)]
        entry["next"] = [None if f is None else [visit(f), nr] for f, nr in fn.next_functions]
        return order[id(fn)]

    visit(root)
    return nodes


def saved_tensors(node):
    out = {}
    for key in getattr(node, "_saved", {}):
        t = getattr(node, "_saved_" + key)
        if isinstance(t, engine.Tensor):
            out["_saved_" + key] = {"shape": list(t.shape), "dtype": t.dtype.name, "nbytes": t.nbytes}
    return out


def build(case):
    cfg, kind = case["config"], case["kind"]
    if kind == "mha":
        m = nn.MultiheadAttention(cfg["embed_dim"], cfg["num_heads"], batch_first=cfg["batch_first"])

        def run(m, t):
            if cfg["self_attention"]:
                o, w = m(t["x"], t["x"], t["x"], need_weights=cfg["need_weights"])
            else:
                o, w = m(t["q"], t["kv"], t["kv"], need_weights=cfg["need_weights"])
            return (o,) if w is None else (o, w)
    elif kind == "encoder_layer":
        m = nn.TransformerEncoderLayer(cfg["d_model"], cfg["nhead"], dim_feedforward=cfg["dim_feedforward"],
                                       dropout=cfg["dropout"], norm_first=cfg["norm_first"])

        def run(m, t):
            return (m(t["src"]),)
    elif kind == "sdpa":
        m = None

        def run(_, t):
            kw = {}
            if cfg["variant"] == "causal":
                kw["is_causal"] = True
            elif cfg["variant"] == "float_mask":
                kw["attn_mask"] = engine.tensor(pattern((5, 6), 3.0))
            elif cfg["variant"] == "bool_mask":
                kw["attn_mask"] = engine.tensor(pattern((5, 6), 3.0) > -0.5)
            return (F.scaled_dot_product_attention(t["q"], t["k"], t["v"], **kw),)
    elif kind == "cell":
        m = (nn.LSTMCell if cfg["mode"] == "LSTM" else nn.GRUCell)(cfg["input_size"], cfg["hidden_size"])

        def run(m, t):
            out = m(t["x"], t["h"]) if cfg["mode"] == "GRU" else m(t["x"], (t["h"], t["c"]))
            return out if isinstance(out, tuple) else (out,)
    else:
        cls = nn.LSTM if cfg["mode"] == "LSTM" else nn.GRU
        kw = {"proj_size": cfg["proj_size"]} if cfg["proj_size"] else {}
        m = cls(cfg["input_size"], cfg["hidden_size"], num_layers=cfg["num_layers"],
                bidirectional=cfg["bidirectional"], batch_first=cfg["batch_first"],
                **kw).to(getattr(engine, cfg["dtype"]))

        def run(m, t):
            if not cfg["hx"]:
                out, state = m(t["x"])
            else:
                out, state = m(t["x"], (t["h0"], t["c0"]) if cfg["mode"] == "LSTM" else t["h0"])
            return (out,) + (tuple(state) if isinstance(state, tuple) else (state,))
    if m is not None:
        m.train()
        params = dict(m.named_parameters())
        assert sorted(params) == sorted(case["params"])
        with engine.no_grad():
            for n, p in params.items():
                ref = case["params"][n]
                p.copy_(engine.tensor(np.asarray(ref["values"], dtype=p.detach().numpy().dtype).reshape(ref["shape"])))
    return m, run


def run_case(case):
    dtype = case["config"].get("dtype", "float32")
    m, run = build(case)
    names, inputs = {}, {}
    if m is not None:
        names.update({id(p): n for n, p in m.named_parameters()})
    for n, spec in case["inputs"].items():
        t = engine.tensor(pattern(tuple(spec["shape"]), spec["offset"]).astype(dtype)).requires_grad_(True)
        names[id(t)] = n
        inputs[n] = t
    outs = run(m, inputs)
    loss = None
    for k, o in enumerate(outs):
        term = (o * engine.tensor(cotangent(tuple(o.shape), k).astype(dtype))).sum()
        loss = term if loss is None else loss + term
    return m, inputs, outs, loss, names


def compare_graph(nodes, ref_graph):
    assert [n["name"].replace("torch::autograd::", "") for n in nodes] == [g["name"].replace("torch::autograd::", "") for g in ref_graph]
    for k, (got, want) in enumerate(zip(nodes, ref_graph)):
        where = f"node {k} {want['name']}"
        assert got["next"] == want["next"], f"{where}: edges {got['next']} != {want['next']}"
        assert got.get("variable") == want.get("variable"), where
        g = saved_tensors(got["node"])
        w = {}
        for a, s in want["saved"].items():
            if (want["name"], a) == ("MulBackward0", "_saved_other") and s["shape"] == [] and s["dtype"] == "float64":
                assert a not in g, where               # a wrapped number (ALLOWED)
                continue
            w[a] = s
        assert sorted(g) == sorted(w), f"{where}: saved {sorted(g)} != {sorted(w)}"
        for a, s in w.items():
            if (want["name"], a) == ("MkldnnRnnLayerBackward0", "_saved_result3"):
                assert g[a]["shape"] == [g[a]["nbytes"] // 4] and g[a]["dtype"] == "float32", where
                assert g[a]["nbytes"] == workspace_bytes(got["node"]), where
                continue
            assert g[a] == s, f"{where} {a}: {g[a]} != {s}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_is_pytorchs(name):
    case = CASES[name]
    _, _, _, loss, names = run_case(case)
    compare_graph(walk(loss.grad_fn, names), case["graph"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_pytorch(name):
    case = CASES[name]
    m, inputs, outs, loss, _ = run_case(case)
    assert len(outs) == len(case["outputs"])
    for o, ref in zip(outs, case["outputs"]):
        assert list(o.shape) == ref["shape"]
        np.testing.assert_allclose(o.detach().numpy().reshape(-1), ref["values"], rtol=1e-4, atol=1e-5)
    loss.backward()
    grads = {n: t.grad for n, t in inputs.items()}
    if m is not None:
        grads.update({n: p.grad for n, p in m.named_parameters()})
    assert sorted(grads) == sorted(case["grads"])
    for n, g in grads.items():
        np.testing.assert_allclose(g.numpy().reshape(-1), case["grads"][n], rtol=1e-4, atol=1e-5, err_msg=n)
