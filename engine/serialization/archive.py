"""The zip container: an aligned STORED-only writer and a validating reader.

NOTE [ The checkpoint zip layout ]
1. Every record is STORED (never compressed) under one top-level folder; the
   reader ignores that folder's name and takes it from the entry ``<folder>/data.pkl``.
2. Each local header carries an extra field ``"FB" <len> "ZZZ..."`` whose padding
   makes the record's data start at a multiple of 64 bytes, so storage bytes can be
   sliced straight out of the file.
3. Local headers have flags 0x0808 (data descriptor follows, UTF-8 name) and zero
   CRC/sizes; each record's data is followed by ``PK\\x07\\x08 crc size size``; the
   central directory holds the real values. A zip64 end record and locator always
   precede the ordinary end record. This is what PyTorch's writer (miniz) produces.
4. The reader turns every failure of the container (not a zip, truncated, bad CRC,
   compressed or duplicate records) into a RuntimeError that starts with
   "PytorchStreamReader failed ...", as PyTorch does, never a zipfile traceback.

NOTE [ Checking the zip directory ]
1. The central directory is checked whole before any record is read: every record
   must be STORED with equal compressed and uncompressed sizes (a compressed record,
   a zip bomb among them, is refused without inflating a byte), its local header must
   be where the directory says, with the same name, and its data must lie inside the
   file, before the central directory.
2. Records may not overlap: sorted by offset, each record's data ends at or before the
   next record's local header. A file therefore holds at most its own size in record
   bytes, however many names its directory lists.
3. A name listed twice is refused (rule 4 above).
4. Reading a record is a slice of the file at the checked offset and size, then a CRC
   check: no read goes past what the directory declared.
"""
from __future__ import annotations

import io
import itertools
import os
import struct
import zipfile
import zlib

from .formats import ALIGNMENT

_CORRUPT_HINT = (" There is a high likelihood that the checkpoint file is corrupted: it was not saved "
                 "completely, was transferred incorrectly, or was modified after saving.")


class ArchiveWriter:
    """Writes records to a binary file object; call :meth:`finish` once at the end."""

    def __init__(self, f, folder: str):
        self.f = f
        self.folder = folder
        self.pos = 0
        self.central: list = []   # (name bytes, crc, size, header offset)
        self.data_offsets: list = []   # where each record's data starts (for the save event)

    def _write(self, b) -> None:
        self.f.write(b)
        self.pos += len(b)

    def write_record(self, name: str, data) -> None:
        """Append ``<folder>/<name>`` holding ``data`` (bytes-like), 64-byte aligned (rule 2)."""
        data = memoryview(data).cast("B")
        fname = f"{self.folder}/{name}".encode("utf-8")
        size = len(data)
        if size >= 0xFFFFFFFF:
            raise RuntimeError(f"record {name} is {size} bytes; glassgrad writes records smaller than 4 GiB")
        header_at = self.pos
        pad = (-(header_at + 30 + len(fname) + 4)) % ALIGNMENT
        extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, 0x0808, 0, 0, 0, 0, 0, 0,
                                len(fname), len(extra)) + fname + extra)
        crc = zlib.crc32(data)
        self.data_offsets.append(self.pos)
        self._write(data)
        self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self.central.append((fname, crc, size, header_at))

    def finish(self) -> None:
        cd_at = self.pos
        for fname, crc, size, at in self.central:
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, 0x0808, 0, 0, 0, crc, size, size,
                                    len(fname), 0, 0, 0, 0, 0, at) + fname)
        cd_size = self.pos - cd_at
        n = len(self.central)
        z64_at = self.pos
        self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 0x2D, 0, 0, n, n, cd_size, cd_at))
        self._write(struct.pack("<IIQI", 0x07064B50, 0, z64_at, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_at, 0))


def folder_name(f) -> str:
    """The top-level folder PyTorch uses: the file's base name without extension, or ``archive``."""
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


