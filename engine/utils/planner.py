"""Checkpointing planner: which segments of a chain to checkpoint for a memory budget.

``plan(layers, sample_input, budget_bytes)`` measures every layer once (bytes it keeps,
transients, what its backward adds, and its forward cost), then finds the plan with the
least recomputation whose predicted peak fits the budget, and the whole trade-off curve.

NOTE [ Checkpoint plan cost model ]
A plan is a set of disjoint segments [a, b] of the chain 1..n that run under
non-reentrant ``checkpoint``; every other layer runs normally ("stored"). The step is
``out = chain(x); out.sum().backward()``. Bytes are relative to ``base``, what is
allocated before the step (parameters, existing gradients, the input). Measured once,
in a run with nothing checkpointed, per layer i:
  x_i  bytes of the layer's output storage (0 if the output is a view);
  m_i  bytes the layer leaves allocated after its forward (its output and what it saves);
  p_i  its forward transient: peak during the layer minus (allocated after it);
  e_i  its backward peak minus (base + m_1 + ... + m_i): gradients in flight, new
       .grad storages, the loss and seed, minus what it already released;
  u_i  the same at the moment its backward starts (the gradient arriving for x_i, ...);
  f_i  x_(i-1) if the layer's input was freed during its forward (nothing saves it), else 0:
       a segment starting at layer i keeps that input as its boundary, so inside the
       segment layer i holds m_i + f_i;
  k_i  whether the layer saves its input itself (it then keeps x_(i-1) alive);
  v_i  x_i if the output was already freed when the layer's backward started (nothing
       saved it), else 0: u_i then lacks x_i, which a recompute does allocate again;
  c_i  its forward cost: FLOPs estimated from its ops' shapes (2*M*N*K for a matmul,
       2*out*C*kh*kw for conv2d, the output size for anything else).
Walking the plan with H = bytes held by the blocks before the current one
(a stored layer holds m_i, a checkpointed segment holds its output x_b):
  1. stored layer i:      forward H + m_i + p_i;  backward H + m_i - g_i + e_i;  then
                          H += m_i - g_i, where g_i = x_(i-1) if the block before is a segment,
                          f_i = 0 and not k_i (in the plain run x_(i-1) stayed alive only because
                          layer i-1 saved it; checkpointed, nothing keeps it), else 0.
  2. segment [a, b]:      forward, layer t:  H + [t > a] x_(t-1) + m_t + p_t (the region keeps
                          only its current tensor);  with K_t = (m_a + f_a) + m_(a+1) + ... + m_t,
                          recompute, layer t: H + u_b + v_b + K_(t-1) + m_t + p_t;
                          backward, layer t: H + K_t + e_t;  then H += x_b.
  3. peak(plan) = max of all those terms; cost(plan) = sum of c_t over checkpointed layers
     (with early stop a recompute reruns exactly its segment's forward once).
The model is exact for chains whose layers add up (what the engine does for the MLPs of
the tests and lessons: predicted peaks equal measured ones to the byte).

NOTE [ Optimal plan by dynamic programming ]
1. Every term in NOTE [ Checkpoint plan cost model ] is H (bytes held before a block)
   plus a number that depends only on the block (and, for a stored layer, on whether a
   segment came right before it); H only grows. So after a prefix of the chain, a
   partial plan matters to the rest only through (H, that flag, cost so far).
2. ``_solve`` sweeps positions 0..n keeping, per position and flag, the Pareto front of
   (H, cost) over feasible partial plans (no term above the budget); a pair with both no smaller
   than another's is dropped: it can never lead to a cheaper feasible plan. Extending a
   pair by a stored layer or by any segment starting there keeps the exact optimum
   (Chen et al.'s segment view of sublinear memory, solved exactly, as Griewank's revolve
   solves its own model by dynamic programming).
3. Plans are one level deep (no checkpoint inside a checkpoint): budgets below the best
   one-level peak have no plan here and raise.
4. The trade-off curve: the optimum for no budget, then for (its peak - 1), and so on
   until no plan fits; each point is Pareto-optimal in (peak, extra cost).
5. Cost: O(n^2) segment terms, then per budget O(n^2 * front size) extensions (front size
   at most the number of distinct held-byte totals); in Python a 64-layer curve takes
   about half a second, a 128-layer one several seconds.
"""
from __future__ import annotations

