"""Lesson 7: what compile does. Capture a graph, trace its backward, choose what to save, fuse."""
import engine as torch

from lessons._facts import node_named, saved_bytes
from lessons._format import Check, Focus, Lesson, Step

N, K, M = 16, 32, 64
H_BYTES = N * M * 4          # one (16, 64) float32 activation


def f(x, w):
    h = x @ w
    return h.sin().cos().sum()


def eager(s):
    torch.manual_seed(0)
    s.x = torch.randn(N, K, requires_grad=True)
    s.w = torch.randn(K, M, requires_grad=True)
    before = torch.memory.memory_allocated()
    y = f(s.x, s.w)                          # op by op: mm, sin, cos, sum
    s.eager_kept = torch.memory.memory_allocated() - before
    s.y_eager = y.item()
    y.backward()
    s.gx_eager, s.gw_eager = s.x.grad.clone(), s.w.grad.clone()
    s.x.grad = s.w.grad = None
    return {"eager_kept": s.eager_kept}


def eager_facts(run):
    ev = run.events
    forward = [e for e in run.of_kind("op") if e["phase"] == "forward"][:4]   # before the grads' clones
    return {"ops": ", ".join(e["op"] for e in forward),
            "sin_saved": saved_bytes(node_named(ev, "SinBackward0")),
            "cos_saved": saved_bytes(node_named(ev, "CosBackward0"))}


def capture(s):
    s.cf = torch.compile(f)
    s.y = s.cf(s.x, s.w)                     # first call: trace, compile, run
    art = s.cf.last
    return {"graph": art.graph.python_code(comments=False), "n_nodes": len(art.graph),
            "grad_fn": s.y.grad_fn.name()}


def joint(s):
    s.y.backward()                           # runs the compiled backward graph
    art = s.cf.last
    return {"joint": art.joint.python_code(comments=False),
            "n_backward": len(art.joint) - len(art.graph)}


def partition(s):
    art = s.cf.last
    before = torch.memory.memory_allocated()
    y = s.cf(s.x, s.w)                       # cached: no tracing this time
    s.compiled_kept = torch.memory.memory_allocated() - before
    del y
    p = art.partition
    return {"saved": ", ".join(n.name for n in p.saved),
            "recomputed": ", ".join(n.name for n in p.recomputed),
            "saved_bytes": p.saved_bytes, "eager_saved": art.eager_saved_bytes,
            "compiled_kept": s.compiled_kept, "eager_kept": s.eager_kept,
            "backward_code": p.backward.python_code(comments=False)}


def fusion(s):
    art = s.cf.last
    return {"kernels": "\n".join(k.source for k in art.kernels),
            "names": ", ".join(k.name for k in art.kernels),
            "n_kernels": len(art.kernels)}


def same_numbers(s):
    s.x.grad = s.w.grad = None
    y = s.cf(s.x, s.w)
    y.backward()
    dx = (s.x.grad - s.gx_eager).abs().max().item()
    dw = (s.w.grad - s.gw_eager).abs().max().item()
    s.cf(torch.randn(2, K), s.w)             # a new shape: traced again
    return {"y": round(y.item(), 4), "y_eager": round(s.y_eager, 4), "dy": abs(y.item() - s.y_eager),
            "dx": dx, "dw": dw, "graphs": len(s.cf.artifacts)}


def _stages(run):
    return [e["stage"] for e in run.of_kind("compile_stage")]


