"""The one validator of a loaded trace: every documented field of every kind, with its line number.

NOTE [ Validating a trace field by field ]
1. Every event carries ``seq`` (an integer greater than the previous event's), ``t`` (a
   finite number), ``phase`` (one of PHASES) and ``kind`` (a string).
2. Each kind of docs/trace-format.md has a row in ``SPEC``: its fields and what each
   must be. Every field is required but those of ``OPTIONAL``, which traces written
   before they existed lack (``reserved``; ``pool_used``/``pool_total``, which only a
   CUDA run's ``alloc``/``free`` carry; ``records`` and ``storage_records`` of
   ``save``/``load``). Extra fields are allowed (a newer glassgrad may add some).
3. Ids and byte counts are integers in [0, 2**63); ``tensor_info``, ``node_info`` and
   an op's inputs are checked inside too. A ``mark``'s extra fields, a node's ``attrs``
   and ``meta`` may be any JSON, nested at most :data:`MAX_DEPTH` deep.
4. A reader builds a row or a colour per device, category and kind, so their number is
   bounded: ``category`` and ``old``/``new`` are the six memory categories, at most
   :data:`MAX_DEVICES` devices and :data:`MAX_KINDS` kinds appear in one trace.
5. An unknown kind is kept, with a warning; only its common fields are checked.
6. Each failure is ``fail(line, "<kind> event: field '<f>' must be <what>, got <value>")``;
   the value is shown as ``repr`` cut to 60 characters, so no control character of it
   reaches a terminal.
"""
from __future__ import annotations

import math

PHASES = ("forward", "backward", "recompute", "optimizer")
CATEGORIES = ("parameter", "gradient", "activation", "optimizer", "input", "other")
MAX_DEVICES = 64
MAX_KINDS = 256
MAX_DEPTH = 32
_BIG = 1 << 63


class _Bad(Exception):
    """(what the value must be, the value) raised by a field check."""


