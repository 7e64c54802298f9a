"""A trace's index: its checks done once, a few numbers per event in columns, and each line's offset.

NOTE [ Trace index ]
1. ``Trace.open(path)`` reads a JSON Lines trace once, in pieces of 1 MiB (memory stays
   bounded), with every check ``Trace.load`` makes (NOTE [ Trace validation ]; one difference:
   the first problem in file order is the one reported). What it keeps is the *index*: the
   header's ``meta`` and ``created``, the warnings, whether the text is plain
   (NOTE [ Text from a trace ] rule 5), each event line's byte offset, and per event its kind,
   phase, node, storage, bytes, device, category (a ``category`` event's ``old``), new category
   and reserved bytes (-1 where the event has none).
2. The index is saved beside the trace as ``<trace>.ggidx.npz``; where that directory cannot
   be written, in ``$XDG_CACHE_HOME/glassgrad/index/`` (``~/.cache``) under a name made from
   the trace's absolute path; where neither can, it is kept in memory only.
3. An index names the trace it was made from: its size, ``st_mtime_ns`` and a SHA-256 of its
   first and of its last 64 KiB, and the index and trace format versions. Opening compares all
   of them with the file as it is now; any difference and the index is rebuilt, never trusted.
4. Nothing in an index runs code: ``numpy.load(allow_pickle=False)`` (an object array is
   refused) and a JSON header. An index that cannot be read, holds the wrong arrays, or whose
   arrays disagree with each other (lengths, offsets inside the file and increasing, codes
   inside their tables) is rebuilt, with a note in ``trace.notes`` saying why.
5. The events of an opened trace are a :class:`LazyEvents`: event i is parsed from its line
   when asked for (``os.pread`` at its offset, a few recent ones cached), made safe for a
   terminal unless the trace is plain, and a line that no longer parses (the file changed
   since it was opened) raises TraceFormatError.
6. A trace another process is still writing (``glassgrad run``'s ``OUT.part``) is followed by a
   :class:`LineTail`: it reads the file in order and hands back only complete lines (one that
   ends in a newline: a last line the writer is still writing is read once it is whole), each
   parsed once, with its byte offset, as :class:`Lines`.
7. Their reader folds the parsed events into a model and drops them: a :class:`FollowedEvents`
   keeps each line's offset, its kind code and, for ``alloc``/``free``/``category`` events, the
   event index and storage (9 bytes an event, 16 more a memory event), never the events.
   Event i is read back from its line as in rule 5, into a cache of at most
   :data:`FOLLOW_CACHE` events, the least recently asked for leaving first; the newest few
   folded in are put there as they arrive (a followed screen shows the newest event).
8. A followed file may be removed once read (the run finished and wrote its trace): its
   events stay readable from the descriptor ``hold`` opened.
9. Building can hand each piece's events on as they are checked (``pieces``): a first open
   shows the start of a big trace while the rest is still being read (NOTE [ A first open ]
   in tui/first_open.py). What is handed on passed every check of the lines before it; a
   problem later in the file still fails the build.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from array import array
from collections import OrderedDict
from itertools import accumulate

import numpy as np

from . import trace_lines as _trace
from . import trace_schema as _schema
from .trace_text import plain_json, safe_text, safe_value

INDEX_VERSION = 1
SUFFIX = ".ggidx.npz"
BLOCK = 64 * 1024               # rule 3: bytes hashed at each end of the trace
PIECE = 1024 * 1024             # rule 1: bytes read at a time (a bigger piece only holds more parsed lines at once)
CACHE = 4096                    # rule 5: parsed events kept
FOLLOW_CACHE = 512              # rule 7: parsed events a followed trace keeps
COLUMNS = ("offsets", "kind", "phase", "node", "storage", "nbytes", "device", "cat", "cat2", "reserved")
_INT_COLUMNS = COLUMNS[3:]
_NONE = -1
_scan = _trace._scan_once


class TraceIndex:
    """The index of one trace file (rule 1): ``header`` (a dict) and one NumPy array per column."""

    def __init__(self, header: dict, arrays: dict):
        self.header = header
        for name in COLUMNS:
            setattr(self, name, arrays[name])
        self.kinds: list = header["kinds"]
        self.devices: list = header["devices"]
        self.stored_at = None          # where it was saved or read (rule 2), None when in memory only

    def __len__(self):
        return len(self.kind)

    def codes(self, *kinds) -> list:
        """The kind codes of ``kinds`` this trace has."""
        return [k for k, name in enumerate(self.kinds) if name in kinds]


def fingerprint(f, size: int, mtime_ns: int) -> dict:
    """What names a trace file (rule 3)."""
    f.seek(0)
    head = hashlib.sha256(f.read(BLOCK)).hexdigest()
    f.seek(max(0, size - BLOCK))
    tail = hashlib.sha256(f.read(BLOCK)).hexdigest()
    return {"index_version": INDEX_VERSION, "trace_version": _trace.VERSION, "size": size,
            "mtime_ns": mtime_ns, "head": head, "tail": tail}


def sidecar_paths(path) -> list:
    """Where an index of ``path`` may be saved, in order (rule 2)."""
    path = os.path.abspath(path)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:32] + SUFFIX
    return [path + SUFFIX, os.path.join(cache, "glassgrad", "index", name)]


# ---------------------------------------------------------------------- building (rule 1)

def read_header(first: bytes, where: str, fail) -> tuple:
    """(text, meta, created) of a trace's first line, checked (NOTE [ Trace validation ] rule 2)."""
    if not first:
        raise _trace.TraceFormatError(f"{where}: empty file (no header line)")
    try:
        head = first.decode("utf-8")
    except UnicodeDecodeError:
        fail(1, "not UTF-8 text")
    complete = head.endswith("\n")          # a header without a newline is the file's only line
    return (head, *_trace._read_header(head[:-1] if complete else head, not complete, fail))


