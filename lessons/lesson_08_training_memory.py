"""Lesson 8: what a training step keeps. Parameters, gradients, optimizer state, activations, byte by byte."""
import gc

import engine as torch
import engine.nn.functional as F
from engine import nn

from lessons._format import Check, Focus, Lesson, Step

CATEGORIES = ("parameter", "gradient", "activation", "optimizer")
BATCH, BIG_BATCH = 64, 1024
ROW_ACT = 2 * 512 * 4 + 10 * 4     # per example: two ReLU outputs (512 floats) + log_softmax (10 floats)


def start_counting(s):
    """Remember what is alive before the lesson, so the figures below are this lesson's own."""
    gc.collect()
    s.base = torch.memory.memory_stats()


def live(s):
    """Live bytes per category (memory_stats' "allocated_bytes.<category>.current"), above the start."""
    now = torch.memory.memory_stats()
    key = "allocated_bytes.{}.current".format
    return {c: now.get(key(c), 0) - s.base.get(key(c), 0) for c in CATEGORIES}


def parameters(s):
    start_counting(s)
    s.model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(),
                            nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
    s.n_params = sum(p.numel() for p in s.model.parameters())
    return {"n_params": s.n_params, "n_tensors": len(list(s.model.parameters())),
            "param_bytes": live(s)["parameter"]}


def _live_series(events, upto):
    """Bytes per category after each of ``events[:upto]``, counting only storages allocated in ``events``."""
    cat, live = {}, dict.fromkeys(CATEGORIES + ("input", "other"), 0)
    for e in events[:upto]:
        k = e["kind"]
        if k == "alloc":
            cat[e["storage"]] = e["category"]
            live[e["category"]] = live.get(e["category"], 0) + e["bytes"]
        elif k == "free" and e["storage"] in cat:
            live[cat.pop(e["storage"])] -= e["bytes"]
        elif k == "category" and e["storage"] in cat:
            live[e["old"]] -= e["bytes"]
            live[e["new"]] = live.get(e["new"], 0) + e["bytes"]
            cat[e["storage"]] = e["new"]
        yield dict(live)


def parameter_facts(run):
    made = [e for e in run.of_kind("category") if e["new"] == "parameter"]
    return {"made_bytes": sum(e["bytes"] for e in made), "n_made": len(made),
            "from_input": all(e["old"] == "input" for e in made)}


def forward_backward(s):
    s.x = torch.randn(BATCH, 256)
    s.target = torch.randint(0, 10, (BATCH,))
    torch.memory.reset_peak_memory_stats()
    loss = F.cross_entropy(s.model(s.x), s.target)
    after_forward = live(s)
    loss.backward()
    after_backward = live(s)
    peak = torch.memory.memory_stats()["allocated_bytes.activation.peak"] - s.base.get(
        "allocated_bytes.activation.current", 0)
    return {"act_forward": after_forward["activation"], "grad_forward": after_forward["gradient"],
            "act_peak": peak, "act_end": after_backward["activation"],
            "grad_bytes": after_backward["gradient"], "param_bytes": after_backward["parameter"],
            "same_shapes": all(p.grad.shape == p.shape and p.grad.dtype == p.dtype for p in s.model.parameters())}


def forward_backward_facts(run):
    evs = run.trace.events
    made = [e for e in run.of_kind("category") if e["new"] == "gradient"]
    acts = [live["activation"] for live in list(_live_series(evs, run.end))[run.start:]]
    series = list(_live_series(evs, run.end))
    at = run.focus_index()                      # the step's peak of live bytes
    return {"n_grads": len(made), "act_peak_trace": max(acts), "act_expected": BATCH * ROW_ACT + 4,
            "peak_phase": evs[at]["phase"], "peak_event_bytes": evs[at].get("bytes"),
            "peak_grad": series[at]["gradient"],
            "peak_act": series[at]["activation"], "peak_other": series[at]["other"],
            "act_peak_phase": run.peak("activation")["phase"], "act_peak_at": run.peak("activation")["at"],
            "peak_at": at}


def zero_grads(s):
    grad_id = id(s.model[0].weight.grad)         # which tensor holds the gradient now
    s.optimizer = torch.optim.SGD(s.model.parameters(), lr=0.01)
    s.optimizer.zero_grad(set_to_none=False)     # keep the tensors, write zeros
    kept = live(s)["gradient"]
    all_zero = all((p.grad == 0).all().item() for p in s.model.parameters())
    same_tensor = id(s.model[0].weight.grad) == grad_id
    s.optimizer.zero_grad()                      # the default: set_to_none=True
    return {"kept": kept, "all_zero": all_zero, "same_tensor": same_tensor,
            "freed_to": live(s)["gradient"], "grad_is_none": s.model[0].weight.grad is None}


