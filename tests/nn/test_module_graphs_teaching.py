"""The fused attention and LSTM nodes (gradients against finite differences, what they save) and the
teaching view (NOTE [ Teaching view ]): the written-out graph, labelled, with the same numbers."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from engine import nn
from engine.nn.functional.recurrent import mkldnn_rnn_layer, unsafe_chunk
from engine.nn.functional.teaching import LABEL
from tests.checks import f64, gradcheck, gradgradcheck


def nodes_of(root):
    seen, stack, out = set(), [root], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(f for f, _ in n.next_functions)
    return out


def names(root):
    return {n.name() for n in nodes_of(root)}


def activation_bytes():
    gc.collect()
    return engine.memory.memory_stats().get("allocated_bytes.activation.current", 0)


def exercise_module_graph_ops():
    """One call of each row of engine/ops/nn/sdpa.py and rnn_fused.py (tests/ops/test_ops_grad.py)."""
    q = f64(1, 2, 3, 2, seed=1)
    F.scaled_dot_product_attention(q, f64(1, 2, 4, 2, seed=2), f64(1, 2, 4, 2, seed=3)).sum().backward()
    F.scaled_dot_product_attention(q, q, q, attn_mask=f64(3, 3, seed=5, requires_grad=False)).sum().backward()
    nn.LSTM(2, 2)(engine.randn(2, 1, 2))[0].sum().backward()
    unsafe_chunk(f64(2, 4, seed=4), 2, 1)[0].sum().backward()


# ---- the fused attention node ----------------------------------------------------------------------
SDPA_VARIANTS = {
    "plain": {},
    "causal": {"is_causal": True},
    "scale": {"scale": 0.3},
    "float_mask": {"attn_mask": engine.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4))},
    "bool_mask": {"attn_mask": engine.tensor(np.array([[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1]], dtype=bool))},
}


@pytest.mark.parametrize("variant", sorted(SDPA_VARIANTS))
def test_fused_attention_gradients_match_finite_differences(variant):
    kw = SDPA_VARIANTS[variant]
    q, k, v = f64(2, 2, 3, 2, seed=1), f64(2, 2, 4, 2, seed=2), f64(2, 2, 4, 2, seed=3)
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw), [q, k, v])


@pytest.mark.parametrize("variant", ["plain", "causal"])
def test_fused_attention_second_derivatives(variant):
    kw = SDPA_VARIANTS[variant]
    q, k, v = f64(1, 1, 3, 2, seed=4), f64(1, 1, 3, 2, seed=5), f64(1, 1, 3, 2, seed=6)
    gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw), [q, k, v])


@pytest.mark.parametrize("variant", sorted(SDPA_VARIANTS))
def test_teaching_view_attention_is_written_out_with_the_same_numbers(variant):
    kw = SDPA_VARIANTS[variant]
    q, k, v = f64(2, 2, 3, 2, seed=7), f64(2, 2, 4, 2, seed=8), f64(2, 2, 4, 2, seed=9)
    g = f64(2, 2, 3, 2, seed=10, requires_grad=False)
    fused = F.scaled_dot_product_attention(q, k, v, **kw)
    want = engine.autograd.grad((fused * g).sum(), [q, k, v])
    with nn.teaching_view():
        taught = F.scaled_dot_product_attention(q, k, v, **kw)
    got = engine.autograd.grad((taught * g).sum(), [q, k, v])
    np.testing.assert_allclose(taught.detach().numpy(), fused.detach().numpy(), rtol=1e-12, atol=1e-14)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    assert "SoftmaxBackward0" in names(taught.grad_fn)
    assert "ScaledDotProductFlashAttentionForCpuBackward0" not in names(taught.grad_fn)
    assert all(getattr(n, "teaching_view", None) == LABEL for n in nodes_of(taught.grad_fn)
               if n.name() != "torch::autograd::AccumulateGrad")
    assert all(getattr(n, "teaching_view", None) is None for n in nodes_of(fused.grad_fn))


def test_fused_attention_keeps_no_attention_matrix():
    """NOTE [ Fused attention ] 2: the output and one log-sum-exp per row; the written-out graph's softmax
    keeps the whole (L, S) matrix per head instead."""
    B, H, L, S, D = 2, 3, 16, 24, 4
    q, k, v = engine.randn(B, H, L, D, requires_grad=True), engine.randn(B, H, S, D, requires_grad=True), \
        engine.randn(B, H, S, D, requires_grad=True)
    before = activation_bytes()
    out = F.scaled_dot_product_attention(q, k, v)
    assert activation_bytes() - before == (B * H * L * D + B * H * L) * 4
    node = out.grad_fn
    assert node._saved_query is q and node._saved_key is k and node._saved_value is v
    assert tuple(node._saved_logsumexp.shape) == (B, H, L) and node._saved_attn_mask is None
    assert node._saved_is_causal is False and node._saved_dropout_p == 0.0 and node._saved_scale is None
    del out, node
    with nn.teaching_view():
        out = F.scaled_dot_product_attention(q, k, v)
    assert activation_bytes() - before == B * H * L * S * 4
    out.sum().backward()
    assert activation_bytes() == before


def test_three_dim_or_dropout_attention_is_composed_as_pytorchs_math_path():
    q = f64(2, 3, 2, seed=11)
    assert "SoftmaxBackward0" in names(F.scaled_dot_product_attention(q, q, q).grad_fn)
    q4 = f64(1, 2, 3, 2, seed=12)
    assert "SoftmaxBackward0" in names(F.scaled_dot_product_attention(q4, q4, q4, dropout_p=0.5).grad_fn)


def test_causal_with_a_mask_is_refused_as_pytorch():
    q = f64(1, 1, 3, 2, seed=13)
    with pytest.raises(RuntimeError, match=r"^_scaled_dot_product_attention: Explicit attn_mask should not be set "
                                           r"when is_causal=True$"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=engine.ones(3, 3), is_causal=True)


def test_multihead_attention_teaching_view():
    engine.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)
    x = engine.randn(5, 3, 8, requires_grad=True)
    out, _ = m(x, x, x, need_weights=False)
    assert "ScaledDotProductFlashAttentionForCpuBackward0" in names(out.grad_fn)
    with nn.teaching_view():
        taught, _ = m(x, x, x, need_weights=False)
    np.testing.assert_allclose(taught.detach().numpy(), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    inside = [n for n in nodes_of(taught.grad_fn) if n.name() != "torch::autograd::AccumulateGrad"]
    assert "SoftmaxBackward0" in {n.name() for n in inside}
    assert all(getattr(n, "teaching_view", None) == LABEL for n in inside)


# ---- the fused LSTM layer --------------------------------------------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
def test_fused_lstm_layer_gradients_match_finite_differences(reverse):
    x, hx, cx = f64(3, 2, 2, seed=1), f64(2, 2, seed=2), f64(2, 2, seed=3)
    ws = [f64(8, 2, seed=4), f64(8, 2, seed=5), f64(8, seed=6), f64(8, seed=7)]

    def run(x, hx, cx, *w):
        return mkldnn_rnn_layer(x, *w, hx, cx, reverse, 2, 1, False, True)

    assert run(x, hx, cx, *ws)[0].grad_fn.name() == "MkldnnRnnLayerBackward0"
    gradcheck(run, [x, hx, cx, *ws])


def test_fused_lstm_layer_second_derivatives():
    x, hx, cx = f64(2, 1, 2, seed=8), f64(1, 2, seed=9), f64(1, 2, seed=10)
    ws = [f64(8, 2, seed=11), f64(8, 2, seed=12), f64(8, seed=13), f64(8, seed=14)]
    gradgradcheck(lambda x, hx, cx, *w: mkldnn_rnn_layer(x, *w, hx, cx, False, 2, 1, False, True),
                  [x, hx, cx, *ws])


def test_lstm_is_one_node_per_layer_and_direction_and_the_teaching_view_writes_out_the_gates():
    engine.manual_seed(0)
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = engine.randn(5, 2, 3, requires_grad=True)
    out, (h, c) = m(x)
    fused = [n for n in nodes_of(out.grad_fn) if n.name() == "MkldnnRnnLayerBackward0"]
    assert len(fused) == 4 and {n._saved_reverse for n in fused} == {False, True}
    assert "SigmoidBackward0" not in names(out.grad_fn)
    g = engine.autograd.grad(out.sum() + h.sum() + c.sum(), [x] + list(m.parameters()))
    with nn.teaching_view():
        out2, (h2, c2) = m(x)
    steps = [n for n in nodes_of(out2.grad_fn) if n.name() == "SigmoidBackward0"]
    assert len(steps) == 3 * 5 * 4 and "MkldnnRnnLayerBackward0" not in names(out2.grad_fn)
    assert all(getattr(n, "teaching_view", None) == LABEL for n in nodes_of(out2.grad_fn)
               if n.name() != "torch::autograd::AccumulateGrad")
    g2 = engine.autograd.grad(out2.sum() + h2.sum() + c2.sum(), [x] + list(m.parameters()))
    for a, b in zip((out, h, c) + g, (out2, h2, c2) + g2):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_fused_lstm_activation_bytes():
    """NOTE [ Fused LSTM layer ] 2-3: per layer the outputs (T, N, H), h_T and c_T, and the workspace of
    five (T, N, H) blocks (i, f, g, o, c); the input, weights and the zero h_0, c_0 are not activations."""
    m = nn.LSTM(16, 32)
    N, Hd = 8, 32
    for T in (1, 4):
        before = activation_bytes()
        out, (h, c) = m(engine.randn(T, N, 16))
        assert activation_bytes() - before == (6 * T + 2) * N * Hd * 4
        out.sum().backward()
        del out, h, c
        assert activation_bytes() == before


def test_gru_step_is_pytorchs_and_the_teaching_view_writes_it_out():
    engine.manual_seed(0)
    m = nn.GRU(3, 4)
    x = engine.randn(4, 2, 3, requires_grad=True)
    out, _ = m(x)
    assert "UnsafeSplitBackward0" in names(out.grad_fn)
    with nn.teaching_view():
        out2, _ = m(x)
    assert "UnsafeSplitBackward0" not in names(out2.grad_fn) and "SplitBackward0" in names(out2.grad_fn)
    np.testing.assert_allclose(out2.detach().numpy(), out.detach().numpy(), rtol=1e-6, atol=1e-6)
    g = engine.autograd.grad((out * out).sum(), [x])[0]
    g2 = engine.autograd.grad((out2 * out2).sum(), [x])[0]
    np.testing.assert_allclose(g2.numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_unsafe_chunk_pieces_share_storage_with_counters_of_their_own():
    a = f64(2, 6, seed=1) * 1.0
    p = unsafe_chunk(a, 3, 1)
    assert all(t._storage is a._storage for t in p) and all(t._base is None for t in p)
    r = p[0].sigmoid_()          # r's saved result stays valid when a sibling piece is written in place
    p[1].mul_(2.0)
    r.sum().backward()
    assert p[0].grad_fn.name() == "SigmoidBackward0"


def test_teaching_view_nests_and_is_off_outside():
    from engine.nn.functional.teaching import is_teaching_view
    assert not is_teaching_view()
    with nn.teaching_view():
        with nn.teaching_view():
            assert is_teaching_view()
        assert is_teaching_view()
    assert not is_teaching_view()


def test_encoder_layer_teaching_view_writes_out_attention():
    engine.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    x = engine.randn(5, 3, 8, requires_grad=True)
    out = layer(x)
    assert "ScaledDotProductFlashAttentionForCpuBackward0" in names(out.grad_fn)
    assert "SoftmaxBackward0" not in names(out.grad_fn)
    with nn.teaching_view():
        taught = layer(x)
    assert "SoftmaxBackward0" in names(taught.grad_fn)
    assert "ScaledDotProductFlashAttentionForCpuBackward0" not in names(taught.grad_fn)
    np.testing.assert_allclose(taught.detach().numpy(), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = engine.autograd.grad((out * out).sum(), [x])[0]
    g2 = engine.autograd.grad((taught * taught).sum(), [x])[0]
    np.testing.assert_allclose(g2.numpy(), g.numpy(), rtol=1e-4, atol=1e-5)


def test_lstm_cell_teaching_view_has_no_in_place_gates():
    engine.manual_seed(0)
    cell = nn.LSTMCell(3, 4)
    x = engine.randn(2, 3, requires_grad=True)
    h, c = cell(x)
    assert "UnsafeSplitBackward0" in names(h.grad_fn)
    with nn.teaching_view():
        h2, c2 = cell(x)
    assert "UnsafeSplitBackward0" not in names(h2.grad_fn) and "SplitBackward0" in names(h2.grad_fn)
    for a, b in ((h, h2), (c, c2)):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_fused_attention_event_lists_what_the_node_saves():
    q = engine.randn(1, 2, 3, 4, requires_grad=True)
    mask = engine.randn(3, 3)
    with engine.record() as tr:
        F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    node = next(e["node"] for e in tr.of_kind("op") if e["node"] and
                e["node"]["name"] == "ScaledDotProductFlashAttentionForCpuBackward0")
    saved = {s["name"]: s["bytes"] for s in node["saved"]}
    assert saved == {"query": 96, "key": 96, "value": 96, "output": 96, "logsumexp": 24, "attn_mask": 36}