def build(f, name: str, size: int, progress=None, pieces=None, piece: int | None = None) -> TraceIndex:
    """Read and check the whole trace in ``f`` (a binary file at its start) and index it;
    ``progress(bytes_read, size)`` is called after each piece, and ``pieces(lines)`` with the
    events of each piece once they are checked, as :class:`Lines` (rule 9), ``piece`` bytes a piece."""
    where = safe_text(name)

    def fail(line, msg):
        raise _trace.TraceFormatError(f"{where}: line {line}: {msg}")

    first = f.readline()
    head, meta, created = read_header(first, where, fail)
    cols = {c: array("q") for c in COLUMNS}          # 8 bytes an entry while the file is read
    offsets = cols["offsets"]
    offsets.append(len(first))
    warnings: list = []
    state: dict = {}
    kinds: dict = {}
    devices: dict = {}
    plain = plain_json(head)
    n = 0
    while True:
        lines = f.readlines(piece or PIECE)
        if not lines:
            break
        start = offsets[-1]
        offsets.extend(accumulate((len(s) for s in lines), initial=start))
        del offsets[-len(lines) - 1]
        data = b"".join(lines)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            fail(n + 2 + data[:e.start].count(b"\n"), "not UTF-8 text")
        ends = text.endswith("\n")
        body = text.split("\n")
        if ends:
            body.pop()
        events = _trace._scan_lines(body)
        if events is None:
            last = len(body) - 1
            events = [_trace._json_line(s, n + k + 2, k == last and not ends, fail) for k, s in enumerate(body)]
        if not ends and not body[-1].rstrip().endswith("}"):
            fail(n + len(body) + 1, "truncated: the last line is incomplete")
        _schema.validate(events, warnings, fail, state, n)
        piece_plain = plain_json(text)
        plain = plain and piece_plain
        _columns(events, cols, kinds, devices)
        n += len(events)
        if pieces is not None:
            out = Lines(events, start)
            out.ends = offsets[-len(lines):].tolist()
            out.plain = piece_plain
            pieces(out)
        if progress is not None:
            progress(offsets[-1], size)
    header = {"meta": meta, "created": created, "warnings": [list(w) for w in warnings],
              "plain": n if plain else 0, "n": n, "kinds": list(kinds), "devices": list(devices)}
    arrays = {"offsets": np.asarray(offsets, dtype=np.int64), "kind": np.asarray(cols["kind"], dtype=np.uint8),
              "phase": np.asarray(cols["phase"], dtype=np.int8)}
    for c in _INT_COLUMNS:
        arrays[c] = np.asarray(cols[c], dtype=np.int64)
    return TraceIndex(header, arrays)


