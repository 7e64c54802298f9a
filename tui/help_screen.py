"""HelpScreen: every key, what the panels show, how to leave (press ? or escape)."""
from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .graph_marks import MARKS

KEYS = [
    ("→ ←  l h", "one event forward / back"),
    (". ,", "next / previous event about a graph node (about the selected one, if any)"),
    ("} {", "next / previous phase (forward, backward, recompute)"),
    ("g G  home end", "first / last event"),
    ("space", "play / pause;  > <  faster / slower"),
    ("p", "jump to the live-bytes peak (▲: all categories summed)"),
    ("P", "jump to the activation peak (△: saved activations alone, end of forward)"),
    ("] [", "next / previous lesson step"),
    ("/", "search events; Enter finds, n N next / previous match"),
    ("enter", "inspect the node this event is about"),
    ("i", "lesson text <-> inspector (on small screens)"),
    ("z", "memory chart: this lesson step <-> the whole run"),
    ("+ -  0", "graph zoom: boxes → names → the whole graph (a mark per box); 0 fits the whole graph"),
    ("shift+arrows  H J K L", "pan the graph (or drag it with the mouse; the wheel scrolls)"),
    ("t  T", "fold / unfold the selected node's module group into one box (its totals in the inspector);"
             " T folds all / unfolds all"),
    ("v", "graph overview: the whole graph, a ■ per node, the normal view framed; click to go there"),
    ("m", "memory panel: chart → lifetimes → holders → allocator (NOTE [ Memory views ])"),
    ("a e", "mark the start / end of a window at the cursor (or drag across the chart or the lifetimes with the mouse)"),
    ("W  x", "next preset window (step, forward, backward, recompute, optimizer step; first the one around the cursor) / clear the window"),
    ("b s c", "holders view: rows by module, op, line or module phases / sort / category filter;"
              " enter marks its bands (▸) and nodes"),
    ("↑ ↓  enter", "lifetimes view: select a band / tell its story (a click on the selected band too);"
                   " in the story g and f go to the op that made it and the event that freed it"),
    ("1-9", "lesson: answer the step's question; the step then plays and says why"),
    ("f", "graph: show freed nodes greyed (✝ freed) <-> only what is alive"),
    ("w", "write the Graphviz picture of this step to a file"),
    ("o", "glassgrad run: the script's output (print, its error and traceback) <-> the events"),
    ("tab", "next panel (the arrows then scroll it)"),
    ("escape", "clear the selected node, close the search"),
    ("?", "this help"),
    ("q", "quit; a lesson or trace opened from the home screen goes back to it"),
]

PANELS = [
    ("Graph", "the autograd graph at the cursor, as the pictures draw it: leaves on top, the loss at the "
              "bottom, arrows are next_functions the way forward's data flows (gradients flow back up). "
              "+ - zoom out to one-row boxes and to the whole graph; names that do not fit are cut "
              "(AddmmBackward0 is [Addmm], …c_attn.weight keeps a parameter's end; the inspector has them "
              "whole). t folds the alike instances of a module (blocks.0, blocks.1...) into one box each, "
              "as the pictures do. Each mark is listed above; the line under the panel names the marks "
              "on screen now. Checkpointing's recompute does not add boxes: it redraws the boxes of the "
              "region it replays (double border, ↻), and the view centres on that region. Only what is "
              "alive is drawn: a node whose last reference died (del, a loss out of scope) leaves the "
              "panel with what it saved; f keeps such nodes, grey and marked ✝ freed. Click a box to inspect it."),
    ("Memory", "live bytes over the whole run, stacked by category (param, grad, act = activations, optim, "
               "input, other). ┃ is the cursor, ▲ the live-bytes peak (every category: often in backward, "
               "when gradients appear before activations are all freed), △ the activation peak (usually "
               "the end of forward); the lines under the chart give the bytes at the cursor: now, ▲peak, "
               "△act peak, then ■ and each category's live bytes (on a narrow panel ▲ and △act stand "
               "for the peaks). "
               "\"reserved\" on the border: the bytes a GPU's caching allocator would hold then (whole "
               "segments, freed blocks kept cached), far more than live for small models."),
    ("Lifetimes", "m: one band per storage over the window's events, the largest drawn and the rest summed "
                  "in the last band; a band is coloured by its category then. Enter tells the selected "
                  "storage's story: what made it, its tensors and views, who saved it, why it was freed."),
    ("Holders", "m: who holds the bytes at the cursor (or at the window's peak), by module, op or source "
                "line, own and total bytes, count and category split; 'module phases' gives each module's "
                "memory before, after and at the peak of its forward and its backward."),
    ("Allocator", "m: the caching allocator model's segments at the cursor: █ allocated, ▒ rounding inside "
                  "a block, ░ cached free blocks; the first line splits reserved into tensors, rounding and "
                  "cached bytes."),
    ("Events", "every recorded event; F/B/R/O is its phase. Click a row to move there."),
    ("Output", "glassgrad run only (o): what the script printed, and if it raised, its own file, line "
               "and error (glassgrad's frames left out). Shown by itself when the script fails."),
    ("Inspector", "the selected node (op, shapes, dtype, bytes, source line, saved tensors, gradient shape), "
                  "or the event at the cursor."),
]


