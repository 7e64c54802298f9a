"""Which module instance each graph node belongs to, and which instances repeat.

NOTE [ Collapsing repeated modules ]
1. A node's module path is the op event's ``module`` field when the trace has
   one. Otherwise it is inferred from parameter names: a node with an edge into
   an AccumulateGrad whose tensor is named ``blocks.3.attn.qkv.weight`` belongs
   to ``blocks.3.attn.qkv``; a node without such an edge belongs to the module of
   the closest earlier node (forward order) that had one — so a block's ReLU,
   softmax or residual add goes with the parameterised op just before it.
   AccumulateGrad nodes belong to their parameter's module.
2. The *instance* is the path up to its first purely numeric part
   (``blocks.3`` from ``blocks.3.attn.qkv``; ``0`` from ``0``); the *unit* is that
   path with the number replaced by ``*`` (``blocks.*``). A path with no number is
   not an instance of anything repeated.
3. When no node has a module path, checkpoint regions stand in: each region is an
   instance of the unit ``region``.
4. Instances of one unit whose node sequences (grad_fn names in forward order)
   are identical repeat; when at least ``min_repeats`` of them share a sequence,
   each such instance is drawn as one box. Anything else stays expanded.
5. Rule 1 gives the ops that follow a stack (a final norm without parameters,
   the loss) to the stack's last instance. So an instance whose sequence is the
   unit's most common sequence plus extra nodes keeps only the common part; the
   extra nodes stay outside the box.
"""
from __future__ import annotations

import re

_NUM = re.compile(r"^\d+$")


def _param_module(name: str | None) -> str | None:
    if not name:
        return None
    return name.rsplit(".", 1)[0] if "." in name else ""


def assign_modules(state) -> None:
    """Fill ``node.module`` for nodes whose op event gave none (rule 1)."""
    nodes = state.nodes
    for n in nodes.values():
        if n.kind == "leaf" and n.module is None and n.tensor is not None:
            n.module = _param_module(n.tensor.get("name"))
    last = None
    for n in sorted((n for n in nodes.values() if n.kind == "fn"), key=lambda n: n.seq):
        if n.module is None:
            mods = [nodes[nx].module for nx, _ in n.next
                    if nx in nodes and nodes[nx].kind == "leaf" and nodes[nx].module]
            n.module = mods[0] if mods else last
        if n.module is not None:
            last = n.module


def instance_of(path: str | None) -> tuple[str, str] | None:
    """(instance, unit) for a module path, by rule 2; None when the path has no numeric part."""
    if not path:
        return None
    parts = path.split(".")
    for i, p in enumerate(parts):
        if _NUM.match(p):
            return ".".join(parts[: i + 1]), ".".join(parts[:i] + ["*"])
    return None


def collapsed_instances(state, min_repeats: int = 3) -> dict[int, str]:
    """Node id -> instance name for every node to draw inside a collapsed box (rule 4)."""
    assign_modules(state)
    inst_of: dict[int, tuple[str, str]] = {}
    for n in state.nodes.values():
        key = instance_of(n.module)
        if key is not None:
            inst_of[n.id] = key
    if not inst_of and state.regions:
        for r in state.regions.values():
            for nid in r.nodes:
                inst_of[nid] = (f"region {r.id}", "region")
    members: dict[str, list] = {}
    unit: dict[str, str] = {}
    for nid, (inst, u) in inst_of.items():
        members.setdefault(inst, []).append(state.nodes[nid])
        unit[inst] = u
    sig_of = {inst: tuple(n.name for n in sorted(ns, key=lambda n: n.seq) if n.kind == "fn")
              for inst, ns in members.items()}
    _trim_tails(members, unit, sig_of)
    sigs: dict[tuple, list[str]] = {}
    for inst, sig in sig_of.items():
        if sig:
            sigs.setdefault((unit[inst], sig), []).append(inst)
    out: dict[int, str] = {}
    for insts in sigs.values():
        if len(insts) >= min_repeats:
            for inst in insts:
                for n in members[inst]:
                    out[n.id] = inst
    return out


