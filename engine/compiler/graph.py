"""The graph IR of ``engine.compile``: a list of nodes in program order, printable as Python.

NOTE [ Graph IR ]
1. A ``Node`` is one value: ``placeholder`` (an input), ``call_op`` (a forward kernel of the
   op table, run as ``OPS[target].fwd(xp, *args, **attrs)``), ``call_fn`` (a function of the
   backward formulas' namespace ``F``, see engine/core/fns.py), ``operator`` (a Python operator
   on arrays: add, sub, mul, truediv, neg, pow), ``getitem`` (one output of a node that has
   several) or ``output`` (what the graph returns).
2. ``args`` may nest tuples and lists (index tuples, variadic saves); nodes inside them are
   the node's inputs. Everything else in args and attrs is a constant.
3. ``meta`` holds ``shape`` and ``dtype`` (an engine dtype; None for a node whose value is a
   tuple), ``phase`` (forward/backward) and, for captured ops, ``line`` (file:line: code).
4. Nodes appear in an order where every input comes before its users.
"""
from __future__ import annotations

import math
import operator

from ..core.fns import array_fns
from ..core.table import OPS

_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**"}
_SHORT = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "b8"}


class Node:
    __slots__ = ("name", "op", "target", "args", "attrs", "meta")

    def __init__(self, name, op, target, args=(), attrs=None, meta=None):
        self.name = name
        self.op = op
        self.target = target
        self.args = tuple(args)
        self.attrs = dict(attrs or {})
        self.meta = dict(meta or {})

    def inputs(self) -> list:
        """The nodes this node reads, in order, without repeats."""
        out: list = []
        _walk(self.args, lambda n: out.append(n) if not any(n is o for o in out) else None)
        return out

    @property
    def nbytes(self) -> int:
        shape, dt = self.meta.get("shape"), self.meta.get("dtype")
        if shape is None or dt is None:
            return 0
        return math.prod(shape) * dt.itemsize

    def __repr__(self):
        return self.name


def _walk(args, fn):
    for a in args:
        if isinstance(a, Node):
            fn(a)
        elif isinstance(a, (tuple, list)):
            _walk(a, fn)


def map_args(args, fn):
    """``args`` with every node replaced by ``fn(node)`` (tuples and lists kept)."""
    if isinstance(args, Node):
        return fn(args)
    if isinstance(args, tuple):
        return tuple(map_args(a, fn) for a in args)
    if isinstance(args, list):
        return [map_args(a, fn) for a in args]
    return args


class Graph:
    """Nodes in program order plus one ``output`` node."""

    def __init__(self, name="forward"):
        self.name = name
        self.nodes: list[Node] = []
        self._names: dict[str, int] = {}

    def _fresh(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        k = self._names.get(base, 0)
        self._names[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def add(self, op, target, args=(), attrs=None, name=None, **meta) -> Node:
        node = Node(self._fresh(name or str(target)), op, target, args, attrs, meta)
        self.nodes.append(node)
        return node

    def placeholder(self, name, **meta) -> Node:
        return self.add("placeholder", name, name=name, **meta)

    def output(self, values) -> Node:
        return self.add("output", "output", (tuple(values),), name="output")

    @property
    def placeholders(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "placeholder"]

    @property
    def outputs(self) -> tuple:
        return self.nodes[-1].args[0] if self.nodes and self.nodes[-1].op == "output" else ()

    def users(self) -> dict:
        """node -> list of the nodes that read it (the output node included)."""
        out = {n: [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs():
                out.setdefault(i, []).append(n)
        return out

    def call_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.op not in ("placeholder", "output")]

    def __len__(self):
        return len(self.call_nodes())

    def python_code(self, comments: bool = True) -> str:
        """The graph as a readable Python function (like ``GraphModule.code`` in torch.fx)."""
        params = ", ".join(f'{p.name}: "{type_str(p)}"' for p in self.placeholders)
        lines = [f"def {self.name}({params}):"]
        last = None
        for n in self.nodes:
            if n.op in ("placeholder", "output"):
                continue
            line = n.meta.get("line") if comments else None
            if line and line != last:
                lines.append(f"    # {line}")
            last = line or last
            ann = f': "{type_str(n)}"' if n.meta.get("dtype") is not None else ""
            lines.append(f"    {n.name}{ann} = {expr(n)}")
        outs = ", ".join(fmt(o) for o in self.outputs)
        lines.append(f"    return ({outs}{',' if len(self.outputs) == 1 else ''})")
        return "\n".join(lines) + "\n"


def type_str(n: Node) -> str:
    dt = n.meta.get("dtype")
    if dt is None:
        return "tuple"
    return f"{_SHORT.get(dt.name, dt.name)}[{', '.join(map(str, n.meta.get('shape', ())))}]"


def fmt(a) -> str:
    """A constant or node reference as Python source."""
    if isinstance(a, Node):
        return a.name
    if isinstance(a, tuple):
        return "(" + ", ".join(fmt(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(fmt(x) for x in a) + "]"
    if isinstance(a, slice):
        return f"slice({fmt(a.start)}, {fmt(a.stop)}, {fmt(a.step)})"
    if isinstance(a, float) and not math.isfinite(a):
        return f"float('{a}')"
    if a is Ellipsis:
        return "..."
    name = array_dtype_name(a)
    if name is not None:
        return f"xp.{name}"
    return repr(a)


def array_dtype_name(a) -> str | None:
    """``"float32"`` for an array namespace's dtype object (NumPy/CuPy scalar types, array-API dtypes)."""
    if isinstance(a, type) and a.__module__ in ("numpy", "cupy") and hasattr(a, "dtype"):
        return a.__name__
    inner = getattr(a, "_np_dtype", None)           # array_api_strict's DType
    if inner is not None:
        return str(inner)
    if type(a).__module__ == "numpy" and hasattr(a, "kind") and hasattr(a, "itemsize"):
        return a.name                                 # a numpy.dtype instance
    return None


def expr(n: Node) -> str:
    """The right-hand side of ``n``'s assignment."""
    args = [fmt(a) for a in n.args] + [f"{k}={fmt(v)}" for k, v in n.attrs.items()]
    if n.op == "call_op":
        return f"ops.{n.target}({', '.join(args)})"
    if n.op == "call_fn":
        return f"F.{n.target}({', '.join(args)})"
    if n.op == "getitem":
        return f"{fmt(n.args[0])}[{n.attrs['index']}]"
    if n.op == "operator":
        if n.target == "neg":
            return f"-{args[0]}"
        return f"{args[0]} {_OPERATORS[n.target]} {args[1]}"
    raise ValueError(f"no expression for a {n.op} node")


def run_node(n, xp, args):
    """Evaluate one node on arrays (NOTE [ Graph IR ] 1)."""
    if n.op == "call_op":
        op = OPS[n.target]
        out = op.fwd(xp, *args, **n.attrs)
        if op.aux:
            out, aux = out
            return (out,) + tuple(aux[k] for k in op.aux)
        return out
    if n.op == "call_fn":
        return getattr(array_fns(xp), n.target)(*args, **n.attrs)
    if n.op == "operator":
        return getattr(operator, n.target)(*args)
    if n.op == "getitem":
        return args[0][n.attrs["index"]]
    raise ValueError(f"cannot run a {n.op} node")
