"""engine.utils.checkpoint: gradients, errors and warnings as PyTorch 2.13, RNG replay,
the determinism check, selective checkpointing, events and exact memory figures."""
from __future__ import annotations

import gc
import math
import warnings

import numpy as np
import pytest

import engine
import engine.memory as M
import engine.nn as nn
import engine.nn.functional as F
from engine.utils.checkpoint import (CheckpointError, CheckpointPolicy, checkpoint, checkpoint_sequential,
                                     create_selective_checkpoint_contexts)

REENTRANT_GRAD_ERROR = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
    "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
    ".backward() without passing the `inputs` argument.")
NONE_REQUIRES_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"
USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants.")


# ---- a small model with dropout ------------------------------------------------
def _params(n=3, w=4):
    engine.manual_seed(0)
    return [(engine.randn(w, w, requires_grad=True), engine.randn(w, requires_grad=True)) for _ in range(n)]


def _block(W, b, p=0.3):
    def f(h):
        return F.dropout(engine.tanh(F.linear(h, W, b)), p)
    return f


def _grads(tensors):
    return [None if t.grad is None else t.grad.numpy().copy() for t in tensors]


def _zero(tensors):
    for t in tensors:
        t.grad = None


def _leaves(params, x):
    return [t for pair in params for t in pair] + [x]


def _run(params, x, how):
    """Forward + backward of the 3-block net; ``how`` is None (plain) or a checkpoint variant."""
    _zero(_leaves(params, x))
    engine.manual_seed(1)
    blocks = [_block(W, b) for W, b in params]

    def net(h):
        for blk in blocks:
            h = blk(h)
        return h
    if how is None:
        y = net(x)
    elif how == "nested":
        def outer(h):
            h = checkpoint(blocks[0], h, use_reentrant=False)
            h = checkpoint(lambda a: blocks[2](checkpoint(blocks[1], a, use_reentrant=False)), h,
                           use_reentrant=False)
            return h
        y = checkpoint(outer, x, use_reentrant=False)
    elif how == "nested_reentrant":
        y = checkpoint(lambda h: blocks[2](checkpoint(lambda a: blocks[1](blocks[0](a)), h, use_reentrant=True)),
                       x, use_reentrant=True)
    else:
        y = checkpoint(net, x, use_reentrant=how)
    (y * y).sum().backward()
    after = engine.rand(3).numpy().copy()   # the surrounding RNG stream continues as without checkpointing
    return _grads(_leaves(params, x)), after


@pytest.mark.parametrize("how", [True, False, "nested", "nested_reentrant"])
def test_gradients_equal_unchekpointed_with_dropout_and_rng_untouched(how):
    params = _params()
    x = engine.randn(5, 4, requires_grad=True)
    ref, ref_after = _run(params, x, None)
    got, after = _run(params, x, how)
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ref_after, after)


def test_without_preserve_rng_state_dropout_differs_and_default_check_catches_it():
    params = _params()
    x = engine.randn(5, 4, requires_grad=True)
    blocks = [_block(W, b) for W, b in params]

    def net(h):
        for blk in blocks:
            h = blk(h)
        return h
    ref, _ = _run(params, x, None)
    # reentrant: no check (as PyTorch), the gradients silently differ
    _zero(_leaves(params, x))
    engine.manual_seed(1)
    checkpoint(net, x, use_reentrant=True, preserve_rng_state=False).sum().backward()
    assert not all(np.array_equal(a, b) for a, b in zip(ref, _grads(_leaves(params, x))))
    # non-reentrant, default check: the value fingerprints differ -> CheckpointError naming the node
    engine.manual_seed(1)
    y = checkpoint(net, x, use_reentrant=False, preserve_rng_state=False)
    with pytest.raises(CheckpointError, match=r"Recomputed values for the following tensors differ") as ei:
        y.sum().backward()
    assert "saved as 'other' by MulBackward0" in str(ei.value)   # the dropout mask, saved by the mul
    # PyTorch's metadata-only check lets it through
    engine.manual_seed(1)
    y = checkpoint(net, x, use_reentrant=False, preserve_rng_state=False, determinism_check="metadata")
    y.sum().backward()


