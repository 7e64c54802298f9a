"""Words for numbers: bytes, shapes, tensors, source places and one line per event.

The app, the pictures and the lessons all write their numbers with these functions,
so one amount of memory reads the same everywhere ("1.50 MiB").

NOTE [ One format ]
1. Bytes: exact below 1 KiB ("12 B"); one decimal in KiB ("3.0 KiB"); two in MiB and
   GiB ("1.50 MiB", "2.00 GiB"). Binary units, as ``torch.cuda.memory_summary`` uses.
   Where a column has at most five cells (a narrow table), ``short_bytes`` writes three
   figures and the unit's letter ("12B", "3.0K", "437K", "1.50M").
2. Shapes have three notations, each pinned by what people already read:
   ``"list"`` ``[5, 8]`` (the app and the event log, like ``torch.Size([5, 8])``),
   ``"tuple"`` ``(5, 8)`` / ``(3,)`` (the Graphviz pictures, as torchviz labels them) and
   ``"box"`` ``[5×8]`` / ``[scalar]`` (a graph box in the app, where width is scarce).
3. A tensor's kind is its dtype, then its device unless that is the CPU
   (``float32 cuda:0``), as a tensor's repr leaves the CPU unsaid.
4. A source place is the file's base name and the line (``train.py:9``).
5. ``event_line`` says what one event did in one line; a kind it does not know is
   written as its kind and its plain fields, so newer traces still read.
"""
from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def nbytes(n) -> str:
    """Bytes for people (rule 1): 12 B, 3.0 KiB, 1.50 MiB, 2.00 GiB."""
    n = int(n or 0)
    a = abs(n)
    if a < 1024:
        return f"{n} B"
    if a < 1024 ** 2:
        return f"{n / 1024:.1f} KiB"
    if a < 1024 ** 3:
        return f"{n / 1024 ** 2:.2f} MiB"
    return f"{n / 1024 ** 3:.2f} GiB"


def short_bytes(n) -> str:
    """Bytes in at most five cells (rule 1): 12B, 3.0K, 437K, 1.50M, 2.00G."""
    n = int(n or 0)
    a = abs(n)
    if a < 1024:
        return f"{n}B"
    for letter, div in (("K", 1024), ("M", 1024 ** 2), ("G", 1024 ** 3), ("T", 1024 ** 4)):
        v = n / div
        if abs(v) < 1024 or letter == "T":
            return f"{v:.2f}{letter}" if abs(v) < 10 and letter != "K" else (
                f"{v:.1f}{letter}" if abs(v) < 100 else f"{v:.0f}{letter}")


def unit_for(max_bytes: float) -> tuple[str, int]:
    """The binary unit (name, divisor) that suits an axis reaching ``max_bytes``."""
    div = 1
    for u in _UNITS:
        if max_bytes < div * 1024 or u == _UNITS[-1]:
            return u, div
        div *= 1024
    return _UNITS[-1], div


def shape(dims, style: str = "list") -> str:
    """A shape in one of the three notations of rule 2."""
    dims = list(dims or [])
    if style == "tuple":
        return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    if style == "box":
        return "[" + ("×".join(str(d) for d in dims) or "scalar") + "]"
    return "[" + ", ".join(str(d) for d in dims) + "]"


def kind(t: dict) -> str:
    """A tensor's dtype, then its device when that is not the CPU (rule 3)."""
    dev = t.get("device")
    return f"{t.get('dtype', '')} {dev}" if dev and dev != "cpu" else f"{t.get('dtype', '')}"


def where(file: str | None, line: int | None) -> str:
    """``train.py:9`` (rule 4); "" without a file."""
    if not file:
        return ""
    base = str(file).replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{line}" if line is not None else base


def _op(ev):
    node = ev.get("node") or {}
    out = ev.get("output") or {}
    name = node.get("name") or "no graph node"
    saved = sum(s.get("bytes", 0) or 0 for s in node.get("saved", []))
    extra = f", saves {nbytes(saved)}" if saved else ""
    return f"{ev.get('op')} {shape(out.get('shape'))} -> {name}{extra}"


