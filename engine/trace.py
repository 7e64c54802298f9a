"""Recording: ``with engine.record() as trace:`` collects every event the engine emits.

A :class:`Trace` is a list of events (dicts). ``trace.save(path)`` writes JSON Lines: a
header line ``{"format": "glassgrad-trace", "version": 1, "meta": {...}, "created": ...}``
then one event per line. ``Trace.load(path)`` reads one back and validates it
(NOTE [ Trace validation ]); every kind and field is documented in docs/trace-format.md.

NOTE [ Trace validation ]
1. Loading parses JSON only; nothing in a trace runs code.
2. The header must be a JSON object whose ``format`` is "glassgrad-trace"; a
   ``version`` newer than :data:`VERSION` is refused (this glassgrad cannot know what
   changed), an older or non-integer one is an error too.
3. Every event line must be a JSON object with an integer ``seq`` greater than the
   previous event's, a number ``t``, a string ``kind`` and a ``phase`` from
   :data:`PHASES`. Blank lines are errors.
4. ``alloc``, ``free`` and ``category`` events must carry the fields memory replay
   reads (integer storage and bytes, string device and categories). ``reserved``
   (on ``alloc``, ``free`` and ``empty_cache``) is optional, as traces written
   before it existed lack it; when present it is a non-negative integer.
5. An unknown kind is allowed (newer glassgrad versions add kinds without a version
   bump) and listed in ``trace.warnings`` with its line number.
6. A last line without a newline that is not valid JSON is reported as truncated.
7. Any failure raises :class:`TraceFormatError` naming the file, line number and the
   problem.
"""
from __future__ import annotations

import datetime
import json
import json.decoder
import json.scanner
import threading
import time

from . import events as _events
from .core.graph import node_info
from .core.tensor import tensor_info
from .memory import state as _memstate

FORMAT = "glassgrad-trace"
VERSION = 1
PHASES = ("forward", "backward", "recompute", "optimizer")
CATEGORIES = _events.CATEGORIES    # a storage's memory categories, in stacking order

# kind -> the kind's own fields (besides seq, t, phase, kind); see docs/trace-format.md
KINDS = {
    "alloc": ("storage", "bytes", "device", "category", "reserved"),
    "free": ("storage", "bytes", "device", "category", "reserved"),
    "category": ("storage", "bytes", "device", "old", "new"),
    "empty_cache": ("device", "bytes", "reserved"),
    "op": ("op", "inputs", "output", "node", "file", "line", "region"),
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
    "save": ("path", "bytes", "tensors", "storages"),
    "load": ("path", "bytes", "tensors", "storages"),
    "mark": ("text",),
    "compile_stage": ("stage", "nodes", "text"),
}

_RESERVED_KINDS = ("alloc", "free", "empty_cache")   # events that carry "reserved"

_MEMORY_FIELDS = {
    "alloc": (("storage", int), ("bytes", int), ("device", str), ("category", str)),
    "free": (("storage", int), ("bytes", int), ("device", str), ("category", str)),
    "category": (("storage", int), ("bytes", int), ("device", str), ("old", str), ("new", str)),
}


class TraceFormatError(ValueError):
    """A trace file that is not a valid glassgrad trace (the message says where and why)."""