_PHASE_CODE = {p: k for k, p in enumerate(_schema.PHASES)}
_CAT_CODE = {c: k for k, c in enumerate(_schema.CATEGORIES)}
_RESERVED = _schema.RESERVED_KINDS


def _columns(events, cols, kinds, devices) -> None:
    kind, phase, node, storage = cols["kind"].append, cols["phase"].append, cols["node"].append, cols["storage"].append
    nbytes, device, cat, cat2 = cols["nbytes"].append, cols["device"].append, cols["cat"].append, cols["cat2"].append
    reserved = cols["reserved"].append
    pc, cc, none = _PHASE_CODE, _CAT_CODE, _NONE
    for e in events:
        k = e["kind"]
        code = kinds.get(k)
        if code is None:
            code = kinds[k] = len(kinds)
        kind(code)
        phase(pc[e["phase"]])
        nd = e.get("node")
        if type(nd) is dict:
            nd = nd.get("id")
        node(nd if type(nd) is int else none)
        s = e.get("storage")
        storage(s if type(s) is int else none)
        b = e.get("bytes")
        nbytes(b if type(b) is int else 0)
        d = e.get("device")
        if type(d) is str:
            dc = devices.get(d)
            if dc is None:
                dc = devices[d] = len(devices)
            device(dc)
        else:
            device(none)
        if k == "category":
            cat(cc.get(e["old"], none))
            cat2(cc.get(e["new"], none))
        else:
            cat(cc.get(e.get("category"), none) if k in ("alloc", "free") else none)
            cat2(none)
        r = e.get("reserved") if k in _RESERVED else None
        reserved(r if type(r) is int else none)


# ---------------------------------------------------------------------- saving and reading (rules 2-4)

def save(index: TraceIndex, paths) -> str | None:
    """Write the index to the first of ``paths`` that can be written (atomically); its path or None."""
    arrays = {c: getattr(index, c) for c in COLUMNS}
    return next((p for p in paths if write_npz(p, index.header, arrays)), None)


def write_npz(path: str, header: dict, arrays: dict) -> bool:
    """``arrays`` and a JSON ``header`` as an ``.npz`` at ``path``, written to a temporary file then
    renamed (a reader never sees half a file); whether it was written."""
    blob = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, header=blob, **arrays)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        return False


class BadIndex(Exception):
    """An index file that is not one this glassgrad wrote for this trace (rule 4); the message says why."""


def read(path: str, mark: dict) -> TraceIndex:
    """The index saved at ``path`` if it names the trace ``mark`` describes (rule 3), else BadIndex."""
    if not looks_like_npz(path):
        raise BadIndex("it is not an index (not a zip archive)")
    try:
        with np.load(path, allow_pickle=False) as z:
            names = set(z.files)
            missing = [c for c in ("header",) + COLUMNS if c not in names]
            if missing:
                raise BadIndex(f"it lacks {', '.join(missing)}")
            arrays = {c: z[c] for c in COLUMNS}
            blob = z["header"]
    except BadIndex:
        raise
    except ValueError as e:
        if "pickle" in str(e):
            raise BadIndex("it holds a pickled object, which is never loaded") from None
        raise BadIndex(f"it cannot be read ({e})") from None
    except Exception as e:  # noqa: BLE001 - a zip that is not one, a truncated member: rebuilt (rule 4)
        raise BadIndex(f"it cannot be read ({type(e).__name__}: {e})") from None
    try:
        if blob.dtype != np.uint8 or blob.ndim != 1:
            raise ValueError
        header = json.loads(blob.tobytes().decode("utf-8"))
        if type(header) is not dict:
            raise ValueError
    except ValueError:
        raise BadIndex("its header is not JSON") from None
    if header.get("mark") != mark:
        raise BadIndex("it was made from another version of the trace")
    _check(header, arrays, mark["size"])
    return TraceIndex(header, arrays)


