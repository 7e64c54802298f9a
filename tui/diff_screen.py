"""DiffScreen: two runs, one cursor (NOTE [ Two runs ] in replay/diff.py).

The cursor is a position on the aligned timeline; both charts and the table at the cursor
read trace A at ``alignment.at(pos)[0]`` and trace B at ``[1]``. The second table gives what
does not move with the cursor: both peaks, the per-category and per-module difference at
them, and the graph's differences.
"""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from replay.diff import counted, dropped_lines, step_name
from replay.memory import CATEGORIES
from replay.words import nbytes

from .diff_chart import DiffChart, column_positions
from .memory_view import SHORT

KEYS = [("→ ←  l h", "the cursor one position along both runs (aligned by step: NOTE [ Two runs ])"),
        ("] [", "one chart column forward / back"),
        ("n p", "the next / previous step (forward, backward, optimizer of each iteration)"),
        ("home end  g G", "the first / last position"),
        ("a b", "A's / B's live-bytes peak"),
        ("mouse", "click a chart: the cursor goes there, on both"),
        ("↑ ↓  pgup pgdn", "scroll the table of the peaks and the graphs"),
        ("┃ ▲ ┄", "on a chart: the cursor; that run's live-bytes peak; a step that run lacks (it waits)"),
        ("q  escape", "leave")]


def signed(v: int) -> str:
    return "0" if v == 0 else f"{'+' if v > 0 else '-'}{nbytes(abs(v))}"


def three_columns(title: str) -> Table:
    """A table of a name, A, B and B−A: one space between columns, names cut before numbers."""
    t = Table(box=None, padding=(0, 0, 0, 1), pad_edge=False, show_edge=False, title=None)
    t.add_column(title, no_wrap=True, overflow="ellipsis", max_width=14)
    for name in ("A", "B", "B−A"):
        t.add_column(name, justify="right", no_wrap=True, min_width=8)
    return t


