"""Hostile checkpoints, built with zipfile from a file engine.save wrote (no torch needed).

Each builder returns the bytes of a zip that a careless reader would turn into far more
memory, or far more tensors, than the file holds.
"""
from __future__ import annotations

import io
import struct
import warnings
import zipfile
import zlib

import engine as torch


def _records(obj) -> tuple:
    """(folder, [(name, bytes)]) of what engine.save writes for ``obj``."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    zf = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    names = zf.namelist()
    return names[0].split("/")[0], [(n, zf.read(n)) for n in names]


def _rezip(entries, compress=None) -> bytes:
    """A STORED zip of (name, bytes) in order; ``compress``: names to DEFLATE instead."""
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zipfile warns about a duplicate name
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
            for name, data in entries:
                method = zipfile.ZIP_DEFLATED if compress and name in compress else zipfile.ZIP_STORED
                zf.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return out.getvalue()


def _central_entries(raw: bytes):
    """[(offset of the central entry, name)] in directory order."""
    zf = zipfile.ZipFile(io.BytesIO(raw))
    at, out = zf.start_dir, []
    for _ in zf.infolist():
        assert raw[at:at + 4] == b"PK\x01\x02"
        n, e, c = struct.unpack("<HHH", raw[at + 28:at + 34])
        out.append((at, raw[at + 46:at + 46 + n].decode()))
        at += 46 + n + e + c
    return out


def overlapping(n: int = 40, numel: int = 256) -> tuple:
    """A list of ``n`` tensors of ``numel`` floats whose records all overlap: each record
    really holds 16 bytes, but the central directory declares numel * 4 bytes for it (with a
    matching CRC), running over the records after it. Returns (zip bytes, declared bytes)."""
    folder, recs = _records([torch.zeros(numel) for _ in range(n)])
    declared = numel * 4
    short = [(name, data[:16] if "/data/" in name else data) for name, data in recs]
    short.append((f"{folder}/padding", b"\0" * declared))     # the last record's span ends inside the file
    raw = bytearray(_rezip(short))
    zf = zipfile.ZipFile(io.BytesIO(bytes(raw)))
    infos = {i.filename: i for i in zf.infolist()}
    for at, name in _central_entries(bytes(raw)):
        if "/data/" not in name:
            continue
        h = infos[name].header_offset
        n_, e_ = struct.unpack("<HH", raw[h + 26:h + 30])
        start = h + 30 + n_ + e_
        span = bytes(raw[start:start + declared])
        struct.pack_into("<III", raw, at + 16, zlib.crc32(span), declared, declared)
    return bytes(raw), n * declared


def duplicate() -> bytes:
    """``data/0`` listed twice, the second copy with other bytes."""
    _, recs = _records(torch.zeros(4))
    name, data = next(r for r in recs if r[0].endswith("/data/0"))
    return _rezip(recs + [(name, b"\xff" * len(data))])


def bomb(numel: int = 1 << 22) -> bytes:
    """One storage of ``numel`` zeros whose record is DEFLATEd to a few KiB."""
    _, recs = _records(torch.zeros(numel))
    return _rezip(recs, compress={n for n, _ in recs if "/data/" in n})


def wrong_size(delta: int = 4) -> bytes:
    """``data/0`` holds ``delta`` bytes more than data.pkl's numel * itemsize says."""
    _, recs = _records(torch.zeros(4))
    return _rezip([(n, d + b"\0" * delta if n.endswith("/data/0") else d) for n, d in recs])


def past_end(declared: int = 1 << 14) -> bytes:
    """One storage whose record, the last in the file, declares ``declared`` bytes, running
    over the central directory and past the end of the file."""
    _, recs = _records(torch.zeros(declared // 4))
    data0 = next(r for r in recs if r[0].endswith("/data/0"))
    raw = bytearray(_rezip([r for r in recs if r is not data0] + [(data0[0], data0[1][:16])]))
    at = next(a for a, name in _central_entries(bytes(raw)) if name == data0[0])
    struct.pack_into("<III", raw, at + 16, 0, declared, declared)
    return bytes(raw)
