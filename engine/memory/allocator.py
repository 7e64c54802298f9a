"""A model of PyTorch's CUDA caching allocator: what "reserved" memory is and why.

NOTE [ Caching allocator model ]
The model follows c10/cuda/CUDACachingAllocator.cpp with its default settings (one
stream, no expandable segments, no max_split_size). Sizes in bytes; 1 MiB = 1048576.
1. Rounding: a request of n > 0 bytes becomes a block of round_size(n) bytes, the next
   multiple of 512 (at least 512). A 0-byte request takes no block at all.
2. Pools: a rounded size <= 1 MiB is served from the small pool, anything larger from
   the large pool. A block never moves between pools.
3. Segments: when no cached free block fits, a new segment is reserved from the device
   ("cudaMalloc"): 2 MiB for the small pool; for the large pool 20 MiB when the
   rounded size is < 10 MiB, otherwise the rounded size rounded up to a multiple of
   2 MiB. Reserved bytes are the sum of segment sizes.
4. Best fit: among the free blocks of the request's pool, the smallest one that is big
   enough is used; ties go to the lowest address.
5. Splitting: the request takes the start of the chosen block; the remainder becomes
   a new free block when it is >= 512 bytes in the small pool (every non-zero remainder,
   since sizes are multiples of 512) or > 1 MiB in the large pool. Otherwise the
   request keeps the whole block (its size then exceeds round_size(n)).
6. Merging: a freed block merges with its free neighbours in the same segment, so a
   segment never holds two adjacent free blocks.
7. Caching: freed blocks stay reserved. Only ``empty_cache()`` gives memory back, and
   only segments that are entirely free (a single free block spanning the segment).
8. Addresses are virtual: segments are placed one after another from ``BASE`` and an
   address is never reused after its segment is released, so snapshots are stable.
"""
from __future__ import annotations

import bisect
import threading

from ..backend.device import CPU as _CPU

MIN_BLOCK = 512                 # kMinBlockSize
SMALL_SIZE = 1 << 20            # kSmallSize: largest "small" request
SMALL_BUFFER = 2 << 20          # kSmallBuffer: small-pool segment size
LARGE_BUFFER = 20 << 20         # kLargeBuffer: large-pool segment for requests < 10 MiB
MIN_LARGE_ALLOC = 10 << 20      # kMinLargeAlloc
ROUND_LARGE = 2 << 20           # kRoundLarge
BASE = 0x7F0000000000
_bisect_left, _insort = bisect.bisect_left, bisect.insort


