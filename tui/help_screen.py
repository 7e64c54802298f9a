"""HelpScreen: every key, what the panels show, how to leave (press ? or escape)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# glassgrad — keys

| key | does |
| --- | --- |
| → / ← (or l / h) | one event forward / back |
| . / , | to the next / previous graph node event (created or executed) |
| } / { | to the next / previous phase (forward, backward, recompute) |
| g / G (home / end) | first / last event |
| space | play / pause; + / - play faster / slower |
| p | jump to the memory peak |
| ] / [ | next / previous lesson step (in a lesson) |
| / | search events (Enter to find); n / N next / previous match |
| tab | move between panels; arrows then scroll the focused panel |
| escape | clear the selected node |
| w | write the Graphviz picture of the current step to a file |
| ? | this help |
| q | quit (back to the home screen from a lesson) |

Mouse: click a box in the graph to inspect that node; click a row of the log
to move there; the wheel scrolls.

## The panels
- **Graph**: the autograd graph at the current event, the loss on top, leaves
  below; arrows are `next_functions` (where gradients flow). Dim = created,
  yellow = running now, green = executed by backward, red = its saved tensors
  were dropped by checkpointing, magenta = recomputed. The second line of a box
  is what the node saved for backward, and whether it was freed.
- **Memory**: live bytes by category over the whole run (parameter, gradient,
  activation, optimizer, input, other). ┃ marks the current event, ▲ the peak.
- **Events**: every recorded event; F/B/R/O is the phase.
- **Inspector**: the selected node (op, shapes, dtype, bytes, source line,
  saved tensors, gradient shape), or the event at the cursor.
"""


class HelpScreen(ModalScreen):
    BINDINGS = [("escape", "dismiss", "Close"), ("question_mark", "dismiss", "Close"), ("q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP)

    def action_dismiss(self, result=None) -> None:
        self.dismiss(result)