def _now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Trace:
    """A list of events (dicts) with ``seq``, ``t``, ``phase``, ``kind`` and the kind's fields."""

    def __init__(self, events=None, meta=None, created=None):
        self.events: list = list(events or [])
        self.meta: dict = dict(meta or {})
        self.created: str = created or _now_iso()
        self.warnings: list = []      # filled by load: [(line number, message)]
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
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise TraceFormatError(f"{path}: cannot read trace: {e.strerror or e}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw[:e.start].count(b"\n") + 1
            raise TraceFormatError(f"{path}: line {line}: not UTF-8 text") from None
        return cls._parse(text, str(path))

    @classmethod
    def loads(cls, text: str, name: str = "<string>") -> "Trace":
        """Parse a trace from the text of a JSON Lines file."""
        return cls._parse(text, name)

    @classmethod
    def _parse(cls, text: str, name: str) -> "Trace":
        def fail(line, msg):
            raise TraceFormatError(f"{name}: line {line}: {msg}")

        if not text:
            raise TraceFormatError(f"{name}: empty file (no header line)")
        lines = text.split("\n")
        complete = lines[-1] == ""
        if complete:
            lines.pop()
        header = _json_line(lines[0], 1, len(lines) == 1 and not complete, fail)
        if not isinstance(header, dict):
            fail(1, "header is not a JSON object")
        if header.get("format") != FORMAT:
            fail(1, f"not a glassgrad trace: format is {header.get('format')!r}, expected {FORMAT!r}")
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            fail(1, f"bad format version {version!r}")
        if version > VERSION:
            fail(1, f"trace format version {version} is newer than this glassgrad reads "
                    f"(version {VERSION}); upgrade glassgrad to open it")
        meta = header.get("meta", {})
        if not isinstance(meta, dict):
            fail(1, "header 'meta' is not a JSON object")
        body = lines[1:]
        last = len(body) - 1
        events = _scan_lines(body)
        if events is None:   # one json.loads per line, so a bad line is found where it is
            events = [_json_line(s, i + 2, i == last and not complete, fail) for i, s in enumerate(body)]
        if body and not complete and not body[-1].rstrip().endswith("}"):
            fail(len(body) + 1, "truncated: the last line is incomplete")
        trace = cls(events, meta, header.get("created"))
        _validate(events, trace.warnings, fail)
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


_scan_once = json.scanner.make_scanner(json.decoder.JSONDecoder())


def _scan_lines(lines):
    """Each line's one JSON value, or None when some line is anything but exactly one value
    with no surrounding whitespace (then per-line ``json.loads`` says what is wrong, and where).
    The scanner is what ``json.loads`` runs, without its per-call overhead."""
    scan = _scan_once
    out = []
    append = out.append
    try:
        for s in lines:
            value, end = scan(s, 0)
            if end != len(s):
                return None
            append(value)
    except (StopIteration, ValueError):
        return None
    return out


def _json_line(s, line, maybe_truncated, fail):
    if not s.strip():
        fail(line, "blank line (expected a JSON object)")
    try:
        return json.loads(s)
    except ValueError as e:
        if maybe_truncated:
            fail(line, f"truncated: the last line is incomplete ({e.msg}, column {e.colno})")
        fail(line, f"bad JSON: {e.msg} (column {e.colno})")


def _validate(events, warnings, fail):
    prev = None
    phases = PHASES
    for i, e in enumerate(events):
        line = i + 2
        if type(e) is not dict:
            fail(line, "event is not a JSON object")
        seq = e.get("seq")
        if type(seq) is not int:
            fail(line, "'seq' is not an integer" if "seq" in e else "missing 'seq'")
        if prev is not None and seq <= prev:
            fail(line, f"seq {seq} does not increase (previous event has seq {prev})")
        prev = seq
        kind = e.get("kind")
        if type(kind) is not str:
            fail(line, "missing 'kind'" if "kind" not in e else "'kind' is not a string")
        ph = e.get("phase")
        if ph not in phases:
            fail(line, "missing 'phase'" if "phase" not in e else
                 f"unknown phase {ph!r} (expected one of {', '.join(phases)})")
        t = e.get("t")
        if type(t) not in (int, float):
            fail(line, "missing 't'" if "t" not in e else "'t' is not a number")
        req = _MEMORY_FIELDS.get(kind)
        if req is not None:
            for field, typ in req:
                v = e.get(field)
                if type(v) is not typ:
                    fail(line, f"{kind} event: missing '{field}'" if field not in e else
                         f"{kind} event: '{field}' must be {'an integer' if typ is int else 'a string'}")
            if e["bytes"] < 0:
                fail(line, f"{kind} event: negative bytes")
        elif kind == "node_free":
            if type(e.get("node")) is not int:
                fail(line, "node_free event: missing 'node'" if "node" not in e else
                     "node_free event: 'node' must be an integer")
        elif kind not in KINDS:
            warnings.append((line, f"unknown event kind {kind!r}"))
        if "reserved" in e and kind in _RESERVED_KINDS:
            r = e["reserved"]
            if type(r) is not int:
                fail(line, f"{kind} event: 'reserved' must be an integer")
            if r < 0:
                fail(line, f"{kind} event: negative reserved")


def mark(text: str, **fields) -> None:
    """Add a lesson mark to every active recorder (a no-op when none records)."""
    if _events.active:
        _events.emit("mark", text=text, **fields)


class record:
    """Context manager: ``with engine.record() as trace:`` records events into ``trace``.

    Keyword arguments become ``trace.meta``. The live bytes per device and category at
    the start, and the allocator model's reserved bytes, go to
    ``meta["memory_at_start"]`` so a replay starts from them.
    """

    def __init__(self, trace: Trace | None = None, **meta):
        self.trace = trace if trace is not None else Trace(meta=meta)

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
        return self.trace

    def __exit__(self, *exc):
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
        if n.name() == "AccumulateGrad" and getattr(n, "variable", None) is not None:
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
