"""Fusion: chains of elementwise ops become one generated Python function.

NOTE [ Fusion ]
1. A pointwise node joins the group of a pointwise input whose only reader it is (and
   which the graph does not return): that input is then a temporary of the group, never
   stored as a value of the graph. Groups are trees of such nodes with one result, the
   last node; a group of two or more nodes becomes a fused kernel.
2. A fused kernel is Python source generated once per compiled graph: one line per
   node, calling the same kernels and formulas eager runs (``kernels.sin(xp, a)`` is the
   op table's forward kernel, ``F.where`` the backward formulas' function), so its
   numbers are eager's. Constants that have no literal (dtypes, inf) are bound by name.
3. In glassgrad a fused kernel saves the dispatch of every op (device checks, promotion,
   tensor wrapping, graph nodes and events) and the storage of every temporary; it is not
   one loop over memory as an Inductor/Triton kernel is.
"""
from __future__ import annotations

import ast

from ..core.table import OPS
from .graph import Graph, Node, array_dtype_name, fmt, map_args, run_node
from .partition import is_pointwise

_INFIX = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**"}


class FusedKernel:
    """One group of nodes and the generated function that evaluates it."""

    def __init__(self, name, nodes, inputs, source, fn):
        self.name = name
        self.nodes = nodes          # graph nodes, in order; the last one is the result
        self.inputs = inputs        # graph nodes it reads
        self.source = source
        self.fn = fn

    @property
    def result(self) -> Node:
        return self.nodes[-1]


def fusion_groups(graph: Graph) -> list[list[Node]]:
    """Groups of two or more pointwise nodes (NOTE [ Fusion ] 1), in program order."""
    users = graph.users()
    returned = set(graph.outputs)
    group: dict = {}
    for n in graph.nodes:
        if not is_pointwise(n):
            continue
        mine = [n]
        for a in n.inputs():
            if a in group and len(users[a]) == 1 and a not in returned:
                mine = group[a] + mine
        for m in mine:
            group[m] = mine
    seen, out = set(), []
    order = {n: i for i, n in enumerate(graph.nodes)}
    for n in graph.nodes:
        g = group.get(n)
        if g is not None and id(g) not in seen and len(g) > 1:
            seen.add(id(g))
            out.append(sorted(g, key=order.__getitem__))
    return out


def generate(nodes: list[Node], index: int, xp) -> FusedKernel:
    """Write, compile and return the fused kernel of one group (NOTE [ Fusion ] 2)."""
    inside = set(nodes)
    inputs: list = []
    for n in nodes:
        for a in n.inputs():
            if a not in inside and a not in inputs:
                inputs.append(a)
    names = {a: f"in{i}" for i, a in enumerate(inputs)}
    consts: dict = {}

    def lit(v):
        if isinstance(v, Node):
            return names[v]
        dt = array_dtype_name(v)
        if dt is not None and getattr(xp, dt, None) == v:
            return f"xp.{dt}"
        try:
            text = fmt(v)
            if ast.literal_eval(text) == v and type(ast.literal_eval(text)) is type(v):
                return text
        except (ValueError, SyntaxError, TypeError):
            pass
        key = f"c{len(consts)}"
        consts[key] = v
        return key

    ops = []
    for k, n in enumerate(nodes):
        names[n] = f"t{k}"
        args = [lit(a) for a in n.args]
        kw = [f"{key}={lit(v)}" for key, v in n.attrs.items()]
        if n.op == "call_op":
            rhs = f"kernels.{n.target}({', '.join(['xp'] + args + kw)})"
        elif n.op == "call_fn":
            rhs = f"F.{n.target}({', '.join(args + kw)})"
        elif n.target == "neg":
            rhs = f"-{args[0]}"
        else:
            rhs = f"{args[0]} {_INFIX[n.target]} {args[1]}"
        ops.append((names[n], rhs, n.name))
    targets = []
    for n in nodes:
        t = n.target if n.op != "operator" else n.target.replace("truediv", "div")
        if t not in targets:
            targets.append(t)
    fname = f"fused_{'_'.join(targets)}_{index}"
    lines = [f"def {fname}({', '.join(names[a] for a in inputs)}):"]
    lines += [f"    {t} = {rhs}  # {orig}" for t, rhs, orig in ops]
    lines.append(f"    return {names[nodes[-1]]}")
    source = "\n".join(lines) + "\n"
    from ..core.fns import array_fns
    env = {"xp": xp, "F": array_fns(xp), "kernels": _Kernels(), **consts}
    exec(compile(source, f"<glassgrad {fname}>", "exec"), env)  # noqa: S102 - our own generated source
    return FusedKernel(fname, nodes, inputs, source, env.pop(fname))  # pop: no function <-> globals cycle


class _Kernels:
    """``kernels.<op>(xp, ...)``: the op table's forward kernels by name."""

    def __getattr__(self, name):
        return OPS[name].fwd


class Program:
    """A graph ready to run: single nodes and fused kernels in order, freeing values after last use."""

    def __init__(self, graph: Graph, xp, fuse: bool = True):
        self.graph = graph
        self.kernels = [generate(g, i, xp) for i, g in enumerate(fusion_groups(graph))] if fuse else []
        by_result = {k.result: k for k in self.kernels}
        inside = {n for k in self.kernels for n in k.nodes if n is not k.result}
        self.steps = []
        for n in graph.nodes:
            if n.op in ("placeholder", "output") or n in inside:
                continue
            k = by_result.get(n)
            self.steps.append((n, k, k.inputs if k else n.inputs()))
        last = {}
        for i, (n, k, ins) in enumerate(self.steps):
            for a in ins:
                last[a] = i
        outs = set(o for o in graph.outputs if o is not None)
        self.free_after = [[a for a in ins if last.get(a) == i and a not in outs]
                           for i, (n, k, ins) in enumerate(self.steps)]
        self.xp = xp
        self._run_node = run_node

    def __call__(self, inputs: list) -> list:
        env = dict(zip(self.graph.placeholders, inputs))
        xp = self.xp
        for (n, k, ins), free in zip(self.steps, self.free_after):
            if k is not None:
                env[n] = k.fn(*[env[a] for a in ins])
            else:
                env[n] = self._run_node(n, xp, map_args(n.args, env.__getitem__))
            for a in free:
                del env[a]
        return [env[o] if o is not None else None for o in self.graph.outputs]

    def describe(self) -> str:
        if not self.kernels:
            return f"# {self.graph.name}: no fusion groups\n"
        return "\n".join(f"# {self.graph.name}: {k.name} replaces {', '.join(n.name for n in k.nodes)}\n{k.source}"
                         for k in self.kernels)