class ArchiveReader:
    """Reads the records of a checkpoint held in ``data`` (bytes)."""

    def __init__(self, data: bytes):
        self.data = data
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
            infos = zf.infolist()
        except Exception as e:  # noqa: BLE001 - any failure of the container (rule 4)
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central "
                               f"directory ({_why(e)})." + _CORRUPT_HINT) from None
        names = [i.filename for i in infos]
        if any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
            raise RuntimeError("this is a TorchScript archive (torch.jit.save), not a torch.save checkpoint; "
                               "glassgrad loads only torch.save files")
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found "
                               f"(the archive holds {names[:8]}{' ...' if len(names) > 8 else ''})")
        self.prefix = pkl[0][: -len("data.pkl")]
        self.infos = {}
        for i in infos:
            if i.filename in self.infos:
                raise RuntimeError(f"PytorchStreamReader failed reading zip archive: record {i.filename} "
                                   "appears twice." + _CORRUPT_HINT)
            self.infos[i.filename] = i
        self.spans = _check_directory(data, infos, zf.start_dir)
        self.reads: list = []     # names read, in order (the load event's ``read`` marks)

    def has(self, name: str) -> bool:
        return self.prefix + name in self.infos

    def size(self, name: str) -> int:
        return self.infos[self.prefix + name].file_size

    def read(self, name: str) -> bytes:
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        start, end = self.spans[info.filename]                  # NOTE [ Checking the zip directory ] rule 4
        out = self.data[start:end]
        if zlib.crc32(out) != info.CRC:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid header or archive "
                               f"is corrupted (Bad CRC-32 for file {info.filename!r})." + _CORRUPT_HINT)
        self.reads.append(name)
        return out

    def describe(self) -> list:
        """[{name, size, data_offset, crc}] for every record, in file order."""
        out = []
        for info in sorted(self.infos.values(), key=lambda i: i.header_offset):
            at = info.header_offset
            head = self.data[at:at + 30]
            if len(head) < 30:
                raise RuntimeError(f"PytorchStreamReader failed reading file {info.filename}: truncated header")
            n, e = struct.unpack("<HH", head[26:30])
            out.append({"name": info.filename, "size": info.file_size, "data_offset": at + 30 + n + e,
                        "crc32": info.CRC})
        return out


def _check_directory(data: bytes, infos, dir_at: int) -> dict:
    """name -> (data start, data end) of every record, after NOTE [ Checking the zip directory ] rules 1-2."""
    def bad(what):
        return RuntimeError(f"PytorchStreamReader failed reading zip archive: {what}." + _CORRUPT_HINT)
    spans = {}
    for i in infos:
        if i.compress_type != zipfile.ZIP_STORED or i.compress_size != i.file_size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {i.filename}: the record is compressed "
                               f"(method {i.compress_type}, {i.compress_size} bytes that would become "
                               f"{i.file_size}); PyTorch checkpoints store every record uncompressed")
        at = i.header_offset
        head = data[at:at + 30] if at >= 0 else b""
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise bad(f"record {i.filename}: no local header at offset {at}")
        n, e = struct.unpack("<HH", head[26:30])
        if data[at + 30:at + 30 + n] != i.orig_filename.encode("utf-8" if i.flag_bits & 0x800 else "cp437"):
            raise bad(f"record {i.filename}: the local header at offset {at} names another record")
        start = at + 30 + n + e
        end = start + i.file_size
        if end > dir_at:
            raise bad(f"record {i.filename} declares {i.file_size} bytes at offset {start}, past the end of "
                      f"the records (offset {dir_at})")
        spans[i.filename] = (start, end)
    order = sorted(infos, key=lambda i: i.header_offset)
    for a, b in itertools.pairwise(order):
        if spans[a.filename][1] > b.header_offset:
            raise bad(f"records {a.filename} and {b.filename} overlap (the data of the first, "
                      f"{a.file_size} bytes at offset {spans[a.filename][0]}, runs into the second's header at "
                      f"offset {b.header_offset})")
    return spans


def _why(e: Exception) -> str:
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__
