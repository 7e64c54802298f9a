"""NOTE [ Fast replay ] and NOTE [ Deferred counters ]: the accounting's one log, replayed in
chunks, leaves exactly what feeding every call at once leaves.

The allocator side compares ``allocator.replay`` with ``CachingAllocatorModel.malloc``/``free``
called one by one (every figure, ``stats()``, ``snapshot()``, the free-block index and every
block's fields). The counter side compares ``engine.memory.state`` with counters computed here
directly from the same sequence of allocs, frees and category moves.
"""
import random

import pytest

from engine.memory import allocator as _allocator
from engine.memory import state
from engine.memory.allocator import CachingAllocatorModel

MiB = 1 << 20
CATS = ("parameter", "gradient", "other", "optimizer", "input")


def blocks(m) -> list:
    """Every block's fields, segment by segment in address order, and the links between them."""
    out = []
    for addr in sorted(m.segments):
        seg = m.segments[addr]
        prev = None
        for b in seg.blocks():
            assert b.prev is prev and b.segment is seg
            out.append((b.address, b.size, b.requested, b.allocated, b.owner, seg.pool))
            prev = b
    return out


def everything(m) -> tuple:
    index = {pool: [(s, a, b.address, b.size, b.allocated) for s, a, b in lst] for pool, lst in m.free_blocks.items()}
    owners = {o: (b.address, b.size, b.requested, b.allocated) for o, b in m.by_owner.items()}
    return (m.reserved, m.reserved_peak, m.active, m.active_peak, m.requested, m.next_address,
            m.num_device_alloc, m.num_device_free, m.stats(), m.snapshot(), blocks(m), index, owners)


def training_like(seed: int, steps: int, devices=("cpu",)) -> list:
    """(device, op, owner, nbytes): steps that make and drop the same few sizes again and again
    (lifetimes nested, overlapping, and now and then kept), with a rare empty_cache or reset_peak."""
    rng = random.Random(seed)
    sizes = [rng.choice([4, 64, 128, 512, 2048, 4096, 65536, 262144, MiB - 100, MiB + 1, 3 * MiB, 12 * MiB])
             for _ in range(6)]
    ops, live, owner = [], {d: [] for d in devices}, 1
    for _ in range(steps):
        dev = rng.choice(devices)
        made = []
        for n in sizes:                           # forward: every size once, some freed at once
            ops.append((dev, "malloc", owner, n if rng.random() < 0.9 else rng.choice([0, 1, 513])))
            made.append(owner)
            owner += 1
            if rng.random() < 0.3:
                ops.append((dev, "free", made.pop(), None))
        while made:                               # backward: mostly last made, first freed
            k = len(made) - 1 if rng.random() < 0.7 else rng.randrange(len(made))
            if rng.random() < 0.05:
                live[dev].append(made.pop(k))     # kept across steps
            else:
                ops.append((dev, "free", made.pop(k), None))
        if live[dev] and rng.random() < 0.2:
            ops.append((dev, "free", live[dev].pop(0), None))
        r = rng.random()
        if r < 0.03:
            ops.append((dev, "empty_cache", None, None))
        elif r < 0.05:
            ops.append((dev, "reset_peak", None, None))
    return ops


def random_sizes(seed: int, steps: int, devices=("cpu",)) -> list:
    """Random sizes around every boundary of NOTE [ Caching allocator model ], random lifetimes,
    frees of owners never seen, and a free on a device never seen."""
    rng = random.Random(seed)
    edges = [0, 1, 511, 512, 513, 4096, MiB - 512, MiB - 1, MiB, MiB + 1, MiB + 512, 2 * MiB + 1,
             10 * MiB - 512, 10 * MiB, 10 * MiB + 1, 19 * MiB + 1, 20 * MiB, 33 * MiB + 7]
    ops, live, owner = [("cuda:7", "free", 10 ** 9, None)], [], 1
    for _ in range(steps):
        r, dev = rng.random(), rng.choice(devices)
        if r < 0.01:
            ops.append((dev, "empty_cache", None, None))
        elif live and (r < 0.45 or len(live) > 50):
            ops.append(live.pop(rng.randrange(len(live))))
        elif r < 0.47:
            ops.append((dev, "free", 10 ** 9 + owner, None))
            owner += 1
        else:
            n = rng.choice(edges) if rng.random() < 0.4 else rng.randint(1, 3 * MiB)
            ops.append((dev, "malloc", owner, n))
            live.append((dev, "free", owner, None))
            owner += 1
    return ops


