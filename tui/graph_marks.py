"""Every mark the graph panel draws, with its sample and its meaning: the legend and ``?`` help read this.

NOTE [ Graph marks ]
1. A box's colour is its state at the cursor (``graph_view.box_style``); one colour at a time,
   in this order of precedence: selected, freed, future, current (the cursor), lit (rule 5),
   dropped, recomputed, executed, then leaf / built before recording / pending.
2. A box's border: single (┌─┐) for a node made by forward, double (╔═╗) once checkpointing's
   recompute rebuilt it (``TraceModel.recomputed``), the same as ``glassgrad render --phase
   recompute`` (a double purple border). It stays double after backward runs the node.
3. A box's second line is its badge: what the node saved for backward and what became of it
   (saved / packed / freed / ✗ dropped / ✗ not kept / saves nothing, with the bytes), ↻ in front
   once it was recomputed; a leaf's shape with ``grad ✓`` once its .grad was written.
4. The legend under the graph names the marks on screen now (``marks_in_view``), in the order
   of ``MARKS``: the cursor, then the marks of checkpointing and death that a box shows rarely,
   then the common ones (a narrow legend ends with how many it left to ``?``, which names them all).
5. Enter on a holders row lights (pink) every node that made or saved one of the row's storages
   (``GraphView.lit``, set by ``memory_modes.show_holders_row``): the op node whose op made it,
   the node backward was executing when it was made there, and each node that packed it. They
   stay lit while the cursor moves, until escape or another row; a folded group is lit when a
   node in it is. The selected node (the largest storage's maker) keeps its own colour.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mark:
    key: str          # what marks_in_view reports
    sample: str       # drawn in the style below
    style: str        # a GraphView component class ("" = plain text)
    short: str        # the legend's words
    long: str         # the help screen's words


MARKS = [
    Mark("current", "  ", "graph--current", "now",
         "yellow: the node the event at the cursor is about (running in backward, just created, or being "
         "recomputed); the view centres on it when it is off screen"),
    Mark("lit", "  ", "graph--lit", "holders row",
         "pink: made or saved the storages of the chosen holders row"),
    Mark("recomputed", "╔╗", "graph--recomputed", "↻ recomputed",
         "double border, ↻, purple until backward runs it: checkpointing's recompute ran its forward "
         "again in backward and rebuilt what it saved, on the same box (not a new one)"),
    Mark("dropped", "■", "graph--dropped", "✗ dropped",
         "red, \"✗ dropped N\": checkpointing did not keep what it saved (N freed in forward); "
         "\"✗ not kept\": what it saved was alive anyway (a weight, the region's input)"),
    Mark("freed", "■", "graph--freed", "✝ freed",
         "grey, \"✝ freed\": the node object died (f shows such nodes; otherwise they leave the panel)"),
    Mark("executed", "■", "graph--executed", "ran",
         "green: backward ran it (its gradient was computed)"),
    Mark("pending", "■", "graph--pending", "waiting",
         "white: in the graph, backward has not run it yet"),
    Mark("leaf", "■", "graph--leaf", "leaf",
         "green text: AccumulateGrad, where a leaf's gradient lands; \"grad ✓\" once .grad was written"),
    Mark("selected", "  ", "graph--selected", "selected",
         "blue: the node you selected (enter or a click), shown in the inspector"),
    Mark("missing", "■", "graph--missing", "before recording",
         "grey italic, \"built before recording\": a node made before recording began (only its name is known)"),
    Mark("group", "┏┓", "", "folded module",
         "heavy border: a module group folded into one box (t / T): its instance and grad_fn nodes, the "
         "bytes they saved beyond the parameters and how many backward ran; yellow while backward runs "
         "a node inside"),
    Mark("badge", "saved N", "", "for backward",
         "the second line: what the node saved for backward and its bytes: \"saved\" held, \"packed\" "
         "held through a saved_tensors hook, \"freed\" released by backward, \"saves nothing\""),
    Mark("edge", "▼", "graph--edge", "data flow",
         "lines and ▼: next_functions, from a node's inputs down into it, the way forward's data flows (leaves on "
         "top, the loss at the bottom, as the pictures); its gradient flows back up them"),
]

BY_KEY = {m.key: m for m in MARKS}


def node_marks(model, nid, i: int, style: str) -> set:
    """The marks one box at step i shows: its colour (``style``, a component class) and border."""
    out = {style.removeprefix("graph--")}
    if model.recomputed(nid, i):
        out.add("recomputed")
    rec = model.nodes[nid]
    if rec.saved or rec.kind == "fn":
        out.add("badge")
    return out


def marks_in_view(model, i: int, ids, styles: dict, extra=()) -> list:
    """The marks the boxes ``ids`` show at step i, in ``MARKS`` order (``styles``: id -> component class;
    ``extra``: keys of marks drawn besides, such as ``group``)."""
    seen: set = set(extra)
    for nid in ids:
        seen |= node_marks(model, nid, i, styles[nid])
    if len(ids) > 1:
        seen.add("edge")
    return [m for m in MARKS if m.key in seen]


__all__ = ["BY_KEY", "MARKS", "Mark", "marks_in_view", "node_marks"]
