"""Lesson 2: what autograd keeps. Saved tensors op by op, an MLP's activation memory, a second backward."""
import engine as torch
import engine.nn.functional as F
from engine import nn

from lessons._facts import live_by_category, nbytes, nodes, released_bytes, saved_bytes
from lessons._format import Check, Focus, Lesson, Question, Step


def forward(s):
    s.model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(),
                            nn.Linear(128, 128), nn.ReLU(),
                            nn.Linear(128, 10))
    s.x = torch.randn(32, 64)                 # a batch of 32 inputs
    s.target = torch.randint(0, 10, (32,))
    s.loss = F.cross_entropy(s.model(s.x), s.target)
    return {"param_bytes": sum(p.numel() * p.element_size() for p in s.model.parameters())}


def _forward_nodes(run):
    return [n for n in nodes(run.events).values()]


def forward_facts(run):
    rows = ["| node | saves | bytes |", "| --- | --- | --- |"]
    for n in _forward_nodes(run):
        what = ", ".join(f"{x['name']} {list(x['shape'])}" for x in n["saved"]) or "nothing"
        rows.append(f"| {n['name']} | {what} | {saved_bytes(n):,} |")
    refs = sum(saved_bytes(n) for n in _forward_nodes(run))
    live = live_by_category(run.trace.events[:run.end])
    return {"table": "\n".join(rows), "saved_refs": refs, "activation": live.get("activation", 0),
            "relu_bytes": 32 * 128 * 4}


def backward(s):
    s.loss.backward()
    params = list(s.model.parameters())
    return {"grad_bytes": sum(p.grad.numel() * p.grad.element_size() for p in params),
            "param_bytes": sum(p.numel() * p.element_size() for p in params)}


def backward_facts(run):
    before = live_by_category(run.trace.events[:run.start]).get("activation", 0)
    after = live_by_category(run.trace.events[:run.end]).get("activation", 0)
    live, act = run.peak(), run.peak("activation")
    return {"act_before": before, "act_after": after, "released": released_bytes(run.events),
            "n_release": len(run.of_kind("release")),
            "peak_at": live["at"], "peak_phase": live["phase"], "peak_bytes": nbytes(live["bytes"]),
            "peak_grad": nbytes(live["live"].get("gradient", 0)), "peak_act": nbytes(live["live"].get("activation", 0)),
            "act_peak_at": act["at"], "act_peak_phase": act["phase"], "act_peak_bytes": act["bytes"],
            "first_begin": run.start + next(i for i, e in enumerate(run.events) if e["kind"] == "backward_begin")}


def _two_peaks(run):
    v = run.values
    ok = v["peak_phase"] == "backward" and v["act_peak_at"] < v["first_begin"] and v["act_peak_bytes"] == v["act_before"]
    return ok, (f"live peak #{v['peak_at']} in {v['peak_phase']}; activation peak #{v['act_peak_at']}, "
                f"backward begins #{v['first_begin']}")


def _first_relu_bytes(run):
    return nbytes(saved_bytes(next(n for n in _forward_nodes(run) if n["name"] == "ReluBackward0")))


def second_backward(s):
    try:
        s.loss.backward()
        message = "no error"
    except RuntimeError as err:
        message = str(err)
    return {"message": message, "first_words": message.split(" (")[0]}


def retain(s):
    loss = F.cross_entropy(s.model(s.x), s.target)
    s.model.zero_grad()
    loss.backward(retain_graph=True)           # keep the saved tensors
    first = s.model[0].weight.grad.clone()
    loss.backward()                           # works: the graph is still there
    doubled = (s.model[0].weight.grad - 2 * first).abs().max().item()
    return {"doubled_error": doubled}


def retain_facts(run):
    begins = [e for e in run.events if e["kind"] == "backward_begin"]
    releases_first = []
    seen = 0
    for e in run.events:
        if e["kind"] == "backward_begin":
            seen += 1
        elif e["kind"] == "release" and seen == 1:
            releases_first.append(e)
    second = run.start + [i for i, e in enumerate(run.events) if e["kind"] == "backward_begin"][-1]
    kept = live_by_category(run.trace.events[:second]).get("activation", 0)
    return {"n_backward": len(begins), "released_first": len(releases_first), "kept_bytes": kept,
            "released_second": len(run.of_kind("release")) - len(releases_first)}


def _act_forward(run):
    expected = 2 * 32 * 128 * 4 + 32 * 10 * 4 + 4   # two ReLU outputs, log_softmax, total_weight
    return run.values["activation"] == expected, f"{run.values['activation']} B, expected {expected} B"


def _relu_saves_result(run):
    relus = [n for n in nodes(run.events).values() if n["name"] == "ReluBackward0"]
    return len(relus) == 2 and all(n["saved"][0]["is_output"] and n["saved"][0]["bytes"] == 16384 for n in relus)


def _shared(run):
    ns = nodes(run.events)
    relu = [n for n in ns.values() if n["name"] == "ReluBackward0"]
    mms = [n for n in ns.values() if n["name"] == "AddmmBackward0"]
    relu_st = {n["saved"][0]["storage"] for n in relu}
    mat1_st = {x["storage"] for n in mms for x in n["saved"] if x["name"] == "mat1"}
    return relu_st <= mat1_st, f"ReLU storages {sorted(relu_st)}, mat1 storages {sorted(mat1_st)}"


