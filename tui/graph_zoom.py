"""The graph panel's zoom levels, the names that fit them, and the whole graph's cells (NOTE [ Graph zoom ]).

NOTE [ Graph zoom ]
1. Three levels, ``-`` zooms out and ``+`` (or ``=``) in: ``BOXES`` (bordered boxes, the name
   and what the node saved), ``NAMES`` (one-row boxes ``[Addmm]`` over one-row channels) and
   ``WHOLE`` (every box one cell, ``■`` for a node, ``▣`` for a folded group, the whole graph
   scaled into the panel). ``0`` picks the most detailed level at which the whole graph fits
   the panel, ``WHOLE`` when none does.
2. Names that fit, the same way everywhere: a grad_fn's name loses its ``Backward`` and
   version suffix at ``NAMES`` (``AddmmBackward0`` -> ``Addmm``), an AccumulateGrad is its
   leaf's name (``leaf`` when it has none), a folded group its instance. A name longer than its
   room keeps its start and ends with ``…``; a dotted name (a parameter, a module instance)
   keeps instead its last parts that fit after a ``…`` (``…c_attn.weight``), since its start
   is the same for every layer. The inspector always gives the full name.
3. At ``WHOLE`` each box goes to the panel cell its centre scales to (width and height scaled
   separately, never enlarged); a box whose cell is taken goes to the nearest free cell in
   its row, then in the rows next to it, so every box has a cell of its own while the panel
   has as many cells as boxes. Edges are not drawn; a click selects the box under it.
4. Zooming keeps the selected box (else the current one) in the middle of the panel, and
   ``shift+arrows`` (``H J K L``) pan by ``PAN_X`` columns or one layer of boxes; a mouse drag
   pans, the wheel scrolls.
"""
from __future__ import annotations

import re

from .graph_layout import COMPACT, FULL

BOXES, NAMES, WHOLE = 0, 1, 2
LEVEL_WORDS = {BOXES: "boxes", NAMES: "names", WHOLE: "whole graph"}
SCALES = {BOXES: FULL, NAMES: COMPACT, WHOLE: COMPACT}   # WHOLE scales the NAMES layout down
PAN_X = 8
_SUFFIX = re.compile(r"Backward\d*$")


def short_name(name: str) -> str:
    """Rule 2: ``AddmmBackward0`` -> ``Addmm`` (a name that is only the suffix stays whole)."""
    short = _SUFFIX.sub("", name)
    return short or name


def fit(text: str, room: int) -> str:
    """Rule 2: the text, or its start and ``…`` when it is longer than ``room``."""
    if len(text) <= room:
        return text
    return text[: room - 1] + "…" if room > 1 else text[:room]


def fit_name(text: str, room: int) -> str:
    """Rule 2 for a name at ``NAMES``: a dotted name keeps its last parts, anything else its start."""
    if len(text) <= room or "." not in text:
        return fit(text, room)
    parts = text.split(".")
    tail = ""
    for k in range(len(parts) - 1, 0, -1):
        t = ".".join(parts[k:])
        if len(t) + 1 > room:
            break
        tail = t
    return "…" + tail if tail else fit(text, room)


def compact_label(rec) -> str:
    """A node's name at ``NAMES`` (rule 2)."""
    if rec.is_leaf:
        return (rec.tensor or {}).get("name") or "leaf"
    return short_name(rec.name)


def cells(lay, width: int, height: int) -> dict:
    """{box id: (col, row)}: rule 3's cell of every box of ``lay``, as many as the panel holds."""
    fx = max(1.0, lay.width / max(1, width))
    fy = max(1.0, lay.height / max(1, height))
    taken: set = set()
    out = {}
    boxes = sorted(lay.rects.items(), key=lambda kv: (kv[1][1], kv[1][0]))
    for did, (x, y, w, h) in boxes:
        if len(taken) >= width * height:
            break
        cx = min(width - 1, int((x + w / 2) / fx))
        cy = min(height - 1, int((y + h / 2) / fy))
        spot = _free(taken, cx, cy, width, height)
        taken.add(spot)
        out[did] = spot
    return out


def _free(taken: set, cx: int, cy: int, width: int, height: int) -> tuple:
    for dy in range(height):
        for row in ((cy + dy, cy - dy) if dy else (cy,)):
            if not 0 <= row < height:
                continue
            for dx in range(width):
                for col in ((cx + dx, cx - dx) if dx else (cx,)):
                    if 0 <= col < width and (col, row) not in taken:
                        return col, row
    return cx, cy


def level_after(level: int, step: int) -> int:
    """The level ``step`` zooms to (-1 in, +1 out), within the levels."""
    return max(BOXES, min(WHOLE, level + step))


__all__ = ["BOXES", "LEVEL_WORDS", "NAMES", "PAN_X", "SCALES", "WHOLE", "cells", "compact_label", "fit", "fit_name",
           "level_after", "short_name"]
