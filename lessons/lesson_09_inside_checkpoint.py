"""Lesson 9: inside ``checkpoint``. The reentrant CheckpointFunction line by line, the non-reentrant
variant on saved-tensor hooks, what each refuses, and a checkpoint that frees nothing."""
import inspect
import warnings

import engine as torch
import engine.nn.functional as F
from engine import nn
from engine.utils.checkpoint import CheckpointFunction, checkpoint
from lessons._checkpoint_events import backwards, event, index_of, region_span, types_of
from lessons._format import Check, Focus, Lesson, Question, Step


class Watched(CheckpointFunction):
    """CheckpointFunction, keeping its ctx and what its backward returns."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        Watched.ctx = ctx
        return CheckpointFunction.forward(ctx, run_function, preserve_rng_state, *args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        Watched.returned = CheckpointFunction.backward(ctx, *grad_outputs)
        return Watched.returned


class SavedBytes:
    """A pack hook that notes each storage autograd saves, once, leaving out the parameters and the input."""

    def __init__(self, modules, x):
        self.skip = [p.untyped_storage() for m in modules for p in m.parameters()] + [x.untyped_storage()]
        self.seen, self.sizes = [], []

    def pack(self, t):
        st = t.untyped_storage()
        if not any(st is other for other in self.skip + self.seen):
            self.seen.append(st)
            self.sizes.append(t.numel() * t.element_size())
        return t

    def unpack(self, t):
        return t

    def nbytes(self):
        return sum(self.sizes)


# ---------------------------------------------------------------- step 1: forward


def forward_no_grad(s):
    s.pre = nn.Linear(8, 16)                     # the layer before the checkpoint
    s.block = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.25))
    s.x = torch.randn(4, 8)

    def run_block(h, scale):                     # the checkpointed function: a tensor and a number in
        return s.block(h) * scale
    s.run_block = run_block

    s.h = s.pre(s.x)
    s.h.retain_grad()
    torch.manual_seed(7)                         # dropout's mask comes from here
    s.y = Watched.apply(run_block, True, s.h, 2.0)   # what checkpoint(run_block, h, 2.0, use_reentrant=True) does
    ctx = Watched.ctx
    return {"grad_fn": s.y.grad_fn.name(), "y_requires_grad": s.y.requires_grad,
            "tensor_indices": ctx.tensor_indices, "inputs": repr(ctx.inputs),
            "n_saved": len(ctx.saved_tensors), "saved_is_h": ctx.saved_tensors[0] is s.h,
            "rng_devices": ", ".join(ctx.rng.states)}


def forward_facts(run):
    a, b = region_span(run.events)
    ops = [e for e in run.events[a:b] if e["kind"] == "op"]
    packs = [e for e in run.events if e["kind"] == "pack"]
    watched = event(run.events, "op", op="Watched")
    return {"n_region_ops": len(ops), "region_ops": ", ".join(e["op"] for e in ops),
            "region_nodes": sum(1 for e in ops if e.get("node")),
            "region_packs": sum(1 for e in run.events[a:b] if e["kind"] == "pack"),
            "region_grad_outputs": sum(1 for e in ops if e["output"] and e["output"]["requires_grad"]),
            "watched_saves": ", ".join(f"{list(sv['shape'])}" for sv in watched["node"]["saved"]),
            "watched_pack_storage": [p["storage"] for p in packs if p["node"] == watched["node"]["id"]],
            "h_storage": watched["inputs"][0]["storage"]}


# ---------------------------------------------------------------- step 2: backward


def backward_rerun(s):
    s.y.sum().backward()                         # the engine calls Watched.backward(ctx, ones)
    returned = Watched.returned
    Watched.ctx = Watched.returned = None        # the class keeps nothing once the lesson has read it
    grads = [s.pre.weight.grad.clone(), s.block[0].weight.grad.clone()]

    s.pre.zero_grad(), s.block.zero_grad()       # the same step without checkpoint, same dropout mask
    torch.manual_seed(7)
    s.run_block(s.pre(s.x), 2.0).sum().backward()
    plain = [s.pre.weight.grad, s.block[0].weight.grad]
    return {"returned": types_of(returned),
            "passed_on": bool((returned[2] == s.h.grad).all().item()),
            "max_diff": max((g - p).abs().max().item() for g, p in zip(grads, plain))}


def backward_facts(run):
    evs = run.events
    (outer_a, outer_b), (inner_a, inner_b) = backwards(evs)[:2]
    begin, end = index_of(evs, "recompute_begin"), index_of(evs, "recompute_end")
    h_storage = event(run.trace.events[:run.start], "op", op="Watched")["inputs"][0]["storage"]
    rerun = [e for e in evs[begin:end] if e["kind"] == "op"]
    leaf = next(e for e in evs[begin:end] if e["kind"] == "leaf" and e["tensor"]["name"] is None)
    inner_nodes = {e["node"]["id"] for e in rerun if e.get("node")}
    inner_ran = [e for e in evs[inner_a:inner_b] if e["kind"] == "execute"]
    after = [e["name"] for e in evs[inner_b:outer_b] if e["kind"] == "execute"]
    watched_at = next(i for i, e in enumerate(evs) if e["kind"] == "execute" and e["name"] == "WatchedBackward")
    return {"n_rerun_ops": len(rerun), "rerun_nodes": len(inner_nodes),
            "rerun_phase_ok": all(e["phase"] == "recompute" for e in rerun),
            "leaf_storage": leaf["tensor"]["storage"], "h_storage": h_storage, "leaf_id": leaf["tensor"]["id"],
            "leaf_requires_grad": leaf["tensor"]["requires_grad"],
            "inner_ran": ", ".join(e["name"] for e in inner_ran),
            "inner_only_rerun": all(e["node"] in inner_nodes for e in inner_ran),
            "nested": outer_a < watched_at < begin < end < inner_a < inner_b < outer_b,
            "after_inner": " -> ".join(after),
            "recompute_at": run.start + begin}


# ---------------------------------------------------------------- step 3: why detach


def why_detach(s):
    s.pre.zero_grad(set_to_none=True)
    h = s.pre(s.x)
    kept = h.detach()                            # what detach_variable does:
    kept.requires_grad = h.requires_grad         # a new leaf that still requires grad
    s.block(kept).sum().backward()
    out = {"kept_grad": kept.grad is not None, "pre_untouched": s.pre.weight.grad is None}

    cut = h.detach()                             # detach alone: requires_grad is False
    s.block(cut).sum().backward()
    out["cut_grad"] = repr(cut.grad)

    s.block(h).sum().backward()                  # no detach: the inner backward runs on into pre's graph ...
    out["pre_reached"] = s.pre.weight.grad is not None
    try:
        h.sum().backward()                       # ... so when the outer one gets there, it is gone
        out["second"] = "no error"
    except RuntimeError as err:
        out["second"] = str(err).split(" (")[0]
    return out


# ---------------------------------------------------------------- step 4: non-reentrant


def non_reentrant(s):
    s.pre.zero_grad(), s.block.zero_grad()
    torch.manual_seed(7)
    h = s.pre(s.x)
    y = checkpoint(s.run_block, h, 2.0, use_reentrant=False)
    y.sum().backward()
    grads = [s.pre.weight.grad.clone(), s.block[0].weight.grad.clone()]

    s.pre.zero_grad(), s.block.zero_grad()       # the same step without checkpoint
    torch.manual_seed(7)
    s.run_block(s.pre(s.x), 2.0).sum().backward()
    plain = [s.pre.weight.grad, s.block[0].weight.grad]
    return {"max_diff": max((g - p).abs().max().item() for g, p in zip(grads, plain))}


def non_reentrant_facts(run):
    evs = run.events
    a, b = region_span(evs)
    drops = [e for e in evs[a:b] if e["kind"] == "checkpoint_drop"]
    fwd_ops = [e for e in evs[a:b] if e["kind"] == "op"]
    begin, end = index_of(evs, "recompute_begin"), index_of(evs, "recompute_end")
    rerun = [e for e in evs[begin:end] if e["kind"] == "op"]
    spans = backwards(evs)
    trigger = next(e for e in reversed(evs[:begin]) if e["kind"] == "execute")
    return {"n_drops": len(drops), "n_freed": sum(not d["kept"] for d in drops),
            "freed_bytes": sum(d["bytes"] for d in drops if not d["kept"]),
            "kept_names": ", ".join(sorted({d["name"] for d in drops if d["kept"]})),
            "region_nodes": sum(1 for e in fwd_ops if e.get("node")),
            "n_fwd_ops": len(fwd_ops), "n_rerun_ops": len(rerun),
            "fwd_ops": ", ".join(e["op"] for e in fwd_ops), "rerun_ops": ", ".join(e["op"] for e in rerun),
            "n_backwards_first": sum(1 for x, _ in spans if x < spans[0][1]) if spans else 0,
            "recompute_inside": spans[0][0] < begin < end < spans[0][1],
            "trigger": trigger["name"]}


# ---------------------------------------------------------------- step 5: what each refuses


def refusals(s):
    out = {}
    for reentrant in (True, False):
        h = s.pre(s.x)
        try:                                             # autograd.grad through a checkpoint
            y = checkpoint(s.run_block, h, 2.0, use_reentrant=reentrant)
            torch.autograd.grad(y.sum(), h)
            out[f"grad_{reentrant}"] = "works"
        except RuntimeError as err:
            out[f"grad_{reentrant}"] = str(err)

        h = s.pre(s.x)
        try:                                             # backward(inputs=...)
            y = checkpoint(s.run_block, h, 2.0, use_reentrant=reentrant)
            y.sum().backward(inputs=[h])
            out[f"inputs_{reentrant}"] = "works"
        except RuntimeError as err:
            out[f"inputs_{reentrant}"] = str(err)

        s.block.zero_grad()                              # no input requires grad
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = checkpoint(s.run_block, torch.ones(4, 16), 2.0, use_reentrant=reentrant)
        out[f"warned_{reentrant}"] = "; ".join(str(w.message) for w in caught) or "no warning"
        out[f"y_grad_{reentrant}"] = y.requires_grad
        if y.requires_grad:
            y.sum().backward()
        out[f"block_grad_{reentrant}"] = s.block[0].weight.grad is not None

        def two(h):                                      # outputs in a list
            return [s.block(h), s.block(h) * 2]
        outs = checkpoint(two, s.pre(s.x), use_reentrant=reentrant)
        try:
            outs[0].sum().backward()
            out[f"list_{reentrant}"] = "works"
        except RuntimeError as err:
            out[f"list_{reentrant}"] = str(err)
    return out


def refusal_facts(run):
    v = run.values
    return {"grad_error": v["grad_True"].split(". ")[0], "list_error": v["list_True"]}


# ---------------------------------------------------------------- step 6: a checkpoint that frees nothing


def boundaries(s):
    s.blocks = [nn.Sequential(nn.Linear(64, 128), nn.ReLU()),
                nn.Sequential(nn.Linear(128, 128), nn.ReLU()),
                nn.Linear(128, 10)]
    x = torch.randn(32, 64)                      # a batch of 32
    target = torch.randint(0, 10, (32,))
    b1, b2, b3 = s.blocks
    ways = {"plain": lambda x: b3(b2(b1(x))),
            "middle": lambda x: b3(checkpoint(b2, b1(x), use_reentrant=False)),
            "first_two": lambda x: b3(checkpoint(lambda a: b2(b1(a)), x, use_reentrant=False))}
    out = {}
    for name, forward in ways.items():
        saved = SavedBytes(s.blocks, x)
        with torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
            loss = F.cross_entropy(forward(x), target)
        out[name] = saved.nbytes()
        out[f"{name}_parts"] = " + ".join(f"{b:,}" for b in saved.sizes)
        out[f"{name}_act"] = torch.memory.memory_stats().get("allocated_bytes.activation.current", 0)
        loss.backward()
    out["expected"] = 2 * 32 * 128 * 4 + 32 * 10 * 4 + 32 * 8 + 4   # two ReLU outputs, log_softmax, target, weight
    out["half_pct"] = round(100 * out["first_two"] / out["plain"])
    return out


def boundary_facts(run):
    evs, out = run.events, {}
    for name, nth in (("mid", 0), ("two", 1)):
        a, b = region_span(evs, nth)
        drops = [e for e in evs[a:b] if e["kind"] == "checkpoint_drop"]
        stop = index_of(evs[b:], "backward_begin") + b          # freed before its backward starts
        freed = {e["storage"] for e in evs[a:stop] if e["kind"] == "free"}
        out[f"drops_{name}"] = len(drops)
        gone = {d["storage"]: d["bytes"] for d in drops if d["storage"] in freed}
        out[f"freed_{name}"] = sum(d["storage"] in freed for d in drops)
        out[f"freed_bytes_{name}"] = sum(gone.values())          # one storage may be saved twice
        out[f"drop_names_{name}"] = ", ".join(f"`{d['name']}`" for d in drops)
    return out


def _share(saved, total) -> str:
    """A saving in words, for the questions."""
    f = saved / total if total else 0.0
    return ("nothing" if f < 0.05 else "about a quarter" if f < 0.375 else "about half" if f < 0.7
            else "almost all")


# ---------------------------------------------------------------- the lesson

_WATCHED = inspect.getsource(Watched)
_SAVED_BYTES = inspect.getsource(SavedBytes)

LESSON = Lesson(
    number=9,
    slug="inside_checkpoint",
    title="Inside checkpoint",
    summary="The reentrant CheckpointFunction line by line, the hook-based variant, what each refuses, "
            "and a checkpoint that frees nothing.",
    steps=(
        Step(
            title="Forward under no_grad: the chain is cut",
            questions=(
                Question("How many graph nodes does the checkpointed block build in forward?",
                         lambda r: "none" if r.values["region_nodes"] == 0 else "one per op",
                         ("none", "one per op"),
                         "The block runs under no_grad: {n_region_ops} ops, not one node, nothing saved."),
            ),
            narrative="""\
