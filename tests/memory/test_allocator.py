"""The caching allocator model, one rule of NOTE [ Caching allocator model ] at a time."""
import pytest

import engine
from engine.memory import allocator as _allocator
from engine import memory
from engine.memory.allocator import BASE, CachingAllocatorModel

MiB = 1 << 20


def blocks(m):
    """[(segment offset, size, allocated)] for every block of every segment, by address."""
    out = []
    for addr in sorted(m.segments):
        seg = m.segments[addr]
        out.append([(b.address - seg.address, b.size, b.allocated) for b in seg.blocks()])
    return out


# rule 1: rounding
@pytest.mark.parametrize("n,size", [(1, 512), (511, 512), (512, 512), (513, 1024), (4000, 4096),
                                    (MiB, MiB), (MiB + 1, MiB + 512)])
def test_round_size(n, size):
    assert _allocator.round_size(n) == size
    m = CachingAllocatorModel()
    assert m.malloc(1, n).size == size
    assert m.stats()["active_bytes.all.current"] == size
    assert m.stats()["requested_bytes.all.current"] == n


def test_zero_bytes_take_no_block():
    m = CachingAllocatorModel()
    assert m.malloc(1, 0) is None
    assert m.reserved == 0 and m.segments == {}
    m.free(1)  # freeing it is a no-op
    assert m.reserved == 0


# rule 2 and 3: pools and segment sizes
@pytest.mark.parametrize("n,pool,seg", [
    (4, "small", 2 * MiB), (MiB, "small", 2 * MiB),
    (MiB + 1, "large", 20 * MiB), (10 * MiB - 512, "large", 20 * MiB),
    (10 * MiB, "large", 10 * MiB), (10 * MiB + 1, "large", 12 * MiB), (33 * MiB, "large", 34 * MiB)])
def test_pool_and_segment_size(n, pool, seg):
    m = CachingAllocatorModel()
    b = m.malloc(1, n)
    assert b.segment.pool == pool
    assert b.segment.size == seg
    assert m.reserved == seg
    assert m.stats()[f"segment.{pool}_pool.current"] == 1
    assert b.address == BASE


def test_pools_never_share_segments():
    m = CachingAllocatorModel()
    m.malloc(1, 2 * MiB)          # large segment of 20 MiB, 18 MiB free after the split
    m.malloc(2, 1000)             # small request: does not use the large pool's free 18 MiB
    assert m.reserved == 22 * MiB
    assert [s.pool for s in m.segments.values()] == ["large", "small"]


# rule 4: best fit
def test_best_fit_takes_smallest_free_block_that_fits():
    m = CachingAllocatorModel()
    for owner, n in enumerate([4096, 512, 2048, 512, 1024, 512], start=1):
        m.malloc(owner, n)
    # free 4096 at offset 0, 2048 at offset 4608 and 1024 at offset 7168: three holes
    m.free(1)
    m.free(3)
    m.free(5)
    b = m.malloc(7, 1500)         # rounds to 1536: the 2048 hole is the best fit
    assert b.address - BASE == 4608
    b = m.malloc(8, 1000)         # 1024: exactly the 1024 hole, not the 4096 one
    assert b.address - BASE == 7168
    assert m.reserved == 2 * MiB


def test_best_fit_ties_go_to_lowest_address():
    m = CachingAllocatorModel()
    for owner in range(1, 5):
        m.malloc(owner, 512)
    m.free(3)
    m.free(1)
    assert m.malloc(9, 512).address == BASE


# rule 5: splitting
def test_small_pool_splits_any_remainder():
    m = CachingAllocatorModel()
    m.malloc(1, 512)
    assert blocks(m) == [[(0, 512, True), (512, 2 * MiB - 512, False)]]
    m.malloc(2, MiB)
    m.malloc(3, MiB - 1024)       # leaves exactly 512 bytes: still split (>= 512)
    assert blocks(m) == [[(0, 512, True), (512, MiB, True), (MiB + 512, MiB - 1024, True),
                          (2 * MiB - 512, 512, False)]]