def test_determinism_check_fires_on_a_nondeterministic_function():
    x = engine.randn(3, 4, requires_grad=True)
    calls = []

    def f(a):
        calls.append(1)
        return (a * float(len(calls))).exp()    # the recompute multiplies by 2, not 1

    y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError) as ei:
        y.sum().backward()
    msg = str(ei.value)
    assert msg.startswith("torch.utils.checkpoint: Recomputed values for the following tensors differ")
    assert "tensor at position 0 (saved as 'result' by ExpBackward0)" in msg
    # "none": only the count is checked
    calls.clear()
    y = checkpoint(f, x, use_reentrant=False, determinism_check="none")
    y.sum().backward()


def test_determinism_check_metadata_and_count_errors_in_pytorch_words():
    x = engine.randn(4, 4, requires_grad=True)
    state = {"n": 0}

    def shape_changes(a):
        state["n"] += 1
        return a.sin() if state["n"] == 1 else a[:2].sin()

    y = checkpoint(shape_changes, x, use_reentrant=False, determinism_check="metadata")
    with pytest.raises(CheckpointError) as ei:
        y.sum().backward()
    msg = str(ei.value)
    assert msg.startswith("torch.utils.checkpoint: Recomputed values for the following tensors have different "
                          "metadata than during the forward pass.\ntensor at position 0 (saved as 'self' by "
                          "SinBackward0):\nsaved metadata: {'shape': torch.Size([4, 4])")
    assert "recomputed metadata: {'shape': torch.Size([2, 4])" in msg

    state["n"] = 0

    def fewer(a):
        state["n"] += 1
        return a.sin().exp() if state["n"] == 1 else a.sin() * 1.0

    y = checkpoint(fewer, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved during the original "
                       "forward and recomputation.\nNumber of tensors saved during forward: 2\nNumber of tensors "
                       "saved during recomputation: 1."):
        y.sum().backward()


def test_autograd_grad_nonreentrant_and_reentrant_error():
    params = _params()
    x = engine.randn(5, 4, requires_grad=True)
    blk = _block(*params[0], p=0.0)
    gx_ref, gw_ref = engine.autograd.grad(blk(x).sum(), [x, params[0][0]])
    gx, gw = engine.autograd.grad(checkpoint(blk, x, use_reentrant=False).sum(), [x, params[0][0]])
    np.testing.assert_array_equal(gx.numpy(), gx_ref.numpy())
    np.testing.assert_array_equal(gw.numpy(), gw_ref.numpy())
    y = checkpoint(blk, x, use_reentrant=True)
    with pytest.raises(RuntimeError) as ei:
        engine.autograd.grad(y.sum(), [x])
    assert str(ei.value) == REENTRANT_GRAD_ERROR
    y = checkpoint(blk, x, use_reentrant=True)
    with pytest.raises(RuntimeError) as ei:
        y.sum().backward(inputs=[x])
    assert str(ei.value) == REENTRANT_GRAD_ERROR


