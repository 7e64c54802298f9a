"""Lesson 11: allocated vs reserved. PyTorch's caching allocator rounds, pools, splits, reuses and
keeps memory; the engine runs a model of it beside every allocation."""
import engine as torch
from engine.memory.allocator import MIN_BLOCK, CachingAllocatorModel

from lessons._facts import nbytes
from lessons._format import Check, Focus, Lesson, Question, Step

KiB, MiB = 1 << 10, 1 << 20
WIDTH = 48                                   # characters per segment in a map


def segment_map(model) -> str:
    """One line per segment: '#' allocated, '.' free, scaled to WIDTH characters, with sizes."""
    lines = []
    for seg in model.snapshot():
        bar = []
        for b in seg["blocks"]:
            n = max(1, round(WIDTH * b["size"] / seg["total_size"]))
            bar.append(("#" if b["state"] == "active_allocated" else ".") * n)
        lines.append(f"{seg['segment_type']:5} {nbytes(seg['total_size']):>9} |{''.join(bar)[:WIDTH]:<{WIDTH}}| "
                     f"{nbytes(seg['allocated_size'])} allocated")
    return "\n".join(lines) or "(no segments)"


def block_of(model, owner):
    return model.by_owner[owner]


def fragmentation(model) -> float:
    """1 - largest free block / all free bytes (0: one hole; near 1: many small ones)."""
    free = [b["size"] for s in model.snapshot() for b in s["blocks"] if b["state"] == "inactive"]
    return 0.0 if not free else 1 - max(free) / sum(free)


def one_float(s):
    s.gpu = CachingAllocatorModel("cuda:0")     # the model glassgrad runs beside each device
    s.gpu.malloc("x", 4)                         # torch.ones(1, device="cuda"): 4 bytes asked
    b = block_of(s.gpu, "x")
    st = s.gpu.stats()
    return {"block": b.size, "reserved": s.gpu.reserved, "requested": st["requested_bytes.all.current"],
            "active": st["active_bytes.all.current"], "map": segment_map(s.gpu),
            "reserved_h": nbytes(s.gpu.reserved)}


def split_and_reuse(s):
    for name in "abc":
        s.gpu.malloc(name, 256 * KiB)            # three 256 KiB tensors: small pool, one after another
    hole = block_of(s.gpu, "b").address
    s.gpu.free("b")                              # b dies: its block stays reserved, now free
    map_hole = segment_map(s.gpu)
    s.gpu.malloc("d", 200 * KiB)                 # smaller than the hole
    d = block_of(s.gpu, "d")
    after_c = block_of(s.gpu, "c").address + block_of(s.gpu, "c").size
    where = ("into b's freed block" if d.address == hole else
             "right after c" if d.address == after_c else "a new segment")
    return {"where": where, "map_hole": map_hole, "map_d": segment_map(s.gpu), "reserved_h": nbytes(s.gpu.reserved),
            "n_segments": len(s.gpu.segments), "d_block": d.size, "d_asked": 200 * KiB}


def fragmented(s):
    for i in range(6):
        s.gpu.malloc(f"big{i}", 3 * MiB)         # large pool: one 20 MiB segment holds all six
    for i in (0, 2, 4):
        s.gpu.free(f"big{i}")                    # every other one dies
    large = [x for x in s.gpu.snapshot() if x["segment_type"] == "large"]
    free = [b["size"] for b in large[0]["blocks"] if b["state"] == "inactive"]
    before = len(s.gpu.segments)
    frag = fragmentation(s.gpu)
    map_before = segment_map(s.gpu)
    s.gpu.malloc("five", 5 * MiB)
    fits = "yes" if len(s.gpu.segments) == before else "no: a new segment is reserved"
    return {"free_total": sum(free), "free_total_h": nbytes(sum(free)), "largest_h": nbytes(max(free)),
            "n_holes": len(free), "frag": round(frag, 2), "fits": fits, "map_before": map_before,
            "map_after": segment_map(s.gpu), "reserved_h": nbytes(s.gpu.reserved)}


def give_back(s):
    s.gpu.free("five")
    before = s.gpu.reserved
    released = s.gpu.empty_cache()               # torch.cuda.empty_cache()
    return {"released": released, "released_h": nbytes(released), "kept_h": nbytes(s.gpu.reserved),
            "before_h": nbytes(before), "map": segment_map(s.gpu), "live": len(s.gpu.by_owner)}