class DiffScreen(Screen):
    BINDINGS = [
        Binding("right,l", "move(1)", "Step", key_display="←→", priority=True),
        Binding("left,h", "move(-1)", "Back", show=False, priority=True),
        Binding("right_square_bracket", "column(1)", "Column", show=False),
        Binding("left_square_bracket", "column(-1)", "Prev column", show=False),
        Binding("n", "step(1)", "Next step", key_display="n/p"),
        Binding("p", "step(-1)", "Prev step", show=False),
        Binding("home,g", "first", "First", show=False, priority=True),
        Binding("end,G", "last", "Last", show=False, priority=True),
        Binding("a", "peak(0)", "A peak", key_display="a/b"),
        Binding("b", "peak(1)", "B peak", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q,escape", "close", "Quit"),
    ]

    pos: reactive[int] = reactive(0)

    def __init__(self, d, names=("A", "B"), **kw) -> None:
        """``d``: ``replay.diff.diff(a, b)``; ``names``: what to call the two traces (their file names)."""
        super().__init__(**kw)
        self.d = d
        self.names = names
        self.top = max(d.peaks["A"]["live"][1], d.peaks["B"]["live"][1], 1)
        lows = [min(r.total) for r in (d.memory["A"], d.memory["B"]) if len(r.total)]
        self.floor = min(lows) if lows else 0     # both charts start here (NOTE in tui/diff_chart.py)

    # ---- layout
    def compose(self) -> ComposeResult:
        yield Static(self._status(), id="status")
        note = Static(Text("⚠ the runs do not align: " + "; ".join(self.d.notes)), id="diff-note")
        note.display = bool(self.d.notes)
        yield note
        with Horizontal(id="diff-main"):
            with Vertical(id="diff-left"):
                for side, who in enumerate("AB"):
                    ch = DiffChart(self.d, side, self.top, self.floor, id=f"diff-{who.lower()}")
                    ch.border_title = f"{who} · {self.names[side]}"
                    ch.border_subtitle = f"▲ {nbytes(self.d.peaks[who]['live'][1])} · from {nbytes(self.floor)}"
                    yield ch
            with Vertical(id="diff-right"):
                cur = Static(self.cursor_table(), id="diff-cursor")
                cur.border_title = "At the cursor · live bytes"
                yield cur
                with VerticalScroll(id="diff-peaks"):
                    yield Static(self.peaks_text(), id="diff-peaks-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#diff-peaks").border_title = "At the peaks · the graphs"
        self.query_one("#diff-peaks").border_subtitle = "↑↓: scroll"
        self.query_one("#diff-peaks").focus()          # ↑↓ scroll it; the charts take clicks

    def on_resize(self) -> None:
        self.query_one("#status", Static).update(self._status())

    # ---- what the cursor reads
    def indices(self) -> tuple:
        """(A event, B event) at the cursor."""
        return self.d.alignment.at(self.pos)

    def live(self, side: int) -> dict:
        """{category: live bytes} of one trace at the cursor."""
        r = self.d.memory["AB"[side]]
        return r.live_at(self.indices()[side]) if len(r) else {}

    def _status(self) -> str:
        d = self.d
        i, j = self.indices()
        seg = d.alignment.segment_at(self.pos)
        if seg is None:
            where = "no events"
        else:
            where = step_name(seg[2]) + ("" if seg[0] and seg[1] else f" (only in {'A' if seg[0] else 'B'})")
        where = where.replace("iteration ", "iter ") if len(where) > 24 else where
        a, b = self.names
        for line in (f" diff {a} ↔ {b} │ {where} │ A #{i} of {d.a_len} · B #{j} of {d.b_len} │ ? help",
                     f" {a} ↔ {b} │ {where} │ A #{i}/{d.a_len} · B #{j}/{d.b_len} │ ? help",
                     f" {a} ↔ {b} │ {where} │ A #{i} · B #{j} │ ? help",
                     f" {where} │ A #{i}/{d.a_len} · B #{j}/{d.b_len} │ ? help"):
            if len(line) <= (self.size.width or 200):
                return line
        return f" A #{i} · B #{j} │ ? help"

    def cursor_table(self) -> Table:
        i, j = self.indices()
        la, lb = self.live(0), self.live(1)
        t = three_columns(f"#{i} · #{j}")
        cats = [c for c in CATEGORIES if la.get(c) or lb.get(c)]
        cats += [c for c in list(la) + list(lb) if c not in cats and (la.get(c) or lb.get(c))]
        charts = self.query(DiffChart) if self.is_mounted else []
        for c in dict.fromkeys(cats):       # each name in its colour on the charts: their legend
            a, b = la.get(c, 0), lb.get(c, 0)
            name = Text(SHORT.get(c, c), style=charts[0].category_style(c) if charts else "")
            t.add_row(name, nbytes(a), nbytes(b), signed(b - a))
        a, b = sum(la.values()), sum(lb.values())
        t.add_row(Text("total", style="bold"), nbytes(a), nbytes(b), signed(b - a))
        return t

    def peaks_text(self):
        from rich.console import Group
        d = self.d
        pa, pb = d.peaks["A"], d.peaks["B"]
        parts = []
        t = three_columns("peaks")
        t.add_row("live ▲", nbytes(pa["live"][1]), nbytes(pb["live"][1]), signed(pb["live"][1] - pa["live"][1]))
        t.add_row("act △", nbytes(pa["activation"][1]), nbytes(pb["activation"][1]),
                  signed(pb["activation"][1] - pa["activation"][1]))
        t.add_row(Text("at ▲:", style="dim"))
        for c in d.category_delta:
            a, b = pa["by_category"].get(c, 0), pb["by_category"].get(c, 0)
            t.add_row(f" {SHORT.get(c, c)}", nbytes(a), nbytes(b), signed(b - a))
        parts.append(t)
        if d.modules:
            m = three_columns("module at ▲")
            for name, (a, b) in sorted(d.modules.items(), key=lambda kv: -abs(kv[1][1] - kv[1][0])):
                m.add_row(name or "(top level)", nbytes(a), nbytes(b), signed(b - a))
            parts += [Text(""), m]
        parts.append(Text("\n" + "\n".join(self.graph_lines())))
        return Group(*parts)

    def graph_lines(self) -> list:
        d = self.d
        out = ["the graphs"]
        if d.only_a or d.only_b:
            out += [f"only in A ({len(d.only_a)}): {', '.join(d.only_a) or '-'}",
                    f"only in B ({len(d.only_b)}): {', '.join(d.only_b) or '-'}"]
        else:
            out.append("the same forward nodes")
        if d.saved_delta:
            out.append(f"saves that differ ({len(d.saved_delta)}):")
            out += [f"  {n}: {nbytes(a)} → {nbytes(b)}" for n, a, b in d.saved_delta]
        for who in "AB":
            if d.dropped.get(who):
                total = nbytes(sum(b for _, _, b in d.dropped[who]))
                out.append(f"{who}: checkpointing dropped {len(d.dropped[who])} ({total}):")
                out += [f"  {line}" for line in dropped_lines(d.dropped[who])]
            if d.recomputed.get(who):
                out.append(f"{who}: recomputed {len(d.recomputed[who])}: {', '.join(counted(d.recomputed[who]))}")
        return out

    def watch_pos(self) -> None:
        if not self.is_mounted:
            return
        for ch in self.query(DiffChart):
            ch.pos = self.pos
        self.query_one("#diff-cursor", Static).update(self.cursor_table())
        self.query_one("#status", Static).update(self._status())

    # ---- actions
    def _go(self, u: int) -> None:
        self.pos = max(0, min(self.d.alignment.length - 1, u))

    def action_move(self, k: int) -> None:
        self._go(self.pos + k)

    def action_column(self, k: int) -> None:
        w = self.query_one("#diff-a", DiffChart).size.width or 1
        cols = column_positions(self.d.alignment.length, w)
        c = self.query_one("#diff-a", DiffChart).column_of(self.pos, w) + k
        self._go(cols[max(0, min(w - 1, c))])

    def action_step(self, k: int) -> None:
        starts = self.d.alignment.starts
        if k > 0:
            self._go(next((s for s in starts if s > self.pos), self.d.alignment.length - 1))
        else:
            self._go(next((s for s in reversed(starts) if s < self.pos), 0))

    def action_first(self) -> None:
        self._go(0)

    def action_last(self) -> None:
        self._go(self.d.alignment.length - 1)

    def action_peak(self, side: int) -> None:
        self._go(self.d.alignment.position(side, self.d.peaks["AB"[side]]["live"][0]))

    def on_diff_chart_clicked(self, event: DiffChart.Clicked) -> None:
        self._go(event.pos)

    def action_help(self) -> None:
        from .help_screen import HelpScreen
        self.app.push_screen(HelpScreen(("Two runs", KEYS)))

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()