def test_inputs_not_requiring_grad():
    params = _params()
    x = engine.randn(5, 4)                      # no grad: only the parameters learn
    blk = _block(*params[0], p=0.0)
    blk(x).sum().backward()
    ref = _grads(params[0])
    _zero(params[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(blk, x, use_reentrant=False).sum().backward()
    assert all(np.array_equal(a, b) for a, b in zip(ref, _grads(params[0])))
    # reentrant: PyTorch's warning, and the output has no graph (the parameters get nothing)
    _zero(params[0])
    with pytest.warns(UserWarning) as rec:
        y = checkpoint(blk, x, use_reentrant=True)
    assert [str(w.message) for w in rec] == [NONE_REQUIRES_GRAD]
    assert not y.requires_grad and y.grad_fn is None


def test_use_reentrant_none_warns_and_defaults_to_reentrant():
    x = engine.randn(3, requires_grad=True)
    with pytest.warns(UserWarning) as rec:
        y = checkpoint(lambda a: a.sin(), x)
    assert [str(w.message) for w in rec] == [USE_REENTRANT_WARNING]
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter should be passed"):
        checkpoint_sequential([lambda a: a.sin(), lambda a: a.cos()], 2, x)


def test_argument_errors_as_pytorch():
    x = engine.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint(lambda a: a.sin(), x, use_reentrant=True, foo=1)
    with pytest.raises(ValueError, match=r"^Passing `context_fn` or `debug` is only supported when "
                       r"use_reentrant=False.$"):
        checkpoint(lambda a: a.sin(), x, use_reentrant=True, context_fn=lambda: None)
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', 'metadata', "
                       r"'none'\], but got foo$"):
        checkpoint(lambda a: a.sin(), x, use_reentrant=False, determinism_check="foo")
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: bar$"):
        checkpoint_sequential([lambda a: a], 1, x, use_reentrant=False, bar=2)
    y = checkpoint(lambda a: a.detach(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="^none of output has requires_grad=True, this checkpoint\\(\\) is not "
                       "necessary$"):
        y.sum().backward()


def test_nonreentrant_kwargs_and_non_tensor_outputs():
    x = engine.randn(3, requires_grad=True)
    out, tag = checkpoint(lambda a, scale=1.0: ((a * scale).exp(), "tag"), x, scale=2.0, use_reentrant=False)
    assert tag == "tag"
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.detach().numpy()), rtol=1e-6)


