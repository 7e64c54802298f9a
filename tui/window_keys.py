"""The window's keys, in the footer of the lifetimes, holders and allocator views (NOTE [ Memory views ] rule 6).

The screen binds ``a e W x`` (and ``m``) for every panel; a memory view binds them again, shown,
so that the footer names them while the view is focused. Each calls the screen's own action.
"""
from __future__ import annotations

from textual.binding import Binding

WINDOW_BINDINGS = [
    Binding("W", "screen.window_preset", "Window"),
    Binding("m", "screen.memory_mode", "Next view"),
    Binding("a", "screen.window_mark('start')", "Window start", show=False),
    Binding("e", "screen.window_mark('end')", "Window end", show=False),
    Binding("x", "screen.window_clear", "Clear window", show=False),
]
