"""Text that fits its width: the status line and the panels' titles, at any terminal size.

NOTE [ Fitting the screen ]
1. The status line always ends with ``? help``. When the whole line is too wide it gives up,
   in this order: the play state when paused (the default), the words of the event counter
   (``#212/2238`` for ``event #212 of 2238``), then the title down to its first words
   (``Lesson 5`` for ``Lesson 5 · Activation checkpointing``), then the live bytes, then the phase,
   then the title (cut to a few letters, then left out), then the event counter.
2. A panel's title is the longest of its wordings, longest first, that fits the border
   (the width less the corners and the spaces around the title); the last wording is cut
   only when even it does not fit.
3. The memory legend wraps onto more lines rather than cutting a number (``memory_view``).
4. A table's name column (the holders view) takes what its number columns leave, never
   less than :data:`MIN_NAME`: the numbers stay on screen at 80×24. A name too long for it
   keeps its end when it is a dotted module path (``…h.0.mlp.c_fc``: the module itself), its
   first word when it is a placeholder in brackets (``(top)`` for ``(top level)``), its start
   when it is one word of letters (``transform…``, where both ends read ``transf…mer``), else
   its start and end (``layer_nor…sult1``).
5. A table with more number columns than its panel can show beside :data:`MIN_NAME` cells
   of name (the module phases: six) shows them in groups (the forward three, then the
   backward three), the title saying which; the key that steps through the table's kinds
   of rows (``b``) shows the next group first.
6. The holders' category split, its last column, is off screen on a narrow panel (80×24):
   the border's subtitle then gives the highlighted row's split (``op, total · activ 512K
   param 16K``) after the grouping and the sort, and follows the row cursor.
7. The lifetimes' band labels take 24 columns (``256.0 KiB softmax``) where the timeline
   still has 40; on a narrower panel they give columns up, down to 15, and write short bytes
   (``  256K softmax``): at 80×24 the timeline gets 25 columns where it had 16.
8. The allocator view wraps its header (the gap explained) at words, and gives CuPy's pool
   figures the widest of their wordings that fits, down to short units (``used 30.2M``); the
   segments get the rows those lines leave, the last of them saying how many more there are.
   Textual would otherwise wrap a long line itself, and the rows counted for segments would
   push the last ones, and the count of those left out, off the panel (a GPU run at 80×24).
"""
from __future__ import annotations

BORDER = 6   # "╭─ " + title + " ─╮"
MIN_NAME = 10


def fit_title(wordings, width: int) -> str:
    """NOTE [ Fitting the screen ] rule 2."""
    room = max(1, width - BORDER)
    for w in wordings:
        if len(w) <= room:
            return w
    last = wordings[-1]
    return last[: room - 1] + "…" if room > 1 else last[:1]


def fit_status(title: str, short_title: str, where: tuple, phase: str, live: str, play: str, width: int,
               paused: bool) -> str:
    """NOTE [ Fitting the screen ] rule 1: `` title │ event #i of n │ phase │ live │ play │ ? help``.

    ``where`` is (i, n); ``short_title`` is what the title falls back to."""
    i, n = where
    tail = "? help"

    def line(t, ev, ph, lv, pl):
        parts = [t, ev, ph, lv, pl, tail]
        return " " + " │ ".join(p for p in parts if p)

    ev_long, ev_short = f"event #{i} of {n}", f"#{i}/{n}"
    tries = [
        (title, ev_long, phase, live, play),
        (title, ev_long, phase, live, "" if paused else play),
        (title, ev_short, phase, live, "" if paused else play),
        (short_title, ev_short, phase, live, "" if paused else play),
        (short_title, ev_short, phase, live, ""),
        (short_title, ev_short, phase, "", ""),
        (short_title, ev_short, "", "", ""),
    ]
    for t in tries:
        s = line(*t)
        if len(s) <= width:
            return s
    cut = len(line(*tries[-1])) - width
    if len(short_title) - cut - 1 >= 3:       # the title cut to a few letters
        return line(short_title[: len(short_title) - cut - 1] + "…", ev_short, "", "", "")
    s = line("", ev_short, "", "", "")
    return s if len(s) <= width else line("", "", "", "", "")


def short_title(title: str) -> str:
    """The title's first words, before `` · ``: ``Lesson 5`` for ``Lesson 5 · Activation checkpointing``."""
    return title.split(" · ")[0]


__all__ = ["fit_status", "fit_title", "short_title"]


def fit_name(name: str, room: int) -> str:
    """NOTE [ Fitting the screen ] rule 4: ``name`` in ``room`` cells."""
    room = max(MIN_NAME, room)
    if len(name) <= room:
        return name
    if "." in name and " " not in name:                     # a module path: its end names the module
        return "…" + name[len(name) - room + 1:]
    if name.startswith("(") and name.endswith(")") and len(name.split()[0]) + 1 <= room:
        return name.split()[0] + ")"                         # a placeholder: its first word, "(top)"
    if name.isalpha():                                       # one word: its start, "transform…"
        return name[:room - 1] + "…"
    head = 2 * (room - 1) // 3
    return name[:head] + "…" + name[len(name) - (room - 1 - head):]
