"""Lesson 13: your own autograd.Function: ctx, its flags, a NumPy routine made differentiable,
a fused op that saves less, and saved-tensor hooks that move what autograd keeps."""
import math
import os
import tempfile

import numpy as np

import engine as torch

from lessons._facts import node_named, nodes, saved_bytes
from lessons._format import Check, Focus, Lesson, Step

N = 1024                                     # elements per activation (4 KiB in float32)


class Cube(torch.autograd.Function):
    """y = x ** 3, written by hand: forward computes, backward applies dy/dx = 3 x^2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)                 # the node keeps x, nothing else
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x * x


def first_function(s):
    x = torch.linspace(-1.0, 1.0, 5, requires_grad=True)
    y = Cube.apply(x)                            # a CubeBackward node joins the graph
    y.sum().backward()
    eps = 1e-3                                   # a central difference, by hand
    fd = [((v + eps) ** 3 - (v - eps) ** 3) / (2 * eps) for v in x.tolist()]
    return {"node": y.grad_fn.name(), "grad": [round(g, 4) for g in x.grad.tolist()],
            "fd": [round(g, 4) for g in fd]}


def first_facts(run):
    node = node_named(run.events, "CubeBackward")
    return {"n_saved": len(node["saved"]), "saved_b": saved_bytes(node),
            "saved_shape": node["saved"][0]["shape"]}


class Scale(torch.autograd.Function):
    """y = x * w; backward computes only the gradients someone asked for."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.asked = ctx.needs_input_grad         # (x needs one?, w needs one?)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        gx = grad * w if ctx.needs_input_grad[0] else None
        gw = (grad * x).sum() if ctx.needs_input_grad[1] else None
        ctx.computed = (gx is not None, gw is not None)
        return gx, gw


def needs_input_grad(s):
    x = torch.ones(3, requires_grad=True)
    w = torch.tensor(2.0)                        # a constant: no gradient wanted
    y = Scale.apply(x, w)
    y.sum().backward()
    ctx = y.grad_fn.ctx
    return {"asked": list(ctx.asked), "computed": list(ctx.computed),
            "x_grad": x.grad.tolist(), "w_grad": str(w.grad)}


class AddOne_(torch.autograd.Function):
    """x += 1 in place: the output IS the input, so ctx.mark_dirty tells autograd."""

    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class SortWithIndex(torch.autograd.Function):
    """Sorted values and where they came from; the indices have no gradient."""

    @staticmethod
    def forward(ctx, x):
        values, index = x.sort()
        ctx.save_for_backward(index)
        ctx.mark_non_differentiable(index)
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        index, = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(0, index, grad_values)


