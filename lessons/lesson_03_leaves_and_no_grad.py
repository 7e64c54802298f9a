"""Lesson 3: leaves, requires_grad, no_grad and detach; the graph lives as long as its tensors; hooks."""
import engine as torch

from lessons._facts import live_by_category
from lessons._format import Check, Focus, Lesson, Step


def leaves(s):
    s.a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s.b = torch.ones(3)                      # requires_grad is False by default
    c = s.a * s.b
    d = s.b * 2
    return {"a_leaf": s.a.is_leaf, "b_leaf": s.b.is_leaf, "c_leaf": c.is_leaf,
            "c_requires_grad": c.requires_grad, "c_grad_fn": c.grad_fn.name(),
            "d_grad_fn": repr(d.grad_fn), "d_requires_grad": d.requires_grad}


def leaves_facts(run):
    muls = [e for e in run.of_kind("op") if e["op"] == "mul"]
    return {"c_saves": ", ".join(x["name"] for x in muls[0]["node"]["saved"]),
            "d_node": muls[1]["node"]}


def no_grad(s):
    with torch.no_grad():
        e = s.a * 2
        f = e.sin()
    return {"e_requires_grad": e.requires_grad, "f_grad_fn": repr(f.grad_fn)}


def detach(s):
    y = s.a.sin()
    z = y.detach()
    z[0] = 100.0                             # write through z ...
    seen_in_y = y[0].item()                  # ... and y sees it: one storage
    return {"seen_in_y": seen_in_y, "z_requires_grad": z.requires_grad, "z_leaf": z.is_leaf,
            "y_grad_fn": y.grad_fn.name()}


def graph_lifetime(s):
    big = torch.randn(1000, requires_grad=True)
    q = big.exp().exp()                      # each exp saves its result: two activations
    s.live_with_graph = torch.memory.memory_allocated()
    del q                                    # no backward: just drop the last reference
    s.live_after_del = torch.memory.memory_allocated()
    return {"with_graph": s.live_with_graph, "after_del": s.live_after_del,
            "difference": s.live_with_graph - s.live_after_del}


def lifetime_facts(run):
    evs = run.events
    peak_act = 0
    for k in range(len(evs)):
        peak_act = max(peak_act, live_by_category(run.trace.events[:run.start + k + 1]).get("activation", 0))
    end_act = live_by_category(run.trace.events[:run.end]).get("activation", 0)
    freed = [e for e in evs if e["kind"] == "category" and e["old"] == "activation"]
    return {"peak_act": peak_act, "end_act": end_act, "n_freed": len(freed),
            "ran_backward": any(e["kind"] == "backward_begin" for e in evs)}


def _panel_at(run, i):
    """Names of the nodes the app's graph panel shows at event i (replay's one trace model)."""
    from replay.model import TraceModel

    m = TraceModel(run.trace.events[:run.end], run.trace.meta)
    return [m.nodes[n].name for n in m.shown(i)]


def _no_graph_in_no_grad(run):
    """Step 1's c died with step 1's code: the panel is empty all through the no_grad step."""
    shown = {n for i in range(run.start, run.end) for n in _panel_at(run, i) if n != "AccumulateGrad"}
    return not shown, f"graph panel shows {sorted(shown)}"


def _nodes_died_with_q(run):
    frees = [i for i in range(run.start, run.end) if run.trace.events[i]["kind"] == "node_free"]
    exps = [n["id"] for n in (e["node"] for e in run.of_kind("op") if e.get("node")) if n["name"] == "ExpBackward0"]
    died = {run.trace.events[i]["node"] for i in frees}
    left = [n for n in _panel_at(run, run.end - 1) if n == "ExpBackward0"]
    return len(exps) == 2 and set(exps) <= died and not left, f"ExpBackward0 nodes {exps}, freed {sorted(died)}, still drawn {left}"


def hooks(s):
    seen = []

    def double(grad):
        seen.append(grad.shape)
        return grad * 2                      # the gradient that continues is this one

    handle = s.a.register_hook(double)
    (s.a * s.a).sum().backward()             # d/da of sum(a*a) is 2a; the hook doubles it
    handle.remove()
    return {"grad": s.a.grad.tolist(), "calls": len(seen)}


def _only_other(run):
    return run.values["c_saves"] == "other", f"saved: {run.values['c_saves']}"


def _hook_before_accumulate(run):
    kinds = [e["kind"] for e in run.events if e["kind"] in ("hook", "accumulate")]
    return kinds == ["hook", "accumulate"], str(kinds)