def test_double_backward_through_a_nonreentrant_checkpoint():
    x = engine.randn(3, requires_grad=True)

    def f(a):
        return (a.sin() * a).exp()
    g_ref, = engine.autograd.grad(f(x).sum(), [x], create_graph=True)
    gg_ref, = engine.autograd.grad(g_ref.sum(), [x])
    g, = engine.autograd.grad(checkpoint(f, x, use_reentrant=False).sum(), [x], create_graph=True)
    assert g.requires_grad
    gg, = engine.autograd.grad(g.sum(), [x])        # recomputes again, in the second backward
    np.testing.assert_allclose(g.detach().numpy(), g_ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(gg.numpy(), gg_ref.numpy(), rtol=1e-5)


def test_retain_graph_recomputes_each_backward_and_grad_twice():
    x = engine.randn(3, requires_grad=True)
    runs = []

    def f(a):
        runs.append(1)
        return a.sin().exp()
    y = checkpoint(f, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    y.backward()
    assert len(runs) == 3           # forward + one recompute per backward
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1, rtol=1e-6)


def test_checkpoint_sequential_module_and_list():
    engine.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(5)])
    x = engine.randn(4, 6, requires_grad=True)
    model(x).sum().backward()
    leaves = list(model.parameters()) + [x]
    ref = _grads(leaves)
    for use_reentrant in (True, False):
        for segments in (1, 2, 3, 5):
            _zero(leaves)
            checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant).sum().backward()
            for a, b in zip(ref, _grads(leaves)):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    _zero(leaves)
    checkpoint_sequential(list(model.children()), 2, x, use_reentrant=False).sum().backward()
    for a, b in zip(ref, _grads(leaves)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_early_stop_ends_the_recompute_after_the_last_save():
    from engine.utils.checkpoint import set_checkpoint_early_stop
    x = engine.randn(3, requires_grad=True)

    def f(a):
        y = a.exp()            # saves its result: the last tensor the region saves
        return y + 1.0, y * 2.0   # add saves nothing; mul by a number saves nothing

    def recomputed_ops(early):
        with set_checkpoint_early_stop(early):
            out, twice = checkpoint(f, x, use_reentrant=False)
        with engine.record() as tr:
            (out + twice).sum().backward()
        return [e["op"] for e in tr.events if e["kind"] == "op" and e["phase"] == "recompute"]
    assert recomputed_ops(True) == ["exp"]
    assert recomputed_ops(False) == ["exp", "add", "mul"]


@pytest.mark.skipif(not engine.cuda.is_available(), reason="no GPU: CuPy sees no CUDA device")
def test_dropout_on_the_gpu_replays_the_device_generator():
    engine.manual_seed(0)
    W = engine.randn(16, 16, device="cuda", requires_grad=True)
    x = engine.randn(8, 16, device="cuda", requires_grad=True)

    def f(h):
        return F.dropout(engine.tanh(h @ W), 0.5)
    grads = []
    for how in (None, True, False):
        W.grad = x.grad = None
        engine.manual_seed(3)
        y = f(x) if how is None else checkpoint(f, x, use_reentrant=how)
        y.sum().backward()
        grads.append((W.grad.cpu().numpy(), x.grad.cpu().numpy()))
    for g in grads[1:]:
        np.testing.assert_array_equal(g[0], grads[0][0])
        np.testing.assert_array_equal(g[1], grads[0][1])


# ---- selective checkpointing ---------------------------------------------------------
def test_selective_checkpointing_saves_matmul_outputs_and_recomputes_pointwise():
    params = _params(2, 5)
    x = engine.randn(4, 5, requires_grad=True)

    def net(h):
        for W, b in params:
            h = engine.relu(F.linear(h, W, b))
        return h
    net(x).sum().backward()
    ref = _grads(_leaves(params, x))
    _zero(_leaves(params, x))
    seen = []

    def policy(ctx, op, *args, **kwargs):
        seen.append(op)
        return CheckpointPolicy.MUST_SAVE if op == "addmm" else CheckpointPolicy.PREFER_RECOMPUTE

    def ctx_fn():
        return create_selective_checkpoint_contexts(policy)
    with engine.record() as tr:
        y = checkpoint(net, x, use_reentrant=False, context_fn=ctx_fn)
        y.sum().backward()
    for a, b in zip(ref, _grads(_leaves(params, x))):
        np.testing.assert_array_equal(a, b)
    assert seen == ["addmm", "relu", "addmm", "relu"]   # views (t) are never cached, never asked
    ops = [e for e in tr.events if e["kind"] == "op"]
    fwd_addmm = [e["output"]["storage"] for e in ops if e["phase"] == "forward" and e["op"] == "addmm"]
    rec_addmm = [e["output"]["storage"] for e in ops if e["phase"] == "recompute" and e["op"] == "addmm"]
    rec_relu = [e["output"]["storage"] for e in ops if e["phase"] == "recompute" and e["op"] == "relu"]
    fwd_relu = [e["output"]["storage"] for e in ops if e["phase"] == "forward" and e["op"] == "relu"]
    assert rec_addmm == fwd_addmm                        # the cached outputs: same storages, no new bytes
    assert len(rec_relu) == 2 and not set(rec_relu) & set(fwd_relu)   # relu really ran again

    # the list form is the same policy
    _zero(_leaves(params, x))
    y = checkpoint(net, x, use_reentrant=False,
                   context_fn=lambda: create_selective_checkpoint_contexts(["addmm"]))
    y.sum().backward()
    for a, b in zip(ref, _grads(_leaves(params, x))):
        np.testing.assert_array_equal(a, b)


def test_selective_checkpointing_errors():
    with pytest.raises(TypeError, match="^policy_fn_or_list must be either a function or a list of ops.$"):
        create_selective_checkpoint_contexts(3)
    with pytest.raises(ValueError, match="Expected op in `op_list` to be an op name"):
        create_selective_checkpoint_contexts([3])
    x = engine.randn(3, requires_grad=True)
    y = checkpoint(lambda a: a.exp().sin(), x, use_reentrant=False,
                   context_fn=lambda: create_selective_checkpoint_contexts(["exp"]))
    y.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="^Trying to backward an extra time. You are only allowed to backward "
                       "once on any region computed under selective activation checkpoint.$"):
        y.sum().backward()


# ---- events ------------------------------------------------------------------------
KINDS = {"checkpoint_enter", "checkpoint_exit", "checkpoint_drop", "recompute_begin", "recompute_end", "op",
         "alloc", "free", "execute", "backward_begin", "backward_end"}