def _check(header: dict, arrays: dict, size: int) -> None:
    n = header.get("n")
    if type(n) is not int or n < 0:
        raise BadIndex("its header has no event count")
    for key, typ in (("meta", dict), ("kinds", list), ("devices", list), ("warnings", list), ("plain", int)):
        if type(header.get(key)) is not typ:
            raise BadIndex(f"its header has no {key!r}")
    for c in COLUMNS:
        a = arrays[c]
        want = n + 1 if c == "offsets" else n
        if a.ndim != 1 or len(a) != want or a.dtype.kind not in "iu":
            raise BadIndex(f"its column {c!r} has the wrong shape or type")
    off = arrays["offsets"]
    if n and (off[0] <= 0 or off[-1] > size or not bool(np.all(off[1:] > off[:-1]))):
        raise BadIndex("its line offsets do not fit the trace")
    if n and (int(arrays["kind"].max()) >= len(header["kinds"]) or int(arrays["phase"].max()) >= len(_schema.PHASES)
              or int(arrays["phase"].min()) < 0 or int(arrays["device"].max()) >= len(header["devices"])
              or int(arrays["cat"].max()) >= len(_schema.CATEGORIES)
              or int(arrays["cat2"].max()) >= len(_schema.CATEGORIES)):
        raise BadIndex("its codes name kinds, phases, devices or categories it does not list")