import gc
import math
from dataclasses import dataclass, field

__all__ = ["LayerStats", "Plan", "measure", "plan", "apply", "tradeoff", "evaluate", "sequential_plan"]


@dataclass(frozen=True)
class LayerStats:
    """Measured figures of one layer (NOTE [ Checkpoint plan cost model ])."""
    x: int
    m: int
    p: int
    e: int
    u: int
    cost: float
    ops: int = 0
    name: str = ""
    f: int = 0
    k: bool = True
    v: int = 0


@dataclass
class Plan:
    """Checkpointed segments as half-open layer ranges [start, end), with predicted figures."""
    segments: list
    n: int
    peak_bytes: int
    cost: float
    budget_bytes: int | None = None
    stats: list = field(default_factory=list, repr=False)
    curve: list = field(default_factory=list, repr=False)

    @property
    def forward_cost(self) -> float:
        return sum(s.cost for s in self.stats)

    @property
    def extra_forward_fraction(self) -> float:
        """Recompute cost as a fraction of one forward."""
        total = self.forward_cost
        return self.cost / total if total else 0.0

    @property
    def curve_fractions(self) -> list:
        """The trade-off curve as [(peak_bytes, recompute cost as a fraction of one forward)]."""
        total = self.forward_cost
        return [(pk, c / total if total else 0.0) for pk, c in self.curve]

    def apply(self, model):
        return apply(model, self)

    def describe(self) -> str:
        segs = ", ".join(f"[{a}:{b}]" for a, b in self.segments) or "none"
        return (f"checkpoint {segs} of {self.n} layers: peak {self.peak_bytes} bytes, recompute "
                f"{self.extra_forward_fraction:.1%} of a forward")


# ---- the model -------------------------------------------------------------------------
def _blocks(segments, n):
    """The plan as blocks in order: ("s", i) stored layer, ("c", a, b) segment [a, b] (0-based, inclusive)."""
    out, i = [], 0
    for a, b in sorted(segments):
        if not (0 <= a < b <= n) or a < i:
            raise ValueError(f"invalid checkpoint segments {segments} for {n} layers")
        out.extend(("s", t) for t in range(i, a))
        out.append(("c", a, b - 1))
        i = b
    out.extend(("s", t) for t in range(i, n))
    return out


def evaluate(stats, segments) -> tuple:
    """(peak_bytes, cost) of checkpointing ``segments`` (NOTE [ Checkpoint plan cost model ]),
    by walking the plan forward then backward."""
    blocks = _blocks(segments, len(stats))
    H, peak, held_before, after_segment = 0, 0, [], False
    for blk in blocks:                       # forward
        held_before.append((H, after_segment))
        if blk[0] == "s":
            s = stats[blk[1]]
            peak = max(peak, H + s.m + s.p)
            H += s.m - _g(stats, blk[1], after_segment)
            after_segment = False
        else:
            _, a, b = blk
            for t in range(a, b + 1):
                prev = stats[t - 1].x if t > a else 0
                peak = max(peak, H + prev + stats[t].m + stats[t].p)
            H += stats[b].x
            after_segment = True
    cost = 0.0
    for blk, (H, after) in zip(reversed(blocks), reversed(held_before)):   # backward
        if blk[0] == "s":
            s = stats[blk[1]]
            peak = max(peak, H + s.m - _g(stats, blk[1], after) + s.e)
        else:
            _, a, b = blk
            kept = 0
            for t in range(a, b + 1):        # recompute
                peak = max(peak, H + stats[b].u + stats[b].v + kept + stats[t].m + stats[t].p)
                kept += stats[t].m + (stats[t].f if t == a else 0)
                cost += stats[t].cost
            for t in range(b, a - 1, -1):    # backward through the recomputed segment
                peak = max(peak, H + kept + stats[t].e)    # kept: K_t
                kept -= stats[t].m
    return peak, cost