def dirty_and_non_differentiable(s):
    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = a * 2                                    # a non-leaf, so it may change in place
    before = h._version
    out = AddOne_.apply(h)
    same = out is h
    after = h._version
    values, index = SortWithIndex.apply(out)
    (values * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    return {"before": before, "after": after, "same": same, "out_fn": out.grad_fn.name(),
            "values_rg": values.requires_grad, "index_rg": index.requires_grad,
            "index": index.tolist(), "a_grad": a.grad.tolist()}


def dirty_facts(run):
    bumps = [e for e in run.of_kind("version")]
    return {"bump_ops": ", ".join(f"{e['op']} -> {e['version']}" for e in bumps)}


class NumpyLogCosh(torch.autograd.Function):
    """log(cosh(x)) computed by NumPy, outside autograd; backward is tanh(x), also NumPy."""

    @staticmethod
    def forward(ctx, x):
        a = x.detach().numpy()
        ctx.save_for_backward(x)
        return torch.from_numpy(np.logaddexp(a, -a) - np.log(2.0))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * torch.from_numpy(np.tanh(x.detach().numpy()))


class WrongLogCosh(NumpyLogCosh):
    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * torch.from_numpy(np.tanh(2 * x.detach().numpy()))   # a slip: tanh(2x)


def numpy_routine(s):
    x = torch.tensor([-1.5, -0.25, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(NumpyLogCosh.apply, (x,))
    try:
        torch.autograd.gradcheck(WrongLogCosh.apply, (x,))
        caught = "no error"
    except RuntimeError as err:                  # GradcheckError is a RuntimeError
        caught = str(err).splitlines()[0]
    return {"ok": ok, "caught": caught}


def gelu_composed(x):
    """GELU's tanh form, op by op: each op's node keeps what its own backward reads."""
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    return 0.5 * x * (1 + torch.tanh(inner))


class GeluFused(torch.autograd.Function):
    """The same GELU as one node that keeps only x and recomputes the rest in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return gelu_composed(x)                  # forward runs under no_grad: no inner nodes

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        c = math.sqrt(2 / math.pi)
        t = torch.tanh(c * (x + 0.044715 * x ** 3))
        dt = c * (1 + 3 * 0.044715 * x * x) * (1 - t * t)
        return grad * (0.5 * (1 + t) + 0.5 * x * dt)


def fused_saves_less(s):
    torch.manual_seed(0)
    s.xg = torch.randn(N, requires_grad=True)
    with torch.autograd.set_grad_enabled(True):
        composed = gelu_composed(s.xg)
    composed.sum().backward()
    g_composed = s.xg.grad.clone()
    s.xg.grad = None
    fused = GeluFused.apply(s.xg)
    fused.sum().backward()
    diff = (s.xg.grad - g_composed).abs().max().item()
    return {"max_diff": diff, "x_bytes": N * 4}


def fused_facts(run):
    made = list(nodes(run.events).values())
    fused = [n for n in made if n["name"] == "GeluFusedBackward"]
    composed = [n for n in made if n["name"] not in ("GeluFusedBackward", "SumBackward0")]
    comp_b = sum(saved_bytes(n) for n in composed)
    # a storage saved by two nodes is kept once: count distinct storages too
    comp_storages = {sv["storage"]: sv["bytes"] for n in composed for sv in n["saved"]}
    return {"n_composed": len(composed), "composed_saved": comp_b,
            "composed_distinct": sum(comp_storages.values()),
            "fused_saved": saved_bytes(fused[0]) if fused else -1,
            "composed_names": ", ".join(n["name"] for n in composed)}


DEPTH, BATCH, WIDTH = 4, 64, 256


def mlp():
    torch.manual_seed(3)
    layers = []
    for _ in range(DEPTH):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.Tanh()]
    return torch.nn.Sequential(*layers)


def pack_to_disk(s):
    s.net = mlp()
    x = torch.randn(BATCH, WIDTH)
    s.folder = tempfile.mkdtemp(prefix="glassgrad-lesson13-")
    files = []

    def pack(t):                                 # called as autograd saves t, in forward
        path = os.path.join(s.folder, f"{len(files)}.npy")
        np.save(path, t.detach().numpy())
        files.append(path)
        return path                              # the node keeps a file name, not the tensor

    def unpack(path):                            # called as backward needs it back
        return torch.from_numpy(np.load(path))

    before = torch.memory.memory_allocated()
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = s.net(x)
    held_hooked = torch.memory.memory_allocated() - before
    y.pow(2).mean().backward()
    hooked = s.net[0].weight.grad.clone()
    s.net.zero_grad(set_to_none=False)           # keep the gradient tensors: same baseline
    before = torch.memory.memory_allocated()
    y2 = s.net(x)                                # the same forward without hooks
    held_plain = torch.memory.memory_allocated() - before
    y2.pow(2).mean().backward()
    diff = (s.net[0].weight.grad - hooked).abs().max().item()
    for p in files:
        os.remove(p)
    os.rmdir(s.folder)
    return {"n_files": len(files), "max_diff": diff, "held_hooked": held_hooked,
            "held_plain": held_plain, "hidden": (DEPTH - 1) * BATCH * WIDTH * 4, "folder": s.folder}


def disk_facts(run):
    hooked = [e for e in run.of_kind("pack") if e.get("hooked")]
    return {"n_hooked": len(hooked)}


def _close(a, b, tol=1e-4):
    return all(abs(u - v) <= tol for u, v in zip(a, b))


LESSON = Lesson(
    number=13,
    slug="your_own_function",
    title="Your own autograd.Function",
    summary="Write forward and backward yourself: ctx saves, flags what changed, and decides what memory backward keeps.",
    steps=(
        Step(
            title="A Function is a node you write",
            narrative="""\
`torch.autograd.Function` lets you write an op's two halves yourself.
`forward(ctx, x)` runs with autograd off and returns the result;
`ctx.save_for_backward(x)` names what the node keeps. `backward(ctx, grad)`
gets the gradient of the output and returns one gradient per input.

`Cube.apply(x)` added a **{node}** node that keeps {n_saved} tensor
({saved_b} B, shape {saved_shape}). Its gradient {grad} matches a central
difference {fd}. In the engine: `BackwardCFunction` in
engine/autograd/function.py (PyTorch: `THPFunction` in C++).

Read the code: `engine/autograd/function.py` (`Function.apply`, `BackwardCFunction`); `engine/core/graph.py`, NOTE [ Saved tensors ].""",
            code=first_function,
            facts=first_facts,
            focus=Focus("graph", "first op op == 'Cube'"),
            checks=(
                Check("the node is named CubeBackward, as PyTorch names it",
                      lambda r: r.values["node"] == "CubeBackward"),
                Check("it keeps exactly x: {saved_b} B = 5 floats x 4 B",
                      lambda r: r.values["n_saved"] == 1 and r.values["saved_b"] == 5 * 4),
                Check("the gradient 3x^2 matches finite differences",
                      lambda r: _close(r.values["grad"], r.values["fd"], 1e-3)),
            ),
        ),
        Step(
            title="needs_input_grad: compute only what was asked",
            narrative="""\
`ctx.needs_input_grad` has one flag per input: here {asked}, because `w`
is a constant. `backward` checked it and computed {computed} (x's gradient,
not w's), returning `None` for `w`. So `x.grad` is {x_grad} and `w.grad` is
{w_grad}. On a big weight the skipped product is real time saved. The flags
are set in `Function.apply` (engine/autograd/function.py).

Read the code: `engine/autograd/function.py` (`ctx.needs_input_grad` is set in `Function.apply`).""",
            code=needs_input_grad,
            focus=Focus("graph", "first op op == 'Scale'"),
            checks=(
                Check("needs_input_grad was (True, False)", lambda r: r.values["asked"] == [True, False]),
                Check("backward computed x's gradient only",
                      lambda r: r.values["computed"] == [True, False] and r.values["w_grad"] == "None"),
                Check("x.grad is w = 2 everywhere", lambda r: r.values["x_grad"] == [2.0, 2.0, 2.0]),
            ),
        ),
        Step(
            title="mark_dirty and mark_non_differentiable",
            narrative="""\
`AddOne_` changes its input in place and returns it: `out is h` is {same}.
`ctx.mark_dirty(h)` tells autograd. h's version went {before} → {after}
({bump_ops}): once for the `add_` itself, once more as autograd takes the
dirty tensor over (PyTorch counts the same). h's history now ends at
**{out_fn}**, and any node that saved the old h will refuse to run (lesson 4;
NOTE [ Version counters ] in engine/core/tensor.py).

`SortWithIndex` returns values and indices; `ctx.mark_non_differentiable`
makes the indices plain integers (`requires_grad` {index_rg}) while the values
keep a gradient (`requires_grad` {values_rg}). The indices {index} route the
gradient back: `a.grad` is {a_grad}.

Read the code: `engine/autograd/function.py` (`mark_dirty`, `mark_non_differentiable`); `engine/core/tensor.py`, NOTE [ Version counters ].""",
            code=dirty_and_non_differentiable,
            facts=dirty_facts,
            focus=Focus("log", "first version"),
            checks=(
                Check("the output is the input, and its version went up by two",
                      lambda r: r.values["same"] and r.values["after"] == r.values["before"] + 2),
                Check("h's grad_fn is AddOne_Backward", lambda r: r.values["out_fn"] == "AddOne_Backward"),
                Check("indices carry no gradient, values do",
                      lambda r: r.values["values_rg"] and not r.values["index_rg"]),
                Check("a.grad = 2 x (the weight of each value's sorted slot)",
                      lambda r: r.values["a_grad"] == [2.0 * (1 + r.values["index"].index(i)) for i in range(3)]),
            ),
        ),
        Step(
            title="A NumPy routine made differentiable",
            narrative="""\
Autograd cannot see inside NumPy, but a Function can wrap it: forward calls
NumPy on `x.detach().numpy()`, backward returns the derivative, also from
NumPy. Nothing checks that derivative for you: `gradcheck` compares it with
finite differences in float64. The right one passes ({ok}); a slip
(`tanh(2x)` for `tanh(x)`) is caught:

> {caught}

Run gradcheck on every Function you write (how it works: NOTE [ Gradcheck ]
in engine/autograd/gradcheck.py).

Read the code: `engine/autograd/gradcheck.py`, NOTE [ Gradcheck ].""",
            code=numpy_routine,
            focus=Focus("log", "end"),
            checks=(
                Check("gradcheck passed the right backward", lambda r: r.values["ok"] is True),
                Check("gradcheck caught the wrong one (a Jacobian mismatch)",
                      lambda r: "Jacobian mismatch" in r.values["caught"]),
            ),
        ),
        Step(
            title="A fused Function saves less",
            narrative="""\
GELU's tanh form written op by op builds {n_composed} nodes
({composed_names}); each keeps what its own backward reads:
{composed_distinct:,} B of saved tensors for a {x_bytes:,} B input (`x` for
the power, the tanh's result, and both factors of the last product). PyTorch
keeps the same four, plus each Python number (`0.5`, `0.044715`...) as an
8-byte 0-d tensor. The same GELU as one Function keeps only
`x`: {fused_saved:,} B, and recomputes the tanh in backward. The gradients
agree (largest difference {max_diff:.2e}). This is what PyTorch's own fused
kernels do (`GeluBackward0` keeps only its input), and what checkpointing does
for a whole block (lesson 5).

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ]; `engine/core/dispatch.py`, NOTE [ Dispatch ] rule 4.""",
            code=fused_saves_less,
            facts=fused_facts,
            focus=Focus("memory", "first op op == 'GeluFused'"),
            checks=(
                Check("the fused node keeps exactly x: {x_bytes:,} B",
                      lambda r: r.values["fused_saved"] == r.values["x_bytes"]),
                Check("the composed ops keep at least 3x as many bytes",
                      lambda r: r.values["composed_distinct"] >= 3 * r.values["x_bytes"]),
                Check("both give the same gradient", lambda r: r.values["max_diff"] < 1e-5),
            ),
        ),
        Step(
            title="saved_tensors_hooks: keep it somewhere else",
            narrative="""\
`torch.autograd.graph.saved_tensors_hooks(pack, unpack)` runs `pack` each time
autograd saves a tensor and `unpack` when backward needs it back. Here `pack`
writes the tensor to a `.npy` file and the node keeps only its name. The
forward of a 4-layer MLP packed {n_hooked} tensors into {n_files} files and
left {held_hooked:,} B alive (the output); the same forward without hooks
left {held_plain:,} B: the three hidden Tanh outputs ({hidden:,} B) that the
next layers' nodes would keep are now on disk. Backward read them back, and
the gradients are identical (largest difference {max_diff}). `torch.autograd.graph.save_on_cpu()` is the same idea with
`pack = t.cpu()`: on a GPU it moves activations to host memory (on the CPU
it has nothing to move). Where the pack runs: NOTE [ Saved tensors ] in
engine/core/graph.py.

Read the code: `engine/core/graph.py`, NOTE [ Saved tensors ] (the pack and unpack hooks).""",
            code=pack_to_disk,
            facts=disk_facts,
            focus=Focus("log", "first pack hooked == True"),
            checks=(
                Check("every save went through the hook: one file per saved tensor",
                      lambda r: r.values["n_hooked"] == r.values["n_files"] > 0),
                Check("without hooks, forward keeps {hidden:,} B more: the hidden activations",
                      lambda r: r.values["held_plain"] - r.values["held_hooked"] == r.values["hidden"]),
                Check("the gradients are identical", lambda r: r.values["max_diff"] == 0.0),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
