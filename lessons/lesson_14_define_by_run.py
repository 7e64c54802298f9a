"""Lesson 14: define-by-run. Python control flow decides the graph on every call; compile has to
guess it, guard the guess, and stop where it cannot."""
import time
import warnings

import engine as torch

from lessons._format import Check, Focus, Lesson, Step


def f(x):
    """Double x until its size reaches 10, then sin or cos depending on its sign."""
    h = x
    while h.abs().sum() < 10:                # a Python loop over a tensor's value
        h = h * 2
    if h.sum() > 0:                          # a Python branch over a tensor's value
        return h.sin()
    return h.cos()


def chain(t):
    """Node names from t.grad_fn back to the leaf, following the first edge."""
    names, fn = [], t.grad_fn
    while fn is not None and type(fn).__name__ != "AccumulateGrad":
        names.append(fn.name())
        fn = fn.next_functions[0][0]
    return names


def two_graphs(s):
    s.a = torch.tensor([1.0, -0.5], requires_grad=True)
    s.b = torch.tensor([-3.0, 1.0], requires_grad=True)
    s.ya, s.yb = f(s.a), f(s.b)              # the same function, two inputs
    return {"chain_a": " -> ".join(chain(s.ya)), "chain_b": " -> ".join(chain(s.yb)),
            "n_a": len(chain(s.ya)), "n_b": len(chain(s.yb))}


def two_graphs_facts(run):
    made = [e["node"]["id"] for e in run.of_kind("op") if e.get("node")]
    died = {e["node"] for e in run.of_kind("node_free")}
    return {"n_made": len(made), "n_died": len(died & set(made))}


def backward_follows(s):
    s.ya.sum().backward()
    s.yb.sum().backward()
    a, b = s.a.detach(), s.b.detach()
    return {"ga": [round(v, 4) for v in s.a.grad.tolist()],
            "ga_formula": [round(v, 4) for v in (8 * (8 * a).cos()).tolist()],
            "gb": [round(v, 4) for v in s.b.grad.tolist()],
            "gb_formula": [round(v, 4) for v in (-4 * (4 * b).sin()).tolist()]}


def grad_vs_dot_grad(s):
    x = torch.tensor([1.0, -0.5], requires_grad=True)
    f(x).sum().backward()
    first = x.grad.tolist()
    f(x).sum().backward()                    # a second backward adds into x.grad
    second = x.grad.tolist()
    g, = torch.autograd.grad(f(x).sum(), x)  # returns the gradient, leaves x.grad alone
    return {"first": [round(v, 4) for v in first], "second": [round(v, 4) for v in second],
            "returned": [round(v, 4) for v in g.tolist()], "after": [round(v, 4) for v in x.grad.tolist()]}


def compile_breaks(s):
    cf = torch.compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = cf(torch.tensor([1.0, -0.5]))    # the loop's condition reads a value: a graph break
    try:
        torch.compile(f, fullgraph=True)(torch.tensor([1.0, -0.5]))
        refused = "no error"
    except RuntimeError as err:              # engine.compile's Unsupported, as torch._dynamo's
        refused = f"{type(err).__name__}: {err}"
    eager = f(torch.tensor([1.0, -0.5]))
    return {"warning": str(caught[0].message) if caught else "no warning", "refused": refused,
            "same": y.tolist() == eager.tolist(), "n_graphs": len(cf.artifacts)}


def g(x, w):
    """No Python decisions on values: one graph per shape."""
    return (x @ w).tanh().sum()


def guards(s):
    cg = torch.compile(g)
    w = torch.randn(3, 2, requires_grad=True)
    x = torch.randn(4, 3)
    t0 = time.perf_counter()
    cg(x, w).backward()                      # trace, compile, run
    t1 = time.perf_counter()
    after_first = len(cg.artifacts)
    cg(x, w).backward()                      # same shapes: the guard passes, the graph is reused
    t2 = time.perf_counter()
    after_same = len(cg.artifacts)
    cg(torch.randn(8, 3), w).backward()      # a new batch size: the guard fails, trace again
    return {"after_first": after_first, "after_same": after_same, "after_new": len(cg.artifacts),
            "first_ms": round(1000 * (t1 - t0), 2), "cached_ms": round(1000 * (t2 - t1), 2)}


def stage_facts(run):
    """The first trace's stages after capture, each timed from the stage event before it."""
    evs = [e for e in run.events if e["kind"] == "compile_stage"]
    stages = [e["stage"] for e in evs]
    first = evs[:stages.index("graph", 1)] if stages.count("graph") > 1 else evs
    times = [f"{b['stage']} {1000 * (b['t'] - a['t']):.2f} ms" for a, b in zip(first, first[1:])]
    return {"n_traced": stages.count("graph"), "stages": ", ".join(dict.fromkeys(stages)),
            "times": ", ".join(times)}


def _close(a, b):
    return all(abs(u - v) <= 1e-3 for u, v in zip(a, b))