def run_both(ops, chunk: int):
    """Feed ``ops`` to models call by call and, as log entries, to ``replay`` in chunks of ``chunk``
    (a read, as empty_cache or reset_peak, replays what is waiting first)."""
    eager, fast, log = {}, {}, []

    def flush():
        for i in range(0, len(log), chunk):
            _allocator.replay(fast, log[i:i + chunk])
        log.clear()
    for dev, op, owner, n in ops:
        if op == "malloc":
            eager.setdefault(dev, CachingAllocatorModel(dev)).malloc(owner, n)
            log.append((dev, owner, n, "other"))
        elif op == "free":
            if dev in eager:
                eager[dev].free(owner)
            log.append((dev, owner, ~(n or 512), "other"))
        else:
            flush()
            for d in (dev,) if dev in eager else ():
                getattr(eager[d], op)()
                getattr(fast[d], op)()
        if op != "malloc" and random.Random(owner).random() < 0.02:
            log.append((dev, None, 0, ("other", "activation", 64)))      # a category move: no model change
    flush()
    return eager, fast


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_replay_leaves_what_malloc_and_free_leave_on_training_like_logs(seed, chunk):
    eager, fast = run_both(training_like(seed, 150, ("cpu", "cuda:0") if seed % 2 else ("cpu",)), chunk)
    assert sorted(eager) == sorted(fast)
    for dev in eager:
        assert everything(fast[dev]) == everything(eager[dev]), dev


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("chunk", [5, 4096])
def test_replay_leaves_what_malloc_and_free_leave_on_random_sizes(seed, chunk):
    eager, fast = run_both(random_sizes(seed, 1200, ("cuda:0", "cuda:1")), chunk)
    assert sorted(eager) == sorted(fast) and "cuda:7" not in fast     # a free never makes a model
    for dev in eager:
        assert everything(fast[dev]) == everything(eager[dev]), dev


def test_a_model_with_a_replaced_free_gets_its_entries_through_its_methods():
    # NOTE [ Fast replay ] 5
    calls = []

    class Counting(CachingAllocatorModel):
        def free(self, owner):
            calls.append(owner)
            super().free(owner)
    fast, eager = {"cpu": Counting("cpu")}, CachingAllocatorModel("cpu")
    log = [("cpu", 1, 700, "other"), ("cpu", 2, 3 * MiB, "other"), ("cpu", 1, ~700, "other"),
           ("cpu", None, 0, ("other", "activation", 9)), ("cpu", 3, 100, "other")]
    _allocator.replay(fast, log)
    for _, owner, n, _ in log:
        if owner is not None:
            eager.free(owner) if n < 0 else eager.malloc(owner, n)
    assert calls == [1]
    assert everything(fast["cpu"]) == everything(eager)


# ---- the counters, through on_alloc / on_free / on_move ------------------------------------

class _Stand:
    """A stand-in storage with the fields the accounting reads."""

    def __init__(self, sid, nbytes, device, base):
        self.id, self.nbytes, self.device, self.base, self.saved = sid, nbytes, device, base, 0


class _Reference:
    """The counters of engine.memory.state, computed call by call from their definitions."""

    def __init__(self):
        self.dev = {}

    def d(self, key):
        return self.dev.setdefault(key, {"allocated": 0, "peak": 0, "count": 0, "count_peak": 0,
                                         "bytes_allocated": 0, "bytes_freed": 0, "n_allocated": 0,
                                         "n_freed": 0, "by_cat": {}, "peak_by_cat": {}})

    def _cat(self, d, cat, delta):
        d["by_cat"][cat] = d["by_cat"].get(cat, 0) + delta
        if d["by_cat"][cat] > d["peak_by_cat"].get(cat, 0):     # a category's peak appears once it is > 0
            d["peak_by_cat"][cat] = d["by_cat"][cat]

    def alloc(self, key, n, cat):
        d = self.d(key)
        d["allocated"] += n
        d["count"] += 1
        d["bytes_allocated"] += n
        d["n_allocated"] += 1
        d["peak"] = max(d["peak"], d["allocated"])
        d["count_peak"] = max(d["count_peak"], d["count"])
        self._cat(d, cat, n)

    def free(self, key, n, cat):
        d = self.d(key)
        d["allocated"] -= n
        d["count"] -= 1
        d["bytes_freed"] += n
        d["n_freed"] += 1
        d["by_cat"][cat] = d["by_cat"].get(cat, 0) - n

    def move(self, key, n, old, new):
        d = self.d(key)
        d["by_cat"][old] = d["by_cat"].get(old, 0) - n
        self._cat(d, new, n)


@pytest.fixture
def fresh_accounting(monkeypatch):
    state._flush_both()
    monkeypatch.setattr(state, "_devices", {})
    monkeypatch.setattr(_allocator.hook, "models", {})
    yield
    state._flush_both()        # this test's entries go to its own counters and models


