"""Exact memory accounting: categories, views, lifetimes, the MLP step, replay, engine.memory API.

Sizes are chosen small; every expected figure is computed here from shapes.
"""
import gc

import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from engine import memory
from engine.trace import record

N, D, H, C = 16, 4, 8, 3     # batch, input features, hidden, classes
F32 = 4


@pytest.fixture(autouse=True)
def _no_gc():
    """Cyclic garbage from other tests must not be freed in the middle of a measurement."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def cat(name):
    return memory.memory_stats("cpu").get(f"allocated_bytes.{name}.current", 0)


def mlp():
    engine.manual_seed(0)
    model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, C))
    x = engine.randn(N, D)
    y = engine.randint(0, C, (N,))
    return model, x, y


PARAMS = F32 * (H * D + H + H * H + H + C * H + C)          # 556 bytes
INPUTS = F32 * N * D + 8 * N                                # x float32, y int64


# ---- storages, views, categories ------------------------------------------------
def test_views_share_their_base_storage():
    a0 = memory.memory_allocated()
    x = engine.zeros(4, 6)
    assert memory.memory_allocated() - a0 == 96
    views = [x.view(24), x.T, x[1:3], x.reshape(2, 12), x.unsqueeze(0), x.transpose(0, 1)]
    assert all(v._storage is x._storage for v in views)
    assert memory.memory_allocated() - a0 == 96
    del x
    assert memory.memory_allocated() - a0 == 96        # the views keep the storage alive
    del views
    assert memory.memory_allocated() - a0 == 0


def test_a_view_of_a_saved_tensor_is_not_counted_twice():
    a = engine.randn(5, 4, requires_grad=True)
    b = engine.randn(20, requires_grad=True)
    act0, all0 = cat("activation"), memory.memory_allocated()
    h = a.exp()                      # exp saves its result h (80 bytes)
    v = h.view(20)                   # a view: no new bytes
    w = v * b                        # mul saves v (h's storage again) and b (an input)
    st = h._storage
    assert st.saved == 2
    assert cat("activation") - act0 == 80
    assert memory.memory_allocated() - all0 == 80 + 80   # h, and w
    w.sum().backward()
    assert cat("activation") - act0 == 0
    assert st.saved == 0
    del h, v, w


def test_categories_move_and_every_move_is_an_event():
    with record() as tr:
        p = nn.Parameter(engine.zeros(3))            # parameter
        out = (p * 2).exp()                          # exp result saved: activation
        out.sum().backward()
    moves = [(e["old"], e["new"], e["bytes"]) for e in tr.of_kind("category")]
    assert ("other", "activation", 12) in moves and ("activation", "other", 12) in moves
    assert p.grad._storage.category == "gradient"
    assert p._storage.category == "parameter"


# ---- the MLP training step -------------------------------------------------------
def _persistent_setup():
    model, x, y = mlp()
    opt = engine.optim.SGD(model.parameters(), lr=0.1)
    F.cross_entropy(model(x), y).backward()           # warm-up: gradients now exist
    opt.step()
    opt.zero_grad(set_to_none=False)                   # and stay, zeroed in place
    return model, x, y, opt


def test_mlp_step_peak_is_exact():
    """What PyTorch counts for one step, and the same figure to the byte here.

    Persistent for the whole step: parameters, their gradients (zeroed in place, never
    freed), the inputs x and y. Forward saves (PyTorch 2.13 and glassgrad alike):
    addmm keeps its input and the transposed weight (views of x, h1, h2 and of the
    parameters: no new bytes), ReLU keeps its output h1/h2 (N*H each), log_softmax its
    output (N*C), nll_loss that output again, the target y (an input) and a 0-d
    total_weight (4 bytes). The loss is 4 more bytes.
    In backward, gradients in flight are allocated too. The peak is while the second
    ReLU's backward runs: loss + implicit seed (4 + 4, the seed lives until backward
    returns), h1 and h2 still saved, the incoming gradient and the produced one (N*H
    each): 8 + 4*N*H*4 = 2056 bytes above the persistent set. It beats the end of
    forward (1224) and the other backward moments because N*H > N*C + H*C + C and
    N > H + 1. PyTorch 2.13's CPU profiler (profile_memory=True) reports the same
    2056-byte rise for this exact step.
    """
    base = memory.memory_allocated()
    model, x, y, opt = _persistent_setup()
    persistent = memory.memory_allocated() - base
    assert persistent == PARAMS + PARAMS + INPUTS
    act0 = cat("activation")

    memory.reset_peak_memory_stats()
    loss = F.cross_entropy(model(x), y)
    saved = F32 * (N * H + N * H + N * C) + 4
    assert cat("activation") - act0 == saved                     # 1220 bytes
    assert memory.memory_allocated() - base == persistent + saved + 4
    loss.backward()
    assert cat("activation") - act0 == 0                         # all saved tensors freed
    opt.step()
    opt.zero_grad(set_to_none=False)
    del loss
    assert memory.memory_allocated() - base == persistent
    assert memory.max_memory_allocated() - base == persistent + 8 + 4 * N * H * F32


def _post_hooks(root, fn):
    seen, stack = set(), [root]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        n.register_hook(lambda gi, go, n=n: fn(n))
        stack.extend(m for m, _ in n.next_functions)


def test_saved_tensors_are_freed_node_by_node_and_replay_matches():
    model, x, y, opt = _persistent_setup()
    act0 = cat("activation")
    seen = []
    with record() as tr:
        loss = F.cross_entropy(model(x), y)
        _post_hooks(loss.grad_fn, lambda n: seen.append(
            (n.name(), cat("activation") - act0, memory.memory_allocated(), len(tr.events))))
        loss.backward()
    # a node's saved tensors are released right after it ran (its post-hook still sees them)
    nh, nc = F32 * N * H, F32 * N * C
    assert [(name, act) for name, act, _, _ in seen] == [
        ("NllLossBackward0", 2 * nh + nc + 4), ("LogSoftmaxBackward0", 2 * nh + nc),
        ("AddmmBackward0", 2 * nh), ("TBackward0", 2 * nh), ("ReluBackward0", 2 * nh),
        ("AddmmBackward0", nh), ("TBackward0", nh), ("ReluBackward0", nh),
        ("AddmmBackward0", 0), ("TBackward0", 0)]
    # replaying alloc/free events alone gives memory_allocated at every hook, exactly
    rows = tr.replay_memory()
    for name, _, allocated, next_seq in seen:
        live = [r[1]["cpu"] for r in rows if r[0] < next_seq][-1]
        assert live == allocated, name
    assert rows[-1][1]["cpu"] == memory.memory_allocated()
    del loss


def test_replay_reproduces_memory_allocated_at_every_event():
    model, x, y, opt = _persistent_setup()
    truth = []

    class Probe:          # sees every alloc/free right after the counters moved
        def alloc(self, st):
            truth.append(memory.memory_allocated())
        free = alloc
    from engine.memory import state as _memstate
    _memstate.allocator_hooks.append(Probe())
    try:
        with record() as tr:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
            del loss
    finally:
        _memstate.allocator_hooks.pop()
    rows = [r for r in tr.replay_memory() if tr[r[0]]["kind"] != "category"]
    assert [r[1]["cpu"] for r in rows] == truth
    assert len(truth) > 40


def test_thousand_steps_do_not_leak():
    base = memory.memory_allocated()
    model, x, y = mlp()
    opt = engine.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(1000):
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    del loss
    assert memory.memory_allocated() - base == PARAMS + PARAMS + PARAMS + INPUTS   # momentum = params
    assert cat("optimizer") >= PARAMS
    st = memory.memory_stats()
    assert st["allocated_bytes.all.current"] == memory.memory_allocated()


# ---- engine.memory API ------------------------------------------------------------
def test_memory_stats_keys_and_snapshot_agree():
    x = engine.zeros(1000)
    st = memory.memory_stats("cpu")
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
              "reserved_bytes.all.peak", "active_bytes.all.current", "requested_bytes.all.current",
              "segment.all.current", "allocation.all.current", "allocated_bytes.input.current",
              "inactive_split_bytes.all.current", "num_alloc_retries"):
        assert k in st, k
    assert st["allocated_bytes.all.current"] == memory.memory_allocated("cpu") == memory.memory_allocated()
    assert st["requested_bytes.all.current"] == st["allocated_bytes.all.current"]
    assert st["reserved_bytes.all.current"] == memory.memory_reserved("cpu")
    snap = memory.memory_snapshot("cpu")
    assert sum(s["total_size"] for s in snap) == memory.memory_reserved()
    blocks = [b for s in snap for b in s["blocks"]]
    assert sum(b["requested_size"] for b in blocks if b["state"] == "active_allocated") == \
        st["requested_bytes.all.current"]
    assert sum(b["size"] for b in blocks if b["state"] == "active_allocated") == st["active_bytes.all.current"]
    for s in snap:
        assert sum(b["size"] for b in s["blocks"]) == s["total_size"]
        assert s["segment_type"] in ("small", "large")
    others = [seg for key in sorted(memory.allocator.hook.models) if key != "cpu"
              for seg in memory.memory_snapshot(key)]
    assert sorted(map(repr, memory.memory_snapshot())) == sorted(map(repr, snap + others))  # every device
    del x


def test_running_totals():
    memory.reset_accumulated_memory_stats()
    a = engine.zeros(10)
    b = engine.zeros(5)
    del a
    st = memory.memory_stats()
    assert (st["allocated_bytes.all.allocated"], st["allocated_bytes.all.freed"]) == (60, 40)
    assert (st["allocation.all.allocated"], st["allocation.all.freed"]) == (2, 1)
    assert st["allocation.all.peak"] >= st["allocation.all.current"]
    memory.reset_accumulated_memory_stats()
    assert memory.memory_stats()["allocation.all.allocated"] == 0
    del b


def test_memory_summary_is_a_table():
    text = memory.memory_summary()
    assert "glassgrad memory summary, device cpu" in text
    for label in ("Allocated memory (exact)", "Reserved memory (segments)", "Live storages", "Current", "Peak"):
        assert label in text
    assert "  input" in text and "  input" not in memory.memory_summary(abbreviated=True)


def test_reset_peak_and_empty_cache():
    x = engine.zeros(3 << 20)                     # 12 MiB: its own large segment
    del x
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == memory.memory_allocated()
    assert memory.max_memory_reserved() == memory.memory_reserved()
    with record() as tr:
        memory.empty_cache()
    (e,) = tr.of_kind("empty_cache")
    assert e["device"] == "cpu" and e["bytes"] >= 12 << 20
    assert memory.memory_reserved() <= memory.max_memory_reserved() - (12 << 20)


def test_cuda_functions_name_the_cuda_device():
    assert engine.cuda.memory_allocated() == memory.memory_allocated("cuda:0")
    assert engine.cuda.memory_reserved() == memory.memory_reserved("cuda:0")
    assert engine.cuda.max_memory_reserved() == memory.max_memory_reserved("cuda:0")
    assert "device cuda:0" in engine.cuda.memory_summary()


@pytest.mark.skipif(not engine.cuda.is_available(), reason="no GPU: CuPy sees no CUDA device")
def test_cupy_pool_figures_beside_the_model():
    import cupy
    x = engine.zeros(1 << 20, device="cuda")
    st = memory.memory_stats("cuda")
    pool = cupy.get_default_memory_pool()
    assert st["cupy.used_bytes"] == pool.used_bytes() >= 4 << 20
    assert st["cupy.total_bytes"] == pool.total_bytes()
    assert st["allocated_bytes.all.current"] >= 4 << 20
    del x