def test_large_pool_keeps_remainder_only_above_1mib():
    m = CachingAllocatorModel()
    b = m.malloc(1, 19 * MiB)     # remainder exactly 1 MiB: not > 1 MiB, so no split
    assert b.size == 20 * MiB
    assert blocks(m) == [[(0, 20 * MiB, True)]]
    assert m.stats()["active_bytes.all.current"] == 20 * MiB
    assert m.stats()["requested_bytes.all.current"] == 19 * MiB
    m2 = CachingAllocatorModel()
    m2.malloc(1, 19 * MiB - 512)  # remainder 1 MiB + 512: split
    assert blocks(m2) == [[(0, 19 * MiB - 512, True), (19 * MiB - 512, MiB + 512, False)]]


def test_reused_large_block_split_again():
    m = CachingAllocatorModel()
    m.malloc(1, 8 * MiB)
    m.free(1)
    b = m.malloc(2, 2 * MiB)      # the free 20 MiB block is split: 2 MiB + 18 MiB free
    assert b.size == 2 * MiB
    assert blocks(m) == [[(0, 2 * MiB, True), (2 * MiB, 18 * MiB, False)]]
    assert m.stats()["inactive_split_bytes.large_pool.current"] == 18 * MiB


# rule 6: merging
def test_free_merges_both_neighbours():
    m = CachingAllocatorModel()
    for owner in (1, 2, 3):
        m.malloc(owner, 1024)
    m.free(1)
    m.free(3)                     # merges with the free tail of the segment
    assert blocks(m) == [[(0, 1024, False), (1024, 1024, True), (2048, 2 * MiB - 2048, False)]]
    assert m.stats()["inactive_split.all.current"] == 2
    m.free(2)                     # merges with both sides: one free block spans the segment
    assert blocks(m) == [[(0, 2 * MiB, False)]]
    assert m.stats()["inactive_split.all.current"] == 0
    assert m.free_blocks["small"] == [(2 * MiB, BASE, m.segments[BASE].first)]


# rule 7: caching and empty_cache
def test_segments_stay_reserved_until_empty_cache():
    m = CachingAllocatorModel()
    m.malloc(1, 100)
    m.malloc(2, 12 * MiB)         # large, exact 12 MiB segment
    m.malloc(3, 5 * MiB)          # large, 20 MiB segment
    assert m.reserved == 34 * MiB
    m.free(2)
    m.free(1)
    assert m.reserved == 34 * MiB and m.active == 5 * MiB
    assert m.empty_cache() == 14 * MiB      # the small segment and the 12 MiB one
    assert m.reserved == 20 * MiB
    assert m.reserved_peak == 34 * MiB
    assert m.num_device_alloc == 3 and m.num_device_free == 2
    m.free(3)
    assert m.empty_cache() == 20 * MiB
    assert m.reserved == 0 and m.segments == {} and m.free_blocks == {"small": [], "large": []}


def test_cached_block_is_reused_without_new_segment():
    m = CachingAllocatorModel()
    m.malloc(1, 3 * MiB)
    m.free(1)
    m.malloc(2, 3 * MiB)
    assert m.num_device_alloc == 1 and m.reserved == 20 * MiB


# rule 8: addresses
def test_addresses_are_never_reused_after_release():
    m = CachingAllocatorModel()
    m.malloc(1, 100)
    m.free(1)
    m.empty_cache()
    assert m.malloc(2, 100).address == BASE + 2 * MiB


def test_snapshot_structure():
    m = CachingAllocatorModel()
    m.malloc(7, 1000)
    assert m.snapshot(0, frames={7: [{"filename": "a.py", "line": 3, "name": "f"}]}) == [{
        "device": 0, "address": BASE, "total_size": 2 * MiB, "allocated_size": 1024, "active_size": 1024,
        "requested_size": 1000, "stream": 0, "segment_type": "small", "segment_pool_id": [0, 0],
        "is_expandable": False, "frames": [],
        "blocks": [{"address": BASE, "size": 1024, "requested_size": 1000, "state": "active_allocated",
                    "frames": [{"filename": "a.py", "line": 3, "name": "f"}]},
                   {"address": BASE + 1024, "size": 2 * MiB - 1024, "requested_size": 0, "state": "inactive",
                    "frames": []}]}]