`checkpoint(fn, *args, use_reentrant=True)` is one line:
`CheckpointFunction.apply(fn, preserve_rng_state, *args)`, an
`autograd.Function`. To look inside, this lesson calls it through
`Watched`, the same class with two lines that keep its `ctx` and what its
backward returns:

```python
""" + _WATCHED + """```

Its forward runs `run_block` under **`no_grad`**: the region made
{n_region_ops} ops ({region_ops}), **{region_nodes} graph nodes**, saved
{region_packs} tensors, and none of its outputs requires grad. Inside, the chain back to `h` is cut. The only link
is the Function's own node, `{grad_fn}` (so `y` requires grad), which
saves one tensor, `{watched_saves}`: the input `h` itself, through
`ctx.save_for_backward`.

The rest sits on `ctx`: `tensor_indices` {tensor_indices} (where the tensors
were among the arguments), `inputs` {inputs} (the non-tensor arguments,
`None` where a tensor goes), and the generator state of `{rng_devices}`,
stashed so dropout can draw the same mask again (`ctx.rng`; PyTorch keeps it
as `ctx.fwd_cpu_state`). In PyTorch the node *is* the ctx, so
`y.grad_fn.tensor_indices` reads the same field.

Read the code: `engine/utils/checkpoint/_reentrant.py`, NOTE [ Reentrant
checkpoint ] 1; the RNG stash in `engine/utils/checkpoint/_rng.py`, NOTE
[ Checkpoint RNG ] 1 and 3.""",
            code=forward_no_grad,
            facts=forward_facts,
            focus=Focus("graph", "first op op == 'Watched'"),
            checks=(
                Check("the region made {n_region_ops} ops and no graph node, saved nothing",
                      lambda r: r.values["n_region_ops"] >= 3 and r.values["region_nodes"] == 0
                      and r.values["region_packs"] == 0 and r.values["region_grad_outputs"] == 0),
                Check("the node saves exactly one tensor, the input h (its storage)",
                      lambda r: r.values["n_saved"] == 1 and r.values["saved_is_h"]
                      and r.values["watched_pack_storage"] == [r.values["h_storage"]]),
                Check("ctx keeps the number 2.0, the tensor's place and the CPU generator state",
                      lambda r: r.values["inputs"] == "[None, 2.0]" and r.values["tensor_indices"] == [0]
                      and r.values["rng_devices"] == "cpu"),
            ),
        ),
        Step(
            title="Backward: detach, rerun under enable_grad, a nested backward",
            narrative="""\
