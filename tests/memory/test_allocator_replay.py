"""The caching allocator model against a plain reference written from NOTE [ Caching allocator model ].

The reference keeps each segment as a list of blocks in address order and finds the best fit by
scanning every free block, so it shares no code or data structure with ``CachingAllocatorModel``.
Long random sequences of mallocs, frees, ``empty_cache`` and ``reset_peak`` must give the same
counters, ``stats()`` and ``snapshot()`` after every step, whether fed call by call or through the
hook's deferred log (NOTE [ Deferred allocator model ]).
"""
import random

import pytest

from engine.memory import allocator as _allocator
from engine.memory.allocator import BASE, CachingAllocatorModel

MiB = 1 << 20


class RefSegment:
    def __init__(self, address, size, pool):
        self.address, self.size, self.pool = address, size, pool
        self.blocks = [[address, size, None, 0]]     # [address, size, owner or None when free, requested]


class RefAllocator:
    """Rules 1-8 of NOTE [ Caching allocator model ], as directly as they read."""

    def __init__(self):
        self.segments: list = []          # in address order (rule 8: addresses only grow)
        self.next_address = BASE
        self.reserved = self.reserved_peak = 0
        self.active = self.active_peak = 0
        self.requested = 0
        self.num_device_alloc = self.num_device_free = 0

    def malloc(self, owner, n):
        if n <= 0:
            return
        size = max(512, -(-n // 512) * 512)                          # rule 1
        pool = "small" if size <= MiB else "large"                   # rule 2
        fits = [(b[1], b[0], seg, i) for seg in self.segments if seg.pool == pool
                for i, b in enumerate(seg.blocks) if b[2] is None and b[1] >= size]
        if fits:
            _, _, seg, i = min(fits, key=lambda f: (f[0], f[1]))     # rule 4: smallest, then lowest address
        else:                                                        # rule 3
            if pool == "small":
                seg_size = 2 * MiB
            elif size < 10 * MiB:
                seg_size = 20 * MiB
            else:
                seg_size = -(-size // (2 * MiB)) * (2 * MiB)
            seg = RefSegment(self.next_address, seg_size, pool)
            self.next_address += seg_size
            self.segments.append(seg)
            self.reserved += seg_size
            self.reserved_peak = max(self.reserved_peak, self.reserved)
            self.num_device_alloc += 1
            i = 0
        block = seg.blocks[i]
        rest = block[1] - size
        if (rest >= 512) if pool == "small" else (rest > MiB):       # rule 5
            seg.blocks.insert(i + 1, [block[0] + size, rest, None, 0])
            block[1] = size
        block[2], block[3] = owner, n
        self.active += block[1]
        self.active_peak = max(self.active_peak, self.active)
        self.requested += n

    def free(self, owner):
        for seg in self.segments:
            for i, b in enumerate(seg.blocks):
                if b[2] == owner:
                    self.active -= b[1]
                    self.requested -= b[3]
                    b[2], b[3] = None, 0
                    self._merge(seg)                                 # rule 6
                    return

    @staticmethod
    def _merge(seg):
        merged = []
        for b in seg.blocks:
            if merged and merged[-1][2] is None and b[2] is None:
                merged[-1][1] += b[1]
            else:
                merged.append(b)
        seg.blocks = merged

    def empty_cache(self):                                           # rule 7
        gone = [s for s in self.segments if len(s.blocks) == 1 and s.blocks[0][2] is None]
        self.segments = [s for s in self.segments if s not in gone]
        self.reserved -= sum(s.size for s in gone)
        self.num_device_free += len(gone)
        return sum(s.size for s in gone)

    def reset_peak(self):
        self.reserved_peak, self.active_peak = self.reserved, self.active

    def stats(self) -> dict:
        out = {"reserved_bytes.all.current": self.reserved, "reserved_bytes.all.peak": self.reserved_peak,
               "active_bytes.all.current": self.active, "active_bytes.all.peak": self.active_peak,
               "requested_bytes.all.current": self.requested, "segment.all.current": len(self.segments),
               "num_device_alloc": self.num_device_alloc, "num_device_free": self.num_device_free,
               "num_alloc_retries": 0, "num_ooms": 0}
        for pool in ("small", "large"):
            segs = [s for s in self.segments if s.pool == pool]
            split_free = [b for s in segs if len(s.blocks) > 1 for b in s.blocks if b[2] is None]
            out[f"reserved_bytes.{pool}_pool.current"] = sum(s.size for s in segs)
            out[f"active_bytes.{pool}_pool.current"] = sum(b[1] for s in segs for b in s.blocks if b[2] is not None)
            out[f"segment.{pool}_pool.current"] = len(segs)
            out[f"inactive_split.{pool}_pool.current"] = len(split_free)
            out[f"inactive_split_bytes.{pool}_pool.current"] = sum(b[1] for b in split_free)
        for what in ("inactive_split", "inactive_split_bytes"):
            out[f"{what}.all.current"] = out[f"{what}.small_pool.current"] + out[f"{what}.large_pool.current"]
        return out

    def snapshot(self) -> list:
        out = []
        for s in self.segments:
            blocks = [{"address": b[0], "size": b[1], "requested_size": b[3],
                       "state": "inactive" if b[2] is None else "active_allocated", "frames": []}
                      for b in s.blocks]
            allocated = sum(b[1] for b in s.blocks if b[2] is not None)
            out.append({"device": 0, "address": s.address, "total_size": s.size, "allocated_size": allocated,
                        "active_size": allocated, "requested_size": sum(b[3] for b in s.blocks), "stream": 0,
                        "segment_type": s.pool, "segment_pool_id": [0, 0], "is_expandable": False,
                        "frames": [], "blocks": blocks})
        return out


def figures(m) -> tuple:
    """Every figure a model reports."""
    return (m.reserved, m.reserved_peak, m.active, m.active_peak, m.requested,
            m.num_device_alloc, m.num_device_free, m.stats(), m.snapshot())


# sizes around every boundary the rules name: tiny, 512, the 1 MiB small/large line (and the
# large pool's 1 MiB split threshold), 10 MiB, 20 MiB segments and beyond
EDGES = [1, 100, 511, 512, 513, 1000, 4096, MiB - 512, MiB - 1, MiB, MiB + 1, MiB + 512, 2 * MiB,
         2 * MiB + 1, 5 * MiB, 9 * MiB, 10 * MiB - 513, 10 * MiB - 512, 10 * MiB - 1, 10 * MiB, 10 * MiB + 1,
         12 * MiB, 19 * MiB - 512, 19 * MiB, 19 * MiB + 1, 20 * MiB, 33 * MiB + 7, 64 * MiB]


def random_size(rng) -> int:
    r = rng.random()
    if r < 0.05:
        return 0
    if r < 0.45:
        return rng.randint(1, 4096)                      # tiny and around 512
    if r < 0.65:
        return rng.randint(MiB - 4096, MiB + 4096)       # around the pool boundary
    if r < 0.75:
        return rng.randint(1, 12 * MiB)
    if r < 0.85:
        return rng.choice([10 * MiB, 20 * MiB, 40 * MiB]) + rng.randint(-2048, 2048)
    return rng.choice(EDGES)


def random_ops(seed: int, steps: int):
    """(kind, owner, nbytes) steps: mostly mallocs and frees (in random order), some empty_cache/reset_peak."""
    rng = random.Random(seed)
    live, next_owner, ops = [], 1, []
    for _ in range(steps):
        r = rng.random()
        if r < 0.01:
            ops.append(("empty_cache", None, None))
        elif r < 0.015:
            ops.append(("reset_peak", None, None))
        elif live and (r < 0.47 or len(live) > 60):
            ops.append(("free", live.pop(rng.randrange(len(live))), None))
        elif r < 0.48:
            ops.append(("free", 10 ** 9 + next_owner, None))       # an owner the model never saw
            next_owner += 1
        else:
            n = random_size(rng)
            ops.append(("malloc", next_owner, n))
            live.append(next_owner)
            next_owner += 1
    return ops


def apply(m, op):
    kind, owner, n = op
    if kind == "malloc":
        return m.malloc(owner, n)
    if kind == "free":
        return m.free(owner)
    return getattr(m, kind)()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_model_matches_the_reference_after_every_step(seed):
    m, ref = CachingAllocatorModel("cuda:0"), RefAllocator()
    for step, op in enumerate(random_ops(seed, 1500)):
        got, want = apply(m, op), apply(ref, op)
        if op[0] == "empty_cache":
            assert got == want, step
        elif op[0] == "malloc":
            assert (got is None) == (op[2] == 0), step
            if got is not None:
                assert got is m.by_owner[op[1]] and got.allocated and got.requested == op[2]
        assert figures(m) == figures(ref), (step, op)
    assert m.empty_cache() == ref.empty_cache()
    assert figures(m) == figures(ref)


def test_deferred_log_matches_the_reference_on_two_devices(monkeypatch):
    # NOTE [ Deferred allocator model ] 1 and 2: replaying the log in LOG_LIMIT chunks, with two
    # devices interleaved, gives each device the figures of a model fed each call at once
    hook = _allocator.AllocatorHook()
    monkeypatch.setattr(hook, "LOG_LIMIT", 37)
    devices = ("cuda:0", "cuda:1")
    refs = {d: RefAllocator() for d in devices}
    rng = random.Random(7)

    class St:
        def __init__(self, owner, n, dev):
            self.id, self.nbytes, self.device = owner, n, dev

    streams = {d: iter(random_ops(11 + i, 2400)) for i, d in enumerate(devices)}
    for step in range(2400):
        dev = rng.choice(devices)
        op = next(streams[dev])
        if op[0] in ("empty_cache", "reset_peak"):
            apply(hook.model(dev), op)           # reading the model replays the log first
            apply(refs[dev], op)
        elif op[0] == "malloc":
            hook.alloc(St(op[1], op[2], dev))
            refs[dev].malloc(op[1], op[2])
        else:
            hook.free(St(op[1], None, dev))
            refs[dev].free(op[1])
        assert len(hook._log) < 37
        if step % 97 == 0:
            assert {d: figures(hook.model(d)) for d in devices} == {d: figures(refs[d]) for d in devices}
    assert {d: figures(hook.model(d)) for d in devices} == {d: figures(refs[d]) for d in devices}


def test_a_free_for_an_unseen_device_makes_no_model():
    hook = _allocator.AllocatorHook()

    class St:
        id, nbytes, device = 3, 512, "cuda:5"

    hook.free(St())
    assert hook.models == {}
    hook.alloc(St())
    assert figures(hook.model("cuda:5"))[:5] == (2 * MiB, 2 * MiB, 512, 512, 512)
