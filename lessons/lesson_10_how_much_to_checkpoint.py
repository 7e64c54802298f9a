"""Lesson 10: how much to checkpoint. checkpoint_sequential's segment counts and the sqrt(n) minimum,
the planner's optimal trade-off curve, and selective checkpointing."""
import itertools

import engine as torch
from engine import nn
from engine.utils import planner
from engine.utils.checkpoint import (
    checkpoint,
    checkpoint_sequential,
    create_selective_checkpoint_contexts,
)
from lessons._checkpoint_events import backwards
from lessons._facts import live_by_category
from lessons._format import Check, Focus, Lesson, Step
from lessons._tradeoff import chart, flops, kernels_run, main_with_curve

N, WIDTH, BATCH = 16, 32, 64
A = BATCH * WIDTH * 4                    # bytes of one activation (batch x width floats)
SEGMENTS = (1, 2, 4, 8, 16)


def one_step(model, x, segments):
    """One training step through checkpoint_sequential; its peak above where it started."""
    model.zero_grad(set_to_none=False)           # keep the gradient tensors: the figures are the activations'
    torch.memory.reset_peak_memory_stats()
    start = torch.memory.memory_allocated()
    checkpoint_sequential(model, segments, x, use_reentrant=False).sum().backward()
    return torch.memory.max_memory_allocated() - start


# ---------------------------------------------------------------- step 1


def sweep(s):
    s.model = nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(N)])
    s.x = torch.randn(BATCH, WIDTH)
    s.model(s.x).sum().backward()                # make the gradients once; every step below reuses them
    s.peaks = {segments: one_step(s.model, s.x, segments) for segments in SEGMENTS}
    best = min(s.peaks, key=s.peaks.get)
    return {"peaks": s.peaks, "best": best, "best_peak": s.peaks[best], "plain_peak": s.peaks[1],
            "sqrt_n": round(N ** 0.5),
            "best_ratio": round(s.peaks[1] / s.peaks[best], 1)}


def _runs(run):
    """Per measured step (after the warm-up): (forward ops, recompute ops) of the layers."""
    evs, out, prev = run.events, [], 0
    for a, b in backwards(run.events):
        fwd = [e for e in evs[prev:a] if e["kind"] == "op" and e["op"] in ("t", "addmm", "relu")]
        rec = [e for e in evs[a:b] if e["kind"] == "op" and e["phase"] == "recompute"]
        out.append((len(fwd), len(rec)))
        prev = b
    return out[1:]


