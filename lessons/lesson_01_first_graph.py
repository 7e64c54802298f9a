"""Lesson 1: your first graph. ``z = x.sin().cos()``: grad_fn, next_functions, and what backward runs."""
import engine as torch

from lessons._facts import executed, live_by_category, nbytes, node_named, nodes, released_bytes, saved_bytes
from lessons._format import Check, Focus, Lesson, Step


def forward(s):
    s.x = torch.randn(4, requires_grad=True)
    s.y = s.x.sin()
    s.z = s.y.cos()
    return {
        "z_grad_fn": s.z.grad_fn.name(),
        "next_of_z": s.z.grad_fn.next_functions[0][0].name(),
        "next_of_y": type(s.y.grad_fn.next_functions[0][0]).__name__,
        "x_is_leaf": s.x.is_leaf,
        "x_bytes": s.x.numel() * s.x.element_size(),
    }


def forward_facts(run):
    sin, cos = node_named(run.events, "SinBackward0"), node_named(run.events, "CosBackward0")
    return {"sin_saved": nbytes(saved_bytes(sin)), "cos_saved": nbytes(saved_bytes(cos)),
            "sin_saved_name": sin["saved"][0]["name"], "n_nodes": len(nodes(run.events))}


def backward(s):
    s.loss = s.z.sum()
    s.loss.backward()
    expected = -(s.x.sin().sin()) * s.x.cos()          # d/dx cos(sin(x))
    return {"max_error": float((s.x.grad - expected).abs().max().item()),
            "grad_shape": tuple(s.x.grad.shape)}


def backward_facts(run):
    order = executed(run.events)
    grads = [e for e in run.events if e["kind"] == "accumulate"]
    return {"order": " -> ".join(order), "n_executed": len(order),
            "released": nbytes(released_bytes(run.events)),
            "grad_bytes": nbytes(sum(e["bytes"] for e in grads))}


def free_as_you_go(s):
    x = torch.randn(1000, requires_grad=True)
    loss = x.sin().cos().sum()
    loss.backward()
    return {"grad_bytes": x.grad.numel() * x.grad.element_size()}


def free_facts(run):
    evs = run.trace.events
    begin = next(i for i in range(run.start, run.end) if evs[i]["kind"] == "backward_begin")
    made = sum(saved_bytes(n) for n in nodes(run.events).values())
    freed = [e for e in evs[begin:run.end] if e["kind"] == "free" and e["phase"] == "backward"]
    # every figure in the app's unit (replay.words.nbytes: "3.9 KiB", as the boxes and the log write it)
    act_before = live_by_category(evs[:begin]).get("activation", 0)
    act_after = live_by_category(evs[:run.end]).get("activation", 0)
    peaks = _peaks(run)
    return {"saved_total": nbytes(made), "released": nbytes(released_bytes(run.events)),
            "act_before": act_before, "act_after": act_after,
            "act_before_h": nbytes(act_before), "act_after_h": nbytes(act_after),
            "freed_in_backward": nbytes(sum(e["bytes"] for e in freed)), "begin": begin,
            "grad_bytes_h": nbytes(sum(e["bytes"] for e in run.events if e["kind"] == "accumulate")),
            **peaks, "act_peak_h": nbytes(peaks["act_peak_bytes"])}


def _peaks(run):
    """The step's activation peak (``P`` in the app) and live-bytes peak (``p``), from the run."""
    a, p = run.peak("activation"), run.peak()
    return {"act_peak_at": a["at"], "act_peak_bytes": a["bytes"], "act_peak_phase": a["phase"],
            "live_peak_at": p["at"], "live_peak_phase": p["phase"]}


def _act_peak_ends_forward(run):
    """The activation peak is in forward, and nothing frees an activation before backward begins."""
    v = run.values
    at, begin = v["act_peak_at"], v["begin"]
    gone = [e for e in run.trace.events[at:begin] if e["kind"] == "free" and e.get("category") == "activation"
            or e["kind"] == "category" and e.get("old") == "activation"]
    ok = v["act_peak_phase"] == "forward" and at < begin and not gone
    return ok, f"activation peak at event #{at} ({v['act_peak_phase']}), backward begins at #{begin}"