def test_exact_event_sequence_of_a_small_region():
    x = engine.randn(2, 3, requires_grad=True)

    def f(a):
        return a.sin().exp()
    with engine.record() as tr:
        y = checkpoint(f, x, use_reentrant=False)
        loss = y.sum()
        del y
        loss.backward()
    born = {e["storage"] for e in tr.events if e["kind"] == "alloc"}
    # a free of a storage made before recording (garbage collected late) is not this region's
    evs = [e for e in tr.events if e["kind"] in KINDS and not (e["kind"] == "free" and e["storage"] not in born)]
    names = {x._storage.id: "x"}     # storages by order of appearance: x, s0, s1, ...

    def st(i):
        return names.setdefault(i, f"s{len(names) - 1}")
    got = []
    for e in evs:
        item = (e["phase"], e["kind"])
        if e["kind"] == "op":
            item += (e["op"], e["region"])
        elif e["kind"] == "checkpoint_drop":
            item += (e["region"], e["name"], st(e["storage"]), e["bytes"], e["kept"])
        elif e["kind"] in ("alloc", "free"):
            item += (st(e["storage"]), e["bytes"])
        elif e["kind"] == "execute":
            item += (e["name"],)
        elif e["kind"] in ("checkpoint_enter", "checkpoint_exit", "recompute_begin", "recompute_end"):
            item += (e["region"],)
        got.append(item)
    R = evs[0]["region"]
    assert evs[0]["fn"] == "test_exact_event_sequence_of_a_small_region.<locals>.f"
    assert got == [
        ("forward", "checkpoint_enter", R),
        ("forward", "alloc", "s0", 24),                            # sin's output
        ("forward", "checkpoint_drop", R, "self", "x", 24, True),  # sin would keep x; x stays (region input)
        ("forward", "op", "sin", R),
        ("forward", "alloc", "s1", 24),                            # exp's output y
        ("forward", "checkpoint_drop", R, "result", "s1", 24, False),
        ("forward", "op", "exp", R),
        ("forward", "free", "s0", 24),                             # nothing keeps sin's output
        ("forward", "checkpoint_exit", R),
        ("forward", "alloc", "s2", 4),                             # loss
        ("forward", "op", "sum", None),
        ("forward", "free", "s1", 24),                             # del y: the region did not keep it
        ("forward", "alloc", "s3", 4),                             # the gradient seed
        ("forward", "backward_begin"),
        ("backward", "execute", "SumBackward0"),
        ("backward", "execute", "ExpBackward0"),                   # unpacking y starts the recompute
        ("recompute", "recompute_begin", R),
        ("recompute", "alloc", "s4", 24),
        ("recompute", "op", "sin", R),
        ("recompute", "alloc", "s5", 24),
        ("recompute", "op", "exp", R),
        ("recompute", "free", "s4", 24),                           # recomputed sin output: not needed
        ("recompute", "recompute_end", R),
        ("backward", "alloc", "s6", 24),                           # gradient for sin's output
        ("backward", "free", "s5", 24),                            # recomputed y: gone when its node releases it
        ("backward", "execute", "SinBackward0"),
        ("backward", "alloc", "s7", 24),                           # gradient for x (becomes x.grad)
        ("backward", "free", "s6", 24),
        ("backward", "backward_end"),
        ("forward", "free", "s3", 4),
    ]


# ---- memory: exact bytes -------------------------------------------------------------
def test_dropped_activations_are_freed_in_forward():
    x = engine.randn(16, 16, requires_grad=True)   # 1024 bytes

    def f(a):
        return a.tanh().tanh().tanh()              # each tanh saves its 1024-byte result
    gc.collect()
    base = M.memory_allocated()
    y = f(x)
    assert M.memory_allocated() - base == 3 * 1024   # three results, all kept for backward
    del y
    assert M.memory_allocated() == base
    y = checkpoint(f, x, use_reentrant=False)
    assert M.memory_allocated() - base == 1024       # only the output; x is the kept boundary input
    y.sum().backward()
    del y
    assert M.memory_allocated() - base == 1024       # x.grad; recomputed tensors are gone again


N_LAYERS, WIDTH, BATCH = 64, 8, 64