def _show(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


# ---- field checks: each returns None or raises _Bad(what) ---------------------------------------

def _count(v):
    if type(v) is not int or not 0 <= v < _BIG:
        raise _Bad("a non-negative integer")


def _count_or_none(v):
    if v is not None and (type(v) is not int or not 0 <= v < _BIG):
        raise _Bad("a non-negative integer or null")


def _int(v):
    if type(v) is not int or not -_BIG <= v < _BIG:
        raise _Bad("an integer")


def _str(v):
    if type(v) is not str:
        raise _Bad("a string")


def _str_or_none(v):
    if v is not None and type(v) is not str:
        raise _Bad("a string or null")


def _finite_or_none(v):
    if v is not None and (type(v) not in (int, float) or v != v or v in (float("inf"), float("-inf"))):
        raise _Bad("a finite number or null")


def _counts(v):
    if type(v) is not list or len(v) > 1024 or any(type(c) is not int or not 0 <= c < _BIG for c in v):
        raise _Bad("a list of at most 1024 non-negative integers")


def _bool(v):
    if type(v) is not bool:
        raise _Bad("true or false")


def _category(v):
    if v not in CATEGORIES or type(v) is not str:
        raise _Bad(f"one of {', '.join(CATEGORIES)}")


def _device(v):
    if type(v) is not str or not 0 < len(v) <= 32:
        raise _Bad("a device name (a string such as \"cpu\" or \"cuda:0\")")


def _ids(v):
    if type(v) is not list:
        raise _Bad("a list of non-negative integers")
    for x in v:
        if type(x) is not int or not 0 <= x < _BIG:
            raise _Bad("a list of non-negative integers")


def _shape(v, what):
    if type(v) is not list or len(v) > 64 or any(type(x) is not int or not 0 <= x < _BIG for x in v):
        raise _Bad(f"{what} (a list of at most 64 non-negative integers)")


def _json(v, depth=0):
    """Any JSON value nested at most MAX_DEPTH deep, its integers within 64 bits (rule 3)."""
    if depth > MAX_DEPTH:
        raise _Bad(f"JSON nested at most {MAX_DEPTH} deep")
    t = type(v)
    if t is dict or t is list:
        for x in (v.values() if t is dict else v):
            tx = type(x)
            if tx is dict or tx is list:
                _json(x, depth + 1)
            elif tx is int and not -_BIG <= x < _BIG:
                raise _Bad("JSON whose integers fit in 64 bits")
    elif t is int and not -_BIG <= v < _BIG:
        raise _Bad("JSON whose integers fit in 64 bits")


_TENSOR = (("id", _count), ("storage", _count), ("dtype", _str), ("bytes", _count), ("storage_bytes", _count),
           ("device", _device), ("requires_grad", _bool), ("leaf", _bool), ("grad_fn", _count_or_none),
           ("name", _str_or_none))


def _tensor_info(v, devices=None):
    if type(v) is not dict:
        raise _Bad("a tensor_info object")
    for f, check in _TENSOR:
        if f not in v:
            raise _Bad(f"a tensor_info object with '{f}'")
        try:
            check(v[f])
        except _Bad as e:
            raise _Bad(f"a tensor_info whose '{f}' is {e}, got {_show(v[f])}") from None
    _shape(v.get("shape"), "a tensor_info with a 'shape'")
    if devices is not None:
        devices.add(v["device"])


def _tensor_info_or_none(v, devices=None):
    if v is not None:
        _tensor_info(v, devices)


def _inputs(v, devices=None):
    if type(v) is not list:
        raise _Bad("a list of tensor_info objects")
    for x in v:
        if type(x) is dict and len(x) == 1 and "scalar" in x:
            if type(x["scalar"]) is not str:
                raise _Bad("a list whose scalars are strings")
        else:
            _tensor_info(x, devices)


_SAVED = (("name", _str), ("storage", _count_or_none), ("bytes", _count), ("dtype", _str), ("is_output", _bool),
          ("packed", _bool))


def _node_info(v, devices=None):
    if v is None:
        return
    if type(v) is not dict:
        raise _Bad("a node_info object or null")
    for f in ("id", "name", "next", "saved", "attrs"):
        if f not in v:
            raise _Bad(f"a node_info object with '{f}'")
    if type(v["id"]) is not int or not 0 <= v["id"] < _BIG:
        _fail_in("id", "a non-negative integer", v["id"])
    if type(v["name"]) is not str:
        _fail_in("name", "a string", v["name"])
    nxt = v["next"]
    if type(nxt) is not list or any(type(x) is not list or len(x) != 3 or (x[0] is not None and (
            type(x[0]) is not int or not 0 <= x[0] < _BIG)) or type(x[1]) is not int
            or (x[2] is not None and type(x[2]) is not str) for x in nxt):
        _fail_in("next", "a list of [node id or null, input_nr, node name or null]", nxt)
    saved = v["saved"]
    if type(saved) is not list:
        _fail_in("saved", "a list of objects", saved)
    for s in saved:
        if type(s) is not dict:
            _fail_in("saved", "a list of objects", s)
        for f, check in _SAVED:
            try:
                check(s.get(f, _Missing))
            except _Bad as e:
                _fail_in(f"saved.{f}", str(e), s.get(f, _Missing))
        _shape(s.get("shape"), "a saved tensor with a 'shape'")
    if type(v["attrs"]) is not dict:
        _fail_in("attrs", "an object", v["attrs"])
    _json(v["attrs"])


class _MissingType:
    def __repr__(self):
        return "nothing"


_Missing = _MissingType()


def _fail_in(f, what, got):
    raise _Bad(f"a node_info whose '{f}' is {what}, got {_show(got)}")


# kind -> ((field, check), ...) (rule 2). Checks that take ``devices`` count the devices met.
SPEC = {
    "alloc": (("storage", _count), ("bytes", _count), ("device", _device), ("category", _category)),
    "free": (("storage", _count), ("bytes", _count), ("device", _device), ("category", _category)),
    "category": (("storage", _count), ("bytes", _count), ("device", _device), ("old", _category),
                 ("new", _category)),
    "empty_cache": (("device", _device), ("bytes", _count)),
    "op": (("op", _str_or_none), ("inputs", _inputs), ("output", _tensor_info_or_none), ("node", _node_info),
           ("file", _str_or_none), ("line", _count_or_none), ("region", _count_or_none)),
    "leaf": (("node", _count), ("name", _str), ("tensor", _tensor_info)),
    "pack": (("node", _count), ("name", _str), ("storage", _count_or_none), ("bytes", _count), ("hooked", _bool)),
    "unpack": (("node", _count), ("name", _str), ("storage", _count_or_none)),
    "release": (("node", _count), ("name", _str), ("storage", _count_or_none), ("bytes", _count)),
    "node_free": (("node", _count),),
    "backward_begin": (("roots", _ids), ("retain_graph", _bool), ("create_graph", _bool)),
    "backward_end": (("roots", _ids),),
    "execute": (("node", _count), ("name", _str)),
    "accumulate": (("node", _count), ("tensor", _count), ("storage", _count), ("bytes", _count)),
    "hook": (("node", _count_or_none), ("hook_kind", _str), ("hook", _str)),
    "version": (("tensor", _count), ("storage", _count), ("version", _count), ("op", _str)),
    "optimizer_step": (("optimizer", _str), ("params", _count), ("step", _count)),
    "checkpoint_enter": (("region", _count), ("fn", _str)),
    "checkpoint_exit": (("region", _count),),
    "checkpoint_drop": (("region", _count), ("node", _count_or_none), ("name", _str), ("storage", _count_or_none),
                        ("bytes", _count), ("kept", _bool)),
    "recompute_begin": (("region", _count),),
    "recompute_end": (("region", _count),),
    "save": (("path", _str_or_none), ("bytes", _count), ("tensors", _count), ("storages", _count)),
    "load": (("path", _str_or_none), ("bytes", _count), ("tensors", _count), ("storages", _count)),
    "mark": (("text", _str),),
    "compile_stage": (("stage", _str), ("nodes", _count), ("text", _str)),
    "values": (("tensor", _count), ("storage", _count), ("numel", _count), ("grad", _bool)),
}


def _objects(v):
    if type(v) is not list or any(type(x) is not dict for x in v):
        raise _Bad("a list of objects")
    _json(v, 1)


# kind -> optional fields: checked when present (rule 2; NOTE [ Records in save and load events ])
OPTIONAL = {
    "alloc": (("reserved", _count), ("pool_used", _count), ("pool_total", _count)),   # NOTE [ CuPy pool figures in events ]
    "free": (("reserved", _count), ("pool_used", _count), ("pool_total", _count)),
    "empty_cache": (("reserved", _count),),
    "op": (("module", _str_or_none),),
    "values": tuple((f, _finite_or_none) for f in ("min", "max", "mean", "std", "norm", "lo", "hi"))
    + (("nan", _count), ("inf", _count), ("hist", _counts), ("refused", _str), ("leaf", _count)),   # NOTE [ Value capture ]      # NOTE [ Module paths ] in engine/events.py (older traces lack it)
    "save": (("records", _objects), ("storage_records", _objects)),
    "load": (("records", _objects), ("storage_records", _objects)),
}
_WITH_DEVICES = {_inputs, _tensor_info, _tensor_info_or_none}
RESERVED_KINDS = ("alloc", "free", "empty_cache")   # kinds whose optional "reserved" is checked
_COMMON = frozenset(("seq", "t", "phase", "kind"))


def validate(events, warnings, fail, state: dict | None = None, first: int = 0) -> None:
    """Check every event (NOTE [ Validating a trace field by field ]); ``fail(line, msg)`` raises.

    A file read in pieces passes the same ``state`` dict with each piece and ``first``, the
    number of events before it, so seq order, devices and kinds are checked across pieces."""
    state = {} if state is None else state
    prev = state.get("prev")
    devices: set = state.setdefault("devices", set())
    kinds: set = state.setdefault("kinds", set())
    spec = SPEC
    for i, e in enumerate(events, first):
        line = i + 2
        if type(e) is not dict:
            fail(line, "event is not a JSON object")
        seq = e.get("seq")
        if type(seq) is not int or not -_BIG <= seq < _BIG:
            fail(line, "missing 'seq'" if "seq" not in e else f"field 'seq' must be an integer, got {_show(seq)}")
        if prev is not None and seq <= prev:
            fail(line, f"seq {seq} does not increase (previous event has seq {prev})")
        prev = seq
        kind = e.get("kind")
        if type(kind) is not str:
            fail(line, "missing 'kind'" if "kind" not in e else f"field 'kind' must be a string, got {_show(kind)}")
        ph = e.get("phase")
        if ph not in PHASES:
            fail(line, "missing 'phase'" if "phase" not in e else
                 f"unknown phase {_show(ph)} (expected one of {', '.join(PHASES)})")
        t = e.get("t")
        if type(t) not in (int, float) or not math.isfinite(t):
            fail(line, "missing 't'" if "t" not in e else f"field 't' must be a finite number, got {_show(t)}")
        if kind not in kinds:
            kinds.add(kind)
            if len(kinds) > MAX_KINDS:
                fail(line, f"more than {MAX_KINDS} distinct event kinds; a glassgrad trace has a few dozen")
        fields = spec.get(kind)
        if fields is None:
            warnings.append((line, f"unknown event kind {_show(kind)}"))
            continue
        for f, check in fields:
            if f not in e:
                fail(line, f"{kind} event: missing '{f}'")
            try:
                if check in _WITH_DEVICES:
                    check(e[f], devices)
                else:
                    check(e[f])
            except _Bad as b:
                what = str(b)
                fail(line, f"{kind} event: field '{f}' must be {what}" +
                     ("" if ", got " in what else f", got {_show(e[f])}"))
        for f, check in OPTIONAL.get(kind, ()):
            if f in e:
                try:
                    check(e[f])
                except _Bad as b:
                    what = str(b)
                    fail(line, f"{kind} event: field '{f}' must be {what}" +
                         ("" if ", got " in what else f", got {_show(e[f])}"))
        if kind == "mark" or kind == "compile_stage":
            try:
                _json(e)
            except _Bad as b:
                fail(line, f"{kind} event: fields must be {b}")
        dev = e.get("device") if kind in RESERVED_KINDS or kind == "category" else None
        if dev is not None:
            devices.add(dev)
        if len(devices) > MAX_DEVICES:
            fail(line, f"more than {MAX_DEVICES} distinct devices; a trace names a few (\"cpu\", \"cuda:0\", ...)")
    state["prev"] = prev


def validate_meta(meta, fail) -> None:
    """The header's ``meta``: any JSON object (rule 3); ``memory_at_start`` as replay reads it."""
    if type(meta) is not dict:
        fail(1, "header 'meta' is not a JSON object")
    try:
        _json(meta)
    except _Bad as b:
        fail(1, f"header 'meta' must be {b}")
    start = meta.get("memory_at_start", {})
    if type(start) is not dict or len(start) > MAX_DEVICES:
        fail(1, f"header 'meta.memory_at_start' must be an object of at most {MAX_DEVICES} devices")
    for dev, m in start.items():
        where = f"header 'meta.memory_at_start' device {_show(dev)}"
        if type(m) is not dict:
            fail(1, f"{where} must be an object")
        for f in ("allocated", "reserved"):
            if f in m and (type(m[f]) is not int or not 0 <= m[f] < _BIG):
                fail(1, f"{where}: field '{f}' must be a non-negative integer, got {_show(m[f])}")
        cats = m.get("by_category", {})
        if type(cats) is not dict or any(c not in CATEGORIES or type(b) is not int or not -_BIG <= b < _BIG
                                         for c, b in cats.items()):
            fail(1, f"{where}: field 'by_category' must map the memory categories to integers, got {_show(cats)}")