class WrongSin(torch.autograd.Function):
    """sin with a deliberately wrong backward (sin' taken as sin, not cos)."""

    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t.sin()

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return g * t.sin()


def check_with_differences(s):
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    f = lambda t: t.sin().cos()                          # noqa: E731
    eps = 1e-6
    with torch.no_grad():                                # one derivative by hand: nudge x[0] both ways
        up, down = x.clone(), x.clone()
        up[0] += eps
        down[0] -= eps
        by_hand = float((f(up)[0] - f(down)[0]) / (2 * eps))
    autograd_says = float(torch.autograd.grad(f(x)[0], x)[0][0])
    good = torch.autograd.gradcheck(f, (x,), eps=eps, atol=1e-6)
    bad = torch.autograd.gradcheck(lambda t: WrongSin.apply(t).cos(), (x,), eps=eps, atol=1e-6,
                                   raise_exception=False)
    return {"by_hand": by_hand, "autograd_says": autograd_says,
            "difference": abs(by_hand - autograd_says), "good": good, "bad": bad}


def _forward_saves(run):
    sin, cos = node_named(run.events, "SinBackward0"), node_named(run.events, "CosBackward0")
    return saved_bytes(sin) == 16 and saved_bytes(cos) == 16, f"{saved_bytes(sin)} B and {saved_bytes(cos)} B"


def _links(run):
    sin, cos = node_named(run.events, "SinBackward0"), node_named(run.events, "CosBackward0")
    return cos["next"][0][0] == sin["id"] and sin["next"][0][2] == "AccumulateGrad"


def _order(run):
    order = executed(run.events)
    return order == ["SumBackward0", "CosBackward0", "SinBackward0"], " -> ".join(order)


def _released(run):
    made = sum(saved_bytes(n) for n in nodes(run.events).values())
    return released_bytes(run.events) == made, f"released {nbytes(released_bytes(run.events))} of {nbytes(made)}"


