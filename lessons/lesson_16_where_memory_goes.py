"""Lesson 16: where did my memory go? One training step of a tiny GPT, read through the memory views."""
import inspect
import math

import engine as torch
import engine.nn.functional as F
from engine import nn
from engine.memory.allocator import MIN_BLOCK, SMALL_BUFFER, round_size
from lessons._format import Check, Focus, Lesson, Question, Step
from replay.holders import holders
from replay.lifetimes import lifetimes
from replay.memory import Replay, cause_of, start_of
from replay.segments import SegmentsAt, gap
from replay.words import nbytes

VOCAB, N_EMBD, N_HEAD, T, BATCH = 64, 48, 4, 64, 4     # a batch of 4 sequences of 64 tokens
SETUP = {"V": VOCAB, "C": N_EMBD, "W": 4 * N_EMBD, "H": N_HEAD, "T": T, "T2": T // 2, "B": BATCH, "tokens": BATCH * T}
NAMES = {"parameter": "parameters", "activation": "activations", "gradient": "gradients", "other": "temporaries",
         "input": "inputs", "optimizer": "optimizer state"}


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention, written out (its slow path): every head's T × T scores are tensors."""

    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
        self.c_proj = nn.Linear(N_EMBD, N_EMBD)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
        q = q.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)     # (B, nh, T, hs)
        k = k.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        v = v.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // N_HEAD))   # (B, nh, T, T)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~causal, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(N_EMBD)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)      # token embeddings
        self.wpe = nn.Embedding(T, N_EMBD)          # position embeddings
        self.block = Block()
        self.ln_f = nn.LayerNorm(N_EMBD)
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        return self.lm_head(self.ln_f(self.block(x)))


def train_step(s, t=T):
    """One training step on a fresh batch of sequences of t tokens."""
    idx = torch.randint(0, VOCAB, (BATCH, t))        # token ids
    targets = torch.randint(0, VOCAB, (BATCH, t))    # the token that follows each one
    logits = s.model(idx)
    loss = F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))
    loss.backward()
    s.optimizer.step()
    s.optimizer.zero_grad()                          # set_to_none: no gradient waits for the next step
    return loss.item()


# ---------------------------------------------------------------- the steps' code


def one_training_step(s):
    s.model = TinyGPT()     # embedding, one attention + MLP block, LayerNorm, head
    s.optimizer = torch.optim.SGD(s.model.parameters(), lr=0.1)
    loss = train_step(s)    # the training step shown above
    return {"n_params": sum(p.numel() for p in s.model.parameters()), "loss": round(loss, 2)}


def same_step(s):
    return {"loss": round(train_step(s), 2)}    # the same training step again, on a new batch


