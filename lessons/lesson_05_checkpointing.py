"""Lesson 5: activation checkpointing. Drop activations in forward, recompute them in backward."""
import engine as torch
from engine import nn
from engine.utils.checkpoint import checkpoint

from lessons._facts import live_by_category
from lessons._format import Check, Focus, Lesson, Question, Step

BLOCKS, BATCH, WIDTH = 8, 512, 128


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Dropout(0.1))
                           for _ in range(BLOCKS)])


def train_step(model, x, use_checkpoint, preserve_rng_state=True, determinism_check="default"):
    """One forward and backward; returns (peak bytes above the start, first layer's weight gradient)."""
    model.zero_grad()
    torch.memory.reset_peak_memory_stats()
    start = torch.memory.memory_allocated()
    torch.manual_seed(0)                     # the same dropout masks in every run
    h = x
    for block in model:
        if use_checkpoint:
            h = checkpoint(block, h, use_reentrant=False, preserve_rng_state=preserve_rng_state,
                           determinism_check=determinism_check)
        else:
            h = block(h)
    loss = (h * h).mean()
    loss.backward()
    return torch.memory.max_memory_allocated() - start, model[0][0].weight.grad.clone()


def plain(s):
    s.model = make_model()
    s.x = torch.randn(BATCH, WIDTH)
    s.peak_plain, s.grad_plain = train_step(s.model, s.x, use_checkpoint=False)
    return {"peak_plain": s.peak_plain, "act_bytes": BATCH * WIDTH * 4}


def act_peak(run):
    """Highest activation bytes within the step, and the event where it was reached."""
    evs = run.trace.events
    live = live_by_category(evs[:run.start]).get("activation", 0)
    best, at = live, run.start
    for i in range(run.start, run.end):
        e = evs[i]
        if e["kind"] == "category":
            live += e["bytes"] if e["new"] == "activation" else -e["bytes"] if e["old"] == "activation" else 0
        elif e["kind"] == "free" and e.get("category") == "activation":
            live -= e["bytes"]
        if live > best:
            best, at = live, i
    return best, at


def _plain_act_peak(events):
    live = best = 0
    for e in events:
        if e["kind"] == "category":
            live += e["bytes"] if e["new"] == "activation" else -e["bytes"] if e["old"] == "activation" else 0
        elif e["kind"] == "free" and e.get("category") == "activation":
            live -= e["bytes"]
        best = max(best, live)
    return best


def plain_facts(run):
    best, _ = act_peak(run)
    saves = [n for e in run.of_kind("op") if e.get("node") for n in [e["node"]]]
    act, live = run.peak("activation"), run.peak()
    return {"act_peak_plain": best, "n_nodes": len(saves), "act_peak_phase": act["phase"],
            "act_peak_at": act["at"], "live_peak_phase": live["phase"], "live_peak_at": live["at"]}


def checkpointed(s):
    s.peak_ckpt, s.grad_ckpt = train_step(s.model, s.x, use_checkpoint=True)
    return {"peak_ckpt": s.peak_ckpt, "saved_pct": round(100 * (1 - s.peak_ckpt / s.peak_plain)),
            "max_grad_diff": (s.grad_ckpt - s.grad_plain).abs().max().item(), "peak_plain": s.peak_plain}


def ckpt_facts(run):
    drops = run.of_kind("checkpoint_drop")
    gone = [d for d in drops if not d["kept"]]
    fwd_ops = [e for e in run.of_kind("op") if e["phase"] == "forward" and e.get("region") is not None]
    re_ops = [e for e in run.of_kind("op") if e["phase"] == "recompute"]
    best, _ = act_peak(run)
    plain_run = run.trace.events[:run.start]
    return {"act_peak_plain": _plain_act_peak(plain_run), "n_drops": len(drops), "n_gone": len(gone), "gone_bytes": sum(d["bytes"] for d in gone),
            "n_regions": len(run.of_kind("checkpoint_enter")), "n_recompute": len(run.of_kind("recompute_begin")),
            "fwd_ops": len(fwd_ops), "re_ops": len(re_ops), "act_peak_ckpt": best}


def no_rng_replay(s):
    try:
        train_step(s.model, s.x, use_checkpoint=True, preserve_rng_state=False)
        caught = "no error"
    except Exception as err:               # glassgrad compares the recomputed values
        caught = f"{type(err).__name__}: " + str(err).splitlines()[0]
    _, grad = train_step(s.model, s.x, use_checkpoint=True, preserve_rng_state=False,
                         determinism_check="none")   # PyTorch's check only compares shapes
    wrong = (grad - s.grad_plain).abs().max() / s.grad_plain.abs().max()
    return {"caught": caught, "wrong_pct": round(100 * wrong.item(), 1)}