def _g(stats, i, after_segment) -> int:
    """g_i of NOTE [ Checkpoint plan cost model ] 1."""
    s = stats[i]
    return stats[i - 1].x if after_segment and i > 0 and not s.f and not s.k else 0


def _segment_table(stats):
    """table[a][b - a] = (local term, bytes held after, cost, monotone part) of segment [a, b]
    (NOTE [ Optimal plan by dynamic programming ] 1). The monotone part (forward and
    backward terms) never shrinks as b grows, so it bounds the search."""
    n = len(stats)
    table = []
    for a in range(n):
        row = []
        fwd = rec_core = bwd = 0
        kept = 0
        cost = 0.0
        for b in range(a, n):
            s = stats[b]
            prev = stats[b - 1].x if b > a else 0
            fwd = max(fwd, prev + s.m + s.p)
            rec_core = max(rec_core, kept + s.m + s.p)
            kept += s.m + (s.f if b == a else 0)
            bwd = max(bwd, kept + s.e)
            cost += s.cost
            mono = max(fwd, bwd)
            row.append((max(mono, s.u + s.v + rec_core), s.x, cost, mono))
        table.append(row)
    return table


def _solve(stats, budget, table=None):
    """The cheapest plan whose peak is at most ``budget``: (segments, peak, cost) or None."""
    n = len(stats)
    table = table if table is not None else _segment_table(stats)
    # fronts[position][flag]: {H: (cost, back pointer)}; flag: the last block was a segment
    fronts = [(dict(), dict()) for _ in range(n + 1)]
    fronts[0][0][0] = (0.0, None)
    for i in range(n):
        s = stats[i]
        row = table[i]
        for flag in (0, 1):
            front = _pareto(fronts[i][flag])
            fronts[i][flag].clear()
            fronts[i][flag].update(front)
            g = _g(stats, i, flag)
            stored = max(s.m + s.p, s.m - g + s.e)
            for H, (c, _) in front.items():
                if H + stored <= budget:                                 # stored layer i
                    _offer(fronts[i + 1][0], H + s.m - g, c, (i, H, flag, None))
                room = budget - H
                for k, (local, held, seg_cost, mono) in enumerate(row):  # segment [i, i + k]
                    if mono > room:
                        break            # every longer segment is over budget too
                    if local <= room:
                        _offer(fronts[i + k + 1][1], H + held, c + seg_cost, (i, H, flag, i + k))
    finals = [(c, H, flag) for flag in (0, 1) for H, (c, _) in _pareto(fronts[n][flag]).items()]
    if not finals:
        return None
    _, H, flag = min(finals)
    segments, pos = [], n
    while pos > 0:
        i, H_prev, flag_prev, b = fronts[pos][flag][H][1]
        if b is not None:
            segments.append((i, b + 1))
        pos, H, flag = i, H_prev, flag_prev
    segments.reverse()
    peak, cost = evaluate(stats, segments)
    return segments, peak, cost


def _offer(front, H, cost, back):
    old = front.get(H)
    if old is None or cost < old[0]:
        front[H] = (cost, back)


def _pareto(front):
    out, best = {}, math.inf
    for H in sorted(front):
        c, back = front[H]
        if c < best:
            out[H] = (c, back)
            best = c
    return out


def tradeoff(stats) -> list:
    """[(peak_bytes, extra_cost, segments)] from no checkpointing down to the lowest peak
    any one-level plan reaches (NOTE [ Optimal plan by dynamic programming ] 4)."""
    table = _segment_table(stats)
    points, budget = [], math.inf
    while True:
        found = _solve(stats, budget, table)
        if found is None:
            return points
        segments, peak, cost = found
        while points and points[-1][1] >= cost:    # same cost, now a lower peak: keep only this one
            points.pop()
        points.append((peak, cost, segments))
        budget = peak - 1


# ---- measuring a chain ------------------------------------------------------------------
_MATMUL = {"mm", "addmm", "bmm", "matmul", "mv", "dot"}