def round_size(n: int) -> int:
    """Rule 1: bytes a request of ``n`` occupies (0 for 0)."""
    if n <= 0:
        return 0
    return MIN_BLOCK * ((n + MIN_BLOCK - 1) // MIN_BLOCK)


def pool_of(size: int) -> str:
    """Rule 2: "small" or "large" for a rounded size."""
    return "small" if size <= SMALL_SIZE else "large"


def segment_size(size: int) -> int:
    """Rule 3: bytes reserved for a new segment serving a rounded request of ``size``."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


def should_split(pool: str, remaining: int) -> bool:
    """Rule 5."""
    return remaining >= MIN_BLOCK if pool == "small" else remaining > SMALL_SIZE


class Block:
    __slots__ = ("address", "size", "requested", "segment", "prev", "next", "allocated", "owner")

    def __init__(self, address, size, segment, prev=None, next=None):
        self.address = address
        self.size = size
        self.segment = segment
        self.requested = 0
        self.prev = prev
        self.next = next
        self.allocated = False
        self.owner = None       # storage id while allocated


class Segment:
    __slots__ = ("address", "size", "pool", "first")

    def __init__(self, address, size, pool):
        self.address = address
        self.size = size
        self.pool = pool
        self.first = None

    def blocks(self):
        b = self.first
        while b is not None:
            yield b
            b = b.next


class CachingAllocatorModel:
    """One device's allocator: ``malloc(owner, nbytes)`` / ``free(owner)`` and its counters."""

    def __init__(self, device: str = "cpu"):
        self.device = device
        self.segments: dict = {}                     # address -> Segment
        self.free_blocks = {"small": [], "large": []}  # sorted [(size, address, block)]
        self.by_owner: dict = {}                     # owner -> Block
        self.next_address = BASE
        self.reserved = 0
        self.reserved_peak = 0
        self.active = 0            # bytes in allocated blocks
        self.active_peak = 0
        self.requested = 0         # bytes asked for
        self.num_device_alloc = 0
        self.num_device_free = 0

    # ---- free-block index (rule 4) ------------------------------------------
    def _index_add(self, b: Block) -> None:
        bisect.insort(self.free_blocks[b.segment.pool], (b.size, b.address, b))

    def _index_remove(self, b: Block) -> None:
        lst = self.free_blocks[b.segment.pool]
        i = bisect.bisect_left(lst, (b.size, b.address))
        del lst[i]

    def _best_fit(self, pool: str, size: int):
        lst = self.free_blocks[pool]
        i = bisect.bisect_left(lst, (size, -1))
        return lst[i][2] if i < len(lst) else None

    # ---- malloc / free ------------------------------------------------------
    def malloc(self, owner, nbytes: int):
        """Allocate for ``owner`` (a storage id); returns the Block, or None for 0 bytes."""
        if nbytes <= 0:
            return None
        size = MIN_BLOCK * ((nbytes + MIN_BLOCK - 1) // MIN_BLOCK)    # rule 1 (round_size, inlined)
        small = size <= SMALL_SIZE                                      # rule 2
        lst = self.free_blocks["small" if small else "large"]
        i = _bisect_left(lst, (size, -1))                               # rule 4 (_best_fit, inlined)
        if i < len(lst):
            block = lst[i][2]
            del lst[i]
        else:
            block = self._new_segment(size, "small" if small else "large")
        remaining = block.size - size
        if (remaining >= MIN_BLOCK) if small else (remaining > SMALL_SIZE):  # rule 5 (should_split)
            rest = Block(block.address + size, remaining, block.segment)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            _insort(lst, (remaining, rest.address, rest))
        block.allocated = True
        block.requested = nbytes
        block.owner = owner
        self.by_owner[owner] = block
        self.active += block.size
        self.requested += nbytes
        if self.active > self.active_peak:
            self.active_peak = self.active
        return block

    def _new_segment(self, size: int, pool: str) -> Block:
        seg_size = segment_size(size)
        seg = Segment(self.next_address, seg_size, pool)
        self.next_address += seg_size
        self.segments[seg.address] = seg
        seg.first = Block(seg.address, seg_size, seg)
        self.reserved += seg_size
        self.num_device_alloc += 1
        if self.reserved > self.reserved_peak:
            self.reserved_peak = self.reserved
        return seg.first

    def free(self, owner) -> None:
        block = self.by_owner.pop(owner, None)
        if block is None:
            return
        self.active -= block.size
        self.requested -= block.requested
        block.allocated = False
        block.requested = 0
        block.owner = None
        lst = self.free_blocks[block.segment.pool]
        for nb in (block.prev, block.next):      # rule 6
            if nb is not None and not nb.allocated:
                del lst[_bisect_left(lst, (nb.size, nb.address))]   # _index_remove, inlined
                if nb is block.prev:
                    nb.size += block.size
                    nb.next = block.next
                    if block.next is not None:
                        block.next.prev = nb
                    block = nb
                else:
                    block.size += nb.size
                    block.next = nb.next
                    if nb.next is not None:
                        nb.next.prev = block
        _insort(lst, (block.size, block.address, block))    # _index_add, inlined

    def empty_cache(self) -> int:
        """Rule 7: release every entirely free segment; returns the bytes released."""
        released = 0
        for addr, seg in list(self.segments.items()):
            b = seg.first
            if not b.allocated and b.next is None:
                self._index_remove(b)
                del self.segments[addr]
                released += seg.size
                self.num_device_free += 1
        self.reserved -= released
        return released

    def reset_peak(self) -> None:
        self.reserved_peak = self.reserved
        self.active_peak = self.active

    # ---- inspection ---------------------------------------------------------
    def stats(self) -> dict:
        """PyTorch's allocator counters for this device (see engine.memory.memory_stats)."""
        out = {"reserved_bytes.all.current": self.reserved, "reserved_bytes.all.peak": self.reserved_peak,
               "active_bytes.all.current": self.active, "active_bytes.all.peak": self.active_peak,
               "requested_bytes.all.current": self.requested,
               "segment.all.current": len(self.segments),
               "num_device_alloc": self.num_device_alloc, "num_device_free": self.num_device_free,
               "num_alloc_retries": 0, "num_ooms": 0}
        for pool in ("small", "large"):
            segs = [s for s in self.segments.values() if s.pool == pool]
            inactive_split = [b for s in segs for b in s.blocks()
                              if not b.allocated and not (b.prev is None and b.next is None)]
            out[f"reserved_bytes.{pool}_pool.current"] = sum(s.size for s in segs)
            out[f"active_bytes.{pool}_pool.current"] = sum(b.size for s in segs for b in s.blocks() if b.allocated)
            out[f"segment.{pool}_pool.current"] = len(segs)
            out[f"inactive_split.{pool}_pool.current"] = len(inactive_split)
            out[f"inactive_split_bytes.{pool}_pool.current"] = sum(b.size for b in inactive_split)
        out["inactive_split.all.current"] = (out["inactive_split.small_pool.current"]
                                             + out["inactive_split.large_pool.current"])
        out["inactive_split_bytes.all.current"] = (out["inactive_split_bytes.small_pool.current"]
                                                   + out["inactive_split_bytes.large_pool.current"])
        return out

    def snapshot(self, device_index: int = 0, frames=None) -> list:
        """Segments with their blocks, as ``torch.cuda.memory_snapshot()`` lists them.

        ``frames`` optionally maps an owner to a list of {filename, line, name} frames.
        """
        out = []
        for addr in sorted(self.segments):
            seg = self.segments[addr]
            blocks = []
            for b in seg.blocks():
                blocks.append({"address": b.address, "size": b.size,
                               "requested_size": b.requested if b.allocated else 0,
                               "state": "active_allocated" if b.allocated else "inactive",
                               "frames": list((frames or {}).get(b.owner, [])) if b.allocated else []})
            allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
            out.append({"device": device_index, "address": seg.address, "total_size": seg.size,
                        "allocated_size": allocated, "active_size": allocated,
                        "requested_size": sum(b["requested_size"] for b in blocks),
                        "stream": 0, "segment_type": seg.pool, "segment_pool_id": [0, 0],
                        "is_expandable": False, "frames": [], "blocks": blocks})
        return out


LOCK = threading.RLock()   # NOTE [ Deferred allocator model ] 5


class AllocatorHook:
    """The ``_memstate.allocator_hooks`` entry: one model per device, fed by every storage.

    NOTE [ Deferred allocator model ]
    1. ``alloc``/``free`` only append ``(device, owner, nbytes, None)`` (``nbytes`` -1 for a
       free) to a log; the models replay the log in order (``replay``, NOTE [ Fast replay ]),
       so every figure they give is the one they would give had they seen each call at once.
    2. Anything that reads a model (``model``, ``models``, ``reserved``, ``run``) replays
       the log first; so does an ``alloc`` or ``free`` that finds ``LOG_LIMIT`` entries
       waiting, which bounds the log's memory. While a trace is recorded every event
       reads ``reserved`` (NOTE [ Reserved bytes in events ]), so the model is never behind.
    3. A replay is not reentrant: a free that arrives during one (the garbage collector
       can finalize a storage while a model allocates) is appended and replayed by the
       same loop before it returns.
    4. Assigning ``models`` replays the log into the old models first.
    5. ``LOCK`` (reentrant) guards the models: a replay takes it. The log itself is one list
       for the hook's life, which a replay empties by deleting the entries it took, so an
       append (atomic in CPython) needs no lock: one that lands during a replay is replayed
       by it or by the next (NOTE [ Deferred counters ] 5 in ``memory/state.py``).
    6. ``source`` is another log that feeds these models, and ``drain`` replays it. The default
       ``hook`` is fed this way only: its source is ``memory/state.py``'s ``_pending``, the one
       log of the storages' allocs, frees and category moves, which ``_replay`` applies to the
       counters and to these models (NOTE [ Deferred counters ] 1); the storages never call
       ``alloc``/``free`` on it. Every read that replays (rule 2) drains ``source`` first.
    """

    LOG_LIMIT = 4096

    def __init__(self):
        self._models: dict = {}
        self._log: list = []
        self._busy = False
        self.source: list = []          # another module's log of entries for these models (rule 6)
        self.drain = None               # replays ``source`` into the models

    @property
    def models(self) -> dict:
        """device -> CachingAllocatorModel, up to date."""
        if self._log or self.source:
            self.flush()
        return self._models

    @models.setter
    def models(self, value: dict) -> None:
        if self._log or self.source:
            self.flush()
        self._models = value

    def model(self, device: str) -> CachingAllocatorModel:
        if self._log or self.source:
            self.flush()
        m = self._models.get(device)
        if m is None:
            m = self._models[device] = CachingAllocatorModel(device)
        return m

    def reserved(self, device: str) -> int:
        """The model's reserved bytes on ``device`` (0 for a device it has not seen)."""
        if self._log or self.source:
            self.flush()
        m = self._models.get(device)
        return m.reserved if m is not None else 0

    def alloc(self, st) -> None:
        log = self._log
        log.append(("cpu" if st.device is _CPU else str(st.device), st.id, st.nbytes, None))
        if len(log) >= self.LOG_LIMIT:
            self.flush()

    def free(self, st) -> None:
        log = self._log
        log.append(("cpu" if st.device is _CPU else str(st.device), st.id, -1, None))
        if len(log) >= self.LOG_LIMIT:
            self.flush()

    def flush(self) -> None:
        """Replay the logs into the models (rules 1, 3, 5 and 6)."""
        with LOCK:
            if self.source:
                self.drain()
            self._flush()

    def _flush(self) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            models, log = self._models, self._log
            while log:                  # the log is never replaced: appends need no lock (rule 5)
                k = len(log)
                entries = log[:k]
                del log[:k]
                replay(models, entries)
        finally:
            self._busy = False

    def _run(self, fn, *args):
        """``fn(*args)`` on an up-to-date model; a call made during a replay waits for none."""
        self.flush()
        return fn(*args)


# NOTE [ Fast replay ]
# ``replay`` applies log entries with ``CachingAllocatorModel.malloc`` and ``free`` written out
# in one loop; every figure, block and address it leaves is the one those methods leave.
# 1. The model's ``active``, ``active_peak`` and ``requested`` live in locals for a run of one
#    device's entries and are written back when the run ends (before another model is touched,
#    and before ``replay`` returns). Nothing reads them meanwhile: a read replays first, and a
#    replay is not reentrant (NOTE [ Deferred allocator model ] 3). ``reserved`` and the
#    segments change only in ``_new_segment``, which writes them at once.
# 2. Rounding (rule 1) is ``(n + 511) & -512`` (-512 is ~511): the same multiple of 512 for n > 0.
# 3. In the small pool every block size is a multiple of 512 (2 MiB segments, rounded
#    requests), so a remainder splits (rule 5) exactly when it is not zero; the large pool
#    keeps the ``> 1 MiB`` test.
# 4. A free merges with the free neighbours it had before the merge (rule 6), the previous one
#    first, as ``free`` does; the free-block index entries are removed by their (size, address).
# 5. A model whose ``malloc`` or ``free`` is replaced (on the instance, or by a subclass) gets
#    its run of entries through those methods instead.
# tests/memory/test_accounting_fastpath.py replays random and training-like logs both ways
# and compares every figure, ``stats()``, ``snapshot()`` and the free-block index.
def replay(models: dict, entries) -> None:
    """Apply ``(device, owner, nbytes, _)`` entries to ``models`` (NOTE [ Fast replay ]): nbytes < 0
    is a free, 0 does nothing (a 0-byte request, or NOTE [ Deferred counters ]' category moves)."""
    last = m = None
    active = peak = requested = 0
    calls = False
    bisect_left, insort, new_block = _bisect_left, _insort, Block
    by_owner = small = large = None
    for key, owner, n, _ in entries:
        if key != last:
            if m is not None and not calls:                             # rule 1: end of a run
                m.active, m.active_peak, m.requested = active, peak, requested
            m = models.get(key)
            if m is None:
                if n < 0 or owner is None:
                    last = None
                    continue                  # a free (or a category move) on a device never seen to allocate
                m = models[key] = CachingAllocatorModel(key)
            last, by_owner = key, m.by_owner
            small, large = m.free_blocks["small"], m.free_blocks["large"]
            active, peak, requested = m.active, m.active_peak, m.requested
            calls = type(m) is not CachingAllocatorModel or "malloc" in m.__dict__ or "free" in m.__dict__
        if calls:                                                       # rule 5
            m.free(owner) if n < 0 else m.malloc(owner, n)
            continue
        if n < 0:                                                       # CachingAllocatorModel.free
            block = by_owner.pop(owner, None)
            if block is None:
                continue
            size = block.size
            active -= size
            requested -= block.requested
            block.allocated = False
            block.requested = 0
            block.owner = None
            lst = small if block.segment.pool == "small" else large
            prev, nxt = block.prev, block.next
            if prev is not None and not prev.allocated:                 # rule 4
                del lst[bisect_left(lst, (prev.size, prev.address))]
                prev.size += size
                prev.next = nxt
                if nxt is not None:
                    nxt.prev = prev
                block = prev
            if nxt is not None and not nxt.allocated:
                del lst[bisect_left(lst, (nxt.size, nxt.address))]
                block.size += nxt.size
                after = block.next = nxt.next
                if after is not None:
                    after.prev = block
            insort(lst, (block.size, block.address, block))
        elif n:                                                         # CachingAllocatorModel.malloc
            size = (n + 511) & -512                                     # rule 2
            if size <= SMALL_SIZE:
                i = bisect_left(small, (size, -1))
                if i < len(small):
                    block = small[i][2]
                    del small[i]
                else:
                    block = m._new_segment(size, "small")
                remaining = block.size - size
                if remaining:                                           # rule 3
                    nxt = block.next
                    rest = block.next = new_block(block.address + size, remaining, block.segment, block, nxt)
                    if nxt is not None:
                        nxt.prev = rest
                    block.size = size
                    insort(small, (remaining, rest.address, rest))
            else:
                i = bisect_left(large, (size, -1))
                if i < len(large):
                    block = large[i][2]
                    del large[i]
                else:
                    block = m._new_segment(size, "large")
                remaining = block.size - size
                if remaining > SMALL_SIZE:
                    nxt = block.next
                    rest = block.next = new_block(block.address + size, remaining, block.segment, block, nxt)
                    if nxt is not None:
                        nxt.prev = rest
                    block.size = size
                    insort(large, (remaining, rest.address, rest))
            block.allocated = True
            block.requested = n
            block.owner = owner
            by_owner[owner] = block
            active += block.size
            requested += n
            if active > peak:
                peak = active
    if m is not None and not calls:
        m.active, m.active_peak, m.requested = active, peak, requested


hook = AllocatorHook()
