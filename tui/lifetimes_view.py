"""LifetimesView: one band per storage over event time, the largest in the window drawn, the rest
summed in one band (NOTE [ Storage lifetimes ] in replay/lifetimes.py)."""
from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from replay.lifetimes import bands
from replay.words import nbytes, short_bytes

from .changed_lines import redraw_changed
from .kept_styles import KeptStyles
from .lifetimes_work import LifetimesWork
from .memory_view import EIGHTHS, NO_MEMORY, MemoryView, column_of, column_starts, no_memory
from .window_keys import WINDOW_BINDINGS

LABEL = 24            # columns of a band's label
NARROW_LABEL = 15     # ... at the least, on a narrow panel (short bytes): NOTE [ Fitting the screen ] rule 7
TIMELINE = 40         # columns the timeline keeps where the panel allows


class LifetimesView(KeptStyles, Widget, can_focus=True):
    """Bands over the window's events; ↑/↓ (or a click) select one, Enter tells its story.

    A step changes the cursor column, the header and the rest band's bytes at the cursor: the
    bands' rows and the rest band's columns are kept while the bands, the window, the width, the
    cursor's column, the selection and the marks hold, the rest band's bytes at any event are one
    look-up in the step function its spans keep (NOTE [ Lifetime spans ] rule 3), and only the
    lines that changed are drawn again (NOTE [ Redrawing only changed lines ] rules 3 and 6 in
    tui/changed_lines.py).
    """

    BINDINGS = [Binding("up", "select(-1)", "Band", key_display="↑↓"), Binding("down", "select(1)", "Band down", show=False),
                Binding("enter", "detail", "Story"), *WINDOW_BINDINGS]
    COMPONENT_CLASSES = {"lifetimes--parameter", "lifetimes--gradient", "lifetimes--activation",
                         "lifetimes--optimizer", "lifetimes--input", "lifetimes--other", "lifetimes--unknown",
                         "lifetimes--cursor", "lifetimes--selected", "lifetimes--rest", "lifetimes--header"}

    index: reactive[int] = reactive(0, repaint=False)   # NOTE [ Redrawing only changed lines ] rule 1
    window: reactive[tuple | None] = reactive(None)
    selected: reactive[int] = reactive(0)
    highlight: reactive[frozenset] = reactive(frozenset())   # storages a holders row chose (marked ▸)

    def __init__(self, model, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.work = LifetimesWork(model, self._call_soon, self._ready)     # NOTE [ Lifetimes on a thread ]
        self._bands_key = None
        self._bands = None
        self._ticker = None
        self._rows = (None, None)          # (key, the bands' rows and the rest band's columns as Text)
        self._drag_from = None             # the column a drag across the bands began at
        self._dragged = False              # a drag just ended: its click is no click on a band

    def watch_index(self) -> None:
        redraw_changed(self)

    def notify_style_update(self) -> None:
        self._rows = (None, None)          # the kept rows carry the styles
        super().notify_style_update()

    def _call_soon(self, fn, *args) -> None:
        self.app.call_from_thread(fn, *args)

    def _ready(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self.refresh()
        for w in self.screen.query("HoldersView"):
            w.refill()

    def lifetimes(self):
        """The lifetimes as ready as they are (None while a big trace's are worked out on a thread)."""
        lts = self.work.get()
        if self.work.working and self._ticker is None and self.is_mounted:
            self._ticker = self.set_interval(0.25, self._tick)
        return lts

    def _tick(self) -> None:
        """While the thread works: the views say how far it has got."""
        self.refresh()
        for w in self.screen.query("HoldersView"):
            if w.display and not w.holder_rows:     # still the "working out" row: its percentage moves
                w.refill()

    def _range(self) -> tuple:
        n = len(self.model.events)
        if self.window is None:
            return 0, n
        lo, hi = self.window
        return max(0, lo), max(min(n, hi), max(0, lo) + 1)

    def current_bands(self, rows: int):
        lo, hi = self._range()
        key = (lo, hi, rows, self.work.key)
        if key != self._bands_key:
            self._bands = bands(self.lifetimes(), lo, hi, n=max(1, rows))
            self._bands_key = key
        return self._bands

    def selected_lifetime(self):
        b = self._bands
        if b is None or not b.top:
            return None
        return b.top[max(0, min(self.selected, len(b.top) - 1))]

    def action_select(self, delta: int) -> None:
        b = self._bands
        if b is not None and b.top:
            self.selected = max(0, min(len(b.top) - 1, self.selected + delta))

    class GoTo(Message):
        """The story asked to go to event ``index`` (NOTE [ A storage's story ] rule 2)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def action_detail(self) -> None:
        """Tell the selected band's story (NOTE [ A storage's story ] in tui/story_screen.py)."""
        if self.selected_lifetime() is None:
            return
        from .story_screen import StoryScreen

        def went(at) -> None:
            if at is not None:
                self.post_message(self.GoTo(at))
        self.app.push_screen(StoryScreen(self), went)

    def on_mouse_down(self, event) -> None:
        self._drag_from, self._dragged = (event.x, False) if event.x >= self.label_width() else (None, False)
        if self._drag_from is not None:
            self.capture_mouse()

    def on_mouse_up(self, event) -> None:
        """A drag across the bands chooses a window, as on the chart (NOTE [ Memory views ] rule 2)."""
        start, self._drag_from = self._drag_from, None
        if start is None:
            return
        self.release_mouse()
        lw = self.label_width()
        barw = self.size.width - lw
        if abs(event.x - start) < 2 or barw <= 0 or len(self.model) == 0:
            return
        self._dragged = True
        lo, hi = self._range()
        starts = column_starts(lo, hi, barw)
        a, b = sorted(max(0, min(barw - 1, x - lw)) for x in (start, event.x))
        self.post_message(MemoryView.WindowChosen(starts[a], starts[b + 1] if b + 1 < barw else hi))

    def on_click(self, event) -> None:
        if self._dragged:                        # the end of a drag, not a click on a band
            self._dragged = False
            return
        row = event.y - 1                        # the header takes the first line
        b = self._bands
        if b is not None and 0 <= row < len(b.top):
            if row == self.selected:
                self.action_detail()             # a click on the band already selected: its story
            self.selected = row

    def on_mouse_move(self, event) -> None:
        """Hovering a band says where it came from (as PyTorch's memory viewer does)."""
        row = event.y - 1
        b = self._bands
        tip = None
        if b is not None and 0 <= row < len(b.top):
            lt = b.top[row]
            life = f"#{lt.start}–#{lt.end}" if lt.end is not None else f"#{lt.start} to the end"
            made = f"{lt.made_by or 'made before recording'}" + (f" at {lt.where}" if lt.where else "")
            cat = lt.category_at(self.model.clamp(self.index))
            tip = f"{nbytes(lt.bytes)} {cat} · {made} · events {life} · click: select, again: its story"
        elif b is not None and row == len(b.top):
            tip = f"{len(b.rest)} smaller storages, summed: their bytes alive at each column"
        if tip != self.tooltip:
            self.tooltip = tip

    def shown_bands(self):
        """The bands the panel has rows for: its height less the header and the rest band."""
        return self.current_bands(max(1, self.size.height - 2))

    def label_width(self) -> int:
        """Columns of the bands' labels: :data:`LABEL`, or :data:`NARROW_LABEL` on a narrow panel
        (NOTE [ Fitting the screen ] rule 7)."""
        return max(NARROW_LABEL, min(LABEL, self.size.width - TIMELINE))

    def _style(self, cat: str) -> Style:
        name = f"lifetimes--{cat}"
        return self.get_component_rich_style(name if name in self.COMPONENT_CLASSES else "lifetimes--unknown")

    def render(self) -> Text:
        w, h = self.size.width, self.size.height
        n = len(self.model.events)
        lw = self.label_width()
        if n == 0 or w < lw + 8 or h < 3:
            return Text("No storages yet." if n == 0 else "Too small for lifetimes.", style="dim")
        if no_memory(self.model):
            return Text(NO_MEMORY, style="dim")
        i = self.model.clamp(self.index)
        lo, hi = self._range()
        if self.lifetimes() is None:
            return Text(self.work.status(), style="dim")
        b = self.shown_bands()
        barw = w - lw
        starts = column_starts(lo, hi, barw)
        ends = starts[1:] + [hi]
        cur = column_of(barw, i, lo, hi)
        peak_i, peak_b = self.model.memory.peak_in(lo, hi)
        text = Text(no_wrap=True, overflow="crop")
        head = (f"#{lo}–#{hi - 1} · peak {nbytes(peak_b)} at #{peak_i} · {len(b.top) + len(b.rest)} storages, "
                f"{len(b.top)} largest drawn")
        text.append(head[:w], self.get_component_rich_style("lifetimes--header"))
        sel = self.selected_lifetime()
        text.append_text(self._kept_rows(b, lo, hi, barw, starts, ends, cur, sel))
        rest_bytes = b.rest_bytes_at(i)          # a kept step function: NOTE [ Lifetime spans ] rule 3
        rest = (f"{'+' + str(len(b.rest)) + ' smaller':>9} {nbytes(rest_bytes)}" if lw == LABEL
                else f"+{len(b.rest)} {short_bytes(rest_bytes)}")
        text.append(rest[:lw - 1].ljust(lw), self.get_component_rich_style("lifetimes--rest"))
        text.append_text(self._rows[1][1])
        return text

    def _kept_rows(self, b, lo, hi, barw, starts, ends, cur, sel) -> Text:
        """The bands' rows (each after a new line, and one more new line), kept with the rest band's
        columns while what they show holds (the class docstring)."""
        key = (id(b), self._bands_key, lo, hi, barw, cur, sel.storage if sel is not None else None, self.highlight)
        if self._rows[0] == key:
            return self._rows[1][0]
        text = Text(no_wrap=True, overflow="crop")
        cursor = self.get_component_rich_style("lifetimes--cursor")
        lw = self.size.width - barw
        for lt in b.top:
            text.append("\n")
            mark = "▸" if lt.storage in self.highlight else " "
            size = f"{nbytes(lt.bytes):>8}" if lw == LABEL else f"{short_bytes(lt.bytes):>5}"
            label = f"{mark}{size} {(lt.made_by or 'made earlier')}"[:lw - 1].ljust(lw)
            text.append(label, self.get_component_rich_style("lifetimes--selected") if lt is sel else None)
            for c in range(barw):
                alive = lt.overlap(starts[c], max(ends[c], starts[c] + 1)) > 0
                ch = "█" if alive else ("│" if c == cur else " ")
                st = self._style(lt.category_at(starts[c])) if alive else (cursor if c == cur else None)
                if alive and c == cur:
                    st = st + Style(bgcolor=cursor.bgcolor)
                text.append(ch, st)
        text.append("\n")
        rest = b.rest_bytes_over(starts)
        top = max(rest + [1])
        cols = Text(no_wrap=True, overflow="crop")
        for c, v in enumerate(rest):
            cols.append("│" if c == cur and not v else EIGHTHS[min(8, round(8 * v / top))] if v else " ",
                        self.get_component_rich_style("lifetimes--rest"))
        self._rows = (key, (text, cols))
        return text
