"""Lesson 12: one op, layer by layer. Follow ``a * b`` from the Python call to the kernel, the
node, the saved tensors and the event; time each layer; read the op's table row; and see a
tensor as storage + view metadata + autograd metadata."""
import inspect
import os
import sys
import time

import engine as torch
from engine.core.table import OPS

from lessons._format import Check, Focus, Lesson, Step

ENGINE = os.path.dirname(os.path.abspath(torch.__file__))
ROOT = os.path.dirname(ENGINE)

# which layer a file of the engine belongs to (the reading path of engine/core/__init__.py)
LAYERS = (
    ("binding", ("engine/core/operators.py",)),
    ("dispatch", ("engine/core/dispatch.py", "engine/core/hooks.py")),
    ("kernel", ("engine/core/primitives.py",)),
    ("tensor", ("engine/core/tensor.py", "engine/core/storage.py", "engine/backend/")),
    ("graph", ("engine/core/graph.py",)),
    ("memory", ("engine/memory/",)),
    ("events", ("engine/events.py", "engine/trace.py")),
)


def layer_of(path: str) -> str:
    rel = os.path.relpath(path, ROOT).replace(os.sep, "/") if os.path.isabs(path) else path
    for name, prefixes in LAYERS:
        if rel.startswith(prefixes):
            return name
    return "python" if not rel.startswith("engine/") else "engine (other)"


def watch_calls(fn):
    """Every Python function of the engine that ``fn()`` calls: [(depth, file, function)]."""
    calls, depth = [], [0]

    def prof(frame, event, arg):
        if event == "call":
            f = frame.f_code.co_filename
            name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)   # "OpNode.__init__"
            if f.startswith(ENGINE) and (name.endswith("<lambda>") or "<" not in name):
                calls.append((depth[0], os.path.relpath(f, ROOT), name))
            depth[0] += 1
        elif event == "return":
            depth[0] -= 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def the_path(s):
    s.a = torch.tensor([1.0, 2.0], requires_grad=True)
    s.b = torch.tensor([3.0, 4.0], requires_grad=True)
    s.c = None
    calls = watch_calls(lambda: setattr(s, "c", s.a * s.b))   # the one line this lesson follows
    lines, last = [], None
    for depth, path, name in calls:
        if depth > 6 or name.endswith("<lambda>") and "primitives" not in path:
            continue
        label = "mul's kernel (a lambda)" if name.endswith("<lambda>") else name
        row = f"{'  ' * (depth - 2)}{label}  ({path})"
        if row != last:
            lines.append(row)
        last = row
    per = {}
    for _, path, _ in calls:
        per[layer_of(path)] = per.get(layer_of(path), 0) + 1
    return {"path": "\n".join(lines), "n_calls": len(calls),
            "n_files": len({p for _, p, _ in calls}), "calls": [f"{p}:{n}" for _, p, n in calls],
            "per_layer": ", ".join(f"{k} {v}" for k, v in per.items())}


MILESTONES = ("engine/core/operators.py:mul", "engine/core/dispatch.py:apply", "engine/core/dispatch.py:_promote_pair",
              "engine/core/tensor.py:Tensor._wrap", "engine/memory/state.py:on_alloc", "engine/core/dispatch.py:OpNode.__init__",
              "engine/core/dispatch.py:_save", "engine/core/dispatch.py:_emit_op", "engine/events.py:emit")


def _in_order(seq, wanted):
    it = iter(seq)
    return all(any(x == w for x in it) for w in wanted)


