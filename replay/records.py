"""What a trace says about the checkpoint files it saved and loaded: records and storages.

``Files(events)`` (or ``Files.from_model(model)``) lists a trace's ``save`` and ``load``
events as :class:`FileEvent` values: the archive's records in file order, each storage
record with its dtype, element count, bytes and the tensors that view it, and for a
load which records it read and which storages it rebuilt. The app's records panel and
the lessons read this one description (the engine writes the fields, NOTE [ Records in
save and load events ] in engine/serialization/trace_fields.py).

NOTE [ Files in a trace ]
1. A file event is a ``save`` or ``load`` event. One from a trace written before events
   carried ``records`` has no records and no storages (``described`` is False); its
   path, bytes and counts still read.
2. A trace is data from outside: a field of the wrong type reads as absent (0, "",
   an empty list), never as an error, so the app still opens a damaged trace.
3. At step i the panel shows the last file event at or before i (:meth:`Files.at`);
   before the first one, none.
4. ``extend`` folds in only the events it has not seen, so a streaming run costs one
   pass over its events in all.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

FILE_KINDS = ("save", "load")


@dataclass(frozen=True)
class Record:
    """One record of the zip archive: ``name`` (``tiny/data/0``), ``bytes``, where its data starts."""

    name: str
    bytes: int
    data_offset: int
    read: bool | None = None       # a load: did it read this record; a save: None

    @property
    def short(self) -> str:
        """The name without the archive's top-level folder (``data/0``)."""
        return self.name.split("/", 1)[1] if "/" in self.name else self.name


@dataclass(frozen=True)
class View:
    """A tensor of the saved object that uses a storage record, at an offset in elements."""

    name: str
    tensor: int | None
    shape: tuple
    offset: int
    stride: tuple
    parameter: bool = False


@dataclass(frozen=True)
class StorageRecord:
    """A ``data/<key>`` record: one storage, written once however many tensors view it."""

    key: str
    record: str
    storage_type: str
    dtype: str
    numel: int
    bytes: int
    location: str
    storage: int | None            # the engine's storage id (a load: the storage it rebuilt)
    device: str
    views: tuple
    copy: bool = False             # a view written as a contiguous copy of its own


@dataclass(frozen=True)
class FileEvent:
    """A ``save`` or ``load`` event (at event index ``index``) with its records and storages."""

    index: int
    kind: str
    path: str | None
    bytes: int
    tensors: int
    n_storages: int
    records: tuple
    storages: tuple
    described: bool

    @property
    def file_name(self) -> str:
        if not self.path:
            return "a file object"
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        """The archive's top-level folder (``tiny``): the first part its record names share, or ""."""
        tops = {r.name.split("/", 1)[0] if "/" in r.name else "" for r in self.records}
        return tops.pop() if len(tops) == 1 else ""

    @property
    def read(self) -> tuple:
        """The records a load read (a save: all of them, it wrote them)."""
        return tuple(r for r in self.records if r.read is not False)

    def storage_of_record(self, name: str) -> StorageRecord | None:
        for s in self.storages:
            if s.record == name:
                return s
        return None


def file_event(index: int, ev: dict) -> FileEvent | None:
    """The :class:`FileEvent` of a ``save``/``load`` event (rules 1 and 2); None for any other kind."""
    kind = ev.get("kind")
    if kind not in FILE_KINDS:
        return None
    recs = _list(ev.get("records"))
    stos = _list(ev.get("storage_records"))
    records = tuple(Record(_str(r.get("name")), _int(r.get("bytes")), _int(r.get("data_offset")),
                           r.get("read") if isinstance(r.get("read"), bool) and kind == "load" else None)
                    for r in recs if isinstance(r, dict))
    storages = tuple(_storage(s) for s in stos if isinstance(s, dict))
    path = ev.get("path")
    return FileEvent(index, kind, path if isinstance(path, str) else None, _int(ev.get("bytes")),
                     _int(ev.get("tensors")), _int(ev.get("storages")), records, storages,
                     "records" in ev and "storage_records" in ev)


def _storage(s: dict) -> StorageRecord:
    views = tuple(View(_str(v.get("name")), _opt_int(v.get("tensor")), _ints(v.get("shape")),
                       _int(v.get("offset")), _ints(v.get("stride")), v.get("parameter") is True)
                  for v in _list(s.get("views")) if isinstance(v, dict))
    return StorageRecord(_str(s.get("key")), _str(s.get("record")), _str(s.get("storage_type")),
                         _str(s.get("dtype")), _int(s.get("numel")), _int(s.get("bytes")),
                         _str(s.get("location")), _opt_int(s.get("storage")), _str(s.get("device")),
                         views, s.get("copy") is True)


class Files:
    """The file events of a trace, in order, with the lookup of NOTE [ Files in a trace ] rule 3."""

    def __init__(self, events=()):
        self.events: list = []     # FileEvent, in trace order
        self._indices: list = []
        self._seen = 0
        self.extend(events)

    @classmethod
    def from_model(cls, model) -> Files:
        return cls(model.events)

    def extend(self, events) -> None:
        """Fold in the events that follow those seen so far."""
        for e in events:
            fe = file_event(self._seen, e) if isinstance(e, dict) else None
            if fe is not None:
                self.events.append(fe)
                self._indices.append(self._seen)
            self._seen += 1

    def follow(self, all_events: list) -> None:
        """Catch up with a growing event list (rule 4)."""
        if len(all_events) > self._seen:
            self.extend(all_events[self._seen:])

    def __len__(self) -> int:
        return len(self.events)

    def at(self, i: int) -> FileEvent | None:
        """The last file event at or before event index ``i`` (rule 3)."""
        k = bisect.bisect_right(self._indices, i) - 1
        return self.events[k] if k >= 0 else None

    def position(self, fe: FileEvent) -> int:
        """1-based place of ``fe`` among the trace's file events."""
        return bisect.bisect_left(self._indices, fe.index) + 1


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _str(v) -> str:
    return v if isinstance(v, str) else ""


def _int(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _opt_int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _ints(v) -> tuple:
    return tuple(_int(x) for x in _list(v))