LESSON = Lesson(
    number=2,
    slug="saved_tensors",
    title="What autograd keeps",
    summary="Saved tensors op by op, the activation memory of an MLP, freed as backward passes; retain_graph.",
    steps=(
        Step(
            title="Each op saves what its backward needs",
            questions=(
                Question("How many bytes does the first ReLU's node keep, for a batch of 32 x 128?",
                         _first_relu_bytes, (nbytes(0), nbytes(32 * 128 * 4), nbytes(2 * 32 * 128 * 4)),
                         "ReLU's backward only needs to know where the output was positive: it keeps "
                         "its result, 32 x 128 floats."),
            ),
            narrative="""\
A three-layer MLP (64 → 128 → 128 → 10) on a batch of 32. Here is what each
node of its graph saved during forward:

{table}

`ReluBackward0` keeps its **result** (relu' is 1 where the output is positive),
`AddmmBackward0` keeps its input `mat1` (to get the weight's gradient) and the
weight `mat2` (to get the input's gradient); the first layer's input needs no
gradient, so only `mat1` is kept there.

The saved references add up to {saved_refs:,} B, but activation memory is
**{activation:,} B**: each ReLU output ({relu_bytes:,} B) is *one* storage,
kept both by ReluBackward0 and by the next layer's AddmmBackward0, and the
weights are parameters, not activations.

Read the code: each row's `save` table in `engine/core/primitives.py`
(`relu` keeps its result; `addmm` keeps `mat1` when `mat2` needs a gradient
and `mat2` when `mat1` does); `engine/core/dispatch.py`, NOTE [ Dispatch ] 4;
`engine/core/graph.py`, NOTE [ Saved tensors ] 1 and 2; why a storage saved
twice counts once: `engine/core/storage.py`, NOTE [ Storage lifetime and
categories ] 1 and 3.""",
            code=forward,
            facts=forward_facts,
            focus=Focus("graph", "last op"),
            checks=(
                Check("activation memory after forward is {activation:,} B (2 ReLU outputs + log_softmax + 4 B)",
                      _act_forward),
                Check("both ReluBackward0 nodes save their own 16,384 B result", _relu_saves_result),
                Check("each ReLU output is the same storage the next layer saves as mat1", _shared),
            ),
        ),
        Step(
            title="Backward frees them, node by node",
            questions=(
                Question("Where is the step's live-bytes peak?",
                         lambda r: "during backward" if r.values["peak_phase"] == "backward" else "at the end of forward",
                         ("at the end of forward", "during backward"),
                         "Backward's gradients ({peak_grad} at the peak) and temporary buffers outweigh "
                         "the activations it frees on the way ({peak_act} left there)."),
            ),
            narrative="""\
`loss.backward()` runs the graph from the loss down. After each node runs,
its saved tensors are released ({n_release} release events,
{released:,} B of references). Activation memory goes from
**{act_before:,} B** to **{act_after:,} B**, while {grad_bytes:,} B of
gradients appear, one per parameter.

Two peaks, not one. Key `p` puts the cursor on this step's **live-bytes
peak** (every category summed, what `max_memory_allocated` reports): event
#{peak_at}, in **{peak_phase}**: {peak_bytes} live, of which {peak_grad}
are gradients and {peak_act} activations. Key `P` puts it on the
**activation peak**: event #{act_peak_at}, the end of forward,
{act_peak_bytes:,} B, where every activation is alive at once.

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ] 4, 6
and 7; `engine/core/graph.py`, NOTE [ Saved tensors ] 4; the counters
behind `max_memory_allocated`: `engine/memory/state.py`, NOTE [ Deferred
counters ] 1.""",
            code=backward,
            facts=backward_facts,
            focus=Focus("memory", "first release"),
            checks=(
                Check("activation memory falls from {act_before:,} B to 0 B",
                      lambda r: r.values["act_before"] > 0 and r.values["act_after"] == 0),
                Check("gradients take as many bytes as the parameters ({grad_bytes:,} B)",
                      lambda r: r.values["grad_bytes"] == r.values["param_bytes"] == 104488),
                Check("the live-bytes peak (p) is in {peak_phase}; the activation peak (P) ends forward",
                      _two_peaks),
            ),
        ),
        Step(
            title="A second backward fails",
            questions=(
                Question("Will a second loss.backward() work?",
                         lambda r: "yes" if r.values["message"] == "no error" else "no: it raises",
                         ("yes", "no: it raises"), "The first backward freed what the nodes saved."),
            ),
            narrative="""\
The saved tensors are gone, so the graph cannot run again. Calling
`loss.backward()` a second time raises:

> {message}

That is PyTorch's own message: the engine refuses rather than compute a
wrong gradient from missing values.

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ] 4 (the
message is `_BACKWARD_TWICE` there).""",
            code=second_backward,
            focus=Focus("log", "end"),
            checks=(Check("the error says: {first_words}",
                          lambda r: r.values["first_words"] == "Trying to backward through the graph a second time"),),
        ),
        Step(
            title="retain_graph keeps the graph",
            narrative="""\
With `retain_graph=True` the first backward leaves the saved tensors in place
(releases during the first backward: {released_first}), so a second backward
can run ({n_backward} backward passes here; the second released
{released_second} saved tensors). Gradients **accumulate**: after two passes,
`weight.grad` is twice the first one (largest difference {doubled_error:.1e}).
You pay for it in memory: {kept_bytes:,} B of activations stayed alive between the
two passes, instead of 0 B.

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ] 4 and
6; `engine/core/graph.py`, NOTE [ Saved tensors ] 4.""",
            code=retain,
            facts=retain_facts,
            focus=Focus("memory", "last backward_begin"),
            checks=(
                Check("the first backward released nothing", lambda r: r.values["released_first"] == 0),
                Check("the second backward ran and released the saved tensors",
                      lambda r: r.values["n_backward"] == 2 and r.values["released_second"] > 0),
                Check("gradients accumulated: 2x the first", lambda r: r.values["doubled_error"] < 1e-6),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