def best_us(fn, n=50, repeat=3):
    """The fastest of ``repeat`` runs of ``fn`` n times, in µs per call."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - t0)
    return 1e6 * best / n


def time_per_layer(s):
    x, y = s.a.detach(), s.b.detach()               # no gradient wanted: no node
    xa, ya = x.numpy(), y.numpy()
    kernel = best_us(lambda: xa * ya)               # NumPy's multiply alone
    plain = best_us(lambda: x * y)                  # + binding, dispatch, a Tensor, memory, an event
    full = best_us(lambda: s.a * s.b)               # + a node, two saved tensors, its death
    return {"kernel_us": round(kernel, 2), "plain_us": round(plain, 2), "full_us": round(full, 2),
            "dispatch_us": round(plain - kernel, 2), "graph_us": round(full - plain, 2),
            "kernel_pct": round(100 * kernel / full, 1)}


def table_row(op):
    """The op's row written as PyTorch's derivatives.yaml would hold it."""
    needs = {k: (", ".join(v) if v else "any input") for k, v in op.save.items()}
    formula = inspect.getsource(op.bwd).strip().rstrip(",")
    where = f"{os.path.relpath(inspect.getsourcefile(op.fwd), ROOT)}:{inspect.getsourcelines(op.fwd)[1]}"
    return "\n".join([f"- name: {op.name}({', '.join('Tensor ' + a for a in op.args)})",
                      f"  node: {op.node}",
                      *[f"  save {k}: when {v} needs a gradient" for k, v in needs.items()],
                      f"  backward: {formula}",
                      f"  # {where}"])


def the_row(s):
    both = s.a * s.b                                 # both need gradients: both are saved
    only_a = s.a * s.b.detach()                      # only a does: only b (= other) is saved
    return {"row": table_row(OPS["mul"]),
            "saved_both": sorted(sv.name for sv in [both.grad_fn._saved[k] for k in both.grad_fn._saved]),
            "saved_only_a": sorted(only_a.grad_fn._saved)}


def row_facts(run):
    nodes = [e["node"] for e in run.of_kind("op") if e.get("node") and e["node"]["name"] == "MulBackward0"]
    return {"ev_both": [sv["name"] for sv in nodes[0]["saved"]], "ev_only_a": [sv["name"] for sv in nodes[1]["saved"]],
            "b_both": sum(sv["bytes"] for sv in nodes[0]["saved"]), "b_only_a": sum(sv["bytes"] for sv in nodes[1]["saved"])}


def three_parts(s):
    t = torch.arange(12.0).reshape(3, 4).requires_grad_()
    h = t * 1                                        # a non-leaf, so it may change in place
    v = h[1]                                         # a view: no new bytes
    meta = {"offset": v.storage_offset(), "v_shape": list(v.shape), "v_stride": list(v.stride()),
            "h_stride": list(h.stride()), "base_is_h": v._base is h, "v_fn": v.grad_fn.name(),
            "h_fn": h.grad_fn.name(), "leaf": [t.is_leaf, h.is_leaf, v.is_leaf]}
    before = [h._version, v._version]
    h.add_(1)                                        # one write, seen by both
    return {**meta, "before": before, "after": [h._version, v._version], "v_vals": v.tolist()}


def parts_facts(run):
    ops = run.of_kind("op")
    i = next(i for i, e in enumerate(run.events)       # the op event that made v
             if e["kind"] == "op" and e.get("node") and e["node"]["name"] == run.values["v_fn"])
    sel, prev = run.events[i], run.events[i - 1]
    return {"view_op": sel["op"], "view_storage": sel["output"]["storage"], "base_storage": sel["inputs"][0]["storage"],
            "same_storage": sel["output"]["storage"] == sel["inputs"][0]["storage"],
            "alloc_before_view": prev["kind"] == "alloc"}


LESSON = Lesson(
    number=12,
    slug="one_op",
    title="One op, layer by layer",
    summary="Follow a * b through the binding, dispatch, the kernel, the node and the event, and time each layer.",
    steps=(
        Step(
            title="The path of `a * b`",
            narrative="""\
Python turns `a * b` into `a.__mul__(b)`. Watching every engine function it
calls (with `sys.setprofile`) gives {n_calls} calls in {n_files} files
(per layer: {per_layer}); the first levels, in order:

```
{path}
```

The binding (`core/operators.py`) checks the arguments; `dispatch.apply`
promotes dtypes, runs the kernel (a one-line lambda in `core/primitives.py`),
wraps the result in a Tensor (whose storage tells `memory/` about the new
bytes), makes a `MulBackward0` node, saves what its formula needs, and emits
the `op` event. NOTE [ Dispatch ] in engine/core/dispatch.py has the rules.

In PyTorch the same line goes to `THPVariable_mul`, a C++ function listed in
the `PyMethodDef` table `variable_methods` of the `torch._C.TensorBase` type
(the `THPVariable` struct wraps the C++ tensor); a `PythonArgParser` reads the
arguments, the dispatcher's autograd kernel makes the node, and a vectorised
C++ loop multiplies. The stations are the same; only the language differs.

Read the code: `engine/core/operators.py` (the binding), `engine/core/dispatch.py`, NOTE [ Dispatch ].""",
            code=the_path,
            focus=Focus("log", "last op op == 'mul'"),
            checks=(
                Check("the call passed binding → dispatch → promotion → tensor → memory → node → save → event, in order",
                      lambda r: _in_order(r.values["calls"], MILESTONES)),
            ),
        ),
        Step(
            title="Time in each layer",
            narrative="""\