# the graph's colours as glassgrad.tcss draws them (the help has no GraphView to ask)
MARK_STYLES = {"graph--current": "bold black on #ffd34e", "graph--pending": "", "graph--executed": "bold #7bd389",
               "graph--leaf": "#59a14f", "graph--dropped": "#ff6b6b", "graph--recomputed": "bold #d38cff",
               "graph--freed": "dim #5a5a5a", "graph--missing": "italic", "graph--selected": "bold black on #6cb6ff",
               "graph--lit": "bold black on #ff9da7", "graph--edge": "", "": "italic"}


def _rows(rows) -> Table:
    """Two columns, the second wrapping under itself (not under the first) on a narrow screen."""
    t = Table.grid(padding=(0, 1))
    t.add_column(no_wrap=True)
    t.add_column(ratio=1)
    for left, right in rows:
        t.add_row(left, right)
    return t


def help_text() -> Group:
    """The help: every key, every mark the graph draws (NOTE [ Graph marks ]), every panel."""
    keys = _rows((Text(f" {k}", style="bold #ffcc00"), Text(does)) for k, does in KEYS)
    marks = _rows((Text(" ") + Text(m.sample, style=MARK_STYLES.get(m.style, "italic")),
                   Text.assemble((m.short, "bold"), ": ", m.long)) for m in MARKS)
    panels = _rows((Text(f" {name}", style="bold"), Text(what + "\n")) for name, what in PANELS)
    return Group(Text("glassgrad — keys\n", style="bold"), keys,
                 Text("\nMouse: click a graph box or a log row; drag the graph to pan it; the wheel scrolls.\n"),
                 Text("The graph's marks\n", style="bold"), marks,
                 Text("\nThe panels\n", style="bold"), panels,
                 Text("escape or ? closes this help.", style="dim"))


class HelpScreen(ModalScreen):
    BINDINGS = [("escape", "dismiss", "Close"), ("question_mark", "dismiss", "Close"), ("q", "dismiss", "Close")]

    def __init__(self, screen_keys: tuple | None = None, **kw) -> None:
        """``screen_keys``: (title, [(key, does)]) of a screen with keys of its own (plan, diff), shown alone."""
        super().__init__(**kw)
        self.screen_keys = screen_keys

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            if self.screen_keys is None:
                yield Static(help_text())
            else:
                title, rows = self.screen_keys
                yield Static(Group(Text(f"{title} — keys\n", style="bold"),
                                   _rows((Text(f" {k}", style="bold #ffcc00"), Text(does)) for k, does in rows),
                                   Text("\nescape or ? closes this help.", style="dim")))

    def action_dismiss(self, result=None) -> None:
        self.dismiss(result)