LESSON = Lesson(
    number=1,
    slug="first_graph",
    title="Your first graph",
    summary="z = x.sin().cos(): the graph forward builds, and what backward runs through it.",
    steps=(
        Step(
            title="Forward builds a graph",
            narrative="""\
`x` is a **leaf**: a tensor you made yourself, with `requires_grad=True`
(`x.is_leaf` is {x_is_leaf}). Every operation on it does two things: it
computes a result, and it records a **node** that knows how to go backwards.

`z.grad_fn` is **{z_grad_fn}**. Its `next_functions` point to
**{next_of_z}**, whose own next is **{next_of_y}**, the node that will add
the gradient into `x.grad`. That chain of {n_nodes} op nodes is the graph.

Each node keeps what its backward formula needs: sin' = cos, so
SinBackward0 keeps its input `{sin_saved_name}` ({sin_saved}); cos' = -sin,
so CosBackward0 keeps *its* input, the output of sin ({cos_saved}).
Those bytes stay alive until backward runs.

Read the code: `engine/core/dispatch.py`, NOTE [ Dispatch ] 4 and 6 (when
a node is made, and its one edge per differentiable argument); what a node
keeps: `engine/core/graph.py`, NOTE [ Saved tensors ] 1; the `sin` and
`cos` rows, their formulas and what they save, in `engine/core/primitives.py`.""",
            code=forward,
            facts=forward_facts,
            focus=Focus("graph", "last op"),
            checks=(
                Check("z.grad_fn is CosBackward0 and points to SinBackward0", _links),
                Check("SinBackward0 and CosBackward0 each save one 4-float tensor ({sin_saved}, {cos_saved})",
                      _forward_saves),
                Check("x is a leaf", lambda r: r.values["x_is_leaf"] is True),
            ),
        ),
        Step(
            title="Backward runs the graph in reverse",
            narrative="""\
`loss = z.sum()` adds one more node, and `loss.backward()` walks the graph
from the loss towards the leaves. Backward executed {n_executed} nodes, in
this order: **{order}**. Then AccumulateGrad wrote `x.grad`
({grad_bytes}, shape {grad_shape}).

The gradient is exactly the chain rule, d/dx cos(sin x) = -sin(sin x)·cos x:
the largest difference from that formula is {max_error:.2e}.

Watch the graph panel: nodes light up one by one as the engine runs them.

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ] 1, 2
and 6.""",
            code=backward,
            facts=backward_facts,
            focus=Focus("graph", "first execute"),
            checks=(
                Check("backward ran {order}", _order),
                Check("x.grad matches -sin(sin x)·cos x (max error {max_error:.1e})",
                      lambda r: r.values["max_error"] < 1e-6),
            ),
        ),
        Step(
            title="Saved tensors are freed as backward passes",
            narrative="""\
As soon as a node has run, the engine releases what it saved: it will never
need it again. Here the same graph runs on 1000 numbers, and only the loss
is kept in a variable. Forward saved {saved_total} in all: SinBackward0
holds `x` and CosBackward0 holds the output of sin.

Releasing `x` frees nothing, because you still hold `x`. The output of sin,
though, was alive *only* because CosBackward0 saved it: {act_before_h} of
**activation** memory at the start of backward, {act_after_h} after.
During backward {freed_in_backward} were freed, and {grad_bytes_h} were
allocated for `x.grad`. (1 KiB is 1,024 bytes: the 1,000 float32 numbers of
sin's output are 4,000 B, which the boxes and the log write as 3.9 KiB.)

This is why **activation** memory peaks at the end of forward (event
#{act_peak_at}, {act_peak_h}; key `P` in the app): that is the moment
when every saved activation is alive at once. The **live-bytes** peak, all
categories together (key `p`), is a different figure: here it is in
{live_peak_phase}, at event #{live_peak_at}. Step through the `release`
events in the log and watch the memory panel drop.

Read the code: `engine/core/backward.py`, NOTE [ Backward execution ] 4;
`engine/core/graph.py`, NOTE [ Saved tensors ] 2 and 4; when a storage
counts as activation and when its bytes go: `engine/core/storage.py`,
NOTE [ Storage lifetime and categories ] 2 and 3.""",
            code=free_as_you_go,
            facts=free_facts,
            focus=Focus("memory", "first release"),
            checks=(Check("backward released every saved byte forward made ({saved_total})", _released),
                    Check("activation memory went from {act_before_h} to {act_after_h}",
                          lambda r: r.values["act_before"] == 4000 and r.values["act_after"] == 0),
                    Check("the activation peak is at the end of forward (event #{act_peak_at})",
                          _act_peak_ends_forward)),
        ),
        Step(
            title="Check backward against finite differences",
            narrative="""How do you know a backward formula is right? Nudge the input and watch the
output move. For `f(x) = cos(sin x)` on three float64 numbers, moving `x[0]`
by ±1e-6 and dividing the change of `f(x)[0]` by 2e-6 gives
{by_hand:.8f}; autograd says {autograd_says:.8f} (they differ by
{difference:.1e}, the size of the rounding in the difference quotient).

`torch.autograd.gradcheck(f, (x,))` does this for every input and output
element and compares the whole Jacobian: it returns **{good}**. Run it on a
custom `autograd.Function` whose backward uses sin where the derivative is
cos, and it returns **{bad}** (with `raise_exception=True`, its default, it
raises and prints both Jacobians). Use float64 for this: in float32 the
rounding of the difference quotient swamps the comparison.

gradcheck is ordinary code on the engine: the graph panel shows the graphs
its nudged evaluations built (autograd stays on for them, as in PyTorch),
and the log shows the backward passes it ran for the analytical side.

Read the code: `engine/autograd/gradcheck.py`, NOTE [ Gradcheck ] 1 to 4.""",
            code=check_with_differences,
            focus=Focus("log", "end"),
            checks=(Check("finite differences and autograd agree on d f(x)[0] / d x[0] ({difference:.1e})",
                          lambda r: r.values["difference"] < 1e-8),
                    Check("gradcheck passes sin().cos() and fails the wrong backward",
                          lambda r: r.values["good"] is True and r.values["bad"] is False)),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
