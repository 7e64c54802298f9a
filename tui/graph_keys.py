"""The trace screen's graph keys: zoom, fit, pan and fold (NOTE [ Graph zoom ], NOTE [ Folded module groups ]).

``BINDINGS`` joins ``TraceScreen.BINDINGS``; each action there calls the function of the same
name here with the screen.
"""
from __future__ import annotations

from textual.binding import Binding

from .graph_folds import GROUP, is_group
from .graph_zoom import LEVEL_WORDS

BINDINGS = [
    Binding("plus,equals_sign", "graph_zoom(-1)", "Zoom", key_display="+-"),
    Binding("minus", "graph_zoom(1)", "Zoom out", show=False),
    Binding("0", "graph_fit", "Fit graph", show=False),
    Binding("shift+left,H", "graph_pan(-1, 0)", "Pan left", show=False),
    Binding("shift+right,L", "graph_pan(1, 0)", "Pan right", show=False),
    Binding("shift+up,K", "graph_pan(0, -1)", "Pan up", show=False),
    Binding("shift+down,J", "graph_pan(0, 1)", "Pan down", show=False),
    Binding("t", "graph_fold", "Fold"),
    Binding("T", "graph_fold_all", "Fold all", show=False),
]


def _graph(screen):
    return screen.query_one("#graph")


def zoom(screen, step: int) -> None:
    """+ (=) zooms in, - out."""
    g = _graph(screen)
    g.zoom_by(step)
    screen.notify(f"Graph zoom: {LEVEL_WORDS[g.zoom]} (+ - zoom, 0 fits the whole graph)", timeout=2)


def fit(screen) -> None:
    """0: the most detailed level that shows the whole graph."""
    level = _graph(screen).fit_whole()
    screen.notify(f"Graph: the whole graph at zoom {LEVEL_WORDS[level]}", timeout=2)


def fold(screen) -> None:
    """t: fold or unfold the module group of the selected node (else the current one); a folded group
    is selected, so the inspector gives its totals."""
    g = _graph(screen)
    nid = screen.selected if screen.selected is not None else g.current
    if nid is None:
        screen.notify("Select a node first (click it, or enter): t folds its module group.", timeout=3)
        return
    inst = g.toggle_fold(nid)
    if inst is None:
        name = screen.model.nodes[nid].name if nid in screen.model.nodes else str(nid)
        screen.notify(f"{name} is in no group of alike module instances: nothing to fold.", timeout=3)
        return
    folded = inst in g.folds.folded
    screen.selected = GROUP + inst if folded else None
    screen._sync_legend()
    screen.notify(f"Module {inst} folded into one box (t unfolds it, T unfolds all)." if folded
                  else f"Module {inst} unfolded.", timeout=3)


def fold_all(screen) -> None:
    """T: fold every group, or unfold them all when one is folded."""
    g = _graph(screen)
    folded = g.toggle_all_folds()
    sel = screen.selected
    if is_group(sel) and not folded:
        screen.selected = None
    elif sel is not None and folded:
        screen.selected = g.box_of(sel) or sel
    screen._sync_legend()
    if folded:
        screen.notify(f"{len(g.folds.folded)} module groups folded (T unfolds them all).", timeout=3)
    elif g.folds.groups(g.index, g.keep_freed):
        screen.notify("Every module group unfolded.", timeout=3)
    else:
        screen.notify("No alike module instances to fold in this graph.", timeout=3)
