"""Recording: ``with engine.record() as trace:`` collects every event the engine emits.

A :class:`Trace` is a list of events (dicts). ``trace.save(path)`` writes JSON Lines: a
header line ``{"format": "glassgrad-trace", "version": 1, "meta": {...}, "created": ...}``
then one event per line. ``Trace.load(path)`` reads one back and validates it
(NOTE [ Trace validation ]
1. Loading parses JSON only; nothing in a trace runs code.
2. The header must be a JSON object whose ``format`` is "glassgrad-trace"; a
   ``version`` newer than :data:`VERSION` is refused (this glassgrad cannot know what
   changed), an older or non-integer one is an error too. ``meta`` is checked as
   engine/trace_schema.py says.
3. Every event line is one JSON object, checked once, field by field, by
   engine/trace_schema.py (NOTE [ Validating a trace field by field ]). Blank lines are
   errors; an unknown kind is kept and listed in ``trace.warnings`` with its line number.
4. JSON that Python cannot hold is refused with its line number, never a traceback: an
   integer of more digits than ``sys.get_int_max_str_digits()`` allows, or arrays and
   objects nested so deep that the parser runs out of stack.
5. A last line without a newline that is not valid JSON is reported as truncated.
6. Any failure raises :class:`TraceFormatError` naming the file, line number and the
   problem. Strings are kept as written: readers draw them through
   ``replay.model.TraceModel``, which makes them safe for a terminal
   (NOTE [ Text from a trace ] in engine/trace_text.py).
7. Only a regular file is read: a device (``/dev/zero``) or a FIFO would never end.
``Trace.open(path)`` makes the same checks once and keeps an index instead of the events
(NOTE [ Trace index ] in engine/trace_index.py); the readers both use are engine/trace_lines.py.
"""
from __future__ import annotations

import datetime
import json
import threading
import time

from . import events as _events
from . import trace_notebook as _notebook
from . import trace_schema as _schema
from .core.graph import node_info
from .core.tensor import tensor_info
from .memory import state as _memstate
from .trace_lines import (  # TraceFormatError, FORMAT, VERSION, open_regular: engine.trace names them too
    FORMAT,
    VERSION,
    TraceFormatError,
    _json_line,
    _read_header,
    _scan_lines,
    open_regular,
)
from .trace_text import plain_json, safe_text, safe_value  # noqa: F401 - readers make a trace's text safe

PHASES = _schema.PHASES
CATEGORIES = _events.CATEGORIES    # a storage's memory categories, in stacking order

# kind -> the kind's own fields (besides seq, t, phase, kind); see docs/trace-format.md
KINDS = {
    "alloc": ("storage", "bytes", "device", "category", "reserved", "pool_used", "pool_total"),
    "free": ("storage", "bytes", "device", "category", "reserved", "pool_used", "pool_total"),
    "category": ("storage", "bytes", "device", "old", "new"),
    "empty_cache": ("device", "bytes", "reserved"),
    "op": ("op", "inputs", "output", "node", "file", "line", "region", "module"),
    "leaf": ("node", "name", "tensor"),
    "pack": ("node", "name", "storage", "bytes", "hooked"),
    "unpack": ("node", "name", "storage"),
    "release": ("node", "name", "storage", "bytes"),
    "node_free": ("node",),
    "backward_begin": ("roots", "retain_graph", "create_graph"),
    "backward_end": ("roots",),
    "execute": ("node", "name"),
    "accumulate": ("node", "tensor", "storage", "bytes"),
    "hook": ("node", "hook_kind", "hook"),
    "version": ("tensor", "storage", "version", "op"),
    "optimizer_step": ("optimizer", "params", "step"),
    "checkpoint_enter": ("region", "fn"),
    "checkpoint_exit": ("region",),
    "checkpoint_drop": ("region", "node", "name", "storage", "bytes", "kept"),
    "recompute_begin": ("region",),
    "recompute_end": ("region",),
    "save": ("path", "bytes", "tensors", "storages", "records", "storage_records"),
    "load": ("path", "bytes", "tensors", "storages", "records", "storage_records"),
    "mark": ("text",),
    "compile_stage": ("stage", "nodes", "text"),
    "values": ("tensor", "storage", "numel", "grad", "min", "max", "mean", "std", "norm", "lo", "hi", "nan", "inf",
               "hist", "refused", "leaf"),
}