@pytest.mark.parametrize("limit", [1, 3, 64, 4096])
def test_counters_and_model_from_one_log_match_call_by_call(fresh_accounting, monkeypatch, limit):
    from engine.backend.device import CPU, device
    monkeypatch.setattr(state, "PENDING_LIMIT", limit)
    rng = random.Random(limit)
    devices = {"cpu": CPU, "cuda:0": device("cuda", 0)}
    ref, models = _Reference(), {}
    live, sid = [], 10 ** 6
    for step in range(1500):
        r = rng.random()
        if live and (r < 0.4 or len(live) > 40):
            st = live.pop(rng.randrange(len(live)))
            cat = "activation" if st.saved and st.base == "other" else st.base
            ref.free(str(st.device) if st.device is not CPU else "cpu", st.nbytes, cat)
            models[st.key].free(st.id)
            state.on_free(st)
        elif live and r < 0.55:
            st = rng.choice(live)
            if st.base == "other":
                old = "activation" if st.saved else "other"
                st.saved = 0 if st.saved else 1
                new = "activation" if st.saved else "other"
                ref.move(st.key, st.nbytes, old, new)
                state.on_move(st, old, new)
        else:
            key = rng.choice(sorted(devices))
            sid += 1
            st = _Stand(sid, rng.choice([0, 4, 100, 512, 4096, 70000, MiB + 3, 3 * MiB]), devices[key],
                        rng.choice(CATS))
            st.key = key
            ref.alloc(key, st.nbytes, st.base)
            models.setdefault(key, CachingAllocatorModel(key)).malloc(st.id, st.nbytes)
            state.on_alloc(st)
            live.append(st)
        assert len(state._pending) < max(limit, 1) + 1
        if step % 250 == 0:
            assert {k: state.stats(k) for k in ref.dev} == ref.dev
            assert {k: everything(_allocator.hook.model(k)) for k in models} == \
                {k: everything(m) for k, m in models.items()}
    assert {k: state.stats(k) for k in ref.dev} == ref.dev
    assert {k: everything(_allocator.hook.model(k)) for k in models} == {k: everything(m) for k, m in models.items()}


def test_without_the_default_hook_the_counters_count_and_the_models_see_nothing(fresh_accounting, monkeypatch):
    # NOTE [ Deferred counters ] 3
    from engine.backend.device import CPU
    seen = []

    class Probe:
        def alloc(self, st):
            seen.append(("alloc", st.id))

        def free(self, st):
            seen.append(("free", st.id))
    monkeypatch.setattr(state, "allocator_hooks", [Probe()])
    a, b = _Stand(1, 1000, CPU, "other"), _Stand(2, 24, CPU, "parameter")
    state.on_alloc(a)
    state.on_alloc(b)
    a.saved = 1                                  # a saved tensor holds it now
    state.on_move(a, "other", "activation")
    state.on_free(a)
    s = state.stats("cpu")
    assert (s["allocated"], s["peak"], s["count"], s["count_peak"]) == (24, 1024, 1, 2)
    assert s["by_cat"] == {"other": 0, "parameter": 24, "activation": 0}
    assert s["peak_by_cat"] == {"other": 1000, "parameter": 24, "activation": 1000}
    assert seen == [("alloc", 1), ("alloc", 2), ("free", 1)]
    assert _allocator.hook.models == {}


def test_a_free_during_a_replay_waits_for_that_replay(fresh_accounting, monkeypatch):
    # NOTE [ Deferred counters ] 4: the garbage collector frees a storage while a replay allocates;
    # the free's own replay (PENDING_LIMIT 1) returns at once and the running one applies it
    from engine.backend.device import CPU
    a, b = _Stand(1, 4096, CPU, "other"), _Stand(2, 100, CPU, "input")
    late = []

    class FreesWhileAllocating(CachingAllocatorModel):
        def malloc(self, owner, nbytes):
            out = super().malloc(owner, nbytes)
            if owner == 2 and not late:
                late.append(a)
                state.on_free(a)                  # as Storage.__del__ would, mid-replay
            return out
    state.on_alloc(a)
    _allocator.hook.models = {"cpu": FreesWhileAllocating("cpu")}   # replays a into the old models first
    state.on_free(a)
    state.on_alloc(a)
    monkeypatch.setattr(state, "PENDING_LIMIT", 1)
    state.on_alloc(b)
    assert not state._pending and late == [a]
    m = _allocator.hook.model("cpu")
    assert sorted(m.by_owner) == [2] and m.active == 512 and m.active_peak == 4096 + 512
    s = state.stats("cpu")
    assert (s["allocated"], s["peak"], s["count"], s["n_allocated"], s["n_freed"]) == (100, 4196, 1, 3, 2)
    assert s["by_cat"] == {"other": 0, "input": 100}