# the model behind engine.memory, fed by real storages
def test_engine_storages_feed_the_model():
    dev = "cpu"
    engine.memory.empty_cache(dev)
    r0 = memory.memory_reserved(dev)
    s0 = memory.memory_stats(dev)
    x = engine.zeros(3 * MiB // 4)            # 3 MiB of float32: large pool
    st = memory.memory_stats(dev)
    assert st["requested_bytes.all.current"] - s0["requested_bytes.all.current"] == 3 * MiB
    assert st["active_bytes.all.current"] - s0["active_bytes.all.current"] == 3 * MiB
    assert memory.memory_reserved(dev) >= r0
    del x
    after = memory.memory_stats(dev)
    assert after["active_bytes.all.current"] == s0["active_bytes.all.current"]
    reserved_before_empty = memory.memory_reserved(dev)
    memory.empty_cache(dev)
    assert memory.memory_reserved(dev) <= reserved_before_empty
    assert memory.max_memory_reserved(dev) >= reserved_before_empty
    # every live storage has exactly one block
    model = _allocator.hook.model(dev)
    assert memory.memory_stats(dev)["allocation.all.current"] == len(
        [o for o in model.by_owner]) + _zero_byte_storages()


def _zero_byte_storages():
    import gc
    from engine.core.storage import Storage
    return sum(1 for o in gc.get_objects() if isinstance(o, Storage) and o.nbytes == 0
               and str(o.device) == "cpu")


# NOTE [ Deferred allocator model ]
def test_deferred_log_gives_the_figures_of_a_model_fed_at_once(monkeypatch):
    hook = _allocator.AllocatorHook()
    monkeypatch.setattr(hook, "LOG_LIMIT", 7)
    eager = CachingAllocatorModel("cpu")

    class St:
        def __init__(self, i, n):
            self.id, self.nbytes, self.device = i, n, engine.device("cpu")

    sizes = [513, 3 * MiB, 100, 2 * MiB + 1, 4096, 700, 12 * MiB, 1]
    live = []
    for i in range(40):
        st = St(i, sizes[i % len(sizes)])
        hook.alloc(st)
        eager.malloc(st.id, st.nbytes)
        live.append(st)
        if i % 3 == 2:
            gone = live.pop(1)
            hook.free(gone)
            eager.free(gone.id)
        assert len(hook._log) < 7                      # rule 2: bounded
    assert hook._log                                   # something is still waiting ...
    assert hook.reserved("cpu") == eager.reserved      # ... and reading replays it first
    assert not hook._log
    assert hook.model("cpu").stats() == eager.stats()
    assert hook.model("cpu").snapshot() == eager.snapshot()
    assert hook.reserved("cuda:0") == 0


def test_free_arriving_during_a_replay_is_replayed_by_the_same_flush():
    hook = _allocator.AllocatorHook()
    dev = engine.device("cpu")

    class St:
        def __init__(self, i, n):
            self.id, self.nbytes, self.device = i, n, dev

    a, b = St(1, 4096), St(2, 4096)
    hook.alloc(a)
    hook.alloc(b)
    model = hook.model("cpu")
    real_malloc = model.malloc

    def malloc_then_gc_frees(owner, n):      # the garbage collector runs inside a replay
        out = real_malloc(owner, n)
        hook.free(a)
        return out

    model.malloc = malloc_then_gc_frees
    hook.alloc(St(3, 512))
    hook.flush()
    assert not hook._log
    assert sorted(model.by_owner) == [2, 3]


def test_assigning_models_replays_into_the_old_ones_first():
    hook = _allocator.AllocatorHook()

    class St:
        id, nbytes, device = 5, 1024, engine.device("cpu")

    old = hook.models
    hook.alloc(St())
    hook.models = {}
    assert old["cpu"].by_owner.keys() == {5} and hook.models == {}


def test_threads_allocating_while_another_reads_lose_no_log_entry():
    # NOTE [ Deferred allocator model ] 5: appends and replays share one lock
    import threading

    dev = "cpu"
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            memory.memory_reserved(dev)
            memory.memory_snapshot(dev)

    def worker(out):
        for _ in range(300):
            out.append(engine.zeros(257))      # 1,028 B: one small-pool block each
            if len(out) > 5:
                out.pop(0)

    keep = [[] for _ in range(3)]
    r = threading.Thread(target=reader)
    ws = [threading.Thread(target=worker, args=(k,)) for k in keep]
    r.start()
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    stop.set()
    r.join()
    model = _allocator.hook.model(dev)
    live = {t._storage.id for k in keep for t in k}
    assert live <= set(model.by_owner)           # every live storage has its block
    del keep
    assert not (live & set(_allocator.hook.model(dev).by_owner))   # and every freed one gave it back