LESSON = Lesson(
    number=7,
    slug="compile",
    title="What compile does",
    summary="torch.compile's pipeline on one small function: graph, joint graph, min-cut partition, fusion.",
    steps=(
        Step(
            title="Eager: one op at a time",
            narrative="""\
`f(x, w) = sum(cos(sin(x @ w)))` runs eagerly as {ops}: every op
allocates its result and leaves a node. Backward needs `h = x @ w` (sin's
input, {sin_saved:,} B kept by SinBackward0) and `sin(h)` (cos's input,
{cos_saved:,} B kept by CosBackward0): after the forward the graph holds
{eager_kept:,} B (with the 4 B output).

Read the code: `engine/core/dispatch.py`, NOTE [ Dispatch ] 3 and 4;
`engine/core/graph.py`, NOTE [ Saved tensors ] 1.""",
            code=eager,
            facts=eager_facts,
            focus=Focus("graph", "first op op == 'cos'"),
            checks=(Check("eager ran {ops}", lambda r: r.values["ops"] == "mm, sin, cos, sum"),
                    Check("sin and cos each keep one (16, 64) float32 tensor",
                          lambda r: r.values["sin_saved"] == r.values["cos_saved"] == H_BYTES)),
        ),
        Step(
            title="Capture: the graph",
            narrative="""\
`torch.compile(f)` returns a function; its first call runs `f` once with a
hook on every op and writes down what ran: a graph of {n_nodes} nodes,
printed as Python (what `GLASSGRAD_LOGS=graph` prints, like
`TORCH_LOGS=graph_code`):

```python
{graph}```

This is tracing, not what PyTorch does: PyTorch's TorchDynamo reads `f`'s
Python **bytecode** before running it, rewrites it, and puts guards on the
inputs (shapes, dtypes, globals); where the bytecode does something it cannot
capture (a print, data-dependent control flow) it makes a *graph break* and
runs that part as ordinary Python. glassgrad only records the ops one call
actually ran: an `if` on a tensor's value is baked in for that call, and a
print happens at capture time, not in the graph.

The stages that follow show up in the event log as `compile_stage` events.
The result's grad_fn is a single `{grad_fn}`.

Read the code: `engine/compiler/capture.py`, NOTE [ Graph capture ] 1, 2
and 6; the hook it runs under: `engine/core/hooks.py`, NOTE [ Op hooks ] 1
and 3; how the graph is printed: `engine/compiler/graph.py`, NOTE [ Graph
IR ] 1; the single node: `engine/compiler/runtime.py`, NOTE [ Compiled
call ] 2.""",
            code=capture,
            focus=Focus("log", "first compile_stage stage == 'graph'"),
            checks=(Check("the call went through graph, joint, partition and fusion",
                          lambda r: _stages(r) == ["graph", "joint", "partition", "fusion"]),
                    Check("the recorded graph is mm, sin, cos, sum",
                          lambda r: _graph_ops(r) == ["mm", "sin", "cos", "sum"]),
                    Check("grad_fn is CompiledFunctionBackward",
                          lambda r: r.values["grad_fn"] == "CompiledFunctionBackward")),
        ),
        Step(
            title="The joint graph",
            narrative="""\
Backward was traced ahead of time too: the op table's backward formulas ran
on stand-ins that record instead of compute, appending {n_backward} nodes
after the forward (`tangents_1` is the incoming gradient):

```python
{joint}```

Backward executed as one node, `CompiledFunctionBackward`.

Read the code: `engine/compiler/joint.py`, NOTE [ Joint graph ] 1, 2 and 5;
the formulas it traces: `engine/core/fns.py`, NOTE [ One formula, two
currencies ] 1.""",
            code=joint,
            focus=Focus("graph", "first execute name == 'CompiledFunctionBackward'"),
            checks=(Check("backward ran the compiled node",
                          lambda r: "CompiledFunctionBackward" in [e["name"] for e in r.of_kind("execute")]),
                    Check("the joint graph returns the output and two gradients",
                          lambda r: r.values["joint"].rstrip().endswith("return (sum, matmul, matmul_1)"))),
        ),
        Step(
            title="Save or recompute: the min-cut",
            narrative="""\
The partitioner splits the joint graph into a forward and a backward graph.
For each value backward reads it may save it (paying its bytes) or recompute
it from saved ones. A minimum cut picks: save {saved}, recompute
{recomputed}. sin is cheap and elementwise, so backward recomputes it from
mm rather than keeping a second tensor; a matmul is never recomputed, and
the inputs x and w cost nothing (they are alive anyway). Saved activations:
{saved_bytes:,} B against eager's {eager_saved:,} B; the cached call's
forward kept {compiled_kept:,} B (eager: {eager_kept:,} B). The backward
graph starts by recomputing:

```python
{backward_code}```

Read the code: `engine/compiler/partition.py`, NOTE [ Min-cut
partitioner ] 1 to 3; what the compiled forward keeps:
`engine/compiler/runtime.py`, NOTE [ Compiled call ] 2 and 3.""",
            code=partition,
            focus=Focus("memory", "first op op == 'CompiledFunction'"),
            checks=(Check("saved: {saved}", lambda r: r.values["saved"] == "x, w, mm"),
                    Check("compiled saves {saved_bytes:,} B, eager {eager_saved:,} B",
                          lambda r: (r.values["saved_bytes"], r.values["eager_saved"]) == (H_BYTES, 2 * H_BYTES)),
                    Check("the compiled forward kept {compiled_kept:,} B: the output and mm",
                          lambda r: r.values["compiled_kept"] == H_BYTES + 4)),
        ),
        Step(
            title="Fusion",
            narrative="""\
Chains of elementwise ops become one generated function each ({names}):
intermediate values inside a chain are never stored as tensors, and one
call replaces several dispatches. Each line calls the same kernel eager
runs (on a GPU, Inductor would write one Triton kernel instead):

```python
{kernels}```

Read the code: `engine/compiler/fusion.py`, NOTE [ Fusion ] 1 to 3.""",
            code=fusion,
            focus=Focus("narrative", "end"),
            checks=(Check("{n_kernels} fused kernels", lambda r: r.values["n_kernels"] == 2),
                    Check("the forward fuses sin and cos",
                          lambda r: r.values["names"].split(", ")[0] == "fused_sin_cos_0")),
        ),
        Step(
            title="Same numbers",
            narrative="""\
The compiled function gives {y} (eager: {y_eager}) and the same gradients:
the largest difference is {dx:.1e} for x and {dw:.1e} for w. A call with a
new shape (x of 2 rows instead of 16) does not fit the first graph's guards, so it is
traced again: {graphs} graphs are cached now.

Read the code: `engine/compiler/runtime.py`, NOTE [ Compiled call ] 1;
`engine/compiler/fusion.py`, NOTE [ Fusion ] 2.""",
            code=same_numbers,
            focus=Focus("log", "first compile_stage"),
            checks=(Check("same output", lambda r: r.values["dy"] < 1e-3),
                    Check("same gradients (within 1e-5)", lambda r: max(r.values["dx"], r.values["dw"]) < 1e-5),
                    Check("the new shape was traced again",
                          lambda r: r.values["graphs"] == 2 and _stages(r)[0] == "graph")),
        ),
    ),
)



def _graph_ops(run):
    """The ops of the graph the step's ``compile_stage`` event printed."""
    text = next(e["text"] for e in run.of_kind("compile_stage") if e["stage"] == "graph")
    return [line.split("ops.")[1].split("(")[0] for line in text.splitlines() if "ops." in line]


if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