def _mlp():
    engine.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(N_LAYERS)])


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_sweep_exact_peak_bytes_and_recompute_ops(use_reentrant):
    """Peak bytes of one training step of a 64-layer MLP (Linear(8, 8) + ReLU blocks, batch 64,
    float32), for every segment count, against the figure computed from the shapes.

    Bytes: A = 64*8*4 = 2048 for one activation (batch x width), P = (8*8 + 8)*4 = 288 for one
    layer's weight and bias gradients. With s segments of k = n // s blocks, the last
    (not checkpointed) segment has L = n - (s-1)k blocks (PyTorch's checkpoint_sequential).

    What lives, beyond what the step holds anyway (parameters, their .grad from a first
    step, accumulated in place, the input x and its .grad -- measured as ``base``):
      * s-1 boundary activations: the inputs of segments 2..s (x, the first input, is in base);
      * forward, last block: the last segment's L-1 saved outputs, plus the block's Linear
        output z and its ReLU output, both alive while the ReLU runs: (s-1) + (L-1) + 2 = s + L;
      * backward of the last block's Linear (AddmmBackward0): the same count minus the ReLU
        output (released by its node), plus the incoming gradient dz and the outgoing dx
        (A each) and the layer's fresh dW and db (P), plus the 4-byte loss and the 4-byte
        seed ones_like(loss): (s + L)A + P + 8 -- the peak of the step, for every s;
      * during the recompute of segment j (the largest is j = s-1): the j-1 boundaries
        h_k..h_(j-1)k, the gradient arriving for the segment's output, the segment's k
        recomputed outputs and the last block's z: (j - 1) + 1 + k + 1 = (s + k)A + 8 for j = s-1,
        which never exceeds the backward figure above, since L >= k.
    The reentrant variant (s > 1) holds one activation more at the peak: the Function's
    backward keeps the rerun's output alive (its ``outputs``) during its nested backward, and
    the peak moves there: (s + L + 1)A + P + 8.
    """
    gc.collect()
    before = M.memory_allocated()
    model = _mlp()
    x = engine.randn(BATCH, WIDTH, requires_grad=True)   # the reentrant variant needs it
    A, P = BATCH * WIDTH * 4, (WIDTH * WIDTH + WIDTH) * 4
    n = N_LAYERS

    def step(segments):
        out = model(x) if segments is None else checkpoint_sequential(model, segments, x,
                                                                      use_reentrant=use_reentrant)
        loss = out.sum()
        del out
        loss.backward()

    step(None)                                             # gradients exist from now on
    with engine.record() as tr:
        step(None)
    ops_per_block = sum(1 for e in tr.events if e["kind"] == "op" and e["phase"] == "forward") - 1   # - sum
    assert ops_per_block % n == 0
    ops_per_block //= n                                     # t, addmm, relu
    base = M.memory_allocated()
    assert base - before == 2 * n * P + 2 * A               # parameters + gradients + x + x.grad
    peaks = {}
    for segments in (None, 1, 2, 4, 8, 16, 32, 64):
        M.reset_peak_memory_stats()
        with engine.record() as tr:
            step(segments)
        assert M.memory_allocated() == base                 # everything of the step is freed again
        peak = M.max_memory_allocated() - base
        s = segments or 1
        k = n // s
        L = n - (s - 1) * k
        extra = 1 if use_reentrant and s > 1 else 0
        assert peak == (s + L + extra) * A + P + 8, segments
        peaks[segments] = peak
        # the recompute phase: replay the trace's live bytes
        live, rec_peak, rec_ops, ckpt_fwd_ops = 0, None, 0, 0
        for e in tr.events:
            live += e["bytes"] if e["kind"] == "alloc" else -e["bytes"] if e["kind"] == "free" else 0
            if e["phase"] == "recompute" and e["kind"] in ("alloc", "free"):
                rec_peak = live if rec_peak is None else max(rec_peak, live)
            if e["kind"] == "op":
                rec_ops += e["phase"] == "recompute"
                ckpt_fwd_ops += e["phase"] == "forward" and e["region"] is not None
        if s == 1:
            assert rec_peak is None and rec_ops == 0
        else:
            assert rec_peak == (s + k) * A + 8
        # one extra forward of the checkpointed segments, op for op
        assert rec_ops == ckpt_fwd_ops == (s - 1) * k * ops_per_block
    best = min(peaks, key=lambda c: (peaks[c], c or 0))
    assert best == int(math.isqrt(n)) == 8
    assert peaks[8] * 3 < peaks[None]


