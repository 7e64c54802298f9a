"""RecordsView: the checkpoint file at the cursor, its records in file order and its storages.

It draws ``replay.records`` (the ``save`` and ``load`` events' own fields), never the file.

NOTE [ Fitting the records table ]
1. Every line fits the panel: the table drops, in this order, the archive's folder from
   record names (the second line names the folder), the thousands separators, then the
   "at" column; a name that still does not fit ends in "…".
2. A load marks each record it read (✓) or left unread (·); a save wrote them all.
3. Each storage record lists the tensors that view it, one a line, with the offset in
   elements where it is not 0, so two views of one storage show as one record.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from replay.records import FileEvent, Files
from replay.words import nbytes, shape


def _num(n: int, commas: bool) -> str:
    return f"{n:,}" if commas else str(n)


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else (s[: max(width - 1, 0)] + "…" if width > 0 else "")


def _table_layout(fe: FileEvent, width: int):
    """(short names, commas, offsets) for the first layout of rule 1 that fits ``width``."""
    for short, commas, offsets in ((False, True, True), (True, True, True), (True, False, True),
                                   (True, False, False)):
        if _row_width(fe, short, commas, offsets) <= width:
            return short, commas, offsets
    return True, False, False


def _row_width(fe, short, commas, offsets) -> int:
    names = [len(r.short if short else r.name) for r in fe.records] + [len("record")]
    sizes = [len(_num(r.bytes, commas)) for r in fe.records] + [len("bytes")]
    ats = [len(_num(r.data_offset, commas)) for r in fe.records] + [len("at")]
    return 2 + max(names) + 1 + max(sizes) + ((1 + max(ats)) if offsets else 0)


def file_text(fe: FileEvent | None, width: int, files: Files | None = None, first: int | None = None) -> Text:
    """The panel's text for file event ``fe`` in ``width`` columns (NOTE [ Fitting the records table ])."""
    out = Text(no_wrap=True, overflow="ellipsis")
    width = max(width, 8)

    def line(s: str, style: str = "") -> None:
        out.append(_cut(s, width) + "\n", style=style)

    if fe is None:
        line("No checkpoint file yet.", "bold")
        line("engine.save and engine.load fill this")
        line("panel with the file's records and")
        line("storages" + (f" (the first: event #{first})." if first is not None else "."))
        return out
    load = fe.kind == "load"
    verb = "loaded" if load else "saved"
    line(f"{verb} {fe.file_name}: {fe.bytes:,} bytes", "bold")
    where = f"event #{fe.index}"
    if files is not None and len(files) > 1:
        where += f" · {files.position(fe)} of {len(files)} saves and loads"
    line(where, "dim")
    if not fe.described:
        line("This event lists no records (a trace from an older glassgrad).")
        return out
    short, commas, offsets = _table_layout(fe, width)
    folder = f" in {fe.folder}/" if short and fe.folder else ""
    line(f"read {len(fe.read)} of {len(fe.records)} records{folder}" if load
         else f"{len(fe.records)} records{folder}, in file order")
    names = [r.short if short else r.name for r in fe.records]
    nw = max([len(n) for n in names] + [len("record")])
    bw = max([len(_num(r.bytes, commas)) for r in fe.records] + [len("bytes")])
    ow = max([len(_num(r.data_offset, commas)) for r in fe.records] + [len("at")])
    nw = max(min(nw, width - 3 - bw - ((1 + ow) if offsets else 0)), 1)
    head = f"  {'record':<{nw}} {'bytes':>{bw}}" + (f" {'at':>{ow}}" if offsets else "")   # at: data offset
    line(head, "dim underline")
    storage_names = {s.record for s in fe.storages}
    for r, name in zip(fe.records, names):
        mark = ("✓ " if r.read else "· ") if load else "  "
        row = f"{mark}{_cut(name, nw):<{nw}} {_num(r.bytes, commas):>{bw}}"
        if offsets:
            row += f" {_num(r.data_offset, commas):>{ow}}"
        style = "dim" if load and not r.read else ("bold #9c755f" if r.name in storage_names else "")
        line(row, style)
    line("")
    n_views = sum(len(s.views) for s in fe.storages)
    line(f"{'rebuilt ' if load else ''}{len(fe.storages)} storage{'s' if len(fe.storages) != 1 else ''}"
         f" for {fe.tensors} tensor{'s' if fe.tensors != 1 else ''}" +
         (f" ({n_views} named)" if n_views != fe.tensors else ""), "bold")
    for s in fe.storages:
        key = s.record.split("/", 1)[1] if short and "/" in s.record else s.record
        line(f"{key} {s.dtype} ×{s.numel:,} = {nbytes(s.bytes)}", "#9c755f")
        if load:
            tag = f" (tag {s.location})" if s.location and s.location != s.device else ""
            line(f"  → storage {s.storage} on {s.device}{tag}", "dim")
        elif s.copy:
            line("  a contiguous copy (its layout has no storage form)", "dim")
        for v in s.views:
            at = f" at {v.offset:,}" if v.offset else ""
            kind = " Parameter" if v.parameter else ""
            line(f"  {v.name} {shape(v.shape)}{at}{kind}")
    return out


class RecordsView(VerticalScroll, can_focus=True):
    """The last file saved or loaded at the cursor (NOTE [ Files in a trace ] in replay/records.py)."""

    index: reactive[int] = reactive(0)

    def __init__(self, model, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.files = Files()
        self._shown = None

    def compose(self) -> ComposeResult:
        yield Static("", id="records-body")

    def has_files(self) -> bool:
        """Whether the trace so far saved or loaded any file."""
        self.files.follow(self.model.events)
        return len(self.files) > 0

    def watch_index(self) -> None:
        self._update()

    def on_mount(self) -> None:
        self._update()

    def on_resize(self) -> None:
        self._update()

    def on_show(self) -> None:
        self._update()

    def _update(self) -> None:
        if not self.is_mounted or not self.display:      # hidden: no work on a trace with a graph
            return
        self.files.follow(self.model.events)
        fe = self.files.at(self.index)
        width = self.scrollable_content_region.width
        key = (None if fe is None else fe.index, width, len(self.files))
        if key == self._shown or width <= 0:
            return
        self._shown = key
        first = self.files.events[0].index if len(self.files) else None
        self.query_one("#records-body", Static).update(file_text(fe, width, self.files, first))
        self.scroll_home(animate=False)
