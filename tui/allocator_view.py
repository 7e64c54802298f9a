"""AllocatorView: the caching allocator model's segments and blocks at the cursor, the
allocated-vs-reserved gap in one line, and on a CUDA trace CuPy's real pool figures beside the
model's (NOTE [ Segments at an event ] in replay/segments.py, rule 5)."""
from __future__ import annotations

from textwrap import wrap

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from replay.segments import (
    POOL_DIFFERS,
    SegmentsAt,
    devices_of,
    explain,
    gap,
    pool_lines,
)
from replay.words import nbytes

from .memory_view import NO_MEMORY, no_memory
from .window_keys import WINDOW_BINDINGS

LABEL = 18


class AllocatorView(Widget, can_focus=True):
    """One line per segment: ``█`` allocated blocks, ``░`` free ones, ``▒`` rounding inside a block."""

    BINDINGS = WINDOW_BINDINGS
    COMPONENT_CLASSES = {"allocator--allocated", "allocator--free", "allocator--rounding", "allocator--header"}

    index: reactive[int] = reactive(0)
    window: reactive[tuple | None] = reactive(None)

    def __init__(self, model, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self._seg = None
        self._seg_key = None

    def segments(self):
        n = len(self.model.events)
        if self._seg_key is None or self._seg_key[0] != n:
            devs = devices_of(self.model)          # an opened trace's from its columns (NOTE [ Segments at an event ] 6)
            dev = next((d for d in devs if d.startswith("cuda")), devs[0] if devs else "cpu")   # a GPU run's GPU
            self._seg, self._seg_key = SegmentsAt(self.model, dev), (n, dev)
        return self._seg

    def render(self) -> Text:
        w, h = self.size.width, self.size.height
        if len(self.model.events) == 0 or w < LABEL + 10:
            return Text("No allocations yet." if not self.model.events else "Too small.", style="dim")
        if no_memory(self.model):
            return Text(NO_MEMORY, style="dim")
        i = self.model.clamp(self.index)
        seg = self.segments()
        m = seg.at(i)
        g = gap(m)
        header = self.get_component_rich_style("allocator--header")
        top = [(line, header) for line in wrap(f"{seg.device} at #{i}: " + explain(g), w)]
        live = seg.live_reserved(i)
        if live is not None and live != g["reserved"]:
            top += [(line, "dim") for line in
                    wrap(f"(the run's own model reserved {nbytes(live)}: it held segments before recording)", w)]
        pool = seg.pool(i)
        if pool is not None:                    # a GPU trace: CuPy's real pool beside the model (rule 5)
            forms = pool_lines(pool, m)
            lines = next((f for f in forms if all(len(x) <= w for x in f)),
                         [part for x in forms[-1] for part in wrap(x, w)])
            top += [(line, "") for line in lines]
            top += [(line, "dim") for line in wrap(next((d for d in POOL_DIFFERS if len(d) <= w), POOL_DIFFERS[-1]), w)]
        text = Text(no_wrap=True, overflow="crop")
        for k, (line, style) in enumerate(top):
            text.append(("\n" if k else "") + line, style)
        h -= len(top)                           # NOTE [ Fitting the screen ] rule 8: what is left for segments
        barw = w - LABEL
        styles = {k: self.get_component_rich_style(f"allocator--{k}") for k in ("allocated", "free", "rounding")}
        snap = m.snapshot()
        shown = h if len(snap) <= h else max(0, h - 1)
        for s in snap[:shown]:
            text.append("\n")
            text.append(f"{s['segment_type']:5} {nbytes(s['total_size']):>10} "[:LABEL].ljust(LABEL))
            cells = []
            for b in s["blocks"]:
                k = max(1, round(barw * b["size"] / s["total_size"]))
                if b["state"] == "active_allocated":
                    used = max(1, round(k * b["requested_size"] / b["size"])) if b["size"] else k
                    cells += [("█", "allocated")] * used + [("▒", "rounding")] * (k - used)
                else:
                    cells += [("░", "free")] * k
            for ch, kind in cells[:barw]:
                text.append(ch, styles[kind])
        if len(snap) > shown and h > 0:
            text.append(f"\n… {len(snap) - shown} more segments", "dim")
        return text