def sweep_facts(run):
    rows = ["| segments | checkpointed | stored at the end | peak | peak / A | ops rerun | extra forward |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    out = {"ops_ok": True, "formula_ok": True}
    peaks = run.values["peaks"]
    for seg, (fwd, rec) in zip(SEGMENTS, _runs(run)):
        k = N // seg
        stored = N - (seg - 1) * k
        regions = f"{seg - 1} region" + ("s" if seg != 2 else "")
        rows.append(f"| {seg} | {(seg - 1) * k} blocks, {regions} | {stored} | {peaks[seg]:,} B | "
                    f"{peaks[seg] / A:.2f} | {rec} | {rec / fwd:.0%} |")
        out["ops_ok"] &= rec == (seg - 1) * k * 3 and fwd == N * 3
        out["formula_ok"] &= peaks[seg] - peaks[1] == (seg + stored - (1 + N)) * A
        out[f"extra_{seg}"] = f"{rec / fwd:.0%}"
    out["table"] = "\n".join(rows)
    out["const"] = peaks[1] - (1 + N) * A
    at = run.focus_index()
    spans = backwards(run.trace.events[run.start:run.end])[1:]
    which = [k for k, (a, b) in zip(SEGMENTS, spans) if run.start + a <= at <= run.start + b]
    out["focus_run"] = which[0] if which else None
    out["focus_phase"] = run.trace.events[at]["phase"]
    return out


# ---------------------------------------------------------------- step 2


def the_curve(s):
    s.model.zero_grad(set_to_none=False)
    s.stats = planner.measure(s.model, s.x)      # one plain step: each layer's bytes and cost
    s.curve = planner.tradeoff(s.stats)          # [(peak, recompute cost, segments)]: optimal at each peak
    forward = sum(layer.cost for layer in s.stats)
    predicted = {k: planner.evaluate(s.stats, planner.sequential_plan(N, k)) for k in SEGMENTS}
    return {"n_points": len(s.curve), "forward_cost": forward,
            "predicted_ok": all(predicted[k][0] == s.peaks[k] for k in SEGMENTS),
            "curve_points": [(peak, cost / forward) for peak, cost, _ in s.curve],
            "sequential_points": {k: (predicted[k][0], predicted[k][1] / forward) for k in SEGMENTS},
            "lowest": s.curve[-1][0], "lowest_plan": _segments(s.curve[-1][2]),
            "lowest_share": f"{s.curve[-1][1] / forward:.0%}", "sqrt_peak": s.peaks[4]}


def _segments(segs):
    return ", ".join(f"[{a}:{b}]" for a, b in segs) or "none"


def curve_facts(run):
    v = run.values
    pts = v["curve_points"]
    on, off = {}, []
    for k, (peak, share) in sorted(v["sequential_points"].items()):
        if any(p == peak and abs(c - share) < 1e-12 for p, c in pts):
            on[peak] = f"s={k}"
        else:
            best = min(c for p, c in pts if p <= peak)
            off.append(f"s={k} ({share:.0%} for {peak:,} B; the curve: {best:.0%})")
    return {"chart": chart(pts, on), "on_curve": ", ".join(on.values()),
            "off_curve": "; ".join(off), "n_off": len(off),
            "monotone": all(a[0] > b[0] and a[1] < b[1] for a, b in itertools.pairwise(pts))}


# ---------------------------------------------------------------- step 3


def same_budget(s):
    budget = s.peaks[4]                                  # what the sqrt(n) plan needed
    best = planner.plan_from_stats(s.stats, budget)      # the least recompute within that budget
    s.model.zero_grad(set_to_none=False)
    torch.memory.reset_peak_memory_stats()
    start = torch.memory.memory_allocated()
    best.apply(s.model)(s.x).sum().backward()
    measured = torch.memory.max_memory_allocated() - start
    sqrt_cost = planner.evaluate(s.stats, planner.sequential_plan(N, 4))[1]
    return {"budget": budget, "segments": _segments(best.segments), "predicted": best.peak_bytes,
            "measured": measured, "share": f"{best.extra_forward_fraction:.0%}",
            "sqrt_share": f"{sqrt_cost / best.forward_cost:.0%}", "sqrt_segments": _segments(
                planner.sequential_plan(N, 4)),
            "cheaper": best.cost < sqrt_cost, "saved_pct": round(100 * (1 - best.cost / sqrt_cost)),
            "n_ckpt": sum(b - a for a, b in best.segments),
            "sqrt_ckpt": sum(b - a for a, b in planner.sequential_plan(N, 4)),
            "stored": N - best.segments[-1][1], "sqrt_stored": N - planner.sequential_plan(N, 4)[-1][1]}


def budget_facts(run):
    (a, b), = backwards(run.events)
    rec = [e for e in run.events[a:b] if e["kind"] == "op" and e["phase"] == "recompute"]
    return {"ops_rerun": len(rec), "blocks_rerun": len(rec) // 3}


# ---------------------------------------------------------------- step 4


def silu_block(linear):
    def block(h):
        h = linear(h)
        return h * torch.sigmoid(h)              # SiLU by hand: two cheap pointwise ops after the matmul
    return block


def keep_the_matmuls():
    return create_selective_checkpoint_contexts(["addmm", "mm"])   # save these outputs, recompute the rest


def selective(s):
    s.linears = [nn.Linear(WIDTH, WIDTH) for _ in range(8)]
    blocks = [silu_block(lin) for lin in s.linears]
    x = torch.randn(BATCH, WIDTH)
    ways = {"plain": lambda b, h: b(h),
            "full": lambda b, h: checkpoint(b, h, use_reentrant=False),
            "selective": lambda b, h: checkpoint(b, h, use_reentrant=False, context_fn=keep_the_matmuls)}
    h = x
    for block in blocks:                         # one plain step first: it makes the gradient tensors
        h = block(h)
    h.sum().backward()
    out = {}
    for name, run_block in ways.items():
        for lin in s.linears:
            lin.zero_grad(set_to_none=False)
        torch.memory.reset_peak_memory_stats()
        start = torch.memory.memory_allocated()
        h = x
        for block in blocks:
            h = run_block(block, h)
        h.sum().backward()
        out[name] = torch.memory.max_memory_allocated() - start
    return out


def selective_facts(run):
    spans = backwards(run.events)[1:]            # after the warm-up step
    out = {}
    for name, (a, b) in zip(("plain", "full", "selective"), spans):
        kept = live_by_category(run.trace.events[:run.start + a]).get("activation", 0)
        out[f"{name}_kept"] = round(kept / A)             # activations when its backward begins, in A
        rec = [e for e in run.events[a:b] if e["phase"] == "recompute"]
        ran = kernels_run(rec)
        out[f"{name}_flops"] = sum(flops(e) for e in ran)
        out[f"{name}_matmuls"] = sum(1 for e in ran if e["op"] in ("addmm", "mm"))
        out[f"{name}_pointwise"] = sum(1 for e in ran if e["op"] not in ("addmm", "mm"))
    warm_end = backwards(run.events)[0][1]
    plain_forward = [e for e in kernels_run(run.events[warm_end:spans[0][0]])
                     if e["op"] in ("addmm", "sigmoid", "mul") and e["output"]["shape"] == [BATCH, WIDTH]]
    out["forward_flops"] = sum(flops(e) for e in plain_forward)
    out["full_share"] = f"{out['full_flops'] / out['forward_flops']:.0%}"
    out["selective_share"] = f"{out['selective_flops'] / out['forward_flops']:.1%}"
    v = run.values
    out["saved_full"] = f"{1 - v['full'] / v['plain']:.0%}"
    out["saved_selective"] = f"{1 - v['selective'] / v['plain']:.0%}"
    return out


# ---------------------------------------------------------------- the lesson

LESSON = Lesson(
    number=10,
    slug="how_much_to_checkpoint",
    title="How much to checkpoint",
    summary="checkpoint_sequential's segments and the sqrt(n) minimum, the planner's optimal trade-off curve, "
            "selective checkpointing.",
    steps=(
        Step(
            title="checkpoint_sequential: the sqrt(n) minimum",
            narrative="""\
A deep MLP: {n} blocks of `Linear(32, 32) → ReLU`, batch 64, so one
activation is **A = {a:,} B**. `checkpoint_sequential(model, s, x,
use_reentrant=False)` cuts the blocks into s segments of k = {n} // s,
checkpoints all but the last and runs the last one normally. One training
step for each s (the gradient tensors are kept from a first step, so a peak
is activations and backward's own work):

{table}

Forward keeps the s − 1 segment boundaries and the stored last segment's L
blocks; backward reruns one segment at a time and holds its k blocks again.
Few segments store too much, many keep too many boundaries: each peak is
exactly **(s + L)·A + {const:,} B** (one layer's weight and bias gradients
before they are added into `.grad`, and the loss and its seed, 4 B each).
With L ≈ k = n/s that is (s + n/s)·A, least at s = √n: here **s = {best} =
√{n}**, {best_peak:,} B, {best_ratio}× below no checkpointing. That is Chen
et al.'s sublinear-memory result (*Training Deep Nets with Sublinear Memory
Cost*, 2016): √n segments keep O(√n) activations for at most one extra
forward; here {extra_4} of one (12 of the 16 blocks rerun once). The cursor
(`p`) is on the highest peak of all, s = {focus_run}'s, in {focus_phase}.

Read the code: `checkpoint_sequential` in
`engine/utils/checkpoint/__init__.py`; a region reruns exactly its own
ops: `engine/utils/checkpoint/_nonreentrant.py`, NOTE [ Non-reentrant
checkpoint ] 3 and 4.""".replace("{n}", str(N)).replace("{a:,}", f"{A:,}"),
            code=sweep,
            facts=sweep_facts,
            focus=Focus("memory", "peak"),
            checks=(
                Check("the peak is lowest at s = {best}, the square root of 16: {best_peak:,} B",
                      lambda r: r.values["best"] ** 2 == N and r.values["best_peak"] < min(
                          p for k, p in r.values["peaks"].items() if k != r.values["best"])),
                Check("every peak is (s + L)·A + {const:,} B, the constant one layer's gradients + 8 B",
                      lambda r: r.values["formula_ok"] and r.values["const"] == (WIDTH * WIDTH + WIDTH) * 4 + 8),
                Check("the recompute reruns (s − 1)·k blocks, 3 ops each (t, addmm, relu)",
                      lambda r: r.values["ops_ok"]),
                Check("the cursor is on the highest peak, s = {focus_run}'s, in {focus_phase}",
                      lambda r: r.values["focus_run"] == 1 and r.values["focus_phase"] == "backward"),
            ),
        ),
        Step(
            title="The planner: the whole trade-off curve",
            narrative="""\
`checkpoint_sequential` only tries equal segments. The planner
(`engine.utils.planner`) measures one plain step of the chain, layer by
layer (the bytes each keeps, its transients, what its backward adds, its
forward FLOPs), and from those figures predicts the peak of *any* set of
segments; it predicts each peak of the previous step **to the byte**. A dynamic program then finds, for every peak, the plan
with the least recompute: {n_points} points, from no checkpointing down to
{lowest:,} B (segments {lowest_plan}, {lowest_share} of a forward), below
the √n plan's {sqrt_peak:,} B.

```
{chart}
```

Each bar is the least recompute that reaches its peak, as a share of one
forward; `◀ s=k` marks a `checkpoint_sequential` plan with k segments that
is on the curve: {on_curve}. The others pay more
than they need for their peak: {off_curve}. (`python -m
lessons.lesson_10_how_much_to_checkpoint` also draws this curve as
`curve.png`.)

Read the code: `engine/utils/planner.py`, NOTE [ Checkpoint plan cost
model ] and NOTE [ Optimal plan by dynamic programming ] 1, 2 and 4.""",
            code=the_curve,
            facts=curve_facts,
            focus=Focus("memory", "peak"),
            checks=(
                Check("the planner predicts every checkpoint_sequential peak of step 1 to the byte",
                      lambda r: r.values["predicted_ok"]),
                Check("along the curve each lower peak costs more recompute ({n_points} points)",
                      lambda r: r.values["monotone"] and r.values["n_points"] > len(SEGMENTS)),
                Check("the curve reaches {lowest:,} B, below the √n peak of {sqrt_peak:,} B",
                      lambda r: r.values["lowest"] < r.values["sqrt_peak"]),
                Check("the √n plan is not on the curve: the same peak costs less",
                      lambda r: "s=4 " in r.values["off_curve"]),
            ),
        ),
        Step(
            title="√n against the optimum at the same budget",
            narrative="""\
Give the planner the √n plan's peak as its budget, {budget:,} B. It picks
segments **{segments}** instead of `checkpoint_sequential`'s
{sqrt_segments}: {n_ckpt} blocks checkpointed instead of {sqrt_ckpt}, in
fewer, longer segments, with {stored} blocks stored at the end where √n
stores {sqrt_stored}. The √n rule fixes equal segments; the planner prices
every arrangement and keeps the cheapest that fits.

Run with `plan.apply(model)`, the step peaks at **{measured:,} B**, the
predicted {predicted:,} B, within the budget. It reruns {blocks_rerun}
blocks ({ops_rerun} ops): **{share}** of a forward against the √n plan's
{sqrt_share}, {saved_pct}% less recompute for the same memory.

Read the code: `engine/utils/planner.py`, NOTE [ Optimal plan by dynamic
programming ] 1 and 2, and `apply`.""",
            code=same_budget,
            facts=budget_facts,
            focus=Focus("memory", "peak"),
            checks=(
                Check("the plan's measured peak is the predicted {predicted:,} B, within the budget",
                      lambda r: r.values["measured"] == r.values["predicted"] <= r.values["budget"]),
                Check("it reruns {blocks_rerun} blocks, the {n_ckpt} it checkpoints, fewer than the √n plan's {sqrt_ckpt}",
                      lambda r: r.values["blocks_rerun"] == r.values["n_ckpt"] < r.values["sqrt_ckpt"]
                      and r.values["cheaper"]),
            ),
        ),
        Step(
            title="Selective checkpointing: keep the matmuls, recompute the rest",
            narrative="""\
Checkpointing whole blocks reruns their matrix products, the expensive part.
Selective checkpointing decides op by op. Eight blocks `h = linear(h);
h * sigmoid(h)` (SiLU by hand), each run three ways:

| way | peak | rerun in backward | recompute FLOPs |
| --- | --- | --- | --- |
| no checkpoint | {plain:,} B | nothing | 0 |
| `checkpoint(block, h)` | {full:,} B ({saved_full} less) | {full_matmuls} matmuls, {full_pointwise} pointwise ops | {full_flops:,.0f} ({full_share} of a forward) |
| selective, keep `addmm` | {selective:,} B ({saved_selective} less) | {selective_matmuls} matmuls, {selective_pointwise} pointwise ops | {selective_flops:,.0f} ({selective_share}) |

With `context_fn=lambda: create_selective_checkpoint_contexts(["addmm",
"mm"])` the forward keeps each matmul's output; the recompute takes it from
that cache instead of running the kernel, and reruns only `sigmoid` and
`mul`. Per block, the plain run keeps three tensors (the matmul's output,
the sigmoid, the product), selective two (the matmul's output, and the
product as the next region's input), full checkpointing one (the product):
when backward begins, {plain_kept}, {selective_kept} and {full_kept} activations of A = 8,192 B
(the last product is saved by nothing).
Backward pays {selective_share} of a forward for selective instead of a
whole one. Full checkpointing saves the most memory ({saved_full});
selective saves {saved_selective} for almost no extra compute. Which ops to
keep is a policy: keep what is expensive to recompute and cheap to store.

Read the code: `engine/utils/checkpoint/_selective.py`, NOTE [ Selective
checkpointing ] 1 to 3; the hooks it stands on: `engine/core/hooks.py`,
NOTE [ Op hooks ] 2.""",
            code=selective,
            facts=selective_facts,
            focus=Focus("memory", "peak"),
            checks=(
                Check("peaks: full checkpoint {full:,} B < selective {selective:,} B < plain {plain:,} B",
                      lambda r: r.values["full"] < r.values["selective"] < r.values["plain"]),
                Check("kept when backward begins: 3, 2 and 1 tensors per block, less the last product",
                      lambda r: (r.values["plain_kept"], r.values["selective_kept"], r.values["full_kept"])
                      == (3 * 8 - 1, 2 * 8 - 1, 8 - 1)),
                Check("full checkpointing reruns all 8 matmuls (one forward), selective none",
                      lambda r: r.values["full_matmuls"] == 8 and r.values["selective_matmuls"] == 0
                      and r.values["full_flops"] == r.values["forward_flops"]),
                Check("selective's recompute is {selective_share} of a forward, pointwise ops only",
                      lambda r: 0 < r.values["selective_flops"] < 0.05 * r.values["forward_flops"]
                      and r.values["selective_pointwise"] == r.values["full_pointwise"] == 16),
            ),
        ),
    ),
)

if __name__ == "__main__":
    raise SystemExit(main_with_curve(LESSON, 1))
