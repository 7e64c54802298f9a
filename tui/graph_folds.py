"""Module groups folded into one box in the graph panel (NOTE [ Folded module groups ]).

NOTE [ Folded module groups ]
1. The groups are the pictures' (``viz/module_groups.py``, NOTE [ Collapsing repeated modules ]):
   instances of one module unit (``blocks.0``, ``blocks.1``...) whose node sequences are alike,
   here from ``MIN_REPEATS`` instances up (the pictures collapse from three, and draw every
   group collapsed; the panel starts with every group unfolded). ``t`` folds or unfolds the
   group of the selected node, ``T`` folds every group or unfolds them all; a click on a
   folded box selects it.
2. A folded group is one box in the place of its first node; the edges of its nodes become
   the box's edges (two between the same boxes are drawn once, none inside the box).
3. Its colour: current while a node inside is current (backward running through it, or the
   event at the cursor about a node inside); executed once backward ran all its grad_fn
   nodes; else pending (selected when it, or a node inside, is selected). Its border is
   heavy (┏━┓), double once checkpointing recomputed a node inside.
4. Its text: the instance and its grad_fn node count, then the bytes its nodes' saved
   tensors hold beyond the parameters and how many of its nodes backward ran (``3/12 ran``):
   ``module_groups.totals``, the numbers of the picture's box. The inspector adds the
   parameters, the ops, and the bytes released or dropped.
5. A selected group's id is ``GROUP`` + its instance (a string, never a node id).
"""
from __future__ import annotations

from rich.text import Text

from replay.graph import graph_at
from replay.words import nbytes
from viz.module_groups import collapsed_instances, totals

GROUP = "module "
MIN_REPEATS = 2


def is_group(did) -> bool:
    return isinstance(did, str) and did.startswith(GROUP)


def instance(gid: str) -> str:
    return gid[len(GROUP):]


class Folds:
    """Which groups the panel shows folded, and the groups and their totals at a step (cached)."""

    def __init__(self, model) -> None:
        self.model = model
        self.folded: set = set()             # instances drawn as one box
        self._groups = (None, {})            # (shown ids, {node id: instance})
        self._graph = (None, None)           # ((step, keep_freed, len(model)), replay.graph.Graph)

    def graph(self, i: int, keep_freed: bool = False):
        key = (i, keep_freed, len(self.model))
        if self._graph[0] != key:
            self._graph = (key, graph_at(self.model, i, keep_freed))
        return self._graph[1]

    def groups(self, i: int, keep_freed: bool = False) -> dict:
        """{node id: instance} of every node in a foldable group at step i (rule 1)."""
        ids = self.model.shown(i, keep_freed)
        if self._groups[0] != ids:
            self._groups = (ids, collapsed_instances(self.graph(i, keep_freed), MIN_REPEATS))
        return self._groups[1]

    def drawn(self, i: int, keep_freed: bool = False) -> dict:
        """{node id: the id of the box it is drawn in} for the nodes inside folded groups."""
        return {nid: GROUP + inst for nid, inst in self.groups(i, keep_freed).items() if inst in self.folded}

    def members(self, gid: str, i: int, keep_freed: bool = False) -> list:
        inst = instance(gid)
        return [nid for nid, g in self.groups(i, keep_freed).items() if g == inst]

    def totals(self, gid: str, i: int, keep_freed: bool = False):
        return totals(self.graph(i, keep_freed), self.members(gid, i, keep_freed))

    def toggle(self, nid, i: int, keep_freed: bool = False) -> str | None:
        """Fold or unfold the group of node (or box) ``nid``; its instance, or None when it is in none."""
        inst = instance(nid) if is_group(nid) else self.groups(i, keep_freed).get(nid)
        if inst is not None:
            self.folded ^= {inst}
        return inst

    def toggle_all(self, i: int, keep_freed: bool = False) -> bool:
        """Unfold every group when one is folded, else fold them all; whether they are folded now."""
        if self.folded:
            self.folded = set()
            return False
        self.folded = set(self.groups(i, keep_freed).values())
        return bool(self.folded)


def box_texts(t, gid: str) -> tuple:
    """The two lines of a folded box (rule 4)."""
    return (f"{instance(gid)} · {t.nodes} nodes", f"saved {nbytes(t.saved)} · {t.executed}/{t.nodes} ran")


def widest(gid: str, n: int) -> str:
    """The longest text a folded box with ``n`` grad_fn nodes will hold (its width stays put)."""
    return max(f"{instance(gid)} · {n} nodes", f"saved 999.9 KiB · {n}/{n} ran", key=len) + " "


def describe_group(model, gid: str, i: int, folds: Folds | None = None) -> Text:
    """The inspector's words for a folded group (rule 4)."""
    folds = folds or Folds(model)
    ids = folds.members(gid, i)
    t = folds.totals(gid, i)
    out = Text()
    out.append(f"module {instance(gid)}", style="bold")
    out.append(f"  folded group · {t.state}\n")
    out.append(f"nodes     {t.nodes} grad_fn nodes, {t.params} parameters (t unfolds)\n")
    out.append(f"ops       {t.ops}\n")
    out.append(f"saved     {nbytes(t.saved)} held beyond the parameters")
    out.append(f", {nbytes(t.released)} released" if t.released else "")
    out.append("\n")
    if t.dropped:
        out.append(f"dropped   {nbytes(t.dropped)} by checkpointing\n", style="red")
    out.append(f"backward  {t.executed}/{t.nodes} nodes run\n")
    running = [model.nodes[n].name for n in ids if model.state(n, i) == "current"]
    if running:
        out.append(f"running   {', '.join(running)}\n")
    if t.recomputed:
        out.append("recomputed in backward (checkpointing)\n", style="magenta")
    return out


__all__ = ["GROUP", "MIN_REPEATS", "Folds", "box_texts", "describe_group", "is_group", "widest"]