`y.sum().backward()` reaches `WatchedBackward` and calls
`CheckpointFunction.backward(ctx, grad)`. In order (event #{recompute_at} on):

1. it takes `h` back from `ctx.saved_tensors` and puts it among the other
   arguments at `tensor_indices`;
2. it sets the stashed generator state (and puts the surrounding one back
   afterwards);
3. `detach_variable` makes a **new leaf** on the same storage (tensor
   {leaf_id}, storage {leaf_storage}, the storage of `h`) that still
   **requires grad**;
4. it reruns `run_block` under **`enable_grad`**: {n_rerun_ops} ops in phase
   `recompute`, this time building {rerun_nodes} graph nodes that save what
   their backward needs;
5. it runs a **nested backward** from the rerun's output, inside the outer
   one. It executes {inner_ran}: only the rerun's nodes. It stops at the detached leaf, whose `.grad`
   is now the gradient for `h`;
6. it returns **{returned}**: one entry per forward argument, `None` for
   `run_function`, for `preserve_rng_state` and for the number 2.0, the
   leaf's `.grad` for `h`.

The outer backward takes that gradient on (it is what `h.grad` holds) and
runs {after_inner}, the layer before. The gradients equal those of the same step without
checkpointing, dropout included (largest difference {max_diff}).

Read the code: `engine/utils/checkpoint/_reentrant.py`, NOTE [ Reentrant
checkpoint ] 2 and 4; `detach_variable` in
`engine/utils/checkpoint/_common.py`; the backward engine in
`engine/core/backward.py`, NOTE [ Backward execution ].""",
            code=backward_rerun,
            facts=backward_facts,
            focus=Focus("log", "first recompute_begin"),
            checks=(
                Check("the rerun is in phase recompute and builds a graph ({rerun_nodes} nodes)",
                      lambda r: r.values["rerun_phase_ok"] and r.values["rerun_nodes"] > 0
                      and r.values["n_rerun_ops"] >= 3),
                Check("the detached input is a new leaf on h's storage that requires grad",
                      lambda r: r.values["leaf_storage"] == r.values["h_storage"] and r.values["leaf_requires_grad"]),
                Check("a backward runs nested inside the outer one, over the rerun's nodes only",
                      lambda r: r.values["nested"] and r.values["inner_only_rerun"]),
                Check("backward returned {returned}, and its gradient for h is h.grad",
                      lambda r: r.values["returned"] == "(None, None, Tensor[4, 16], None)"
                      and r.values["passed_on"]),
                Check("the gradients equal the plain run's, dropout included",
                      lambda r: r.values["max_diff"] == 0.0),
            ),
        ),
        Step(
            title="Why detach, and why keep requires_grad",
            narrative="""\
Three tries by hand, each a rerun of the block on `h = pre(x)` and a
backward from it:

- **detached, `requires_grad` kept** (what `detach_variable` does): the
  leaf gets a gradient and `pre` is untouched (`pre.weight.grad` stays
  None). The nested backward stops at
  the region's edge; the outer backward carries on from there.
- **detached only**: `h.detach()` does not require grad, so the rerun's
  backward gives it nothing: `.grad` is {cut_grad}. `CheckpointFunction`
  would return `None` for `h`, and every layer before the checkpoint would
  get no gradient.
- **not detached**: the nested backward runs on into `pre`'s graph
  (`pre.weight.grad` is set) and frees its saved tensors. When
  the outer backward arrives there: *{second}*.

Read the code: `detach_variable` in `engine/utils/checkpoint/_common.py`;
why a freed graph refuses a second pass: `engine/core/graph.py`, NOTE
[ Saved tensors ] 4.""",
            code=why_detach,
            focus=Focus("log", "last backward_begin"),
            checks=(
                Check("detached with requires_grad kept: the leaf gets a gradient, pre gets none",
                      lambda r: r.values["kept_grad"] and r.values["pre_untouched"]),
                Check("detached only: the gradient for h is {cut_grad}", lambda r: r.values["cut_grad"] == "None"),
                Check("not detached: the outer backward finds pre's graph freed",
                      lambda r: r.values["pre_reached"] and r.values["second"].startswith(
                          "Trying to backward through the graph a second time")),
            ),
        ),
        Step(
            title="Non-reentrant: saved-tensor hooks, no nested backward",
            narrative="""\
`checkpoint(run_block, h, 2.0, use_reentrant=False)` runs the block **with
grad on**, so its ops make {region_nodes} graph nodes as usual, but under a
`saved_tensors_hooks` pack hook: each of the {n_drops} tensors autograd
wanted to save is replaced by a small holder (a `checkpoint_drop` event).
{n_freed} of them ({freed_bytes:,} B) are really freed in forward; the others
({kept_names}) are the region's input or the block's weights, alive anyway.

In backward there is **no nested backward**: the step's one backward pass
does the recompute itself. The first node that needs a dropped tensor, `{trigger}` (dropout's
multiplication by its mask), unpacks a holder, and that reruns the block
right there, inside the outer backward; the rerun hands
each holder its tensor. The forward ran {n_fwd_ops} ops ({fwd_ops}); the rerun
ran {n_rerun_ops} ({rerun_ops}): it **stops early**, once the last tensor
the forward saved is back, so the final `* 2.0` (which saves nothing) is not
rerun. Same gradients as the plain run (largest difference {max_diff}).

Read the code: `engine/utils/checkpoint/_nonreentrant.py`, NOTE
[ Non-reentrant checkpoint ] 1, 3 and 4; the hooks themselves in
`engine/core/graph.py`, NOTE [ Saved tensors ] 3.""",
            code=non_reentrant,
            facts=non_reentrant_facts,
            focus=Focus("log", "first recompute_begin"),
            checks=(
                Check("the region built its graph and dropped {n_drops} saved tensors, {n_freed} of them freed",
                      lambda r: r.values["region_nodes"] > 0 and r.values["n_drops"] > r.values["n_freed"] > 0),
                Check("the recompute runs inside the one backward, no nested backward",
                      lambda r: r.values["recompute_inside"] and r.values["n_backwards_first"] == 1),
                Check("early stop: {n_rerun_ops} ops rerun of {n_fwd_ops}",
                      lambda r: 0 < r.values["n_rerun_ops"] < r.values["n_fwd_ops"]),
                Check("the gradients equal the plain run's", lambda r: r.values["max_diff"] == 0.0),
            ),
        ),
        Step(
            title="What each variant refuses",
            narrative="""\
The nested backward of the reentrant variant cannot see what the outer call
asked for, and its forward under `no_grad` builds no graph. So, with
PyTorch's messages:

| call | reentrant | non-reentrant |
| --- | --- | --- |
| `torch.autograd.grad(y.sum(), h)` | error | {grad_False} |
| `y.sum().backward(inputs=[h])` | error | {inputs_False} |
| no input requires grad | warns; `y.requires_grad` {y_grad_True}, the block's weights get a gradient: {block_grad_True} | {warned_False}; `y.requires_grad` {y_grad_False}, weights get a gradient: {block_grad_False} |
| outputs in a list | error | {list_False} |

- `autograd.grad` or `backward(inputs=...)` with reentrant: *{grad_error}.*
- no input requires grad, reentrant: *{warned_True}*. The parameters inside
  are not arguments, so `apply` sees nothing to track and the output has no
  graph at all.
- a list of outputs, reentrant: `apply` tracks only tensors it returns
  directly; those inside the list were made under `no_grad`: *{list_error}*.

The non-reentrant variant runs the region with grad on and only changes
what is saved, so all three work.

Read the code: `engine/utils/checkpoint/_reentrant.py`, NOTE [ Reentrant
checkpoint ] 3 and 4; `engine/utils/checkpoint/__init__.py` (`checkpoint`).""",
            code=refusals,
            facts=refusal_facts,
            focus=Focus("log", "last backward_begin"),
            checks=(
                Check("reentrant refuses autograd.grad and backward(inputs=...), non-reentrant computes both",
                      lambda r: r.values["grad_True"].startswith("When use_reentrant=True, torch.utils.checkpoint "
                                                                 "is incompatible with .grad()")
                      and r.values["grad_False"] == "works"
                      and r.values["inputs_True"] == r.values["grad_True"] and r.values["inputs_False"] == "works"),
                Check("no input requires grad: reentrant warns and its weights get nothing; non-reentrant is fine",
                      lambda r: r.values["warned_True"] == "None of the inputs have requires_grad=True. "
                                                          "Gradients will be None"
                      and not r.values["y_grad_True"] and not r.values["block_grad_True"]
                      and r.values["warned_False"] == "no warning" and r.values["block_grad_False"]),
                Check("outputs in a list: reentrant's have no graph, non-reentrant's do",
                      lambda r: "does not require grad" in r.values["list_True"] and r.values["list_False"] == "works"),
            ),
        ),
        Step(
            title="The surprise: checkpointing the middle block frees nothing",
            questions=(
                Question("Checkpoint only the middle block: how much less is kept for backward?",
                         lambda r: _share(r.values["plain"] - r.values["middle"], r.values["plain"]),
                         ("nothing", "about a quarter", "about half", "almost all"),
                         "Everything the middle block saves sits on its boundary, kept by its neighbours."),
                Question("Checkpoint blocks 1 and 2 as one region: how much less?",
                         lambda r: _share(r.values["plain"] - r.values["first_two"], r.values["plain"]),
                         ("nothing", "about a quarter", "about half", "almost all"),
                         "The first ReLU's output is now inside the region: {half_pct}% of the plain figure stays."),
            ),
            narrative="""\
Lesson 2's MLP as three blocks (`Linear(64, 128) → ReLU`,
`Linear(128, 128) → ReLU`, `Linear(128, 10)`) and cross-entropy, batch 32.
A pack hook counts each storage autograd keeps for backward, once, leaving
out the parameters and the input batch `x` (`torch.autograd.graph.saved_tensors_hooks`,
the same count in PyTorch):

