"""Text inside Graphviz DOT source, one rule for every picture (graph_dot and quick_layout)."""
from __future__ import annotations


def quote(s) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, a newline as DOT's ``\\n`` line break."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