def _op_cost(e) -> float:
    out = e["output"]
    numel = math.prod(out["shape"]) if out else 0
    ins = [i for i in e["inputs"] if "shape" in i]
    if e["op"] in _MATMUL and ins:
        k = ins[-1]["shape"][0] if len(ins[-1]["shape"]) >= 1 else 1
        if e["op"] == "addmm":
            k = ins[1]["shape"][-1]
        elif len(ins) >= 2 and len(ins[0]["shape"]) >= 1:
            k = ins[0]["shape"][-1]
        return 2.0 * numel * k
    if e["op"] == "conv2d" and len(ins) >= 2:
        w = ins[1]["shape"]
        return 2.0 * numel * math.prod(w[1:])
    return float(numel)


def layers_of(model) -> list:
    from ..nn import Sequential
    if isinstance(model, Sequential):
        return list(model.children())
    return list(model)


def measure(model_or_layers, sample_input) -> list:
    """Run the chain once (forward, then ``out.sum().backward()``) and return one LayerStats per
    layer. Gradients, RNG state and everything else are restored afterwards."""
    from ..autograd import backward
    from ..random import fork_rng
    from ..trace import record
    from ..core.tensor import Tensor
    layers = layers_of(model_or_layers)
    if not layers:
        raise ValueError("plan(): the model has no layers")
    if not isinstance(sample_input, Tensor):
        raise TypeError(f"plan(): sample_input must be a Tensor, got {type(sample_input).__name__}")
    device = sample_input.device
    leaves = _parameters(layers)
    if sample_input.requires_grad and sample_input.grad_fn is None:
        leaves.append(sample_input)
    stash = [(p, p.grad, None if p.grad is None else p.grad._storage.xp.asarray(p.grad._data, copy=True))
             for p in leaves]
    devs = [] if device.type == "cpu" else [device]
    try:
        with fork_rng(devices=devs):
            gc.collect()       # figures are relative to what is live now (the trace's alloc/free replay)
            with record() as tr:
                bounds, outs_new = [], []
                h = sample_input
                for i, layer in enumerate(layers):
                    start = len(tr.events)
                    h = layer(h)
                    if not isinstance(h, Tensor):
                        raise TypeError(f"plan(): layer {i} ({type(layer).__name__}) returned "
                                        f"{type(h).__name__}; the layers of a chain take and return one tensor")
                    bounds.append((start, len(tr.events)))
                    outs_new.append(h._storage.id)
                loss = h.sum()
                del h
                bwd_start = len(tr.events)
                backward([loss])
                del loss
    finally:
        for p, g, copy in stash:       # gradients as they were (same tensors, same values)
            p.grad = g
            if g is not None:
                g._data[...] = copy
    gc.collect()
    return _stats_from_trace(tr.events, bounds, outs_new, bwd_start, str(device), layers, sample_input._storage.id)


def _parameters(layers) -> list:
    seen, out = set(), []
    for layer in layers:
        for p in (layer.parameters() if hasattr(layer, "parameters") else ()):
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
    return out