def half_the_sequence(s):
    return {"loss": round(train_step(s, T // 2), 2)}    # 32 tokens a sequence instead of 64


# ---------------------------------------------------------------- facts from the recorded run


def made_here(run) -> list:
    """Every storage this lesson made (NOTE [ Storage lifetimes ]), leaving out bytes alive before it began."""
    return [lt for lt in lifetimes(run.trace) if not lt.before_recording]


def live_at(lts, at) -> dict:
    """Bytes per category of the storages alive after event ``at``."""
    out = dict.fromkeys(NAMES, 0)
    for lt in lts:
        if lt.alive_at(at):
            cat = lt.category_at(at)
            out[cat] = out.get(cat, 0) + lt.bytes
    return out


def step_peak(run, k, category=None) -> tuple:
    """(peak index, lo, hi): the live-bytes (or ``category``) peak of lesson step k, whose events run
    from its mark to the next, [lo, hi)."""
    marks = [i for i, e in enumerate(run.trace.events) if e["kind"] == "mark" and e.get("text") == "step"]
    lo, hi = marks[k], (marks[k + 1] if k + 1 < len(marks) else len(run.trace.events))
    return Replay(run.trace.events[:hi]).peak_in(lo, hi, category)[0], lo, hi


def peak_facts(run):
    at = run.focus_index()
    live = live_at(made_here(run), at)
    total = sum(live.values())
    return {**SETUP, **{f"{c}_h": nbytes(b) for c, b in live.items()}, "at": at, "live": live, "total": total,
            "total_h": nbytes(total), "phase": run.trace.events[at]["phase"],
            "cause": cause_of(run.trace.events, at).replace(" (backward)", ""),
            "top": NAMES[max(live, key=live.get)], "param_bytes": 4 * run.values["n_params"],
            "act_share": round(100 * live["activation"] / total), "code": inspect.getsource(train_step).rstrip(),
            "n_run": sum(1 for e in run.trace.events[run.start:at + 1] if e["kind"] == "execute"),
            "n_exec": sum(1 for e in run.events if e["kind"] == "execute")}


def lifetimes_facts(run):
    at = run.focus_index()
    lts = made_here(run)
    mine = sorted((lt for lt in lts if lt.alive_at(at) and lt.start >= run.start), key=lambda lt: (-lt.bytes, lt.start))
    lines = []
    for k, lt in enumerate(mine[:3], 1):
        saved = ", ".join(f"{name} as {what!r}" for _, _, name, what in lt.saved_by) or "nothing"
        lines.append(f"{k}. **{nbytes(lt.bytes)}**, made by `{lt.made_by}` at {lt.where} in `{lt.module}` "
                     f"(event #{lt.made_at}); saved by {saved}; freed at event #{lt.end}: {lt.freed_why}.")
    total = sum(live_at(lts, at).values())
    return {**SETUP, "at": at, "total": total, "total_h": nbytes(total), "n_alive": len(mine), "top3": mine[:3],
            "op1": mine[0].made_by, "stories": "\n".join(lines), "scores_bytes": BATCH * N_HEAD * T * T * 4,
            "scores_h": nbytes(BATCH * N_HEAD * T * T * 4),
            "first_total": sum(live_at(lts, step_peak(run, 0)[0]).values())}


def module_rows(run, at):
    """Who made the activation bytes alive after ``at``, by module path (NOTE [ Holders ]): {path: Row}."""
    lts = [lt for lt in made_here(run) if lt.start >= run.start]
    return {r.name: r for r in holders(lts, at, by="module", categories=("activation",))}


def holders_facts(run):
    at = run.focus_index()
    rows = module_rows(run, at)
    table = ["| module | own | total |", "| --- | --- | --- |"]
    for name in ("", "block", "block.attn", "block.mlp", "block.mlp.c_fc", "block.mlp.gelu"):
        r = rows.get(name)
        table.append(f"| `{name or '(top level)'}` | {nbytes(r.own if r else 0)} | {nbytes(r.total if r else 0)} |")
    by_op: dict = {}
    for lt in made_here(run):
        if lt.start >= run.start and lt.alive_at(at) and lt.module == "block.attn" and lt.category_at(at) == "activation":
            by_op[lt.made_by] = by_op.get(lt.made_by, 0) + lt.bytes
    attn, mlp = rows["block.attn"].total, rows["block.mlp"].total
    hidden = BATCH * T * 4 * N_EMBD * 4
    begin = next(i for i in range(run.start, run.end) if run.trace.events[i]["kind"] == "backward_begin")
    temps = [lt for lt in made_here(run) if run.start <= lt.start < run.end and lt.made_by in ("bmm", "mul", "masked_fill")
             and lt.bytes == BATCH * N_HEAD * T * T * 4]
    return {**SETUP, "at": at, "table": "\n".join(table), "attn": attn, "mlp": mlp, "attn_h": nbytes(attn),
            "mlp_h": nbytes(mlp), "block_own": rows["block"].own, "block_own_h": nbytes(rows["block"].own),
            "softmax": by_op.get("softmax", 0), "softmax_h": nbytes(by_op.get("softmax", 0)),
            "copies": by_op.get("clone", 0), "copies_h": nbytes(by_op.get("clone", 0)),
            "scores": BATCH * N_HEAD * T * T * 4, "hidden": hidden, "hidden_h": nbytes(hidden),
            "width": BATCH * T * N_EMBD * 4, "costliest": "block.attn" if attn > mlp else "block.mlp",
            "n_temps": len(temps), "temps_freed": all(lt.end is not None and lt.end < begin for lt in temps)}


def backward_facts(run):
    lo, hi = run.focus_window()
    at = run.focus_index()
    lts = made_here(run)
    evs = run.trace.events
    first, last = live_at(lts, lo), live_at(lts, hi - 1)
    scores = BATCH * N_HEAD * T * T * 4
    tt = [lt for lt in lts if lo <= lt.start < hi and lt.bytes == scores]     # gradients of the T x T weights
    bump = max(range(lo, hi), key=lambda i: (sum(lt.alive_at(i) for lt in tt), -i))
    cross = next((i for i in range(lo, hi) if live_at(lts, i)["gradient"] > live_at(lts, i)["activation"]), None)
    grads = last["gradient"]
    return {**SETUP, "lo": lo, "hi": hi - 1, "at": at, "peak_h": nbytes(sum(live_at(lts, at).values())),
            "step_peak": run.peak()["at"], "act_lo_h": nbytes(first["activation"]), "act_lo": first["activation"],
            "grad_lo": first["gradient"], "act_hi": last["activation"], "grad_hi": grads, "grad_hi_h": nbytes(grads),
            "param_bytes": last["parameter"], "phases": {e["phase"] for e in evs[lo:hi]},
            "n_grads": sum(1 for lt in lts if lt.alive_at(hi - 1) and lt.category_at(hi - 1) == "gradient"),
            "bump": bump, "n_tt": sum(lt.alive_at(bump) for lt in tt), "scores_h": nbytes(scores),
            "tt_makers": ", ".join(sorted({lt.made_by.replace(" (backward)", "") for lt in tt})),
            "bump_h": nbytes(sum(live_at(lts, bump).values())),
            "cross": cross, "cross_cause": cause_of(evs, cross).replace(" (backward)", "") if cross is not None else "",
            "n_accumulated": sum(1 for e in evs[lo:hi] if e["kind"] == "accumulate"),
            "grads_are": ("as many as the parameters" if grads == last["parameter"] else
                          "as many as the activations were" if grads == first["activation"] else
                          "none yet" if grads == 0 else nbytes(grads))}


def allocator_facts(run):
    at = run.focus_index()
    model = SegmentsAt(run.trace.events).at(at)      # the lesson's own events, replayed from the first
    g = gap(model)
    lts = [lt for lt in made_here(run) if lt.alive_at(at)]
    snap = model.snapshot()
    return {**SETUP, "at": at, "g": g, "reserved_h": nbytes(g["reserved"]), "requested_h": nbytes(g["requested"]),
            "rounding_h": nbytes(g["rounding"]), "cached_h": nbytes(g["cached"]), "n_segments": g["segments"],
            "n_free": g["free_blocks"], "frag": f"{g['fragmentation']:.2f}",
            "exact": sum(lt.bytes for lt in lts), "rounded": sum(round_size(lt.bytes) for lt in lts),
            "n_live": len(lts), "n_tiny": sum(1 for lt in lts if lt.bytes < MIN_BLOCK),
            "tiny_params": sum(1 for lt in lts if lt.bytes == 4 * N_EMBD and lt.category_at(at) == "parameter"),
            "tiny_scalars": sum(1 for lt in lts if lt.bytes == 4),
            "segments_h": f"{g['segments']} segment" + ("s" if g["segments"] != 1 else ""),
            "blocks": [b["size"] for seg in snap for b in seg["blocks"]],
            "segment_sizes": sorted({seg["total_size"] for seg in snap})}


def reserved_answer(r) -> str:
    g = r.values["g"]
    if g["rounding"] == g["cached"] == 0:
        return "exactly the tensors' bytes"
    return "the tensors, rounded up" if g["cached"] == 0 else "whole 2 MiB segments, part of them free"


def activation_storages(run, k):
    """Lesson step k's activation peak and (maker op, module, bytes) of the activation storages the
    step made that are alive there, in the order they were made."""
    at, lo, hi = step_peak(run, k, "activation")
    lts = [lt for lt in made_here(run) if lo <= lt.start < hi and lt.alive_at(at) and lt.category_at(at) == "activation"]
    return at, [(lt.made_by, lt.module, lt.bytes) for lt in sorted(lts, key=lambda lt: lt.start)]


def half_facts(run):
    _, long = activation_storages(run, run.index - 1)
    at, short = activation_storages(run, run.index)
    pairs = list(zip(long, short))
    ratio = [a[2] // b[2] if b[2] and a[2] % b[2] == 0 else None for a, b in pairs]
    part = {q: sum(a[2] for (a, _), k in zip(pairs, ratio) if k == q) for q in (1, 2, 4)}
    act_long, act_short = sum(b for _, _, b in long), sum(b for _, _, b in short)
    predicted = part[4] // 4 + part[2] // 2 + part[1]
    rows = module_rows(run, at)
    attn, mlp = rows["block.attn"].total, rows["block.mlp"].total
    return {**SETUP, "at": at, "act_long": act_long, "act_short": act_short, "act_long_h": nbytes(act_long),
            "act_short_h": nbytes(act_short), "r": act_short / act_long, "ratio": f"{act_short / act_long:.2f}",
            "same_ops": len(long) == len(short) and [a[:2] for a in long] == [b[:2] for b in short],
            "ratios": set(ratio), "quad_h": nbytes(part[4]), "lin_h": nbytes(part[2]), "const": part[1],
            "quad_makers": {a[:2] for (a, _), k in zip(pairs, ratio) if k == 4},
            "predicted": predicted, "predicted_h": nbytes(predicted), "attn_h": nbytes(attn), "mlp_h": nbytes(mlp),
            "costliest": "block.attn" if attn > mlp else "block.mlp"}


def ratio_answer(r) -> str:
    x = r.values["r"]
    for word, at in (("about a half", 0.5), ("about a quarter", 0.25), ("unchanged", 1.0)):
        if abs(x - at) < 0.02:
            return word
    return "between a quarter and a half" if 0.25 < x < 0.5 else f"{x:.2f} of it"

LESSON = Lesson(
    number=16,
    slug="where_memory_goes",
    title="Where did my memory go?",
    summary="One training step of a tiny GPT through the memory views: the peak, lifetimes, holders, a window, "
            "the allocator, and what halving the sequence does.",
    steps=(
        Step(
            title="One training step, and its peak",
            narrative="""\
A tiny GPT in nanoGPT's style: token and position embeddings ({V} tokens,
{C} wide), one block (LayerNorm, causal self-attention with {H} heads
written out as nanoGPT's slow path, LayerNorm, an MLP {C} → {W} → {C}), a
final LayerNorm and a head: **{n_params:,} parameters**, {parameter_h}. One
training step on a batch of {B} sequences of {T} tokens:

```python
{code}
```

The step's **live-bytes peak** (key `p`) is at event #{at}, in
**{phase}**, while {cause} makes its output. Alive there:

| category | bytes |
| --- | --- |
| parameters | {parameter_h} |
| activations (saved for backward) | {activation_h} |
| gradients | {gradient_h} |
| temporaries (`other`) | {other_h} |
| inputs (the token ids) | {input_h} |

Activations are {act_share}% of the {total_h}. The model is small; the batch
is not: each of the {tokens} tokens keeps its own activations in every layer.
No gradient exists yet: the peak is at the start of backward ({cause} is
node {n_run} of the {n_exec} that backward runs), where the first gradients
flowing back (temporaries) join the activations the forward saved.

Read the code: `engine/core/storage.py`, NOTE [ Storage lifetime and
categories ] 3; `engine/core/backward.py`, NOTE [ Backward execution ] 7.""",
            code=one_training_step,
            facts=peak_facts,
            focus=Focus("memory", "peak", view="chart", window="step"),
            questions=(
                Question("At the step's live-bytes peak, which kind of memory is the largest?",
                         lambda r: r.values["top"], ("parameters", "activations", "gradients", "temporaries"),
                         "Activations: {activation_h}, against {parameter_h} of parameters."),
            ),
            checks=(
                Check("the storages alive there add up to the step's live-bytes peak: {total_h}",
                      lambda r: r.values["total"] == r.peak()["bytes"] - sum(start_of(r.trace.meta).values())
                      and r.values["at"] == r.peak()["at"]),
                Check("the peak is in {phase}, at node {n_run} of {n_exec}, before any gradient exists",
                      lambda r: r.values["phase"] == "backward" and r.values["n_run"] <= 3
                      and r.values["live"]["gradient"] == 0),
                Check("parameters: {n_params:,} × 4 B = {parameter_h}",
                      lambda r: r.values["live"]["parameter"] == r.values["param_bytes"]),
                Check("activations ({activation_h}) are the largest part of the peak",
                      lambda r: r.values["top"] == "activations"),
            ),
        ),
        Step(
            title="Lifetimes: the largest storages at the peak",
            narrative="""\
The same training step again, on a new batch of the same shape: the same
storages are made and freed, and the step peaks at the same {total_h}. The memory panel now shows **lifetimes**: one band per
storage, from its allocation to its free, the largest drawn and the rest
summed in the last band. The band of the largest storage alive at the peak
(event #{at}) is selected; ↑/↓ choose another, Enter tells its story. The
three largest of the {n_alive} this step made that are alive there:

{stories}

The first is the attention weights, {B} × {H} × {T} × {T} floats: the
softmax's backward needs its result and `att @ v` needs `att`, so two nodes
save the same storage, and it lives until backward has run both. Each of
the three was made in forward, saved, and freed when backward released it:
an activation's life is the distance between the op that made it and the
node that last needs it. The app reads these stories from the trace
(`replay/lifetimes.py`, NOTE [ Storage lifetimes ]).

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ] 2 and 4;
`engine/core/backward.py`, NOTE [ Backward execution ] 4.""",
            code=same_step,
            facts=lifetimes_facts,
            focus=Focus("memory", "peak", view="lifetimes", window="step"),
            questions=(
                Question("Which op made the largest storage alive at the peak?",
                         lambda r: r.values["op1"], ("softmax", "gelu", "log_softmax", "addmm"),
                         "The attention weights softmax returns: {B} × {H} × {T} × {T} floats, {scores_h}."),
            ),
            checks=(
                Check("the step peaks at the same {total_h} as step 1",
                      lambda r: r.values["total"] == r.values["first_total"]),
                Check("the largest storage alive at the peak is softmax's result, {B} × {H} × {T} × {T} × 4 B = {scores_h}",
                      lambda r: r.values["op1"] == "softmax" and r.values["top3"][0].bytes == r.values["scores_bytes"]),
                Check("each of the three was made in forward, saved, and freed when backward released it",
                      lambda r: all(r.trace.events[lt.made_at]["phase"] == "forward" and lt.saved_by
                                    and lt.freed_why == "backward released it" for lt in r.values["top3"])),
            ),
        ),
        Step(
            title="Who holds the bytes: modules",
            narrative="""\
The **holders** table groups the storages alive at the peak (event #{at})
by the module whose forward made them: `own` is a module's own bytes,
`total` adds its submodules'. Counting activations only:

{table}

`block.attn` holds the most, {attn_h} against the MLP's {mlp_h}. Why:

- attention's scores are T × T **per head**: softmax's result is
  {B} × {H} × {T} × {T} floats, {softmax_h}, kept for backward (the raw
  scores, scaled and masked, were temporaries freed in forward). `q @ kᵀ`
  and `att @ v` save copies of q, k and v (a transposed view is copied to
  be multiplied), and `c_proj` the heads' output made contiguous:
  {copies_h} of copies.
- the MLP's hidden layer is 4× wider than the model: `c_fc`'s output
  ({hidden_h}) is saved by GELU, and GELU's output ({hidden_h}) by `c_proj`.

A storage counts where it was made, not where it is read: `block`'s own
{block_own_h} are the two residual sums `x + ...` of `Block.forward`, saved
by the LayerNorms that read them. The app groups by the module path each
op event carries (`replay/holders.py`, NOTE [ Holders ]).

Read the code: `engine/events.py`, NOTE [ Module paths ]; the attention
written out against the fused kernel: `engine/nn/functional/attention.py`.""",
            code=same_step,
            facts=holders_facts,
            focus=Focus("memory", "peak", view="holders", window="step", group="module", category="activation"),
            questions=(
                Question("Which module's forward made more of the activations alive at the peak?",
                         lambda r: r.values["costliest"], ("block.attn", "block.mlp"),
                         "Attention {attn_h}, the MLP {mlp_h}: at {T} tokens the T × T weights weigh more."),
            ),
            checks=(
                Check("softmax's saved result is {B} × {H} × {T} × {T} × 4 B = {softmax_h}",
                      lambda r: r.values["softmax"] == r.values["scores"]),
                Check("the MLP keeps two hidden tensors of {B} × {T} × {W} × 4 B = {hidden_h} each",
                      lambda r: r.values["mlp"] == 2 * r.values["hidden"]),
                Check("the copies of q, k, v and the heads' output: 4 × {B} × {T} × {C} × 4 B = {copies_h}",
                      lambda r: r.values["copies"] == 4 * r.values["width"]),
                Check("the raw, scaled and masked scores ({n_temps} T × T tensors) were freed before backward began",
                      lambda r: r.values["n_temps"] == 3 and r.values["temps_freed"]),
                Check("at the peak attention ({attn_h}) holds more activation bytes than the MLP ({mlp_h})",
                      lambda r: r.values["attn"] > r.values["mlp"]),
                Check("block's own {block_own_h} are the two residual sums, 2 × {B} × {T} × {C} × 4 B",
                      lambda r: r.values["block_own"] == 2 * r.values["width"]),
            ),
        ),
        Step(
            title="A window: backward only",
            narrative="""\
A **window** is a part of the run every memory view shows (`W` steps
through the presets: each lesson step, forward, backward; `a` and `e` mark
one; `x` clears it). This step opens the window on its **backward**, events
#{lo}–#{hi}: the chart draws only that, and the cursor is on the window's
own peak, event #{at}, {peak_h}.

At the window's first event {act_lo_h} of activations are alive and
{grad_lo} B of gradients. Backward runs the graph from the loss back to the
leaves: each node releases what it saved (activations fall) and each
AccumulateGrad makes a parameter's `.grad` ({n_accumulated} of them). At
its end: activations {act_hi} B, gradients **{grad_hi_h}**, exactly the
parameters' bytes.

The gradients overtake the activations only at event #{cross}, during
{cross_cause}, near the end: the first layers' gradients come last. The
hump in the middle is attention's backward: {tt_makers} make gradients of
the T × T weights, {scores_h} each, {n_tt} of them alive at once at event
#{bump} ({bump_h} live). The presets come from `replay/windows.py`
(NOTE [ Windows ]).

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ] 2, 4
and 6.""",
            code=same_step,
            facts=backward_facts,
            focus=Focus("memory", "peak", view="chart", window="backward"),
            questions=(
                Question("When backward ends, how many bytes of gradients are alive?",
                         lambda r: r.values["grads_are"],
                         ("as many as the parameters", "as many as the activations were", "none yet"),
                         "One gradient per parameter, of its shape and dtype: {grad_hi_h}."),
            ),
            checks=(
                Check("the window is the step's backward, and its peak (#{at}) is the step's live-bytes peak",
                      lambda r: r.values["phases"] == {"backward"} and r.values["at"] == r.values["step_peak"]),
                Check("after backward: {act_hi} B of activations, {grad_hi_h} of gradients = the parameters",
                      lambda r: r.values["act_hi"] == 0 and r.values["grad_hi"] == r.values["param_bytes"] > 0),
                Check("{n_accumulated} AccumulateGrad steps made {n_grads} gradients, one per parameter",
                      lambda r: r.values["n_accumulated"] == r.values["n_grads"] == 17),
                Check("gradients overtake activations at #{cross}, in the window's last quarter, after attention's "
                      "hump (#{bump})", lambda r: r.values["cross"] is not None and r.values["cross"] > r.values["bump"]
                      and 4 * (r.values["cross"] - r.values["lo"]) > 3 * (r.values["hi"] - r.values["lo"])),
                Check("attention's backward holds {n_tt} T × T gradients of {scores_h} at once, one from SoftmaxBackward0",
                      lambda r: r.values["n_tt"] >= 2 and "SoftmaxBackward0" in r.values["tt_makers"]),
            ),
        ),
        Step(
            title="Allocated vs reserved at the peak",
            narrative="""\
The **allocator** view replays the same allocations and frees into the
model of PyTorch's CUDA caching allocator (on a CPU run too). At the peak
(event #{at}) the tensors hold **{requested_h}**, what `memory_allocated()`
counts; the allocator has **reserved {reserved_h}**:

- rounding: each block is a multiple of 512 B, +{rounding_h} ({n_tiny} of
  the {n_live} live storages are smaller than 512 B: {tiny_params}
  parameters of {C} floats, the LayerNorms' weights and biases and two
  biases, and {tiny_scalars} scalars of the loss);
- cached: free blocks kept inside the segments for the next request,
  {cached_h} in {n_free} blocks (fragmentation {frag});
- segments: no storage here is over 1 MiB, so every block comes from the
  small pool's 2 MiB segments: {segments_h}.

reserved = tensors + rounding + cached. A free leaves its block reserved:
the caching allocator gives segments back only on `empty_cache()` (lesson
11). The view's figures come from
`replay/segments.py` (NOTE [ Segments at an event ]).

Read the code: `engine/memory/allocator.py`, NOTE [ Caching allocator
model ] 1-3 and 7.""",
            code=same_step,
            facts=allocator_facts,
            focus=Focus("memory", "peak", view="allocator", window="step"),
            questions=(
                Question("Compared with the bytes the tensors hold at the peak, what has the allocator reserved?",
                         reserved_answer, ("exactly the tensors' bytes", "the tensors, rounded up",
                                           "whole 2 MiB segments, part of them free"),
                         "{requested_h} of tensors, {reserved_h} reserved in {segments_h}."),
            ),
            checks=(
                Check("the tensors at the peak are the lesson's live storages: {requested_h}",
                      lambda r: r.values["g"]["requested"] == r.values["exact"]),
                Check("rounding is the sum of each live storage rounded up to 512 B, less its bytes: {rounding_h}",
                      lambda r: r.values["g"]["rounding"] == r.values["rounded"] - r.values["exact"]),
                Check("every segment is a 2 MiB small-pool segment: {n_segments} × 2 MiB = {reserved_h}",
                      lambda r: r.values["segment_sizes"] == [SMALL_BUFFER]
                      and r.values["g"]["reserved"] == r.values["n_segments"] * SMALL_BUFFER),
                Check("every block is a multiple of 512 B", lambda r: all(b % MIN_BLOCK == 0 for b in r.values["blocks"])),
                Check("the {n_tiny} storages under 512 B: {tiny_params} parameters of {C} floats, {tiny_scalars} scalars",
                      lambda r: r.values["n_tiny"] == r.values["tiny_params"] + r.values["tiny_scalars"]
                      and r.values["tiny_params"] == 3 * 2 + 2),     # three LayerNorms' weight and bias, two biases
            ),
        ),
        Step(
            title="One change: half the sequence",
            narrative="""\
The same step with sequences of {T2} tokens instead of {T}. The cursor is
on the step's **activation peak** (key `P`, event #{at}), and the holders
table shows who made the activations alive there.

Activations kept for backward: **{act_long_h}** at {T} tokens (step 5),
**{act_short_h}** at {T2}, {ratio} of it. Not a half: pairing the two
steps' activation storages one by one, {lin_h} grow with T (each token's
own activations: they halve) and {quad_h} with T × T (the attention
weights and the causal mask: they quarter). {lin_h} / 2 + {quad_h} / 4 +
{const} B that do not depend on T = **{predicted_h}**, what the run kept.

With T halved, attention's activations ({attn_h}) fall below the MLP's
({mlp_h}): the T × T term wins only at long sequences. It is what
`F.scaled_dot_product_attention` removes: its fused kernel saves q, k, v,
the output and one log-sum-exp per row, never the T × T weights.

Read the code: `engine/nn/functional/attention.py`;
`engine/ops/nn/sdpa.py`, NOTE [ Fused attention ] 2.""",
            code=half_the_sequence,
            facts=half_facts,
            focus=Focus("memory", "activation peak", view="holders", group="module", category="activation"),
            questions=(
                Question("Halve the sequence, 64 → 32 tokens. The activations kept for backward become…",
                         ratio_answer, ("about a half", "between a quarter and a half", "about a quarter", "unchanged"),
                         "Each token's activations halve, the T × T attention weights quarter: {ratio} of "
                         "{act_long_h}."),
                Question("At 32 tokens, which module's forward made more activation bytes?",
                         lambda r: r.values["costliest"], ("block.attn", "block.mlp"),
                         "The MLP, {mlp_h}, against attention's {attn_h}."),
            ),
            checks=(
                Check("both steps make the same activation storages, each 1, 2 or 4 times smaller at {T2} tokens",
                      lambda r: r.values["same_ops"] and r.values["ratios"] <= {1, 2, 4}),
                Check("the activation peak at {T2} tokens is {lin_h} / 2 + {quad_h} / 4 + {const} B = {act_short_h}",
                      lambda r: r.values["predicted"] == r.values["act_short"]),
                Check("the T × T part is attention's: its softmax result and its mask",
                      lambda r: r.values["quad_makers"] == {("softmax", "block.attn"), ("bitwise_not", "block.attn")}),
                Check("at the activation peak the MLP ({mlp_h}) now holds more than attention ({attn_h})",
                      lambda r: r.values["costliest"] == "block.mlp"),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
