"""``engine.save`` / ``engine.load``: checkpoints in PyTorch's own zip format.

A glassgrad file is a PyTorch file: ``torch.load(f, weights_only=True)`` reads it and
``engine.load`` reads ``torch.save``'s. docs/checkpoint-format.md describes the format.

NOTE [ Atomic save ]
1. ``save`` to a path writes a temporary file next to the target (same directory,
   so the same file system), flushes and fsyncs it, then ``os.replace``s it onto the
   target: a reader sees the old file or the new one, never half of one.
2. If anything fails before the rename (an unsavable object, a full disk, a crash),
   the temporary file is removed and the old file is untouched.
3. The object is pickled before any file is opened, so a refused type never
   touches the disk. A file object is written in place (no atomicity possible).
4. The temporary file's name says it is glassgrad's and which process wrote it; before
   writing, ``save`` removes the temporary files earlier saves into the same folder left
   when they were killed (NOTE [ Files from outside ] in files.py, rule 3).
5. ``load`` drops the loader's tables (its allow-list holds the loader's own bound
   methods, a reference cycle) before it returns, so a loaded storage is freed, with
   its ``free`` event, the moment the last tensor on it dies, not at the next garbage
   collection.
"""
from __future__ import annotations

import os
import sys

from .. import events as _events
from . import trace_fields as _trace_fields
from .archive import ArchiveReader, ArchiveWriter, folder_name
from .files import read_object, read_path, remove_stale, temp_name
from .formats import ALIGNMENT, FILE_VERSION, FORMAT_VERSION, LEGACY_MAGIC, MAX_FILE_VERSION, ZIP_MAGIC
from .pickler import CheckpointPickler
from .restore import Loader
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals  # noqa: F401
from .unpickler import AllowListUnpickler

__all__ = ["save", "load", "inspect_archive"]

DEFAULT_PROTOCOL = 2


def save(obj, f, pickle_protocol: int = DEFAULT_PROTOCOL) -> None:
    """Write ``obj`` (tensors, Parameters, state_dicts, nested containers) to ``f`` (path or binary file)."""
    pickler = CheckpointPickler(pickle_protocol)
    pkl, records = pickler.dumps(obj)                        # NOTE [ Atomic save ] rule 3
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        writer = _save_to_path(path, pkl, records)
    else:
        if not callable(getattr(f, "write", None)):
            raise AttributeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")
        path = getattr(f, "name", None)
        path = path if isinstance(path, str) else None
        writer = _write_archive(f, "archive", pkl, records)
    if _events.active:                                       # NOTE [ Records in save and load events ]
        _events.emit("save", path=path, bytes=writer.pos, tensors=pickler.tensors, storages=len(records),
                     **_trace_fields.saved(obj, writer, pickler))


def _save_to_path(path: str, pkl: bytes, records) -> ArchiveWriter:
    target = os.path.realpath(path)
    parent = os.path.dirname(target) or "."
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {os.path.dirname(os.path.abspath(path))} does not exist.")
    remove_stale(parent)                                     # NOTE [ Atomic save ] rule 4
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            w = _write_archive(fh, folder_name(path), pkl, records)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)                              # NOTE [ Atomic save ] rule 1
    except BaseException:
        try:
            os.unlink(tmp)                                   # rule 2
        except OSError:
            pass
        raise
    return w


def _write_archive(fh, folder: str, pkl: bytes, records) -> ArchiveWriter:
    """Write the records in the order torch.save does; returns the writer (``.pos``: the archive's size)."""
    w = ArchiveWriter(fh, folder)
    w.write_record("data.pkl", pkl)
    w.write_record(".format_version", FORMAT_VERSION)
    w.write_record(".storage_alignment", str(ALIGNMENT).encode())
    w.write_record("byteorder", sys.byteorder.encode())
    for rec in records:
        w.write_record(f"data/{rec.key}", rec.tobytes())
    w.write_record("version", FILE_VERSION)
    w.write_record(".data/serialization_id", f"{int.from_bytes(os.urandom(17), 'big') % 10**40:040d}".encode())
    w.finish()
    return w


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = True, mmap=None):
    """Read a checkpoint written by ``engine.save`` or ``torch.save`` without running code from it.

    ``map_location``: None, a str, a device, a dict of location tags, or a callable
    ``(storage, location)``, with PyTorch's meaning. ``weights_only`` is accepted for
    compatibility; glassgrad always loads with its allow-list (never arbitrary pickles).
    ``mmap`` is accepted and ignored (the file is read into memory).
    """
    from ..backend.device import device
    if pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified: glassgrad "
                           "loads checkpoints only with its own allow-list unpickler")
    if map_location is not None and not isinstance(map_location, (str, dict, device)) and not callable(map_location):
        raise TypeError(f"map_location should be a str, a device, a dict or a callable, "
                        f"not {type(map_location).__name__}")
    data, path = _read_all(f)
    _check_kind(data)
    reader = ArchiveReader(data)
    byteorder = "little"
    if reader.has("byteorder"):
        byteorder = reader.read("byteorder").decode("ascii", "replace").strip()
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"PytorchStreamReader: unknown byteorder record {byteorder!r}")
    if reader.has("version"):
        v = reader.read("version").decode("ascii", "replace").strip()
        if not v.isdigit() or not 1 <= int(v) <= MAX_FILE_VERSION:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: unsupported file format "
                               f"version {v!r} (glassgrad reads versions 1 to {MAX_FILE_VERSION})")
    loader = Loader(reader, map_location, byteorder)
    try:
        obj = AllowListUnpickler(reader.read("data.pkl"), loader.globals, loader.persistent_load,
                                 allow_modules=weights_only is False).load()    # NOTE [ Saving a whole module ]
        storages = len(loader.storages)
        fields = _trace_fields.loaded(obj, reader, loader) if _events.active else {}
    finally:
        loader.close()                                       # NOTE [ Atomic save ] rule 5
    if _events.active:
        _events.emit("load", path=path, bytes=len(data), tensors=loader.tensors, storages=storages, **fields)
    return obj


def _read_all(f):
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        return read_path(path), path
    if not callable(getattr(f, "read", None)):
        raise AttributeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'read'")
    name = getattr(f, "name", None)
    return read_object(f), name if isinstance(name, str) else None


def _check_kind(data: bytes) -> None:
    if data[:4] == ZIP_MAGIC:
        return
    if data.startswith(LEGACY_MAGIC) or data[:1] == b"\x80":
        raise RuntimeError(
            "this file uses PyTorch's legacy serialization format (the pre-1.6 format that is a chain of pickles, "
            "not a zip archive); glassgrad reads only the zip format. Convert it once with PyTorch: "
            "torch.save(torch.load(path, weights_only=True), path) writes the zip format "
            "(the default since PyTorch 1.6).")
    what = "the file is empty" if not data else f"the file begins with {data[:8]!r}, not a zip header b'PK\\x03\\x04'"
    raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory "
                       f"({what}). This is not a checkpoint written by torch.save or engine.save, or it is corrupted.")


def inspect_archive(f) -> dict:
    """The records of a checkpoint without unpickling it: folder, [{name, size, data_offset, crc32}], data.pkl."""
    data, _ = _read_all(f)
    _check_kind(data)
    reader = ArchiveReader(data)
    return {"folder": reader.prefix.rstrip("/"), "records": reader.describe(), "data.pkl": reader.read("data.pkl"),
            "bytes": len(data)}