def test_selective_cache_counts_as_activation_until_used():
    x = engine.randn(16, 16, requires_grad=True)    # 1024 bytes each
    gc.collect()
    base = M.memory_stats()
    act0 = base.get("allocated_bytes.activation.current", 0)
    y = checkpoint(lambda a: a.exp().sin(), x, use_reentrant=False,
                   context_fn=lambda: create_selective_checkpoint_contexts(["exp"]))
    st = M.memory_stats()
    # exp's output is cached (an activation); y is the region's output; x stays an "input"
    assert st.get("allocated_bytes.activation.current", 0) - act0 == 1024
    assert M.memory_allocated() - base["allocated_bytes.all.current"] == 2048      # the cache and y
    del y
    gc.collect()
    assert M.memory_stats().get("allocated_bytes.activation.current", 0) == act0


def test_graph_exec_group_recomputes_once_for_several_backwards():
    from engine.utils.checkpoint import GraphExecGroup
    x = engine.randn(3, requires_grad=True)
    calls = []

    def f(a):
        calls.append(1)
        return a.sin().exp(), a.cos().exp()
    y1, y2 = checkpoint(f, x, use_reentrant=False)
    with GraphExecGroup():
        y1.sum().backward()
        y2.sum().backward()
    assert len(calls) == 2                       # forward + one recompute for both backwards
    np.testing.assert_allclose(x.grad.detach().numpy(), (np.cos(x.detach().numpy()) * np.exp(np.sin(x.detach().numpy()))
                               - np.sin(x.detach().numpy()) * np.exp(np.cos(x.detach().numpy()))), rtol=1e-5)
    with pytest.raises(RuntimeError, match="^GraphExecGroup contexts cannot be nested. Already inside group"):
        with GraphExecGroup():
            with GraphExecGroup():
                pass
    from engine.utils.checkpoint import set_checkpoint_debug_enabled
    with pytest.raises(NotImplementedError):
        with set_checkpoint_debug_enabled(True):
            pass


def test_checkpoint_on_the_array_api_strict_namespace():
    """The GPU stand-in: checkpointing (RNG replay, fingerprints, selective cache) touches arrays
    only through the array API."""
    xps = pytest.importorskip("array_api_strict")
    from engine.backend.device import cpu_namespace

    def run():
        params = _params()
        x = engine.randn(5, 4, requires_grad=True)
        out = []
        for how in (None, True, False):
            g, _ = _run(params, x, how)
            out.append(g)
        _zero(_leaves(params, x))
        y = checkpoint(lambda h: engine.relu(F.linear(h, *params[0])), x, use_reentrant=False,
                       context_fn=lambda: create_selective_checkpoint_contexts(["addmm"]))
        y.sum().backward()
        out.append(_grads(_leaves(params, x)))
        return out, type(x._data).__module__
    ref, _ = run()
    with cpu_namespace(xps):
        got, module = run()
    assert module.startswith("array_api_strict")
    for a_run, b_run in zip(ref, got):
        for a, b in zip(a_run, b_run):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_identical_recompute_with_overflowing_fingerprint_is_not_called_nondeterministic(use_reentrant):
    # NOTE [ Checkpoint determinism check ] 5: exp(60)^2 overflows float32's sum of squares to inf
    x = engine.full((4,), 60.0, requires_grad=True)
    y = checkpoint(lambda t: (t.exp() * 2).sum(), x, use_reentrant=use_reentrant)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(np.float32(60.0)), rtol=1e-6)


def test_a_recompute_that_turns_inf_into_a_finite_value_is_caught():
    from engine.utils.checkpoint._common import values_match
    assert not values_match((1.0, float("inf"), 4), (1.0, 3.0, 4), engine.float32)
    assert values_match((float("nan"), float("nan"), 4), (float("nan"), float("nan"), 4), engine.float32)
    assert not values_match((float("inf"), float("inf"), 4), (float("-inf"), float("inf"), 4), engine.float32)