def _trim_tails(members: dict, unit: dict, sig_of: dict) -> None:
    """Rule 5: cut the extra trailing nodes off instances that extend their unit's common sequence."""
    by_unit: dict[str, dict] = {}
    for inst, sig in sig_of.items():
        if sig:
            counts = by_unit.setdefault(unit[inst], {})
            counts[sig] = counts.get(sig, 0) + 1
    for inst, sig in list(sig_of.items()):
        counts = by_unit.get(unit[inst])
        if not counts:
            continue
        common = max(counts, key=lambda k: (counts[k], -len(k)))
        if sig != common and len(sig) > len(common) and sig[: len(common)] == common:
            fns = sorted((n for n in members[inst] if n.kind == "fn"), key=lambda n: n.seq)
            extra = {n.id for n in fns[len(common):]}
            members[inst] = [n for n in members[inst] if n.id not in extra]
            sig_of[inst] = common


def ops_line(fns, most: int = 4) -> str:
    """The ops of a collapsed box in forward order, repeats counted: ``t, addmm, tanh`` or ``addmm ×4, ...``."""
    counts: dict[str, int] = {}
    for n in fns:
        k = n.op or n.name
        counts[k] = counts.get(k, 0) + 1
    parts = [k if c == 1 else f"{k} ×{c}" for k, c in counts.items()]
    if len(parts) > most:
        parts = parts[:most] + [f"{len(parts) - most} more kinds"]
    return ", ".join(parts)


def alike_line(insts: list) -> str:
    """Legend line for one group of alike collapsed instances."""
    what = "modules"
    if all(i.startswith("region ") for i in insts):
        what, insts = "checkpoint regions", [i[len("region "):] for i in insts]
    names = insts if len(insts) <= 4 else insts[:2] + ["…"] + insts[-1:]
    return f"{len(insts)} alike {what} drawn collapsed, one box each: {', '.join(names)}"


class GroupTotals:
    """What one collapsed box sums up: ``totals(state, ids)``."""

    __slots__ = ("current", "dropped", "executed", "nodes", "ops", "params", "recomputed", "released", "saved")

    def __init__(self, nodes, params, executed, saved, released, dropped, current, recomputed, ops):
        self.nodes, self.params, self.executed = nodes, params, executed
        self.saved, self.released, self.dropped = saved, released, dropped
        self.current, self.recomputed, self.ops = current, recomputed, ops

    @property
    def state(self) -> str:
        """current | executed | pending: the box's fill (a node inside running, all run, else waiting)."""
        return "current" if self.current else "executed" if self.nodes and self.executed == self.nodes else "pending"


def totals(state, ids) -> GroupTotals:
    """The totals of the nodes ``ids`` of ``state`` (a ``replay.graph.Graph``), counted as the picture's
    collapsed box counts them: grad_fn nodes, parameters, nodes backward ran, and the bytes their saved
    tensors hold beyond the parameters' own storages (each storage once), released or dropped."""
    members = [state.nodes[n] for n in ids if n in state.nodes]
    fns = sorted((n for n in members if n.kind == "fn"), key=lambda n: n.seq)
    leaves = [n for n in members if n.kind == "leaf"]
    live = released = dropped = 0
    seen = set(state.leaf_storages())      # a saved parameter costs no bytes of its own
    for n in fns:
        for sl in n.saved:
            key = sl.dropped_storage if sl.dropped_storage is not None else (n.id, sl.name)
            if sl.state == "dropped" and key not in seen:
                seen.add(key)
                dropped += sl.bytes
            elif sl.state != "dropped" and sl.storage not in seen:
                seen.add(sl.storage)
                if sl.state == "released":
                    released += sl.bytes
                else:
                    live += sl.bytes
    return GroupTotals(len(fns), len(leaves), sum(n.state == "executed" for n in fns), live, released, dropped,
                       any(n.state == "current" for n in members), any(n.recomputed for n in fns), ops_line(fns))