def _stats_from_trace(events, bounds, out_storages, bwd_start, device, layers, input_storage=None):
    n = len(layers)
    live = [0] * (len(events) + 1)    # live[k]: bytes above base just before event k
    cur = 0
    for k, e in enumerate(events):
        live[k] = cur
        if e["kind"] in ("alloc", "free") and e.get("device", device) == device:
            cur += e["bytes"] if e["kind"] == "alloc" else -e["bytes"]
    live[len(events)] = cur
    node_layer, xs, ms, ps, fs, ks, costs, ops = {}, [], [], [], [], [], [], []
    for i, (a, b) in enumerate(bounds):
        allocs = {e["storage"]: e["bytes"] for e in events[a:b] if e["kind"] == "alloc"}
        xs.append(allocs.get(out_storages[i], 0))
        freed = {e["storage"] for e in events[a:b] if e["kind"] == "free"}
        fs.append(xs[i - 1] if i > 0 and out_storages[i - 1] in freed else 0)
        inp = out_storages[i - 1] if i > 0 else input_storage
        ks.append(any(sv["storage"] == inp for e in events[a:b] if e["kind"] == "op" and e.get("node")
                      for sv in e["node"]["saved"]))
        ms.append(live[b] - live[a])
        ps.append(max(live[a:b + 1]) - live[b])
        layer_ops = [e for e in events[a:b] if e["kind"] == "op"]
        costs.append(sum(_op_cost(e) for e in layer_ops))
        ops.append(len(layer_ops))
        for e in layer_ops:
            if e.get("node"):
                node_layer[e["node"]["id"]] = i
    # backward windows: each layer's starts at its first executed node
    starts = {}
    for k in range(bwd_start, len(events)):
        e = events[k]
        if e["kind"] == "execute" and e["node"] in node_layer:
            starts.setdefault(node_layer[e["node"]], k)
    end = len(events)
    for k in range(len(events) - 1, bwd_start - 1, -1):
        if events[k]["kind"] == "backward_end":
            end = k
            break
    prefix = [0]
    for m in ms:
        prefix.append(prefix[-1] + m)
    freed_at = {e["storage"]: k for k, e in enumerate(events) if e["kind"] == "free"}
    es, us, vs = [0] * n, [0] * n, [0] * n
    for i in range(n):
        k1 = _next_start(starts, i, end)          # where the next lower layer's backward begins
        k0 = starts.get(i, k1)                     # a layer without nodes has an empty window
        us[i] = live[k0] - prefix[i + 1]
        es[i] = max(live[k0:k1 + 1]) - prefix[i + 1]
        vs[i] = xs[i] if freed_at.get(out_storages[i], len(events)) < k0 else 0
    return [LayerStats(x=xs[i], m=ms[i], p=ps[i], e=es[i], u=us[i], cost=costs[i], ops=ops[i],
                       name=type(layers[i]).__name__, f=fs[i], k=ks[i], v=vs[i]) for i in range(n)]


def _next_start(starts, i, end):
    """Event index where the backward of the nearest lower layer with nodes begins."""
    for j in range(i - 1, -1, -1):
        if j in starts:
            return starts[j]
    return end


# ---- the public entry points ----------------------------------------------------------
def plan(model_or_layers, sample_input, budget_bytes=None) -> Plan:
    """The cheapest one-level checkpointing plan whose predicted peak fits ``budget_bytes``
    (bytes above what is allocated before the step; None: no limit), with the trade-off
    curve in ``Plan.curve`` as [(peak_bytes, extra_cost)]."""
    stats = measure(model_or_layers, sample_input)
    return plan_from_stats(stats, budget_bytes)


def plan_from_stats(stats, budget_bytes=None) -> Plan:
    curve = tradeoff(stats)
    budget = math.inf if budget_bytes is None else budget_bytes
    fits = [pt for pt in curve if pt[0] <= budget]
    if not fits:
        lowest = curve[-1][0]
        raise ValueError(f"no checkpointing plan keeps the step within {budget_bytes} bytes; the lowest peak a "
                         f"one-level plan reaches is {lowest} bytes")
    peak, cost, segments = min(fits, key=lambda pt: (pt[1], pt[0]))
    return Plan(segments=segments, n=len(stats), peak_bytes=peak, cost=cost, budget_bytes=budget_bytes,
                stats=list(stats), curve=[(pk, c) for pk, c, _ in curve])


def sequential_plan(n: int, segments: int) -> list:
    """The segments ``checkpoint_sequential(functions, segments, ...)`` checkpoints."""
    size = n // segments
    return [(a, a + size) for a in range(0, size * (segments - 1), size)]


def apply(model, the_plan):
    """A callable running ``model`` (an nn.Sequential or a list of layers) under the plan."""
    from .checkpoint import checkpoint
    layers = layers_of(model)
    if len(layers) != the_plan.n:
        raise ValueError(f"the plan is for {the_plan.n} layers, the model has {len(layers)}")
    blocks = _blocks([tuple(s) for s in the_plan.segments], len(layers))

    def run_range(a, b):
        def forward(h):
            for t in range(a, b + 1):
                h = layers[t](h)
            return h
        forward.__qualname__ = f"segment[{a}:{b + 1}]"
        return forward

    def run(x):
        h = x
        for blk in blocks:
            if blk[0] == "s":
                h = layers[blk[1]](h)
            else:
                h = checkpoint(run_range(blk[1], blk[2]), h, use_reentrant=False)
        return h
    return run