LESSON = Lesson(
    number=5,
    slug="checkpointing",
    title="Activation checkpointing",
    summary="Trade compute for memory: drop activations in forward, recompute them in backward, same gradients.",
    steps=(
        Step(
            title="The model without checkpointing",
            narrative="""\
Eight blocks of `Linear(128, 128) → ReLU → Dropout(0.1)` on a batch of 512.
Every block keeps activations for backward: the linear layer its input, ReLU
its result, dropout its mask, {act_bytes:,} B each. Activation memory peaks
at **{act_peak_plain:,} B** at the end of {act_peak_phase} (event
#{act_peak_at}, key `P`); the whole step's live bytes (activations,
gradients, temporaries) peak **{peak_plain:,} B** above where it started
(`torch.memory.max_memory_allocated()`), in {live_peak_phase} (event
#{live_peak_at}, the cursor, key `p`).

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ] 1 and 2;
`engine/core/storage.py`, NOTE [ Storage lifetime and categories ] 3; the
counters behind `max_memory_allocated`: `engine/memory/state.py`, NOTE
[ Deferred counters ] 1.""",
            code=plain,
            facts=plain_facts,
            focus=Focus("memory", "peak"),
            checks=(Check("activation memory peaked at {act_peak_plain:,} B, at least 3 tensors per block",
                          lambda r: r.values["act_peak_plain"] >= 3 * BLOCKS * r.values["act_bytes"]),
                    Check("the activation peak (P) is in forward, the live-bytes peak (p) in {live_peak_phase}",
                          lambda r: r.values["act_peak_phase"] == "forward"
                          and r.values["act_peak_at"] <= r.values["live_peak_at"])),
        ),
        Step(
            title="Checkpointed: drop in forward, recompute in backward",
            questions=(
                Question("With every block checkpointed, how many times does each block's forward run in one step?",
                         lambda r: str(1 + r.values["n_recompute"] // r.values["n_regions"]), ("1", "2", "3"),
                         "Once in forward, once more in backward, just before its gradients are needed."),
                Question("Will the gradients differ from the plain run?",
                         lambda r: "no, identical" if r.values["max_grad_diff"] == 0.0 else "yes, slightly",
                         ("yes, slightly", "no, identical"),
                         "The recompute runs the same ops on the same inputs, dropout masks included."),
            ),
            narrative="""\
Now each block runs under `checkpoint(block, h, use_reentrant=False)`. Inside
a checkpointed region, saved tensors are **not kept**: {n_drops} saves were
intercepted ({n_gone} of them, {gone_bytes:,} B, really freed; the others
were the region's input or a weight, alive anyway). Only each block's input
survives. Activation memory peaks at **{act_peak_ckpt:,} B** instead of
{act_peak_plain:,} B.

In backward, each region runs its forward again ({n_recompute} recomputes,
{re_ops} ops replayed for the {fwd_ops} run in forward) just before its
gradients are needed. The step peaks {peak_ckpt:,} B above its start, against
{peak_plain:,} B: **{saved_pct}% less**, for one extra forward.

The gradient is the same as without checkpointing: largest difference
{max_grad_diff}.

Read the code: `engine/utils/checkpoint/_nonreentrant.py`, NOTE
[ Non-reentrant checkpoint ] 1 to 5; the hooks it stands on:
`engine/core/graph.py`, NOTE [ Saved tensors ] 3 and 6.""",
            code=checkpointed,
            facts=ckpt_facts,
            focus=Focus("graph", "first backward_begin"),
            checks=(
                Check("{n_regions} regions, each recomputed once in backward",
                      lambda r: r.values["n_regions"] == BLOCKS == r.values["n_recompute"]),
                Check("the recompute replays every forward op of the regions ({re_ops} = {fwd_ops})",
                      lambda r: r.values["re_ops"] == r.values["fwd_ops"] > 0),
                Check("peak memory fell by {saved_pct}%", lambda r: r.values["peak_ckpt"] < r.values["peak_plain"]),
                Check("activation memory peaked at {act_peak_ckpt:,} B, under half of {act_peak_plain:,} B",
                      lambda r: 2 * r.values["act_peak_ckpt"] < r.values["act_peak_plain"]),
                Check("gradients are identical to the plain run",
                      lambda r: r.values["max_grad_diff"] == 0.0),
            ),
        ),
        Step(
            title="Dropout is replayed from the saved RNG state",
            questions=(
                Question("With preserve_rng_state=False, what happens in backward?",
                         lambda r: "glassgrad stops with CheckpointError" if "CheckpointError" in r.values["caught"]
                         else "the same gradients",
                         ("the same gradients", "glassgrad stops with CheckpointError"),
                         "The recompute draws new dropout masks, and glassgrad compares recomputed values."),
            ),
            narrative="""\
Dropout draws a random mask. The recompute must draw the *same* mask, so
checkpoint saves the generator's state when the region starts and restores
it for the recompute (`preserve_rng_state=True`, the default). That is why
the gradients above matched exactly.

Turn it off and the recompute draws new masks. glassgrad compares the
recomputed values with the forward ones and stops:

> {caught}

PyTorch's default check only compares shapes, so there the step would go on
with a gradient off by up to **{wrong_pct}%** of its largest entry (computed
here with `determinism_check="none"`).

Read the code: `engine/utils/checkpoint/_rng.py`, NOTE [ Checkpoint RNG ] 1
and 2; the comparison that stops the step:
`engine/utils/checkpoint/_common.py`, NOTE [ Checkpoint determinism
check ] 1 to 3.""",
            code=no_rng_replay,
            focus=Focus("log", "last recompute_begin"),
            checks=(
                Check("without the RNG state the recompute is caught", lambda r: "CheckpointError" in r.values["caught"]),
                Check("and unchecked, the gradient is off by {wrong_pct}%", lambda r: r.values["wrong_pct"] > 1.0),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