| what is checkpointed | kept for backward | storages |
| --- | --- | --- |
| nothing | **{plain:,} B** | {plain_parts} |
| the middle block | **{middle:,} B** | {middle_parts} |
| blocks 1 and 2, one region | **{first_two:,} B** | {first_two_parts} |

Checkpointing the middle block **frees nothing**: its region drops
{drops_mid} saved tensors ({drop_names_mid}) and frees {freed_mid} of
them. Everything it saves is on its boundary: its input `mat1` (the first
ReLU's output) is saved by the first ReLU too, and by the checkpoint itself;
`mat2` is a weight; its `result` is the block's output, which the third
block's Linear saves again. Inside there is nothing else: the Linear's own
output dies as soon as ReLU has read it, with or without checkpoint.

Put blocks 1 and 2 in one region and the first ReLU's output is inside: it
is dropped and freed ({freed_two} of the {drops_two} drops: ReLU's `result`
and the next Linear's `mat1`, one storage of {freed_bytes_two:,} B),
and the step keeps **{half_pct}%** of the plain figure. A checkpoint saves what lives strictly inside it; choose
regions whose inside is large and whose edges are small.

The memory panel agrees: activations after forward are {plain_act:,} B,
{middle_act:,} B and {first_two_act:,} B (the same storages without the
target, which it files under `input`).

Read the code: `engine/utils/checkpoint/_nonreentrant.py`, NOTE
[ Non-reentrant checkpoint ] 1 and 2.""",
            code=boundaries,
            facts=boundary_facts,
            focus=Focus("memory", "last checkpoint_exit"),
            checks=(
                Check("plain and middle-block runs keep the same {plain:,} B, 2 ReLU outputs + log_softmax + target + 4 B",
                      lambda r: r.values["plain"] == r.values["middle"] == r.values["expected"]
                      and r.values["plain_act"] == r.values["middle_act"]),
                Check("the middle block's region frees none of the {drops_mid} tensors it drops",
                      lambda r: r.values["freed_mid"] == 0 and r.values["drops_mid"] > 0),
                Check("blocks 1 and 2 in one region keep about half: {first_two:,} B, {half_pct}%",
                      lambda r: r.values["plain"] - r.values["first_two"] == 32 * 128 * 4
                      == r.values["freed_bytes_two"] == r.values["plain_act"] - r.values["first_two_act"]
                      and 45 <= r.values["half_pct"] <= 55),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