LESSON = Lesson(
    number=14,
    slug="define_by_run",
    title="Define-by-run",
    summary="The graph is whatever your Python did this time; compile must guess it and guard the guess.",
    steps=(
        Step(
            title="One function, two graphs",
            narrative="""\
`f` doubles its input until `|x|` sums to 10, then takes `sin` or `cos`
depending on the sign. Nothing declares a graph: autograd writes down the ops
as Python runs them ("define-by-run"). So the same `f` built two graphs:

- `f(a)`: **{chain_a}** ({n_a} nodes)
- `f(b)`: **{chain_b}** ({n_b} nodes)

The loop's and the branch's conditions are ops too: {n_made} nodes were made
in this step and {n_died} of them died at once (`h.abs().sum() < 10` builds
`AbsBackward0` and `SumBackward0`, and nothing keeps them once Python has the
boolean). Where a node is made: NOTE [ Dispatch ] in engine/core/dispatch.py.

Read the code: `engine/core/dispatch.py`, NOTE [ Dispatch ]; `engine/core/graph.py`, NOTE [ Node death ].""",
            code=two_graphs,
            facts=two_graphs_facts,
            focus=Focus("graph", "end"),
            checks=(
                Check("f(a) ends in SinBackward0 after 3 doublings",
                      lambda r: r.values["chain_a"] == " -> ".join(["SinBackward0"] + ["MulBackward0"] * 3)),
                Check("f(b) ends in CosBackward0 after 2 doublings",
                      lambda r: r.values["chain_b"] == " -> ".join(["CosBackward0"] + ["MulBackward0"] * 2)),
                Check("the conditions' nodes died as soon as they were read ({n_died} of {n_made})",
                      lambda r: r.values["n_made"] - r.values["n_died"] == r.values["n_a"] + r.values["n_b"]),
            ),
        ),
        Step(
            title="Backward follows the graph that ran",
            narrative="""\
`backward()` walks the graph each call recorded, so each input gets the
derivative of the path it took: `f(a) = sin(8a)` gives `8 cos(8a)` =
{ga}; `f(b) = cos(4b)` gives `-4 sin(4b)` = {gb}. No branch that did not
run leaves a trace. The walk: NOTE [ Backward execution ] in
engine/core/backward.py.

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ].""",
            code=backward_follows,
            focus=Focus("graph", "first execute"),
            checks=(
                Check("a.grad is 8 cos(8a)", lambda r: _close(r.values["ga"], r.values["ga_formula"])),
                Check("b.grad is -4 sin(4b)", lambda r: _close(r.values["gb"], r.values["gb_formula"])),
            ),
        ),
        Step(
            title="`.grad` adds up; `autograd.grad` hands it back",
            narrative="""\
A leaf's `.grad` is an accumulator: the first backward wrote {first}, a
second one **added** to it: {second}. That is why training loops call
`zero_grad()`. `torch.autograd.grad(y, x)` returns the gradient instead
({returned}) and leaves `x.grad` as it was ({after}).

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ] (AccumulateGrad adds into `.grad`; `autograd.grad` returns instead).""",
            code=grad_vs_dot_grad,
            focus=Focus("log", "last accumulate"),
            checks=(
                Check("the second backward doubled x.grad",
                      lambda r: _close(r.values["second"], [2 * v for v in r.values["first"]])),
                Check("autograd.grad returned the gradient and left x.grad unchanged",
                      lambda r: _close(r.values["returned"], r.values["first"])
                      and r.values["after"] == r.values["second"]),
            ),
        ),
        Step(
            title="What compile does with it",
            narrative="""\
`torch.compile` wants one graph to run again and again, but `f`'s graph
depends on values it cannot know in advance. Tracing stops where Python reads
a value (a **graph break**):

> {warning}

By default the function then runs eagerly (here: {n_graphs} graphs kept, and
the result is the same as eager: {same}). With `fullgraph=True` the break is
an error:

> {refused}

TorchDynamo finds the same break differently: it reads the function's
bytecode and splits it into a graph before the break, Python for the
condition, and a graph after. glassgrad's capture runs the function once and
stops at the first value read (NOTE [ Graph capture ] rule 6 in
engine/compiler/capture.py).

Read the code: `engine/compiler/capture.py`, NOTE [ Graph capture ] rule 6; `engine/compiler/runtime.py`, NOTE [ Compiled call ] rule 4.""",
            code=compile_breaks,
            focus=Focus("log", "end"),
            checks=(
                Check("the default compile warned of a graph break and ran eagerly",
                      lambda r: "graph break" in r.values["warning"] and r.values["same"]
                      and r.values["n_graphs"] == 0),
                Check("fullgraph=True refused with Unsupported",
                      lambda r: r.values["refused"].startswith("Unsupported") and "graph break" in r.values["refused"]),
            ),
        ),
        Step(
            title="Guards and recompiles",
            narrative="""\
`g` makes no decision on values, so compile can keep its graph, together with
a **guard**: the shapes, dtypes and flags it was traced for. A second call
with the same shapes passed the guard and reused the graph (graphs: {after_first}
→ {after_same}); a new batch size failed it and was traced again ({after_new}
graphs, {n_traced} traces in the log). Each trace goes through the stages
{stages} (lesson 7 shows each). After capturing the graph, the first trace
spent {times}; in all, the first call took {first_ms} ms and the cached one
{cached_ms} ms. Guards and the cache: NOTE [ Compiled call ] in
engine/compiler/runtime.py.

Read the code: `engine/compiler/runtime.py`, NOTE [ Compiled call ] rules 1-2.""",
            code=guards,
            facts=stage_facts,
            focus=Focus("log", "last compile_stage stage == 'graph'"),
            checks=(
                Check("the same shapes reused the graph", lambda r: r.values["after_first"] == r.values["after_same"] == 1),
                Check("a new shape traced a second graph",
                      lambda r: r.values["after_new"] == 2 and r.values["n_traced"] == 2),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