def zero_grad_facts(run):
    frees = [e for e in run.of_kind("free") if e["category"] == "gradient"]
    return {"n_freed": len(frees), "freed_bytes": sum(e["bytes"] for e in frees)}


def training_step(s, optimizer, batch=BATCH):
    """One training step: zero_grad, forward, backward, optimizer step."""
    optimizer.zero_grad()
    x = torch.randn(batch, 256)
    target = torch.randint(0, 10, (batch,))
    F.cross_entropy(s.model(x), target).backward()
    optimizer.step()


def sgd_state(s):
    training_step(s, s.optimizer)                # plain SGD: p -= lr * grad
    plain = live(s)["optimizer"]
    s.optimizer = torch.optim.SGD(s.model.parameters(), lr=0.01, momentum=0.9)
    before_step = live(s)["optimizer"]           # nothing yet: the state is made lazily
    training_step(s, s.optimizer)
    buffers = [s.optimizer.state[p]["momentum_buffer"] for p in s.model.parameters()]
    return {"plain": plain, "before_step": before_step, "momentum": live(s)["optimizer"],
            "n_buffers": len(buffers), "param_bytes": live(s)["parameter"]}


def adam_state(s):
    s.optimizer = torch.optim.AdamW(s.model.parameters(), lr=1e-3)   # the SGD state is freed here
    after_swap = live(s)["optimizer"]
    training_step(s, s.optimizer)
    state = s.optimizer.state[s.model[0].weight]
    step = state["step"]
    return {"after_swap": after_swap, "adam": live(s)["optimizer"], "keys": ", ".join(sorted(state)),
            "step_shape": str(tuple(step.shape)), "step_dtype": str(step.dtype),
            "step_bytes": step.numel() * step.element_size(),
            "param_bytes": live(s)["parameter"], "n_tensors": len(list(s.model.parameters()))}


def adam_facts(run):
    made = [e for e in run.of_kind("alloc") if e["category"] == "optimizer"]
    made += [e for e in run.of_kind("category") if e["new"] == "optimizer"]
    return {"n_state": len(made), "small": sum(1 for e in made if e["bytes"] == 4)}


def whole_step(s):
    out = {}
    for batch in (BATCH, BIG_BATCH):             # AdamW's state already exists (step 5)
        torch.memory.reset_peak_memory_stats()
        training_step(s, s.optimizer, batch)
        stats = torch.memory.memory_stats()
        out[f"peak_{batch}"] = stats["allocated_bytes.all.peak"] - s.base["allocated_bytes.all.current"]
        out[f"act_peak_{batch}"] = stats["allocated_bytes.activation.peak"] - s.base.get(
            "allocated_bytes.activation.current", 0)
    out["steady"] = live(s)                      # between steps: after optimizer.step()
    return out


def _peak_of_measured_step(run, nth):
    """The highest live-bytes event of the ``nth`` training step of this step's code (0-based, between
    optimizer_step events), and the bytes per category there."""
    evs = run.trace.events
    ends = [i for i in range(run.start, run.end) if evs[i]["kind"] == "optimizer_step"]
    lo, hi = (ends[nth - 1] + 1 if nth else run.start), ends[nth] + 1
    series = list(_live_series(evs, hi))
    at = max(range(lo, hi), key=lambda i: sum(series[i].values()))
    return at, series[at]