Timing three versions of the same multiplication (the best of 3 runs of 50,
in µs per call, while this lesson records):

```
NumPy's multiply of the two arrays         {kernel_us:6.2f} µs
x * y, no gradient wanted (no node)        {plain_us:6.2f} µs   binding, dispatch, Tensor, memory, event: +{dispatch_us} µs
a * b, gradients wanted                    {full_us:6.2f} µs   node, saved tensors, node death: +{graph_us} µs
```

The multiplication itself is {kernel_pct} % of `a * b`: on tiny tensors the
work is bookkeeping, and every layer of step 1 is Python. PyTorch does the
same bookkeeping in C++, in about 1.4 µs; with 1,000-element tensors the
kernel would dominate in both. (With no recorder, `events.active` is False and
no event is built.)

Read the code: `engine/core/dispatch.py`, NOTE [ Dispatch ]; `engine/events.py`, NOTE [ Recording costs nothing when off ].""",
            code=time_per_layer,
            focus=Focus("log", "last op op == 'mul'"),
            checks=(
                Check("each layer adds time: NumPy < no-grad op < op with a node",
                      lambda r: r.values["kernel_us"] < r.values["plain_us"] < r.values["full_us"]),
            ),
        ),
        Step(
            title="The op's row in the table",
            narrative="""\
Everything `dispatch` did for `mul` came from one row of the op table, the
engine's `derivatives.yaml`:

```
{row}
```

The `save` lines are why the same op keeps different bytes: `a * b` with both
requiring grad saved {ev_both} ({b_both} B); `a * b.detach()` saved only
{ev_only_a} ({b_only_a} B), because nothing needs `b`'s gradient and so
nobody reads `self`. PyTorch generates its `MulBackward0` from the same kind
of row (`self: mul_tensor_backward(grad, other, self.scalar_type())`).

Read the code: `engine/core/table.py` (the row's fields), `engine/core/fns.py`, NOTE [ One formula, two currencies ]; `engine/core/graph.py`, NOTE [ Saved tensors ].""",
            code=the_row,
            facts=row_facts,
            focus=Focus("graph", "last op op == 'mul'"),
            checks=(
                Check("with both requiring grad, the node saved other and self",
                      lambda r: sorted(r.values["ev_both"]) == ["other", "self"] == sorted(r.values["saved_both"])),
                Check("with only a requiring grad, it saved other alone",
                      lambda r: r.values["ev_only_a"] == ["other"] == r.values["saved_only_a"]),
                Check("half the bytes", lambda r: 2 * r.values["b_only_a"] == r.values["b_both"]),
            ),
        ),
        Step(
            title="A tensor is three things",
            narrative="""\
**Storage**: bytes. `v = h[1]` (`{view_op}` in the log) made no new bytes: it
shares h's storage (storage {base_storage} in the log), starting {offset}
elements in.
**View metadata**: shape {v_shape}, stride {v_stride} (h's strides are
{h_stride}), offset {offset}: how to find v's elements in those bytes.
**Autograd metadata**: `requires_grad`, `grad_fn` (v: {v_fn}, h: {h_fn}),
`is_leaf` (t, h, v: {leaf}), `_base` (v's is h: {base_is_h}), and the version
counter, which views share with their base: `h.add_(1)` took both from
{before} to {after}, and v now reads {v_vals}. PyTorch keeps the same three
(a `StorageImpl`, the `TensorImpl`'s sizes/strides/offset, and its
`AutogradMeta`). Here: NOTE [ Version counters ] in engine/core/tensor.py.

Read the code: `engine/core/tensor.py`, NOTE [ Version counters ]; `engine/core/storage.py`.""",
            code=three_parts,
            facts=parts_facts,
            focus=Focus("log", "first version"),
            checks=(
                Check("the view shares the storage at offset 4, and nothing was allocated for it",
                      lambda r: r.values["same_storage"] and r.values["offset"] == 4
                      and not r.values["alloc_before_view"]),
                Check("one write bumped the version both see",
                      lambda r: r.values["before"] == [0, 0] and r.values["after"] == [1, 1]),
                Check("the view reads the written values", lambda r: r.values["v_vals"] == [5.0, 6.0, 7.0, 8.0]),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
