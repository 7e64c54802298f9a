"""The min-cut rematerialization partitioner: which forward values backward keeps.

NOTE [ Min-cut partitioner ]
1. Backward reads some forward values. Each can be saved by the forward (costing its bytes
   until backward runs) or recomputed in backward from other values. The cheapest choice
   is a minimum cut in a flow network (as AOTAutograd's partitioner does):
   - every forward value v becomes an edge v_in -> v_out whose capacity is v's bytes
     (cutting it = saving v). Inputs cost 0 (they are alive anyway); a view costs
     infinity (saving a view keeps its base alive: its base is saved instead); a node
     whose value is a tuple costs infinity (its items are saved);
   - the source feeds the inputs and every value that may not be recomputed
     (non-pointwise ops: matmul, reductions, softmax, layer_norm ... are expensive;
     getitem items of such ops);
   - u_out -> v_in (infinite) for each forward use of u by v;
   - v_out -> sink (infinite) for each value backward reads directly.
2. A maximum flow (Edmonds-Karp: shortest augmenting paths by BFS) equals the cut's
   cost; the saved values are the edges v_in -> v_out with v_in reachable from the
   source in the residual network and v_out not.
3. Backward recomputes what it reads but was not saved, from saved values, walking up;
   saved values that walk never reaches are dropped (a zero-cost input the cut
   happened to cross).
"""
from __future__ import annotations

from collections import deque

from ..core.table import OPS
from .graph import Graph, map_args

INF = float("inf")

# table ops whose kernels work element by element (recomputable, fusible)
POINTWISE_OPS = frozenset((
    "add", "sub", "mul", "div", "pow_scalar", "pow_tensor", "maximum", "minimum", "where", "eq", "ne", "lt",
    "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not", "neg", "exp", "log", "sqrt",
    "rsqrt", "reciprocal", "abs", "sign", "sin", "cos", "tanh", "sigmoid", "relu", "erf", "gelu", "clamp",
    "to_dtype", "clone", "silu", "leaky_relu", "elu", "softplus", "mish", "hardtanh",
    "threshold", "celu", "hardsigmoid", "hardswish", "hardshrink", "softshrink", "prelu", "clamp_min", "clamp_max",
    "clamp_min_tensor", "clamp_max_tensor", "clamp_tensor"))
POINTWISE_FNS = frozenset(("exp", "log", "log1p", "logical_or", "sqrt", "sin", "cos", "tanh", "sign", "abs", "erf", "where", "eq", "gt",
                           "ge", "lt", "le", "logical_and", "logical_not", "astype"))

POINTWISE_OPS = POINTWISE_OPS | frozenset(("add_number",))   # the + eps of rms_norm
POINTWISE_OPS = POINTWISE_OPS | frozenset(("sub_number",))   # the - margin of cosine_embedding_loss
POINTWISE_OPS = POINTWISE_OPS | frozenset(("erfinv", "sgn"))   # engine/ops/special/erfinv.py

# the elementwise math of engine/ops/elementwise/unary.py and binary.py
POINTWISE_OPS = POINTWISE_OPS | frozenset((
    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10", "sinc", "logit",
    "nan_to_num", "trunc", "frac", "deg2rad", "rad2deg", "atan2", "hypot", "logaddexp", "xlogy",
    "xlogy_number_other", "xlogy_number_self", "lerp", "lerp_tensor", "addcmul", "addcdiv"))