def whole_step_facts(run):
    out = {"batch_ratio": BIG_BATCH // BATCH}
    for name, nth in (("small", 0), ("big", 1)):
        at, live = _peak_of_measured_step(run, nth)
        out.update({f"{c}_{name}": b for c, b in live.items()})
        out[f"top_{name}"] = max(CATEGORIES, key=lambda c: live[c])
        out[f"model_{name}"] = live["parameter"] + live["gradient"] + live["optimizer"]
        out[f"batch_{name}"] = live["activation"] + live["input"] + live["other"]
        out[f"phase_{name}"] = run.trace.events[at]["phase"]
        out[f"at_{name}"] = at
    out.update({f"steady_{c}": b for c, b in run.values["steady"].items()})
    v = run.values
    out["act_ratio"] = round(v[f"act_peak_{BIG_BATCH}"] / v[f"act_peak_{BATCH}"], 2)
    out["focus_at"] = run.focus_index()
    return out


LESSON = Lesson(
    number=8,
    slug="training_memory",
    title="What a training step keeps",
    summary="Parameters, gradients, optimizer state and activations, in exact bytes; zero_grad; SGD vs Adam.",
    steps=(
        Step(
            title="Parameters: 4 bytes per number",
            narrative="""\
An MLP 256 → 512 → 512 → 10: three weight matrices and three bias vectors
({n_tensors} tensors), **{n_params:,} numbers**. Each is a float32, 4 bytes, so
the parameters take {n_params:,} × 4 = **{param_bytes:,} B**. That is what
`torch.memory.memory_stats()["allocated_bytes.parameter.current"]` grew by.
Those per-category figures (parameter, gradient, activation, optimizer) are
glassgrad's own: PyTorch's `torch.cuda.memory_stats()` counts bytes by pool
and size only (`allocated_bytes.all.current`, what
`torch.cuda.memory_allocated()` returns). To split PyTorch's memory by
category, record `torch.cuda.memory._record_memory_history()` and read the
snapshot's stack traces, or use `torch.profiler` with `profile_memory=True`.

In the memory panel each storage is allocated as a plain tensor (category
`input`) and becomes a `parameter` when `nn.Linear` wraps it in
`nn.Parameter`: {n_made} category changes, {made_bytes:,} B.

Read the code: `engine/core/storage.py`, NOTE [ Storage lifetime and
categories ] 3; the storage becoming a `parameter`: `Parameter` in
`engine/nn/parameter.py`; the per-category figures: `memory_stats` in
`engine/memory/__init__.py` and `engine/memory/state.py`, NOTE [ Deferred
counters ] 1.""",
            code=parameters,
            facts=parameter_facts,
            focus=Focus("memory", "last category new == 'parameter'"),
            checks=(
                Check("parameter bytes = {n_params:,} numbers × 4 B = {param_bytes:,} B",
                      lambda r: r.values["param_bytes"] == 4 * r.values["n_params"] == 1_597_480),
                Check("the trace shows the same bytes turning from input into parameter ({n_made} tensors)",
                      lambda r: r.values["made_bytes"] == r.values["param_bytes"] and r.values["n_made"] == 6
                      and r.values["from_input"]),
            ),
        ),
        Step(
            title="Forward keeps activations, backward makes gradients",
            narrative="""\
A forward on a batch of 64 and a backward. After forward, **{act_forward:,} B**
of activations are kept for backward (two ReLU outputs of 64 × 512 floats,
the log_softmax of 64 × 10, and 4 B for the loss's `total_weight`), and there
are no gradients yet ({grad_forward} B).

Backward releases the activations as it goes (peak {act_peak:,} B, after
backward **{act_end} B**) and leaves {n_grads} gradients, one per parameter,
**{grad_bytes:,} B**: exactly the parameters' bytes, since each gradient has
its parameter's shape and dtype.

Two peaks. The **activation** peak (key `P`, event #{act_peak_at}) is at the
end of {act_peak_phase}. The step's **live-bytes** peak (the cursor, key `p`,
event #{peak_at}) is not: it is in **{peak_phase}**: activations are down to {peak_act} B, but {peak_grad:,} B of
gradients are already there and {peak_other:,} B of temporaries (the
gradient flowing back, the first layer's weight gradient being made) are
alive with them.

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ] 2;
`engine/core/backward.py`, NOTE [ Backward execution ] 4, 6 and 7;
`engine/core/storage.py`, NOTE [ Storage lifetime and categories ] 3.""",
            code=forward_backward,
            facts=forward_backward_facts,
            focus=Focus("memory", "peak"),
            checks=(
                Check("activations after forward: {act_forward:,} B = 64 × {act_row:,} B + 4 B"
                      .replace("{act_row:,}", f"{ROW_ACT:,}"),
                      lambda r: (r.values["act_forward"] == r.values["act_expected"],
                                 f"{r.values['act_forward']} B, expected {r.values['act_expected']} B")),
                Check("the activation peak from memory_stats ({act_peak:,} B) matches the trace's",
                      lambda r: r.values["act_peak"] == r.values["act_peak_trace"] == r.values["act_forward"]),
                Check("no gradients before backward; none of the activations after it",
                      lambda r: r.values["grad_forward"] == 0 and r.values["act_end"] == 0),
                Check("the step peaks in {peak_phase}: {peak_grad:,} B of gradients, {peak_act} B of activations",
                      lambda r: r.values["peak_phase"] == "backward" and r.values["peak_grad"] > 0
                      and r.values["peak_act"] < r.values["act_forward"]),
                Check("the activation peak (P) is in {act_peak_phase}, the live-bytes peak (p) later",
                      lambda r: r.values["act_peak_phase"] == "forward" and r.values["act_peak_at"] < r.values["peak_at"]),
                Check("the peak event makes the first layer's weight gradient (256 × 512 × 4 B)",
                      lambda r: r.values["peak_event_bytes"] == 256 * 512 * 4),
                Check("gradients: {n_grads} tensors, {grad_bytes:,} B = the parameters' bytes",
                      lambda r: r.values["grad_bytes"] == r.values["param_bytes"] and r.values["n_grads"] == 6
                      and r.values["same_shapes"]),
            ),
        ),
        Step(
            title="zero_grad: zeros, or nothing at all",
            narrative="""\
Gradients accumulate, so each training step starts by clearing them.
`zero_grad(set_to_none=False)` keeps the gradient tensors and writes zeros
into them: they still take **{kept:,} B** (all zero: {all_zero}, the same
tensor as before: {same_tensor}).

`zero_grad()` with PyTorch's default `set_to_none=True` drops them instead:
`p.grad` is None ({grad_is_none}) and {n_freed} frees give back
{freed_bytes:,} B, so gradient memory is **{freed_to} B** until the next
backward. The next backward makes them again; the memory in between is free
for the forward's activations.

Read the code: `zero_grad` in `engine/optim/optimizer.py`;
`engine/core/storage.py`, NOTE [ Storage lifetime and categories ] 2.""",
            code=zero_grads,
            facts=zero_grad_facts,
            focus=Focus("memory", "last free category == 'gradient'"),
            checks=(
                Check("set_to_none=False keeps {kept:,} B of zeros in the same tensors",
                      lambda r: r.values["kept"] == 1_597_480 and r.values["all_zero"] and r.values["same_tensor"]),
                Check("zero_grad() frees all {freed_bytes:,} B: gradient bytes back to {freed_to}",
                      lambda r: r.values["freed_to"] == 0 and r.values["grad_is_none"]
                      and r.values["freed_bytes"] == 1_597_480 and r.values["n_freed"] == 6),
            ),
        ),
        Step(
            title="SGD: nothing, or one momentum buffer per parameter",
            narrative="""\
A training step is now `zero_grad(); loss.backward(); optimizer.step()`.
Plain SGD updates `p -= lr * p.grad` and keeps nothing: optimizer state
**{plain} B**.

SGD with `momentum=0.9` remembers a running direction, one buffer per
parameter. It is made lazily: right after the optimizer is built there is
{before_step} B of state; after the first `step()` there are {n_buffers}
buffers, **{momentum:,} B**, as many bytes as the parameters
({param_bytes:,} B).

Read the code: `engine/optim/optimizer.py`, NOTE [ Optimizer steps ] 1 to
3; the lazy `momentum_buffer` in `engine/optim/sgd.py`.""",
            code=sgd_state,
            focus=Focus("memory", "first alloc category == 'optimizer'"),
            checks=(
                Check("plain SGD keeps {plain} B of state", lambda r: r.values["plain"] == 0),
                Check("momentum state is made at the first step ({before_step} B before it)",
                      lambda r: r.values["before_step"] == 0 and r.values["n_buffers"] == 6),
                Check("momentum buffers = parameter bytes = {momentum:,} B",
                      lambda r: r.values["momentum"] == r.values["param_bytes"] == 1_597_480),
            ),
        ),
        Step(
            title="Adam keeps two buffers and a step count per parameter",
            narrative="""\
Replacing the optimizer frees the momentum buffers (state: {after_swap} B).
AdamW keeps, for each parameter, `{keys}`: `exp_avg` (the running mean of the
gradient) and `exp_avg_sq` (of its square), each the parameter's size, and
`step`, the number of steps taken, kept (as in PyTorch) as a 0-d tensor,
not a Python int: shape {step_shape}, {step_dtype}, {step_bytes} B.

So the state is 2 × {param_bytes:,} + {n_tensors} × {step_bytes} =
**{adam:,} B**, twice the parameters plus {n_tensors} small tensors
({small} of the {n_state} state storages in the trace are 4 B).

Read the code: `engine/optim/optimizer.py`, NOTE [ Optimizer steps ] 3;
the state `exp_avg`, `exp_avg_sq` and `step` in `engine/optim/adam.py`
(`AdamW` is there too).""",
            code=adam_state,
            facts=adam_facts,
            focus=Focus("log", "last optimizer_step"),
            checks=(
                Check("the old momentum buffers were freed", lambda r: r.values["after_swap"] == 0),
                Check("the state of a parameter is {keys}",
                      lambda r: r.values["keys"] == "exp_avg, exp_avg_sq, step"),
                Check("step is a 0-d {step_dtype} tensor of {step_bytes} B",
                      lambda r: r.values["step_shape"] == "()" and r.values["step_dtype"] == "torch.float32"
                      and r.values["step_bytes"] == 4),
                Check("AdamW state = 2 × parameters + {n_tensors} × 4 B = {adam:,} B",
                      lambda r: r.values["adam"] == 2 * r.values["param_bytes"] + 4 * r.values["n_tensors"]
                      == 3_194_984),
                Check("the trace made {n_state} state tensors, {small} of them 4 B",
                      lambda r: r.values["n_state"] == 18 and r.values["small"] == 6),
            ),
        ),
        Step(
            title="The whole step, and a bigger batch",
            narrative="""\
Two more AdamW steps, at batch 64 and at batch 1024. Between steps (after
`optimizer.step()`) training keeps parameters ({steady_parameter:,} B),
gradients ({steady_gradient:,} B) and optimizer state
({steady_optimizer:,} B): **4 × the parameters**, plus 24 B of step counts.
Activations live only inside a step: forward makes them (peak
{act_peak_64:,} B at batch 64), backward frees them.

At batch 64 the step peaks {peak_64:,} B above the lesson's start, in
{phase_small}. There the model's memory (parameters, the gradients made so
far, optimizer state) is {model_small:,} B and the batch's (activations, the
input, backward's temporaries) {batch_small:,} B; of the four kinds above,
**{top_small}** state is the largest ({optimizer_small:,} B).

At batch 1024 ({batch_ratio}× the examples) the activation peak grows
{act_ratio}× to **{act_peak_1024:,} B**, 1024 × {row:,} B + 4 B. The step
peaks {peak_1024:,} B (the cursor), now early in backward, while both ReLU
outputs ({activation_big:,} B) are still alive and only {gradient_big:,} B of
gradients exist: the batch's memory is {batch_big:,} B against the
model's {model_big:,} B, and **{top_big}** is the largest kind. Parameters and optimizer state are the same bytes as
before. Activation memory scales with the batch; the rest with the model.

Read the code: `engine/core/storage.py`, NOTE [ Storage lifetime and
categories ] 3; `engine/core/backward.py`, NOTE [ Backward execution ] 4
and 7; `engine/memory/state.py`, NOTE [ Deferred counters ] 1 and 2;
`engine/optim/optimizer.py`, NOTE [ Optimizer steps ] 3.""".replace("{row:,}", f"{ROW_ACT:,}"),
            code=whole_step,
            facts=whole_step_facts,
            focus=Focus("memory", "peak"),
            checks=(
                Check("between steps: parameters + gradients + optimizer = 4 × parameters + 24 B, no activations",
                      lambda r: r.values["steady_gradient"] == r.values["steady_parameter"] == 1_597_480
                      and r.values["steady_optimizer"] == 2 * 1_597_480 + 24 and r.values["steady_activation"] == 0),
                Check("the activation peak is batch × {row:,} B + 4 B at both batch sizes".replace(
                      "{row:,}", f"{ROW_ACT:,}"),
                      lambda r: r.values[f"act_peak_{BATCH}"] == BATCH * ROW_ACT + 4
                      and r.values[f"act_peak_{BIG_BATCH}"] == BIG_BATCH * ROW_ACT + 4),
                Check("at the batch-64 peak (in backward) the model's memory dominates, optimizer state the most",
                      lambda r: r.values["model_small"] > r.values["batch_small"]
                      and r.values["top_small"] == "optimizer"
                      and r.values["phase_small"] == "backward"),
                Check("at the batch-1024 peak (in backward) the batch's memory dominates, ReLU outputs the most",
                      lambda r: r.values["batch_big"] > r.values["model_big"] and r.values["top_big"] == "activation"
                      and r.values["phase_big"] == "backward"
                      and r.values["activation_big"] == 2 * BIG_BATCH * 512 * 4),
                Check("parameter and optimizer bytes at the peak do not change with the batch",
                      lambda r: all(r.values[f"{c}_small"] == r.values[f"{c}_big"]
                                    for c in ("parameter", "optimizer"))),
                Check("the cursor is on the batch-1024 peak ({peak_1024:,} B, above {peak_64:,} B)",
                      lambda r: r.values["focus_at"] == r.values["at_big"]
                      and r.values[f"peak_{BIG_BATCH}"] > r.values[f"peak_{BATCH}"]),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
