"""Inspector: what the selected node, or the event at the cursor, is made of."""
from __future__ import annotations

import functools
import os

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from replay import values, why_saved
from replay.model import TraceModel
from replay.words import event_line, nbytes, shape, where

from .changed_lines import redraw_changed

_STATE_WORDS = {"future": "not created yet", "pending": "in the graph, waiting for backward",
                "current": "running now", "executed": "executed by backward"}


@functools.lru_cache(maxsize=1024)
def _why(node_name: str, slot: str) -> tuple:
    """``why_saved.why``, once per (node name, slot): it reads the op's source each time."""
    return tuple(why_saved.why(node_name, slot))


def _tensor(t: dict | None) -> str:
    if not t:
        return "-"
    name = f"{t['name']} " if t.get("name") else ""
    return f"{name}{shape(t.get('shape'))} {t.get('dtype')} {nbytes(t.get('bytes'))} on {t.get('device')}"


def _saved(out: Text, model: TraceModel, rec, i: int) -> None:
    out.append(f"saved     {nbytes(rec.saved_bytes())} ({model.saved_state(rec.id, i)})\n")
    if rec.dropped_at is not None:
        out.append(f"dropped   by checkpointing: {nbytes(rec.dropped_bytes)} freed; "
                   "recomputed in backward\n", style="red")
    for s in rec.saved:
        flag = " = its output" if s.is_output else ""
        out.append(f"  · {s.name}: {shape(s.shape)} {s.dtype} {nbytes(s.bytes)}"
                   f" (storage {s.storage_at(i)}){flag}\n")
        for line in _why(rec.name, s.name):                      # NOTE [ Why is this saved ]
            out.append(f"    {line}\n", style="dim")


def _values(v: dict) -> str:
    """One line of a values summary (NOTE [ Value capture ] in engine/values.py), with a bar histogram."""
    if v.get("refused"):
        return f"not read: {v['refused']}"
    if v.get("min") is None:
        return f"no finite values ({v.get('nan', 0)} NaN, {v.get('inf', 0)} Inf)"
    bars = "▁▂▃▄▅▆▇█"
    top = max(v.get("hist") or [1]) or 1
    hist = "".join(bars[min(7, int(8 * c / top))] if c else " " for c in v.get("hist") or [])
    bad = f", {v['nan']} NaN" if v.get("nan") else ""
    bad += f", {v['inf']} Inf" if v.get("inf") else ""
    return (f"min {v['min']:.3g} max {v['max']:.3g} mean {v['mean']:.3g} std {v['std']:.3g}{bad}  "
            f"{hist}")


def describe_node(model: TraceModel, nid: int, i: int) -> Text:
    rec = model.nodes[nid]
    out = Text()
    out.append(f"{rec.name}", style="bold")
    out.append(f"  node {rec.id} · {_STATE_WORDS[model.state(nid, i)]}\n")
    if rec.kind == "missing":
        out.append("built before recording began: only its name is known\n", style="dim")
    if rec.op:
        out.append(f"op        {rec.op}\n")
    if rec.file:
        out.append(f"source    {where(rec.file, rec.line)}\n")
    for k, t in enumerate(rec.inputs):
        out.append(f"input {k}   {_tensor(t)}\n")
    if rec.output:
        out.append(f"output    {_tensor(rec.output)}\n")
        out.append(f"gradient  {shape(rec.output.get('shape'))} flows in here\n")
    if rec.tensor:
        out.append(f"leaf      {_tensor(rec.tensor)}\n")
        out.append(f"gradient  {shape(rec.tensor.get('shape'))} accumulates into .grad\n")
    if rec.saved:
        _saved(out, model, rec, i)
    elif rec.kind == "fn":
        out.append("saved     nothing\n")
    idx = getattr(model, "_values_index", None)
    if idx is None or idx.n != len(model.events):
        idx = model._values_index = values.ValuesIndex(model.events)
    vals = idx.at((rec.output or {}).get("id"), i)
    if vals is not None:                                           # engine.record(values=True)
        out.append(f"values    {_values(vals)}\n")
    if model.recomputed(nid, i):
        out.append("recomputed in backward (checkpointing)\n", style="magenta")
    nxt = [n for n in rec.next if n[0] is not None]
    if nxt:
        out.append("next      " + ", ".join(f"{name}" for _, _, name in nxt) + "\n")
    if rec.runs:
        out.append("executed  at event " + ", ".join(f"#{x}" for x in rec.runs[:5]) + "\n")
    return out


#: An event's fields that count bytes: the inspector gives them in units too.
BYTE_FIELDS = ("bytes", "reserved", "pool_used", "pool_total")


def describe_event(model: TraceModel, i: int) -> Text:
    e = model.events[i]
    out = Text()
    out.append(f"event #{i}  ", style="bold")
    out.append(f"{e.get('kind')} · {e.get('phase')}\n")
    out.append(event_line(e) + "\n")
    skip = {"seq", "t", "phase", "kind", "inputs", "output", "node", "tensor"}
    for k, v in e.items():
        if k in skip or isinstance(v, (dict, list)):
            continue
        if k == "file" and v:
            v = os.path.basename(str(v))
        if k in BYTE_FIELDS and type(v) is int:
            v = f"{v} ({nbytes(v)})"
        out.append(f"{k:<10} {v}\n" if len(k) >= 10 else f"{k:<10}{v}\n")
    why = reserved_change(model, i)
    if why:
        out.append(f"          {why}\n", style="dim")
    return out


def reserved_change(model: TraceModel, i: int) -> str:
    """What event i did to the caching allocator model's reserved bytes, in words ("" if nothing to say)."""
    e = model.events[i]
    k = e.get("kind")
    if k not in ("alloc", "free", "empty_cache") or not isinstance(e.get("reserved"), int):
        return ""
    mem = model.memory
    delta = mem.reserved[i] - (mem.reserved[i - 1] if i > 0 else mem.reserved_start)
    if k == "alloc":
        if delta > 0:
            return f"+{nbytes(delta)}: a new segment (no cached block fitted)"
        return "unchanged: fitted in a cached free block"
    if k == "free":
        return "unchanged: the block stays cached for reuse"
    return f"-{nbytes(-delta)}: wholly free segments given back"


class Inspector(Static):
    """Shows the selected node; with none selected, the event at the cursor (and its node)."""

    index: reactive[int] = reactive(0, repaint=False)   # NOTE [ Redrawing only changed lines ] rule 1
    selected: reactive[int | None] = reactive(None)

    def __init__(self, model: TraceModel, **kw) -> None:
        super().__init__("", **kw)
        self.model = model
        self._shown = Text()

    def render(self) -> Text:
        return self._shown

    def on_mount(self) -> None:
        self._shown = self.content()
        self.refresh()

    def watch_index(self) -> None:
        self._shown = self.content()
        redraw_changed(self)        # rule 3

    def watch_selected(self) -> None:
        self._shown = self.content()
        self.refresh()

    def content(self) -> Text:
        m = self.model
        if len(m) == 0:
            return Text("Nothing recorded yet.", style="dim")
        i = m.clamp(self.index)
        if isinstance(self.selected, str):          # a folded module group (tui/graph_folds.py)
            from .graph_folds import describe_group
            return describe_group(m, self.selected, i)
        if self.selected is not None and self.selected in m.nodes:
            return describe_node(m, self.selected, i)
        text = describe_event(m, i)
        e = m.events[i]
        nid = (e.get("node") or {}).get("id") if isinstance(e.get("node"), dict) else e.get("node")
        if nid in m.nodes:
            text.append("\n")
            text.append_text(describe_node(m, nid, i))
        return text
