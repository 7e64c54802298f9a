"""HoldersView: who holds the bytes at the cursor, or at the window's peak (NOTE [ Holders ] in
replay/holders.py): rows by module, op or source line, sortable, filterable by category."""
from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable

from replay.holders import BY, SORTS, holders
from replay.memory import CATEGORIES
from replay.module_memory import module_memory
from replay.words import nbytes, short_bytes

from .fit import MIN_NAME, fit_name
from .memory_view import no_memory
from .window_keys import WINDOW_BINDINGS

FILTERS = (None,) + tuple(CATEGORIES)
PHASE_HEADS = ("pre-fwd", "post-fwd", "peak-fwd", "pre-bwd", "peak-bwd", "post-bwd")
MODES = BY + ("module phases",)      # the last: NOTE [ Module memory ] (MemTracker's table)


def _cell(v, fmt) -> str:
    return "–" if v is None else fmt(v)


class HoldersView(DataTable):
    """``b`` rows by module/op/line or each module's forward/backward figures, ``s`` sort, ``c`` category filter."""

    BINDINGS = [Binding("b", "by", "Rows by"), Binding("s", "sort", "Sort"), Binding("c", "filter", "Category"),
                *WINDOW_BINDINGS]

    index: reactive[int] = reactive(0)
    window: reactive[tuple | None] = reactive(None)
    by: reactive[str] = reactive("op")
    sort_by: reactive[str] = reactive("total")
    category: reactive[str | None] = reactive(None)

    def __init__(self, model, lifetimes_of, work_status=lambda: "", **kw) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kw)
        self.model = model
        self.lifetimes_of = lifetimes_of        # () -> [Lifetime] or None while worked out, shared with the lifetimes view
        self.work_status = work_status          # () -> what the thread working them out has done
        self.holder_rows: list = []
        self.phase_rows: list = []
        self.phase_half = "forward"             # which three module phases a narrow panel shows (None: all six)
        self.at = 0
        self._shown = None                      # (rows, name room) the table shows: _refilled
        self._split_hidden = False              # the split column is off screen: the subtitle gives the row's
        self._subtitle_head = ""

    def on_mount(self) -> None:
        self.refill()

    def where(self) -> int:
        """The event the table is about: the window's peak when a window is chosen, else the cursor."""
        if self.window is not None:
            lo, hi = self.window
            return self.model.memory.peak_in(lo, hi)[0]
        return self.model.clamp(self.index)

    def refill(self) -> None:
        if not self.is_mounted:
            return
        row = self.cursor_row
        self._fill()
        if 0 < row < self.row_count:        # a row chosen before (a lesson step's focus) stays chosen
            self.move_cursor(row=row)

    def _fill(self) -> None:
        if len(self.model.events) == 0:         # a table always has a column (a click on its header reads one)
            self._refilled(None)
            self.add_columns("who")
            self.add_row("No events yet.")
            self.border_subtitle = " nothing recorded "
            return
        if no_memory(self.model):
            self._refilled(None)
            self.add_columns("who")
            self.add_row("No memory in this trace: it has no alloc or free events.")
            self.border_subtitle = " nothing holds bytes here "
            return
        if self.by == "module phases":
            self._refilled(None)
            self._fill_phases()
            return
        self.at = self.where()
        lts = self.lifetimes_of()
        if lts is None:                 # a big trace's are worked out on a thread (NOTE [ Lifetimes on a thread ])
            self._refilled(None)
            self.add_columns("who", "own", "total", "count", "split")
            self.holder_rows = []
            self.add_row(self.work_status())
            self.border_subtitle = " working… "
            return
        self.holder_rows = holders(lts, self.at, by=self.by, sort=self.sort_by,
                            categories=(self.category,) if self.category else None)
        rows = [(r.name or ("(top level)" if self.by == "module" else "?"), nbytes(r.own), nbytes(r.total),
                 str(r.count), " ".join(f"{c[:5]} {nbytes(b)}" for c, b in sorted(r.split.items(), key=lambda kv: -kv[1])))
                for r in self.holder_rows]
        room = self._name_room([("own", "total", "count")] + [r[1:4] for r in rows])
        what = f"at the window's peak #{self.at}" if self.window is not None else f"at #{self.at}"
        filt = f", {self.category} only" if self.category else ""
        subtitle = f" by {self.by} · sorted by {self.sort_by}{filt} · {what} "
        self._split_hidden = self._name_room([("own", "total", "count", "split")] + [r[1:5] for r in rows]) < MIN_NAME
        if self._split_hidden:      # NOTE [ Fitting the screen ] rule 6: the row's split in the subtitle
            self._subtitle_head = f" {self.by}, {self.sort_by}{filt} · "
            subtitle = self._row_split_subtitle(self.cursor_row)
        if self._refilled((rows, room)):        # the same rows as shown (a step that moved no byte): keep them
            self.add_columns("who", "own", "total", "count", "split")
            for name, *rest in rows:
                self.add_row(fit_name(name, room), *rest)
        if str(self.border_subtitle or "") != subtitle:
            self.border_subtitle = subtitle

    def _row_split_subtitle(self, row: int) -> str:
        if not 0 <= row < len(self.holder_rows):
            return self._subtitle_head + "no row "
        split = sorted(self.holder_rows[row].split.items(), key=lambda kv: -kv[1])
        return self._subtitle_head + " ".join(f"{c[:5]} {short_bytes(b)}" for c, b in split) + " "

    def on_data_table_row_highlighted(self, event) -> None:
        if self.by != "module phases" and self._split_hidden:
            sub = self._row_split_subtitle(event.cursor_row)
            if str(self.border_subtitle or "") != sub:
                self.border_subtitle = sub

    def _refilled(self, shown) -> bool:
        """Empty the table for what it is to show next (``shown``: the holders' rows and the name's
        room, or None for anything else), unless it shows those rows already; True when emptied."""
        if shown is not None and shown == self._shown:
            return False
        self.clear(columns=True)
        self._shown = shown
        return True

    def _name_room(self, cells) -> int:
        """Cells left for the name column beside the number columns (NOTE [ Fitting the screen ] rule 4)."""
        numbers = sum(max(len(c[k]) for c in cells) + 2 * self.cell_padding for k in range(len(cells[0])))
        return self.size.width - numbers - 2 * self.cell_padding - 2      # 2: the vertical scrollbar

    def on_resize(self, event) -> None:
        if event.size.width != getattr(self, "_width", None):
            self._width = event.size.width
            self.refill()

    def _fill_phases(self) -> None:
        """Each module's memory around its forward and backward, in the window (or the whole run):
        the six figures, or on a narrow panel three at a time (NOTE [ Fitting the screen ] rule 5)."""
        lo, hi = self.window if self.window is not None else (0, len(self.model.events))
        self.phase_rows = module_memory(self.model.events, lo, hi, self.model.memory)
        figures = [(r.pre_fwd, r.post_fwd, r.peak_fwd, r.pre_bwd, r.peak_bwd, r.post_bwd) for r in self.phase_rows]
        names = [r.module or "(top level)" for r in self.phase_rows]
        cols, heads, cells = range(6), PHASE_HEADS, [[_cell(v, nbytes) for v in f] for f in figures]
        if self._name_room([heads] + cells) < MIN_NAME:
            self.phase_half = self.phase_half or "forward"
            cols = range(3) if self.phase_half == "forward" else range(3, 6)
            heads = tuple(PHASE_HEADS[k].split("-")[0] for k in cols)
            cells = [[_cell(f[k], nbytes) for k in cols] for f in figures]
            if self._name_room([heads] + cells) < MIN_NAME:
                cells = [[_cell(f[k], short_bytes) for k in cols] for f in figures]
        else:
            self.phase_half = None
        self.add_columns("module", *heads)
        room = self._name_room([heads] + cells)
        for name, row in zip(names, cells):
            self.add_row(fit_name(name, room), *row)
        win = " in the window" if self.window is not None else ""
        self.border_subtitle = {
            None: f" module phases ·{win or ' first forward and backward'} (MemTracker's figures) ",
            "forward": f" forward phases{win} · b: backward ",
            "backward": f" backward phases{win} · b: next rows "}[self.phase_half]

    def watch_index(self) -> None:
        if self.window is None and self.by != "module phases":
            self.refill()

    def watch_window(self) -> None:
        self.refill()

    def action_by(self) -> None:
        if self.by == "module phases" and self.phase_half == "forward":     # the backward three next
            self.phase_half = "backward"
        else:
            self.by = MODES[(MODES.index(self.by) + 1) % len(MODES)]
            self.phase_half = "forward"
        self.refill()

    def action_sort(self) -> None:
        self.sort_by = SORTS[(SORTS.index(self.sort_by) + 1) % len(SORTS)]
        self.refill()

    def action_filter(self) -> None:
        self.category = FILTERS[(FILTERS.index(self.category) + 1) % len(FILTERS)]
        self.refill()

    class RowChosen(Message):
        """Enter on a row: its storages (NOTE [ Memory views ] rule 4)."""

        def __init__(self, storages: list) -> None:
            super().__init__()
            self.storages = storages

    def on_data_table_row_selected(self, event) -> None:
        if self.by != "module phases":
            self.post_message(self.RowChosen(self.storages_of_row()))

    def storages_of_row(self) -> list:
        if not self.holder_rows or not 0 <= self.cursor_row < len(self.holder_rows):
            return []
        return list(self.holder_rows[self.cursor_row].storages)
