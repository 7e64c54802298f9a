"""The joint graph: the captured forward followed by its backward, traced from the op table.

NOTE [ Joint graph ]
1. The backward formulas are pure ``bwd(F, g, s)`` (NOTE [ One formula, two currencies ]);
   here they run a third time, with ``TracingFns`` as ``F``: each ``F.*`` call and each
   arithmetic operator on a ``Proxy`` appends a node instead of only computing.
2. Proxies carry a real example array (the forward's values are computed once more from
   the example inputs), so formulas that ask ``F.shape``/``F.dtype`` get exact answers.
3. ``s`` gives a formula the forward nodes it reads (``s.self``, ``s.result``, aux outputs
   such as ``s.result1``), the op's attributes, ``s.needs`` (which inputs depend on an
   input that requires grad) and ``s.shapes``.
4. As the eager engine does (OpNode.apply), a gradient whose shape differs from its
   input's is summed back (``F.sum_to``) and one of another dtype is cast (``F.astype``);
   gradients reaching one value from several users are added up.
5. Tangents (the incoming output gradients) are placeholders ``tangents_1``...; the joint
   graph returns the forward outputs followed by one gradient per input that requires
   grad.
"""
from __future__ import annotations

import operator

from ..core.fns import ArrayFns
from ..core.tensor import Tensor
from ..core.table import OPS
from .graph import Graph, Node, map_args, run_node

_ENGINE_DTYPE = Tensor._engine_dtype_of


class Proxy:
    """A node being traced, with its example value (NOTE [ Joint graph ] 2)."""

    __slots__ = ("node", "val", "tr")

    def __init__(self, node, val, tr):
        self.node, self.val, self.tr = node, val, tr

    shape = property(lambda self: tuple(self.val.shape))

    def _op(self, name, *args):
        return self.tr.emit("operator", name, args, {}, getattr(operator, name)(*[_val(a) for a in args]))

    __add__ = lambda self, o: self._op("add", self, o)
    __radd__ = lambda self, o: self._op("add", o, self)
    __sub__ = lambda self, o: self._op("sub", self, o)
    __rsub__ = lambda self, o: self._op("sub", o, self)
    __mul__ = lambda self, o: self._op("mul", self, o)
    __rmul__ = lambda self, o: self._op("mul", o, self)
    __truediv__ = lambda self, o: self._op("truediv", self, o)
    __rtruediv__ = lambda self, o: self._op("truediv", o, self)
    __pow__ = lambda self, o: self._op("pow", self, o)
    __rpow__ = lambda self, o: self._op("pow", o, self)
    __neg__ = lambda self: self._op("neg", self)


def _val(a):
    if isinstance(a, Proxy):
        return a.val
    if isinstance(a, tuple):
        return tuple(_val(x) for x in a)
    if isinstance(a, list):
        return [_val(x) for x in a]
    return a


def _node(a):
    if isinstance(a, Proxy):
        return a.node
    if isinstance(a, tuple):
        return tuple(_node(x) for x in a)
    if isinstance(a, list):
        return [_node(x) for x in a]
    return a


class _Tracer:
    def __init__(self, graph: Graph, xp):
        self.g = graph
        self.xp = xp
        self.af = ArrayFns(xp)
        self.line = None        # the forward line whose formula is being traced

    def emit(self, op, target, args, attrs, val, name=None):
        meta = {"phase": "backward", "line": self.line}
        if hasattr(val, "shape") and hasattr(val, "dtype"):
            meta.update(shape=tuple(val.shape), dtype=_ENGINE_DTYPE(self.xp, val.dtype))
        node = self.g.add(op, target, _node(tuple(args)), _node(attrs), name=name, **meta)
        return Proxy(node, val, self)


class TracingFns:
    """``F`` for tracing: every call becomes a ``call_fn`` node (NOTE [ Joint graph ] 1)."""

    differentiable = False

    def __init__(self, tracer):
        self._tr = tracer

    def shape(self, x):
        return tuple(_val(x).shape)

    def dtype(self, x):
        return _ENGINE_DTYPE(self._tr.xp, _val(x).dtype)

    def __getattr__(self, name):
        fn = getattr(self._tr.af, name)   # AttributeError for names F does not have

        def call(*args, **kw):
            return self._tr.emit("call_fn", name, args, kw, fn(*_val(args), **_val(kw)))
        return call