LESSON = Lesson(
    number=3,
    slug="leaves_and_no_grad",
    title="Leaves, no_grad and detach",
    summary="Which tensors join the graph, how to keep them out, how long the graph lives, and hooks.",
    steps=(
        Step(
            title="Leaves and requires_grad",
            narrative="""\
A tensor you create is a **leaf** (`a.is_leaf` is {a_leaf}, and so is
`b.is_leaf`: {b_leaf}). Only `a` asked for gradients. An op joins the graph
when one of its inputs requires grad: `c = a * b` has `grad_fn`
**{c_grad_fn}** and is not a leaf ({c_leaf}); `d = b * 2` has grad_fn
{d_grad_fn}: no node was made at all.

MulBackward0 saved only **{c_saves}**: the gradient of `a` is `grad * b`,
and `b` needs no gradient, so `a` itself is not kept.

Read the code: `is_leaf` and `requires_grad` in `engine/core/tensor.py`;
`engine/core/dispatch.py`, NOTE [ Dispatch ] 4; the `mul` row's `save`
table in `engine/core/primitives.py`.""",
            code=leaves,
            facts=leaves_facts,
            focus=Focus("graph", "first op"),
            checks=(
                Check("c = a * b saves only b (named {c_saves})", _only_other),
                Check("d = b * 2 made no graph node", lambda r: r.values["d_node"] is None),
                Check("a and b are leaves, c is not",
                      lambda r: r.values["a_leaf"] and r.values["b_leaf"] and not r.values["c_leaf"]),
            ),
        ),
        Step(
            title="no_grad: compute without a graph",
            narrative="""\
Inside `with torch.no_grad():` ops still run, but record no node and save
nothing, even on `a`: `e.requires_grad` is {e_requires_grad} and `f.grad_fn`
is {f_grad_fn}. Use it for evaluation and for updating weights by hand: the
memory that backward would need is never kept.

Read the code: `no_grad` in `engine/core/grad_mode.py`;
`engine/core/dispatch.py`, NOTE [ Dispatch ] 4.""",
            code=no_grad,
            focus=Focus("log", "first op"),
            checks=(
                Check("ops under no_grad made no graph node", lambda r: all(e["node"] is None for e in r.of_kind("op"))),
                Check("nothing was saved for backward", lambda r: not r.of_kind("pack")),
                Check("the graph panel is empty: step 1's graph died with its tensors", _no_graph_in_no_grad),
            ),
        ),
        Step(
            title="detach: same numbers, no history",
            narrative="""\
`z = y.detach()` is a new tensor that **shares y's storage**: after
`z[0] = 100.0`, `y[0]` reads {seen_in_y}. But z has no history: `z.requires_grad` is {z_requires_grad}
and it is a leaf ({z_leaf}). `y` still has its {y_grad_fn}. Gradients
cannot flow through `z`; detach is how you cut a graph on purpose.

Read the code: `detach` in `engine/core/tensor.py`, NOTE [ Version
counters ] 2; `engine/core/storage.py`, NOTE [ Storage lifetime and
categories ] 1.""",
            code=detach,
            focus=Focus("inspector", "first op op == 'sin'"),
            checks=(
                Check("z shares y's storage (y[0] became {seen_in_y})", lambda r: r.values["seen_in_y"] == 100.0),
                Check("z does not require grad", lambda r: r.values["z_requires_grad"] is False),
            ),
        ),
        Step(
            title="The graph lives as long as its tensors",
            narrative="""\
There is no global tape. The graph is just objects: the output points to
its grad_fn, each node to the next ones, and the saved tensors hang off the
nodes. `q = big.exp().exp()` saved two results of 4,000 B each (activation
memory peaked at {peak_act:,} B). Then `del q` dropped the last reference:
the nodes died, and so did what they saved ({n_freed} activations freed, no
backward needed): the graph panel drops them (key `f` keeps them, greyed
and marked freed). memory_allocated() went from {with_graph:,} B to {after_del:,} B;
activation memory ends at {end_act:,} B.

A graph you keep by accident (say, `total_loss += loss` without `.item()`)
keeps all its activations alive the same way.

Read the code: `engine/core/graph.py`, NOTE [ Node death ] and NOTE [ Saved
tensors ] 5; `engine/core/storage.py`, NOTE [ Storage lifetime and
categories ] 2 and 3.""",
            code=graph_lifetime,
            facts=lifetime_facts,
            focus=Focus("memory", "last category old == 'activation'"),
            checks=(
                Check("activations went from {peak_act:,} B to {end_act:,} B without backward",
                      lambda r: r.values["peak_act"] == 8000 and r.values["end_act"] == 0
                      and not r.values["ran_backward"]),
                Check("memory_allocated fell by {difference:,} B", lambda r: r.values["difference"] >= 8000),
                Check("both ExpBackward0 nodes died at `del q` and left the graph panel", _nodes_died_with_q),
            ),
        ),
        Step(
            title="Hooks see (and change) gradients",
            narrative="""\
`a.register_hook(fn)` calls `fn(grad)` when the gradient for `a` is ready,
before it is added into `a.grad`; a returned tensor replaces the gradient.
The hook ran {calls} time(s) and doubled 2a, so `a.grad` is {grad}
(for a = [1, 2, 3]). In the event log the `hook` event comes right before
`accumulate`.

Read the code: `register_hook` in `engine/core/hooks.py`;
`engine/core/backward.py`, NOTE [ Backward execution ] 3 and 6.""",
            code=hooks,
            focus=Focus("log", "first hook"),
            checks=(
                Check("a.grad is 4a = {grad}", lambda r: r.values["grad"] == [4.0, 8.0, 12.0]),
                Check("the hook fired before the gradient was accumulated", _hook_before_accumulate),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