def looks_like_npz(path: str) -> bool:
    """Whether the file starts as a zip archive does (an ``.npz``); ``numpy.load`` takes anything else
    for a pickle, which it refuses."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def index_of(path, cache: bool = True, progress=None, pieces=None, piece: int | None = None) -> tuple:
    """(TraceIndex, notes) for the trace at ``path``: read from a sidecar that names it, else built
    (and saved, when ``cache``; ``pieces`` as in :func:`build`)."""
    name = str(path)
    notes: list = []
    try:
        with _trace.open_regular(path) as f:
            st = os.fstat(f.fileno())
            mark = fingerprint(f, st.st_size, st.st_mtime_ns)
            paths = sidecar_paths(path) if cache else []
            for p in paths:
                if os.path.exists(p):
                    try:
                        idx = read(p, mark)
                        idx.stored_at = p
                        return idx, notes
                    except BadIndex as why:
                        if "another version" not in str(why):
                            notes.append(safe_text(f"the index {p} was rebuilt: {why}"))
            f.seek(0)
            idx = build(f, name, st.st_size, progress, pieces, piece)
    except OSError as e:
        raise _trace.TraceFormatError(f"{safe_text(name)}: cannot read trace: {e.strerror or e}") from None
    idx.header["mark"] = mark
    if cache:
        idx.stored_at = save(idx, paths)
        if idx.stored_at is None:
            notes.append("the trace's index could not be saved (no writable place); it is kept in memory")
    return idx, notes


# ---------------------------------------------------------------------- events read when asked for (rule 5)

class LazyEvents:
    """A trace's events as a read-only sequence, each parsed from its line when asked for (rule 5)."""

    def __init__(self, path, index: TraceIndex):
        self.path = str(path)
        self.index = index              # its columns, for readers handed only the events
        self._off = index.offsets
        self._kind, self._kinds = index.kind, index.kinds
        self._n = len(index)
        self._plain = index.header.get("plain", 0)
        self._cache: dict = {}
        self._fd = None

    def __len__(self):
        return self._n

    def __bool__(self):
        return self._n > 0

    def _read(self, lo: int, hi: int) -> bytes:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        a, b = int(self._off[lo]), int(self._off[hi])
        return os.pread(self._fd, b - a, a)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("event index out of range")
        e = self._cache.get(i)
        if e is None:
            e = self._parse(self._read(i, i + 1), i)
            self._keep(i, e)
        else:
            self._hit(i)
        return e

    def _keep(self, i: int, e: dict) -> None:
        """Cache a parsed event: a saved trace's cache is emptied when full."""
        if len(self._cache) >= CACHE:
            self._cache.clear()
        self._cache[i] = e

    def _hit(self, i: int) -> None:
        """An event read from the cache (a followed trace keeps its most recent ones)."""

    def _parse(self, raw: bytes, i: int) -> dict:
        try:
            e = _scan(raw.decode("utf-8"), 0)[0]
        except (StopIteration, ValueError, RecursionError):
            e = None
        if type(e) is not dict:
            raise _trace.TraceFormatError(f"{safe_text(self.path)}: line {i + 2}: the trace changed since it was "
                                          "opened; open it again")
        return e if i < self._plain else safe_value(e)

    def of_kinds(self, kinds, start: int = 0) -> list:
        """``[(i, event)]`` for the events at or after ``start`` whose kind is in ``kinds``, found by the
        index's kind column (the others are not read)."""
        codes = [k for k, name in enumerate(self._kinds) if name in kinds]
        if not codes or start >= self._n:
            return []
        found = np.flatnonzero(np.isin(self._kind[max(0, start):], codes)) + max(0, start)
        return list(self.pick(found.tolist()))

    def pick(self, indices):
        """``(i, event)`` for each of the increasing ``indices``, read a block of lines at a time."""
        block, raw, base, hi = 4096, b"", 0, -1
        off = self._off
        for i in indices:
            e = self._cache.get(i)
            if e is None:
                if i >= hi:
                    hi = min(self._n, i + block)
                    raw, base = self._read(i, hi), int(off[i])
                e = self._parse(raw[int(off[i]) - base:int(off[i + 1]) - base], i)
            yield i, e

    def __iter__(self):
        step = 4096
        for lo in range(0, self._n, step):
            hi = min(self._n, lo + step)
            raw = self._read(lo, hi)
            base = int(self._off[lo])
            for i in range(lo, hi):
                e = self._cache.get(i)
                yield e if e is not None else self._parse(raw[int(self._off[i]) - base:int(self._off[i + 1]) - base], i)

    def reader(self) -> LazyEvents:
        """The same events through a file descriptor and a cache of their own (a reader for another
        thread: NOTE [ Lifetimes on a thread ] in tui/lifetimes_work.py)."""
        r = object.__new__(LazyEvents)
        r.path, r._off, r._kind, r._kinds, r.index = self.path, self._off, self._kind, self._kinds, self.index
        r._n, r._plain, r._cache = self._n, self._plain, {}
        r._fd = os.dup(self._fd) if self._fd is not None else None
        return r

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()


def open_trace(cls, path, cache: bool = True, progress=None, pieces=None, piece: int | None = None):
    """A ``cls`` (a Trace) whose events are read from the file as asked for, through its index
    (NOTE [ Trace index ])."""
    idx, notes = index_of(path, cache, progress, pieces, piece)
    h = idx.header
    tr = cls(meta=h["meta"], created=h["created"])
    tr.events = LazyEvents(path, idx)
    tr.warnings = [tuple(w) for w in h["warnings"]]
    tr.plain_events = h["plain"]
    tr.index = idx
    tr.notes = notes
    return tr


# ---------------------------------------------------------------------- a trace still being written (rules 6-8)

class Lines(list):
    """Events parsed from complete lines (rule 6): ``start`` is the first line's byte offset,
    ``ends[k]`` the offset just past line k, and ``plain`` whether their text is known to be
    plain (NOTE [ Text from a trace ] rule 5; a build knows, a tail does not)."""

    def __init__(self, events=(), start: int = 0, ends=(), plain: bool = False):
        super().__init__(events)
        self.start = start
        self.ends = list(ends)
        self.plain = plain