class _Saved:
    """``s`` for a traced formula (NOTE [ Joint graph ] 3)."""

    def __init__(self, node, op, proxies, rg, aux_nodes):
        self._node, self._op, self._p, self._aux = node, op, proxies, aux_nodes
        args = [a for a in node.args]
        self.needs = tuple(isinstance(a, Node) and rg.get(a, False) for a in args)
        self.shapes = [a.meta["shape"] if isinstance(a, Node) else None for a in args]
        self._args = args

    def __getattr__(self, name):
        op, node = self._op, self._node
        if name == "result":
            return self._p[self._aux[0] if self._aux else node]
        if op.aux and name in op.aux:
            return self._p[self._aux[1 + list(op.aux).index(name)]]
        names = op.args
        if name in names:
            i = names.index(name)
            if op.variadic and i == len(names) - 1:
                return [self._p[a] if isinstance(a, Node) else a for a in self._args[i:]]
            a = self._args[i]
            return self._p[a] if isinstance(a, Node) else a
        if name in node.attrs:
            return node.attrs[name]
        if name in op.defaults:
            return op.defaults[name]
        raise AttributeError(name)


def requires_grad(graph: Graph) -> dict:
    """node -> whether its value depends on an input that requires grad (as the dispatcher decides)."""
    rg = {}
    for n in graph.nodes:
        if n.op == "placeholder":
            rg[n] = bool(n.meta.get("requires_grad"))
        elif n.op == "call_op":
            op = OPS[n.target]
            dt = n.meta.get("dtype")
            rg[n] = op.differentiable and any(rg.get(a, False) for a in n.inputs()) and \
                (dt is None or dt.is_floating_point)
        elif n.op == "getitem":
            rg[n] = n.attrs["index"] == 0 and rg[n.args[0]]
    return rg


def example_values(graph: Graph, xp, inputs: dict) -> dict:
    """node -> array: the forward computed once from ``inputs`` (placeholder -> array)."""
    env = dict(inputs)
    for n in graph.nodes:
        if n.op not in ("placeholder", "output"):
            env[n] = run_node(n, xp, map_args(n.args, env.__getitem__))
    return env


def build_joint(fw: Graph, xp, inputs: dict) -> tuple[Graph, dict]:
    """The joint forward+backward graph of ``fw``, and its rg map (NOTE [ Joint graph ])."""
    joint = Graph("joint")
    copy = {}
    for n in fw.nodes[:-1]:
        m = joint.add(n.op, n.target, map_args(n.args, copy.__getitem__), n.attrs, name=n.name, **n.meta)
        copy[n] = m
    outs = [copy[o] for o in fw.outputs]
    rg = requires_grad(joint)
    vals = example_values(joint, xp, {copy[p]: v for p, v in inputs.items()})
    tr = _Tracer(joint, xp)
    F = TracingFns(tr)
    proxies = {n: Proxy(n, vals[n], tr) for n in joint.nodes}
    grads: dict = {}
    for k, o in enumerate(outs, start=1):
        if rg[o]:
            t = joint.placeholder(f"tangents_{k}", shape=o.meta["shape"], dtype=o.meta["dtype"], phase="backward")
            # a placeholder after forward nodes is fine for printing: the backward reads it first
            _accumulate(grads, o, Proxy(t, xp.ones(o.meta["shape"], dtype=vals[o].dtype), tr))
    aux_of = {}
    for n in joint.nodes:
        if n.op == "getitem":
            aux_of.setdefault(n.args[0], {})[n.attrs["index"]] = n
    for n in reversed([m for m in joint.nodes if m.op == "call_op"]):
        op = OPS[n.target]
        items = aux_of.get(n)
        head = items[0] if items else n
        if not rg.get(head) or head not in grads:
            continue
        aux_nodes = [items.get(k) for k in range(len(op.aux) + 1)] if items else None
        s = _Saved(n, op, proxies, rg, aux_nodes)
        tr.line = n.meta.get("line")
        res = op.bwd(F, grads[head], s)
        for r, a, need in zip(res, n.args, s.needs):
            if r is None or not need:
                continue
            if F.shape(r) != a.meta["shape"]:               # NOTE [ Joint graph ] 4
                r = F.sum_to(r, a.meta["shape"])
            if F.dtype(r) is not a.meta["dtype"]:
                r = F.astype(r, a.meta["dtype"])
            _accumulate(grads, a, r)
    grad_outs = [grads[p].node if p in grads else None for p in joint.placeholders
                 if p.meta.get("phase") == "forward" and rg[p]]
    joint.output(outs + grad_outs)
    joint.meta_rg = rg
    return joint, copy


def _accumulate(grads, node, g):
    if not isinstance(g, Proxy):       # a constant gradient (a formula returned a number)
        return
    grads[node] = g if node not in grads else grads[node] + g
