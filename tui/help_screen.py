"""HelpScreen: every key, what the panels show, how to leave (press ? or escape)."""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = [
    ("→ ←  l h", "one event forward / back"),
    (". ,", "next / previous event about a graph node (about the selected one, if any)"),
    ("} {", "next / previous phase (forward, backward, recompute)"),
    ("g G  home end", "first / last event"),
    ("space", "play / pause;  + -  faster / slower"),
    ("p", "jump to the live-bytes peak (▲: all categories summed)"),
    ("P", "jump to the activation peak (△: saved activations alone, end of forward)"),
    ("] [", "next / previous lesson step"),
    ("/", "search events; Enter finds, n N next / previous match"),
    ("enter", "inspect the node this event is about"),
    ("i", "lesson text <-> inspector (on small screens)"),
    ("z", "memory chart: this lesson step <-> the whole run"),
    ("f", "graph: show freed nodes greyed (✝ freed) <-> only what is alive"),
    ("w", "write the Graphviz picture of this step to a file"),
    ("o", "glassgrad run: the script's output (print, its error and traceback) <-> the events"),
    ("tab", "next panel (the arrows then scroll it)"),
    ("escape", "clear the selected node, close the search"),
    ("?", "this help"),
    ("q", "quit; a lesson or trace opened from the home screen goes back to it"),
]

PANELS = [
    ("Graph", "the autograd graph at the cursor: loss on top, leaves below, arrows are next_functions "
              "(where gradients flow). Yellow: the node this event is about. Green: executed by backward. "
              "Red: its saved tensors were dropped by checkpointing. ↻: made by a recompute. The second line "
              "of a box is what the node saved for backward, and whether backward freed it. Only what is "
              "alive is drawn: a node whose last reference died (del, a loss out of scope) leaves the "
              "panel with what it saved; f keeps such nodes, grey and marked ✝ freed. Click a box to inspect it."),
    ("Memory", "live bytes over the whole run, stacked by category (param, grad, act = activations, optim, "
               "input, other). ┃ is the cursor, ▲ the live-bytes peak (every category: often in backward, "
               "when gradients appear before activations are all freed), △ the activation peak (usually "
               "the end of forward); the last line gives the bytes at the cursor. "
               "\"reserved\" on the border: the bytes a GPU's caching allocator would hold then (whole "
               "segments, freed blocks kept cached), far more than live for small models."),
    ("Events", "every recorded event; F/B/R/O is its phase. Click a row to move there."),
    ("Output", "glassgrad run only (o): what the script printed, and if it raised, its own file, line "
               "and error (glassgrad's frames left out). Shown by itself when the script fails."),
    ("Inspector", "the selected node (op, shapes, dtype, bytes, source line, saved tensors, gradient shape), "
                  "or the event at the cursor."),
]


def help_text() -> Text:
    t = Text()
    t.append("glassgrad — keys\n\n", style="bold")
    for keys, does in KEYS:
        t.append(f"  {keys:<14}", style="bold #ffcc00")
        t.append(does + "\n")
    t.append("\nMouse: click a graph box or a log row; the wheel scrolls.\n\n")
    t.append("The panels\n\n", style="bold")
    for name, what in PANELS:
        t.append(f"  {name}: ", style="bold")
        t.append(what + "\n\n")
    t.append("escape or ? closes this help.", style="dim")
    return t


class HelpScreen(ModalScreen):
    BINDINGS = [("escape", "dismiss", "Close"), ("question_mark", "dismiss", "Close"), ("q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_text())

    def action_dismiss(self, result=None) -> None:
        self.dismiss(result)