class LineTail:
    """Complete lines of a JSON Lines file another process is appending to (rule 6).

    ``read()`` gives the events of the lines completed since the last call, as :class:`Lines`
    (empty when none); the header line is kept in ``header``, never handed on."""

    def __init__(self, path, piece: int = PIECE):
        self.path = str(path)
        self.header = None
        self.pos = 0               # the offset just past the last complete line handed on
        self._piece = piece
        self._f = None
        self._rest = b""           # the start of a line not yet complete

    def read(self) -> Lines:
        if self._f is None:
            try:
                self._f = open(self.path, "rb")       # noqa: SIM115 - read while the writer appends
            except FileNotFoundError:
                return Lines((), self.pos)
        data = self._f.read(self._piece)
        if not data:
            return Lines((), self.pos)
        data = self._rest + data
        cut = data.rfind(b"\n") + 1
        self._rest = data[cut:]
        raw = data[:cut].split(b"\n")
        raw.pop()
        pos = self.pos
        if self.header is None and raw:
            self.header = json.loads(raw[0])
            pos += len(raw[0]) + 1
            raw = raw[1:]
        text = [s.decode("utf-8") for s in raw]
        events = _trace._scan_lines(text)
        if events is None:
            events = [json.loads(s) for s in text]
        out = Lines(events, pos, accumulate((len(s) + 1 for s in raw), initial=pos))
        out.ends.pop(0)
        self.pos = out.ends[-1] if out.ends else pos
        return out

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


_MEMORY_KINDS = ("alloc", "free", "category")


class FollowedEvents(LazyEvents):
    """The events of a followed trace (rules 7-8): offsets and kinds kept, events read back by offset."""

    def __init__(self, path):
        self.path = str(path)
        self._off = array("q")
        self._kind, self._kinds, self._codes = array("B"), [], {}
        self.mem_at, self.mem_storage = array("q"), array("q")     # rule 7: memory events and their storages
        self._n, self._plain, self.index = 0, 0, None      # a followed file has no index
        self._cache: OrderedDict = OrderedDict()
        self._fd = None

    def add(self, start: int, ends, events) -> None:
        """The events (already folded in) of lines from ``start`` to ``ends[-1]`` (rule 7)."""
        if len(ends) != len(events):
            raise ValueError("one line end an event")
        if not self._n:
            self._off = array("q", [start])
        elif start != self._off[-1]:
            raise ValueError(f"lines from offset {start} do not follow the last one read (offset {self._off[-1]})")
        self._off.extend(ends)
        codes, kind = self._codes, self._kind.append
        for i, e in enumerate(events, self._n):
            k = e.get("kind")
            code = codes.get(k)
            if code is None:
                code = codes[k] = len(self._kinds)
                self._kinds.append(k)
            kind(code)
            if k in _MEMORY_KINDS:
                s = e.get("storage")
                self.mem_at.append(i)
                self.mem_storage.append(s if type(s) is int else _NONE)
        self._n += len(events)
        for i in range(max(self._n - 8, self._n - len(events)), self._n):
            self._keep(i, events[i - self._n])

    def _keep(self, i: int, e: dict) -> None:
        c = self._cache
        c[i] = e
        c.move_to_end(i)
        while len(c) > FOLLOW_CACHE:
            c.popitem(last=False)

    def _hit(self, i: int) -> None:
        self._cache.move_to_end(i)

    def reader(self) -> LazyEvents:
        """The events folded in so far, as a :class:`LazyEvents` of their own (rule 8's descriptor
        shared, when held)."""
        r = super().reader()
        r._off, r._kind, r._kinds = self._off[:self._n + 1], self._kind[:self._n], list(self._kinds)
        return r

    def hold(self) -> None:
        """Open the file now, so its events stay readable once it is removed (rule 8)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