# tan, fmax, copysign, ... and the integer-only ops (engine/ops/elementwise/)
POINTWISE_OPS = POINTWISE_OPS | frozenset((
    "tan", "fmax", "fmin", "copysign", "copysign_number", "logaddexp2", "ldexp", "nextafter", "rsub", "rsub_number",
    "pow_number_base", "fmod", "fmod_number", "remainder", "remainder_number",
    "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "bitwise_left_shift", "bitwise_right_shift"))


def is_pointwise(n) -> bool:
    return (n.op == "call_op" and n.target in POINTWISE_OPS) or \
        (n.op == "call_fn" and n.target in POINTWISE_FNS) or n.op == "operator"


def is_view(n) -> bool:
    """Ops whose eager result shares its input's storage (reshapes, transposes, slices)."""
    return n.op == "call_op" and OPS[n.target].view


def recomputable(n) -> bool:
    return is_pointwise(n) or is_view(n)


def _cost(n) -> float:
    if n.op == "placeholder":
        return 0
    if is_view(n) or n.meta.get("dtype") is None:
        return INF
    return n.nbytes


def max_flow(cap: dict, s, t) -> tuple[float, set]:
    """Edmonds-Karp on ``cap`` (u -> {v: capacity}); returns (flow value, source side of a min cut)."""
    res = {u: dict(vs) for u, vs in cap.items()}
    for u, vs in cap.items():
        for v in vs:
            res.setdefault(v, {}).setdefault(u, 0)
    res.setdefault(s, {})
    res.setdefault(t, {})
    flow = 0
    while True:
        parent = {s: None}
        q = deque([s])
        while q and t not in parent:
            u = q.popleft()
            for v, c in res[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    q.append(v)
        if t not in parent:
            return flow, set(parent)
        path, v = [], t
        while parent[v] is not None:
            path.append((parent[v], v))
            v = parent[v]
        push = min(res[u][v] for u, v in path)
        if push == INF:
            raise RuntimeError("engine.compile: the partitioner found a path of infinite capacity")
        for u, v in path:
            res[u][v] -= push
            res[v][u] += push
        flow += push


class Partition:
    """The partitioner's answer: saved and recomputed forward values, and the two graphs."""

    def __init__(self, saved, recomputed, forward, backward, flow):
        self.saved = saved              # forward nodes of the joint graph, in program order
        self.recomputed = recomputed
        self.forward = forward          # Graph: returns the outputs then the saved values
        self.backward = backward        # Graph: (saved..., tangents...) -> input gradients
        self.flow = flow

    @property
    def saved_bytes(self) -> int:
        """Bytes of saved values that are not inputs (what the forward adds to memory)."""
        return sum(n.nbytes for n in self.saved if n.op != "placeholder")


def min_cut(joint: Graph, n_outputs: int) -> Partition:
    """Split ``joint`` (forward nodes, then backward ones) at a minimum cut (NOTE [ Min-cut partitioner ])."""
    fw = [n for n in joint.nodes if n.meta.get("phase") == "forward"]
    fwset = set(fw)
    bw = [n for n in joint.nodes if n.meta.get("phase") == "backward"]
    needed = []
    for b in bw:
        for a in b.inputs():
            if a in fwset and a not in needed:
                needed.append(a)
    # only ancestors of what backward reads take part
    relevant, stack = set(), list(needed)
    while stack:
        n = stack.pop()
        if n not in relevant:
            relevant.add(n)
            stack.extend(n.inputs())
    cap: dict = {}

    def edge(u, v, c):
        cap.setdefault(u, {})[v] = c

    for n in fw:
        if n not in relevant:
            continue
        edge((n, "in"), (n, "out"), _cost(n))
        if n.op == "placeholder" or not recomputable(n):
            edge("source", (n, "in"), INF)
        for a in n.inputs():
            edge((a, "out"), (n, "in"), INF)
    for n in needed:
        edge((n, "out"), "sink", INF)
    flow, side = max_flow(cap, "source", "sink") if needed else (0, set())
    cut = {n for n in relevant if (n, "in") in side and (n, "out") not in side}
    saved, recomputed, seen, stack = set(), set(), set(), list(needed)
    while stack:                                           # NOTE [ Min-cut partitioner ] 3
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in cut or n.op == "placeholder":
            saved.add(n)
        else:
            recomputed.add(n)
            stack.extend(n.inputs())
    order = {n: i for i, n in enumerate(joint.nodes)}
    saved_l = sorted(saved, key=order.__getitem__)
    recomputed_l = sorted(recomputed, key=order.__getitem__)
    fwd, bwd = _split(joint, fw, bw, saved_l, recomputed_l, n_outputs)
    return Partition(saved_l, recomputed_l, fwd, bwd, flow)


def _split(joint, fw, bw, saved, recomputed, n_outputs):
    """The forward and backward graphs around the cut."""
    outs = joint.outputs
    g = Graph("forward")
    copy = {}
    for n in fw:
        copy[n] = g.add(n.op, n.target, map_args(n.args, copy.__getitem__), n.attrs, name=n.name, **n.meta)
    g.output([copy[o] for o in outs[:n_outputs]] + [copy[s] for s in saved])
    dce(g)
    b = Graph("backward")
    bcopy = {}
    for s in saved:
        bcopy[s] = b.placeholder(s.name, **{**s.meta, "phase": "backward"})
    for n in bw:
        if n.op == "placeholder":
            bcopy[n] = b.placeholder(n.name, **n.meta)
    for n in recomputed:
        bcopy[n] = b.add(n.op, n.target, map_args(n.args, bcopy.__getitem__), n.attrs, name=n.name,
                         **{**n.meta, "recomputed": True})
    for n in bw:
        if n.op != "placeholder":
            bcopy[n] = b.add(n.op, n.target, map_args(n.args, bcopy.__getitem__), n.attrs, name=n.name, **n.meta)
    b.output([bcopy[o] if o is not None else None for o in outs[n_outputs:]])
    return g, b


def dce(g: Graph) -> Graph:
    """Drop nodes nothing reads (placeholders stay: they are the signature)."""
    live = set()
    for n in reversed(g.nodes):
        if n.op in ("output", "placeholder") or n in live:
            live.add(n)
            live.update(n.inputs())
    g.nodes = [n for n in g.nodes if n in live]
    return g
