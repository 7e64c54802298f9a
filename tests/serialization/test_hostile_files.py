"""Checkpoints from outside: hostile zips refused, reads bounded, temp files cleaned, no reference cycle."""
from __future__ import annotations

import gc
import io
import os
import time
import weakref

import pytest

import engine as torch
from engine.serialization import files as ser_files
from tests.serialization import hostile

CORRUPT = "There is a high likelihood that the checkpoint file is corrupted"


def _load_bytes(raw, tmp_path, name="h.pt"):
    p = tmp_path / name
    p.write_bytes(raw)
    return torch.load(p)


# ---- the zip directory -----------------------------------------------------------------------


def test_overlapping_records_refused(tmp_path):
    raw, declared = hostile.overlapping(n=40, numel=256)
    assert declared > len(raw)              # the directory claims more record bytes than the file has
    with pytest.raises(RuntimeError) as ei:
        _load_bytes(raw, tmp_path)
    msg = str(ei.value)
    assert msg.startswith("PytorchStreamReader failed reading zip archive: records archive/data/0 and "
                          "archive/data/1 overlap (the data of the first, 1024 bytes at offset ")
    assert CORRUPT in msg


def test_duplicate_record_refused(tmp_path):
    with pytest.raises(RuntimeError, match=r"^PytorchStreamReader failed reading zip archive: record "
                                           r"archive/data/0 appears twice\. " + CORRUPT):
        _load_bytes(hostile.duplicate(), tmp_path)


def test_compression_bomb_refused_without_inflating(tmp_path):
    raw = hostile.bomb(numel=1 << 22)
    assert len(raw) < 64 * 1024             # 16 MiB of float32 zeros in a few KiB
    with pytest.raises(RuntimeError) as ei:
        _load_bytes(raw, tmp_path)
    assert str(ei.value).startswith("PytorchStreamReader failed reading file archive/data/0: the record is "
                                    "compressed (method 8, ")
    assert f"that would become {4 << 22}); PyTorch checkpoints store every record uncompressed" in str(ei.value)


def test_record_size_must_agree_with_data_pkl(tmp_path):
    with pytest.raises(RuntimeError, match=r"^checkpoint record data/0 holds 20 bytes, but its persistent id "
                                           r"says 4 elements of torch\.FloatStorage \(16 bytes\)"):
        _load_bytes(hostile.wrong_size(4), tmp_path)


def test_record_running_past_the_directory_refused(tmp_path):
    """A record whose declared size runs into the central directory is refused before reading it."""
    raw = hostile.past_end(1 << 14)                    # 16 KiB declared, 16 bytes there, then the directory
    assert len(raw) < 1 << 14
    with pytest.raises(RuntimeError, match=r"^PytorchStreamReader failed reading zip archive: record "
                                           r"archive/data/0 declares 16384 bytes at offset \d+, past the end "
                                           r"of the records \(offset \d+\)"):
        _load_bytes(raw, tmp_path)


def test_a_well_formed_file_still_loads_and_inspects(tmp_path):
    p = tmp_path / "ok.pt"
    torch.save({"a": torch.arange(5.), "b": torch.ones(2, 3)}, p)
    d = torch.load(p)
    assert d["a"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and d["b"].shape == (2, 3)
    assert [r["name"] for r in torch.serialization.inspect_archive(p)["records"]][:2] == ["ok/data.pkl",
                                                                                         "ok/.format_version"]


# ---- what is read ----------------------------------------------------------------------------


def test_device_path_refused_before_reading():
    with pytest.raises(RuntimeError, match=r"^engine\.load: /dev/zero is a character device, not a regular "
                                           r"file; a checkpoint is read only from a regular file"):
        torch.load("/dev/zero")


def test_fifo_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.pt"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"is a FIFO \(named pipe\), not a regular file"):
        torch.load(fifo)
    assert time.perf_counter() - t0 < 5


def test_device_file_object_refused():
    with open("/dev/zero", "rb") as f, pytest.raises(RuntimeError, match=r"^engine\.load: /dev/zero is a "
                                                                           r"character device"):
        torch.load(f)


def test_directory_is_pythons_error(tmp_path):
    with pytest.raises(IsADirectoryError, match=r"Is a directory"):
        torch.load(tmp_path)


def test_in_memory_buffers_still_load():
    buf = io.BytesIO()
    torch.save(torch.arange(3), buf)
    buf.seek(0)
    assert torch.load(buf).tolist() == [0, 1, 2]


# ---- temporary files of save -----------------------------------------------------------------


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid                                # reaped: no process has this id now


def test_stale_temp_file_of_a_killed_save_removed_by_next_save(tmp_path):
    stale = tmp_path / f".model.pt.glassgrad-{_dead_pid()}-0123456789ab.tmp"
    stale.write_bytes(b"\0" * 4096)           # what a save killed mid-write leaves
    old = tmp_path / f".other.pt.glassgrad-{os.getpid()}-aaaaaaaaaaaa.tmp"
    old.write_bytes(b"x")
    os.utime(old, (time.time() - ser_files.STALE_AFTER_S - 60,) * 2)   # ours, but a day old
    fresh = tmp_path / f".other.pt.glassgrad-{os.getpid()}-bbbbbbbbbbbb.tmp"
    fresh.write_bytes(b"x")                   # a save running now in this process: kept
    keep = [tmp_path / ".model.pt.1234.tmp", tmp_path / "notes.glassgrad-1-0123456789ab.tmp",
            tmp_path / ".model.pt.glassgrad-1-0123456789AB.tmp"]
    for k in keep:
        k.write_bytes(b"user data")           # not glassgrad's pattern: never touched
    link = tmp_path / f".x.pt.glassgrad-{_dead_pid()}-cccccccccccc.tmp"
    link.symlink_to(tmp_path / "notes.glassgrad-1-0123456789ab.tmp")
    torch.save(torch.arange(3), tmp_path / "model.pt")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([fresh.name, link.name, "model.pt"] + [k.name for k in keep])
    assert torch.load(tmp_path / "model.pt").tolist() == [0, 1, 2]


def test_save_temp_name_is_recognisable(tmp_path, monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        return real(src, dst)
    monkeypatch.setattr(os, "replace", spy)
    torch.save(torch.zeros(1), tmp_path / "m.pt")
    assert len(seen) == 1 and ser_files._TMP_NAME.match(seen[0])
    assert seen[0].startswith(f".m.pt.glassgrad-{os.getpid()}-")


# ---- no reference cycle ----------------------------------------------------------------------


def test_loaded_storage_freed_as_soon_as_its_last_reference_dies():
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6.), "v": torch.ones(2)}, buf)
    raw = buf.getvalue()
    gc.collect()
    gc.disable()
    try:
        with torch.record() as tr:
            d = torch.load(io.BytesIO(raw))
            ref = weakref.ref(d["w"]._storage)
            sid = d["w"]._storage.id
            del d
            assert ref() is None              # freed by reference counting, no collector needed
        frees = [e for e in tr.events if e["kind"] == "free" and e["storage"] == sid]
        assert [(e["bytes"], e["category"]) for e in frees] == [(24, "input")]
    finally:
        gc.enable()
