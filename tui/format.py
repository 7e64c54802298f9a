"""Numbers for people: bytes with units, shapes, event lines."""
from __future__ import annotations


def human_bytes(n) -> str:
    """12 B, 3.0 KiB, 1.50 MiB, 2.00 GiB."""
    n = int(n or 0)
    a = abs(n)
    if a < 1024:
        return f"{n} B"
    if a < 1024 ** 2:
        return f"{n / 1024:.1f} KiB"
    if a < 1024 ** 3:
        return f"{n / 1024 ** 2:.2f} MiB"
    return f"{n / 1024 ** 3:.2f} GiB"


def shape_str(shape) -> str:
    return "[" + ", ".join(str(d) for d in (shape or [])) + "]"


def event_line(ev: dict) -> str:
    """A one-line description of an event for the log."""
    k = ev.get("kind", "?")
    if k == "op":
        node = ev.get("node") or {}
        out = ev.get("output") or {}
        nm = node.get("name") or "no graph node"
        sv = sum(s.get("bytes", 0) or 0 for s in node.get("saved", []))
        extra = f", saves {human_bytes(sv)}" if sv else ""
        return f"{ev.get('op')} {shape_str(out.get('shape'))} -> {nm}{extra}"
    if k in ("execute",):
        return f"run {ev.get('name')} (node {ev.get('node')})"
    if k == "leaf":
        t = ev.get("tensor") or {}
        return f"leaf {t.get('name') or 'tensor'} {shape_str(t.get('shape'))} -> AccumulateGrad"
    if k in ("alloc", "free"):
        return f"{k} {human_bytes(ev.get('bytes'))} {ev.get('category')} (storage {ev.get('storage')})"
    if k == "category":
        return f"storage {ev.get('storage')} {ev.get('old')} -> {ev.get('new')} ({human_bytes(ev.get('bytes'))})"
    if k == "release":
        return f"release {ev.get('name')} of node {ev.get('node')} ({human_bytes(ev.get('bytes'))})"
    if k == "unpack":
        return f"unpack {ev.get('name')} of node {ev.get('node')}"
    if k == "accumulate":
        return f"grad into tensor {ev.get('tensor')} ({human_bytes(ev.get('bytes'))})"
    if k == "mark":
        title = ev.get("title")
        return f"── {ev.get('text')}" + (f" {int(ev.get('step', 0)) + 1}: {title}" if title else "") + " ──"
    if k == "backward_begin":
        return "backward begins" + (" (retain_graph)" if ev.get("retain_graph") else "")
    if k == "backward_end":
        return "backward ends"
    if k == "pack":
        how = " through a saved_tensors hook" if ev.get("hooked") else ""
        return f"save {ev.get('name')} for node {ev.get('node')} ({human_bytes(ev.get('bytes'))}){how}"
    if k == "checkpoint_enter":
        return f"checkpoint region {ev.get('region')} begins ({ev.get('fn')})"
    if k == "checkpoint_exit":
        return f"checkpoint region {ev.get('region')} ends"
    if k == "checkpoint_drop":
        what = "not kept (alive anyway)" if ev.get("kept") else f"dropped, {human_bytes(ev.get('bytes'))} freed"
        return f"checkpoint: {ev.get('name')} of node {ev.get('node')} {what}"
    if k == "recompute_begin":
        return f"recompute region {ev.get('region')} (its forward runs again)"
    if k == "recompute_end":
        return f"recompute of region {ev.get('region')} done"
    if k == "optimizer_step":
        return f"{ev.get('optimizer')} step {ev.get('step')} ({ev.get('params')} parameters)"
    if k == "hook":
        return f"{ev.get('hook_kind', '')} hook {ev.get('hook')} on node {ev.get('node')}".strip()
    if k == "version":
        return f"version of storage {ev.get('storage')} -> {ev.get('version')} ({ev.get('op')})"
    if k == "compile_stage":
        return f"compile: {ev.get('stage')} ({ev.get('nodes')} nodes)"
    fields = ", ".join(f"{a}={b}" for a, b in ev.items()
                       if a not in ("seq", "t", "phase", "kind") and not isinstance(b, (dict, list)))
    return f"{k} {fields}".strip()