def real_step(s):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    torch.nn.functional.cross_entropy(model(x), y).backward()
    return {"has_gpu": torch.cuda.is_available()}


def replay_step(run):
    """Feed this step's own alloc/free events to a fresh model: allocated, blocks and reserved at the peak."""
    m = CachingAllocatorModel("cuda:0")
    exact = best = best_exact = best_blocks = 0
    best_reserved = 0
    for e in run.events:
        if e["kind"] == "alloc":
            m.malloc(e["storage"], e["bytes"])
            exact += e["bytes"]
        elif e["kind"] == "free" and e["storage"] in m.by_owner:
            exact -= e["bytes"]
            m.free(e["storage"])
        if exact > best:
            best, best_exact, best_blocks, best_reserved = exact, exact, m.active, m.reserved
    return {"peak_exact": best_exact, "peak_blocks": best_blocks, "peak_reserved": best_reserved,
            "peak_exact_h": nbytes(best_exact), "peak_blocks_h": nbytes(best_blocks),
            "peak_reserved_h": nbytes(best_reserved), "end_map": segment_map(m),
            "n_allocs": len(run.of_kind("alloc"))}


LESSON = Lesson(
    number=11,
    slug="allocated_vs_reserved",
    title="Allocated vs reserved",
    summary="Why a GPU monitor shows more than memory_allocated(): rounding, pools, split blocks, a cache that keeps.",
    steps=(
        Step(
            title="One float, two megabytes",
            narrative="""\
On a GPU, asking the driver for memory (`cudaMalloc`) is slow, so PyTorch's
**caching allocator** asks for big **segments** and cuts **blocks** out of
them. glassgrad runs a model of it (NOTE [ Caching allocator model ] in
engine/memory/allocator.py); here we drive one directly as a GPU would be
driven. `torch.ones(1, device="cuda")` asks for 4 bytes:

```
{map}
```

The request is rounded up to a {block} B block (rule 1: multiples of 512), and
since no segment existed, a {reserved_h} **small-pool** segment was reserved
(rule 3). So: requested {requested} B, allocated blocks {active} B, reserved
{reserved_h}. PyTorch's `memory_allocated()` on a GPU counts the block
({active} B) and `memory_reserved()` the segment; glassgrad's
`torch.memory.memory_allocated()` counts the exact bytes of live storages
(like PyTorch's `requested_bytes`), and `memory_stats()` gives the model's
block and segment figures beside it.

Read the code: `engine/memory/allocator.py`, NOTE [ Caching allocator model ] rules 1-3.""",
            code=one_float,
            focus=Focus("narrative", "end"),
            questions=(
                Question("How big is the block the allocator cuts for this 4-byte tensor?",
                         lambda r: nbytes(r.values["block"]), (nbytes(4), nbytes(512), nbytes(2 * MiB)),
                         "Every request is rounded up to a multiple of 512 bytes."),
                Question("How much does memory_reserved() grow?",
                         lambda r: r.values["reserved_h"], (nbytes(4), nbytes(512), nbytes(2 * MiB)),
                         "The first small request reserves a whole 2 MiB small-pool segment."),
            ),
            checks=(
                Check("the block is 4 B rounded up to 512", lambda r: r.values["block"] == MIN_BLOCK),
                Check("the segment is 2 MiB", lambda r: r.values["reserved"] == 2 * MiB),
            ),
        ),
        Step(
            title="Split, free, reuse",
            narrative="""\
Three 256 KiB tensors are cut from the same segment, one after another. When
`b` dies its block is **not** returned to the GPU: it stays reserved, marked
free:

```
{map_hole}
```

A 200 KiB tensor then arrives. Best fit (rule 4) picks the smallest free
block that is big enough: {where}, and splits off the unused end (rule 5):

```
{map_d}
```

Reserved is still {reserved_h} in {n_segments} segment: no driver call at
all. This reuse is why the caching allocator is fast, and why freed memory
does not show up as free on `nvidia-smi`.

Read the code: `engine/memory/allocator.py`, NOTE [ Caching allocator model ] rules 4-5.""",
            code=split_and_reuse,
            focus=Focus("narrative", "end"),
            questions=(
                Question("Where does the 200 KiB tensor go?",
                         lambda r: r.values["where"], ("into b's freed block", "right after c", "a new segment"),
                         "Best fit: b's 256 KiB hole is the smallest free block that fits."),
            ),
            checks=(
                Check("d reused b's block", lambda r: r.values["where"] == "into b's freed block"),
                Check("still one segment", lambda r: r.values["n_segments"] == 1),
            ),
        ),
        Step(
            title="Free, but in pieces",
            narrative="""\
Six 3 MiB tensors (over 1 MiB: the **large pool**, in a 20 MiB segment); every
other one dies. Now {free_total_h} of that segment is free, in {n_holes}
holes of at most {largest_h} (fragmentation {frag}: 1 minus largest hole over
free bytes):

```
{map_before}
```

A 5 MiB request cannot use any single hole, so it takes a new segment:

```
{map_after}
```

Reserved is now {reserved_h}. This is fragmentation: memory that is free but
in the wrong shape. It is how a run can fail with "out of memory" while
`memory_reserved() - memory_allocated()` is large.

Read the code: `engine/memory/allocator.py`, NOTE [ Caching allocator model ] rules 2, 3 and 6.""",
            code=fragmented,
            focus=Focus("narrative", "end"),
            questions=(
                Question("11 MiB are free. Will a 5 MiB request fit without reserving more?",
                         lambda r: r.values["fits"], ("yes", "no: a new segment is reserved"),
                         "Free bytes only help in one piece: the largest hole is 3 MiB."),
            ),
            checks=(
                Check("11 MiB free in 4 holes, none over 3 MiB",
                      lambda r: r.values["free_total"] == 11 * MiB and r.values["n_holes"] == 4
                      and r.values["largest_h"] == nbytes(3 * MiB)),
                Check("the 5 MiB request reserved a second large segment",
                      lambda r: r.values["fits"].startswith("no")),
            ),
        ),
        Step(
            title="empty_cache gives back only whole segments",
            narrative="""\
When the 5 MiB tensor dies, its segment is entirely free. `empty_cache()`
returns entirely free segments to the driver (rule 7): {released_h} went back,
reserved went from {before_h} to {kept_h}. The first segments keep their
holes, because {live} tensors still live in them:

```
{map}
```

`empty_cache()` does not make your program use less memory; it only lets
other programs (or `nvidia-smi`) see the cached part as free.

Read the code: `engine/memory/allocator.py`, NOTE [ Caching allocator model ] rule 7.""",
            code=give_back,
            focus=Focus("narrative", "end"),
            questions=(
                Question("How much does empty_cache() give back?",
                         lambda r: r.values["released_h"], tuple(nbytes(n) for n in (0, 5 * MiB, 20 * MiB, 22 * MiB)),
                         "Only the entirely free segment: all 20 MiB of it, not just the 5 MiB that was used."),
            ),
            checks=(
                Check("exactly the second large segment (20 MiB) was released",
                      lambda r: r.values["released"] == 20 * MiB),
            ),
        ),
        Step(
            title="A real training step",
            narrative="""\
Now a real step (an MLP, batch 64, forward and backward), recorded as usual.
Feeding its {n_allocs} allocations and frees to a fresh GPU model: at the peak
the live tensors held {peak_exact_h} exactly, their blocks {peak_blocks_h}, and
the model had reserved {peak_reserved_h}. At the end everything the step made
is gone, and the segment is still reserved:

```
{end_map}
```

A GPU monitor would show the reserved figure plus the CUDA context (a few
hundred MiB that no allocator counts). On a GPU, `torch.memory.memory_stats()`
also reports CuPy's real pool (`cupy.used_bytes`, `cupy.total_bytes`) beside
the model; this machine has a GPU: {has_gpu}.

Read the code: `engine/memory/allocator.py`, NOTE [ Caching allocator model ], fed by every storage the engine makes (`engine/core/storage.py`).""",
            code=real_step,
            facts=replay_step,
            focus=Focus("memory", "peak"),
            checks=(
                Check("reserved >= blocks >= exact bytes at the peak",
                      lambda r: r.values["peak_reserved"] >= r.values["peak_blocks"] >= r.values["peak_exact"] > 0),
                Check("every block is a multiple of 512 B", lambda r: r.values["peak_blocks"] % MIN_BLOCK == 0),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
