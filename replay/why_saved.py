"""Why a node keeps a tensor: the op table row's save rule and backward formula, in words.

NOTE [ Why is this saved ]
1. A node's name (``MulBackward0``) leads to the op table rows that build it
   (``engine.core.table.OPS``: the engine's derivatives.yaml); the row whose ``save`` names
   the slot explains it. The trace itself carries only names, so this reads the table of the
   engine that draws the trace; a trace from another version may name a slot no row knows.
2. The words: which inputs' gradients read the slot (``save`` maps a slot to the inputs whose
   gradients need it; an empty tuple means any of them) and the backward formula's source
   line, so ``mul`` keeping ``other`` reads "kept because self's gradient needs it:
   grad * other".
3. Sharing and checkpointing come from the trace: ``shared_with`` lists the other slots (and a
   parameter) that hold the same storage, and ``under_checkpoint`` says what a checkpoint
   region would do with the slot (dropped in forward and recomputed in backward, unless it is
   the region's input or a parameter, which stay alive anyway).
"""
from __future__ import annotations

import inspect

from engine.core.table import OPS


def rows_for(node_name: str) -> list:
    """Rule 1: the op table rows that build ``node_name``."""
    return [op for op in OPS.values() if op.node == node_name]


def formula(op) -> str:
    """The backward formula's source, one line (``lambda F, g, s: ...``, cut where the lambda ends)."""
    try:
        src = " ".join(inspect.getsource(getattr(op.bwd, "real_formula", op.bwd)).split())
    except (OSError, TypeError):
        return "(its backward is written in Python code, not one formula)"
    start = src.find("lambda F")                # a backward formula takes (F, g, s); the forward (xp, ...)
    if start < 0:
        start = src.find("lambda")
    if start < 0:
        return src.rstrip(",")
    depth = 0
    body = src.find(":", start) + 1 or start        # the parameters' commas are not the end
    for k in range(body, len(src)):
        c = src[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return src[start:k]
            depth -= 1
        elif c == "," and depth == 0:
            return src[start:k]
    return src[start:]


def why(node_name: str, slot: str) -> list:
    """Rule 2: lines explaining why ``node_name`` keeps ``slot`` (empty when no row says)."""
    for op in rows_for(node_name):
        if slot in op.save:
            need = op.save[slot]
            who = ("any input's gradient" if not need else
                   " and ".join(f"{a}'s gradient" for a in need))
            kind = "its own output" if slot in ("result", "output") else (
                "an input" if slot in op.argpos else "an extra output of the forward")
            return [f"{node_name} keeps {slot!r} ({kind}) because {who} reads it in backward",
                    f"{op.name}'s backward: {formula(op)}"]
    return []


def shared_with(graph, node_id: int, slot: str) -> list:
    """Rule 3: the other holders of the slot's storage at this step: ``(node name, slot)`` pairs
    and ``("parameter", name)`` when a leaf's tensor lives there."""
    node = graph.nodes.get(node_id)
    mine = next((s for s in getattr(node, "saved", []) if s.name == slot), None)
    if mine is None or mine.storage is None:
        return []
    out = [(graph.nodes[s_node].name, s.name) for s_node, s in _slots(graph)
           if s.storage == mine.storage and not (s_node == node_id and s.name == slot)]
    leaf = graph.leaf_storages().get(mine.storage)
    if leaf is not None:
        out.append(("parameter", leaf.label_name))
    return out


def _slots(graph):
    for nid, n in graph.nodes.items():
        for s in n.saved:
            yield nid, s


def under_checkpoint(slot_is_input_or_param: bool) -> str:
    """Rule 3's words for a slot inside a checkpoint region."""
    if slot_is_input_or_param:
        return "under checkpoint it would stay: the region's input and the parameters are alive anyway"
    return "under checkpoint it would be dropped in forward and recomputed in backward, before this node runs"