def _leaf(ev):
    t = ev.get("tensor") or {}
    return f"leaf {t.get('name') or 'tensor'} {shape(t.get('shape'))} -> AccumulateGrad"


def _mark(ev):
    title = ev.get("title")
    return f"── {ev.get('text')}" + (f" {int(ev.get('step', 0)) + 1}: {title}" if title else "") + " ──"


def _drop(ev):
    what = "not kept (alive anyway)" if ev.get("kept") else f"dropped, {nbytes(ev.get('bytes'))} freed"
    return f"checkpoint: {ev.get('name')} of node {ev.get('node')} {what}"


def _pack(ev):
    how = " through a saved_tensors hook" if ev.get("hooked") else ""
    return f"save {ev.get('name')} for node {ev.get('node')} ({nbytes(ev.get('bytes'))}){how}"


_LINES = {
    "op": _op,
    "leaf": _leaf,
    "mark": _mark,
    "checkpoint_drop": _drop,
    "pack": _pack,
    "execute": lambda e: f"run {e.get('name')} (node {e.get('node')})",
    "alloc": lambda e: f"alloc {nbytes(e.get('bytes'))} {e.get('category')} (storage {e.get('storage')})",
    "free": lambda e: f"free {nbytes(e.get('bytes'))} {e.get('category')} (storage {e.get('storage')})",
    "category": lambda e: f"storage {e.get('storage')} {e.get('old')} -> {e.get('new')} ({nbytes(e.get('bytes'))})",
    "release": lambda e: f"release {e.get('name')} of node {e.get('node')} ({nbytes(e.get('bytes'))})",
    "node_free": lambda e: f"node {e.get('node')} freed (its last reference died)",
    "unpack": lambda e: f"unpack {e.get('name')} of node {e.get('node')}",
    "accumulate": lambda e: f"grad into tensor {e.get('tensor')} ({nbytes(e.get('bytes'))})",
    "backward_begin": lambda e: "backward begins" + (" (retain_graph)" if e.get("retain_graph") else ""),
    "backward_end": lambda e: "backward ends",
    "checkpoint_enter": lambda e: f"checkpoint region {e.get('region')} begins ({e.get('fn')})",
    "checkpoint_exit": lambda e: f"checkpoint region {e.get('region')} ends",
    "recompute_begin": lambda e: f"recompute region {e.get('region')} (its forward runs again)",
    "recompute_end": lambda e: f"recompute of region {e.get('region')} done",
    "optimizer_step": lambda e: f"{e.get('optimizer')} step {e.get('step')} ({e.get('params')} parameters)",
    "hook": lambda e: f"{e.get('hook_kind', '')} hook {e.get('hook')} on node {e.get('node')}".strip(),
    "version": lambda e: f"version of storage {e.get('storage')} -> {e.get('version')} ({e.get('op')})",
    "compile_stage": lambda e: f"compile: {e.get('stage')} ({e.get('nodes')} nodes)",
    "values": lambda e: (f"{'gradient of tensor ' + str(e.get('leaf')) if e.get('grad') else 'values of tensor ' + str(e.get('tensor'))}: "
                         + (e["refused"] if e.get("refused") else
                            f"min {e.get('min'):.4g} max {e.get('max'):.4g} mean {e.get('mean'):.4g} norm {e.get('norm'):.4g}"
                            if e.get("min") is not None else f"no finite values ({e.get('nan', 0)} NaN, {e.get('inf', 0)} Inf)")),
}


def event_line(ev: dict) -> str:
    """What one event did, in one line (rule 5)."""
    k = ev.get("kind", "?")
    line = _LINES.get(k)
    if line is not None:
        return line(ev)
    fields = ", ".join(f"{a}={b}" for a, b in ev.items()
                       if a not in ("seq", "t", "phase", "kind") and not isinstance(b, (dict, list)))
    return f"{k} {fields}".strip()