_RESERVED_KINDS = _schema.RESERVED_KINDS   # events that carry "reserved"


def _now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Trace:
    """A list of events (dicts) with ``seq``, ``t``, ``phase``, ``kind`` and the kind's fields."""

    def __init__(self, events=None, meta=None, created=None):
        self.events: list = list(events or [])
        self.meta: dict = dict(meta or {})
        self.created: str = created or _now_iso()
        self.warnings: list = []      # filled by load: [(line number, message)]
        self.plain_events = 0         # load: how many leading events hold no text to escape (trace_text rule 5)
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    def __getitem__(self, i):
        return self.events[i]

    def __repr__(self):
        return f"<Trace {len(self.events)} events>"

    def _append(self, kind, fields):
        with self._lock:
            ev = {"seq": len(self.events), "t": round(time.perf_counter() - self._t0, 9),
                  "phase": _events.phase(), "kind": kind}
            ev.update(fields)
            self.events.append(ev)

    def mark(self, text: str, **fields) -> None:
        """Add a free-form lesson mark (to this trace only; :func:`mark` reaches every recorder)."""
        self._append("mark", {"text": text, **fields})

    def of_kind(self, *kinds) -> list:
        return [e for e in self.events if e["kind"] in kinds]

    # ---- files --------------------------------------------------------------
    def header(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "meta": self.meta, "created": self.created}

    def save(self, path) -> None:
        """Write JSON Lines: the header, then one event per line."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(self.header()) + "\n")
            for e in self.events:
                f.write(json.dumps(e) + "\n")

    @classmethod
    def load(cls, path) -> "Trace":
        """Read and validate a saved trace (NOTE [ Trace validation ])."""
        where = safe_text(str(path))
        try:
            with open_regular(path) as f:
                raw = f.read()
        except OSError as e:
            raise TraceFormatError(f"{where}: cannot read trace: {e.strerror or e}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw[:e.start].count(b"\n") + 1
            raise TraceFormatError(f"{path}: line {line}: not UTF-8 text") from None
        return cls._parse(text, str(path))

    @classmethod
    def open(cls, path, index: bool = True, progress=None, pieces=None, piece: int | None = None) -> Trace:
        """Open a saved trace through its index (NOTE [ Trace index ] in engine/trace_index.py): the
        same checks as :meth:`load`, done once; the events are read from the file when asked for.
        ``progress(bytes_read, size)`` follows a first open's reading, and ``pieces(lines)`` gets
        its events as they are checked (rule 9 there), ``piece`` bytes at a time (rule 1's by default)."""
        from .trace_index import open_trace

        return open_trace(cls, path, cache=index, progress=progress, pieces=pieces, piece=piece)

    @classmethod
    def loads(cls, text: str, name: str = "<string>") -> "Trace":
        """Parse a trace from the text of a JSON Lines file."""
        return cls._parse(text, name)

    @classmethod
    def _parse(cls, text: str, name: str) -> "Trace":
        name = safe_text(name)

        def fail(line, msg):
            raise TraceFormatError(f"{name}: line {line}: {msg}")

        if not text:
            raise TraceFormatError(f"{name}: empty file (no header line)")
        lines = text.split("\n")
        complete = lines[-1] == ""
        if complete:
            lines.pop()
        meta, created = _read_header(lines[0], len(lines) == 1 and not complete, fail)
        body = lines[1:]
        last = len(body) - 1
        events = _scan_lines(body)
        if events is None:   # one json.loads per line, so a bad line is found where it is
            events = [_json_line(s, i + 2, i == last and not complete, fail) for i, s in enumerate(body)]
        if body and not complete and not body[-1].rstrip().endswith("}"):
            fail(len(body) + 1, "truncated: the last line is incomplete")
        trace = cls(events, meta, created)
        _schema.validate(events, trace.warnings, fail)
        trace.plain_events = len(events) if plain_json(text) else 0
        return trace

    # ---- analysis -----------------------------------------------------------
    def replay_memory(self, device=None) -> list:
        """Live bytes after every alloc/free/category event, from those events alone.

        Returns ``[(seq, {device: live bytes}, {category: live bytes})]``; the
        category figures add up all devices, or only ``device`` when given (and then
        only that device's events are listed). Bytes live when recording began are the
        starting point (``meta["memory_at_start"]``, written by :class:`record`).
        """
        live: dict = {}
        cats: dict = {}
        for dev, m in self.meta.get("memory_at_start", {}).items():
            if device is not None and dev != device:
                continue
            live[dev] = m.get("allocated", 0)
            for c, b in m.get("by_category", {}).items():
                cats[c] = cats.get(c, 0) + b
        out = []
        append = out.append
        for e in self.events:
            k = e["kind"]
            if k != "alloc" and k != "free" and k != "category":
                continue
            dev = e["device"]
            if device is not None and dev != device:
                continue
            b = e["bytes"]
            if k == "alloc":
                live[dev] = live.get(dev, 0) + b
                c = e["category"]
                cats[c] = cats.get(c, 0) + b
            elif k == "free":
                live[dev] = live.get(dev, 0) - b
                c = e["category"]
                cats[c] = cats.get(c, 0) - b
            else:
                cats[e["old"]] = cats.get(e["old"], 0) - b
                cats[e["new"]] = cats.get(e["new"], 0) + b
            append((e["seq"], dict(live), dict(cats)))
        return out

    def replay_reserved(self, device=None) -> list:
        """The allocator model's reserved bytes after every event that carries them.

        Returns ``[(seq, {device: reserved bytes})]``, one row per ``alloc``, ``free``
        or ``empty_cache`` event with a ``reserved`` field (only ``device``'s events
        when given), starting from ``meta["memory_at_start"][device]["reserved"]``.
        A trace recorded before events carried ``reserved`` gives ``[]``.
        """
        res: dict = {}
        for dev, m in self.meta.get("memory_at_start", {}).items():
            if (device is None or dev == device) and "reserved" in m:
                res[dev] = m["reserved"]
        out = []
        for e in self.events:
            if e["kind"] not in _RESERVED_KINDS or "reserved" not in e:
                continue
            dev = e["device"]
            if device is not None and dev != device:
                continue
            res[dev] = e["reserved"]
            out.append((e["seq"], dict(res)))
        return out

    def _repr_html_(self) -> str:
        return _notebook.repr_html(self)       # NOTE [ Traces in notebooks ] in engine/trace_notebook.py

    def _repr_svg_(self):
        return _notebook.repr_svg(self)

    def to_records(self) -> list:
        """One flat dict per event (seq, t, phase, kind, op, name, node, storage, bytes, ...)."""
        return _notebook.to_records(self)

    def to_dataframe(self):
        """``to_records()`` as a pandas DataFrame (pandas must be installed)."""
        return _notebook.to_dataframe(self)

    def summary(self) -> dict:
        """Counts by kind and phase, ops and nodes, backward passes, duration and memory peaks."""
        kinds: dict = {}
        phases: dict = {}
        for e in self.events:
            kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
            phases[e["phase"]] = phases.get(e["phase"], 0) + 1
        peak: dict = {}
        peak_seq: dict = {}
        final: dict = {}
        for seq, live, _ in self.replay_memory():
            for dev, b in live.items():
                if b > peak.get(dev, -1):
                    peak[dev] = b
                    peak_seq[dev] = seq
            final = live
        reserved_peak: dict = {}
        reserved_final: dict = {}
        for _, res in self.replay_reserved():
            for dev, b in res.items():
                reserved_peak[dev] = max(b, reserved_peak.get(dev, 0))
            reserved_final = res
        ops = self.of_kind("op")
        return {"events": len(self.events), "kinds": kinds, "phases": phases,
                "duration_s": self.events[-1]["t"] if self.events else 0.0,
                "ops": len(ops), "nodes": sum(1 for e in ops if e.get("node") is not None),
                "backward_passes": kinds.get("backward_begin", 0),
                "peak_bytes": peak, "peak_seq": peak_seq, "final_bytes": dict(final),
                "peak_reserved": reserved_peak, "final_reserved": dict(reserved_final),
                "warnings": len(self.warnings)}


def mark(text: str, **fields) -> None:
    """Add a lesson mark to every active recorder (a no-op when none records)."""
    if _events.active:
        _events.emit("mark", text=text, **fields)


class record:
    """Context manager: ``with engine.record() as trace:`` records events into ``trace``.

    It records the thread that enters it: events emitted in other threads, even while it
    is open, are not its (NOTE [ A recorder records its own thread ] in engine/events.py);
    a thread that wants its own events opens its own ``record``.

    ``values=True`` also summarises every op's output and every leaf's gradient (NOTE [ Value
    capture ] in engine/values.py; ``values_cap`` elements at most per tensor). Other keyword
    arguments become ``trace.meta``. The live bytes per device and category at
    the start, and the allocator model's reserved bytes, go to
    ``meta["memory_at_start"]`` so a replay starts from them.
    """

    def __init__(self, trace: Trace | None = None, *, values: bool = False, values_cap: int | None = None, **meta):
        self.trace = trace if trace is not None else Trace(meta=meta)
        self.values = None
        if values:                                 # NOTE [ Value capture ] in engine/values.py
            from .values import DEFAULT_CAP, ValueCapture
            self.values = ValueCapture(DEFAULT_CAP if values_cap is None else values_cap)
            self.trace.meta["values_cap"] = self.values.cap

    def __enter__(self) -> Trace:
        start = {}
        for dev in _memstate.devices():
            s = _memstate.stats(dev)
            reserved = _memstate.reserved_now(dev)
            if s["allocated"] or any(s["by_cat"].values()) or reserved:
                start[dev] = {"allocated": s["allocated"],
                              "by_category": {c: b for c, b in s["by_cat"].items() if b},
                              "reserved": reserved}
        self.trace.meta.setdefault("memory_at_start", start)
        _events.add_recorder(self.trace)
        if self.values is not None:
            self.values.start()
        return self.trace

    def __exit__(self, *exc):
        if self.values is not None:
            self.values.stop()
        _events.remove_recorder(self.trace)


# NOTE [ engine.trace is also torch.trace ]
# 1. ``torch.trace(x)`` (the sum of a matrix's diagonal) and this module share the name ``engine.trace``;
#    importing a submodule sets the package attribute to the module, so a plain function could not keep it.
# 2. The module is therefore callable: ``engine.trace(x)`` runs engine.functions.build.trace, while
#    ``engine.trace.record`` and ``from engine.trace import Trace`` work as before.
class _CallableModule(type(_events)):
    def __call__(self, input):
        from .functions.build import trace as matrix_trace
        return matrix_trace(input)


import sys as _sys  # noqa: E402
_sys.modules[__name__].__class__ = _CallableModule


def snapshot(tensor, params: dict | None = None) -> list[dict]:
    """The graph behind a live ``tensor`` as the events a recording would hold (``leaf`` and ``op``,
    in creation order), so readers draw a live graph from events, never from engine objects.
    ``params`` (name -> tensor) names leaves."""
    names = {id(p): k for k, p in (params or {}).items()}

    def info(t):
        d = tensor_info(t)
        if id(t) in names:
            d["name"] = names[id(t)]
        return d

    seen, stack, nodes = set(), [tensor.grad_fn] if tensor.grad_fn is not None else [], []
    while stack:
        n = stack.pop()
        if n is None or n.id in seen:
            continue
        seen.add(n.id)
        nodes.append(n)
        stack.extend(nx for nx, _ in n.next_functions)
    events = []
    for n in sorted(nodes, key=lambda n: n.id):
        if n.name().endswith("AccumulateGrad") and getattr(n, "variable", None) is not None:
            events.append({"kind": "leaf", "phase": "forward", "node": n.id, "name": "AccumulateGrad",
                           "tensor": info(n.variable)})
            continue
        ni = node_info(n)
        for sv, (_, st) in zip(ni["saved"], n._saved.items()):
            sv["released"] = bool(getattr(st, "released", False))
        out = info(tensor) if n is tensor.grad_fn else None
        events.append({"kind": "op", "phase": "forward", "op": None, "inputs": [], "output": out, "node": ni,
                       "file": None, "line": None, "region": None})
    for i, e in enumerate(events):
        e["seq"] = i
    return events
