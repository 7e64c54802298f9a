"""replay.records: a recorded save and load, read back from the trace, against zipfile's own listing."""
import struct
import zipfile

import pytest

import engine as torch
from engine.trace import Trace
from replay.model import TraceModel
from replay.records import Files, file_event


def _zip_listing(path):
    """(name, size, data offset) of every record in file order, read with zipfile and the raw local headers."""
    raw = path.read_bytes()
    out = []
    with zipfile.ZipFile(path) as z:
        for i in sorted(z.infolist(), key=lambda i: i.header_offset):
            n, e = struct.unpack("<HH", raw[i.header_offset + 26:i.header_offset + 30])
            out.append((i.filename, i.file_size, i.header_offset + 30 + n + e))
    return out


@pytest.fixture
def saved_and_loaded(tmp_path):
    path = tmp_path / "ck.pt"
    base = torch.arange(10.)                                   # 10 float32: 40 bytes
    lin = torch.nn.Linear(3, 2)
    obj = {"base": base, "window": base[3:7], "count": torch.ones(2, dtype=torch.int64),
           "lin": lin.state_dict(), "more": [lin.bias]}
    with torch.record() as tr:
        torch.save(obj, path)
        back = torch.load(path)
    return tr, path, obj, back


def test_save_records_are_the_zip_listing(saved_and_loaded):
    tr, path, _, _ = saved_and_loaded
    files = Files(tr.events)
    save = files.events[0]
    assert save.kind == "save" and save.index == tr.events.index(tr.of_kind("save")[0])
    assert [(r.name, r.bytes, r.data_offset) for r in save.records] == _zip_listing(path)
    assert save.bytes == path.stat().st_size and save.file_name == "ck.pt" and save.folder == "ck"
    assert all(r.read is None for r in save.records) and save.described


def test_storages_views_and_bytes(saved_and_loaded):
    tr, path, obj, _ = saved_and_loaded
    save = Files(tr.events).events[0]
    sizes = {name: size for name, size, _ in _zip_listing(path)}
    table = [(s.record, s.storage_type, s.dtype, s.numel, s.bytes) for s in save.storages]
    assert table == [("ck/data/0", "FloatStorage", "float32", 10, sizes["ck/data/0"]),
                     ("ck/data/1", "LongStorage", "int64", 2, sizes["ck/data/1"]),
                     ("ck/data/2", "FloatStorage", "float32", 6, sizes["ck/data/2"]),
                     ("ck/data/3", "FloatStorage", "float32", 2, sizes["ck/data/3"])]
    assert [sizes[f"ck/data/{k}"] for k in range(4)] == [40, 16, 24, 8]
    # two views of one storage: one record, both views named with their offsets
    shared = save.storages[0]
    assert [(v.name, v.shape, v.offset, v.stride) for v in shared.views] == [
        ("base", (10,), 0, (1,)), ("window", (4,), 3, (1,))]
    assert shared.storage == obj["base"]._storage.id
    assert [v.tensor for v in shared.views] == [obj["base"]._id, obj["window"]._id]
    # a state_dict key and a Parameter in a list that share the bias's storage
    bias = save.storages[3]
    assert [(v.name, v.parameter) for v in bias.views] == [("lin['bias']", False), ("more[0]", True)]
    assert save.tensors == 6 and save.n_storages == 4


def test_load_says_what_it_read_and_rebuilt(saved_and_loaded):
    tr, path, _, back = saved_and_loaded
    files = Files(tr.events)
    load = files.events[1]
    assert load.kind == "load"
    assert [(r.name, r.bytes, r.data_offset) for r in load.records] == _zip_listing(path)
    assert [r.short for r in load.records if r.read] == ["data.pkl", "byteorder", "data/0", "data/1", "data/2",
                                                          "data/3", "version"]
    assert [r.short for r in load.records if not r.read] == [".format_version", ".storage_alignment",
                                                             ".data/serialization_id"]
    # each rebuilt storage is the one whose alloc event came with the load, with the same bytes
    allocs = {e["storage"]: e for e in tr.of_kind("alloc") if e["seq"] > tr.of_kind("save")[0]["seq"]}
    for s in load.storages:
        assert allocs[s.storage]["bytes"] == s.bytes and allocs[s.storage]["category"] in ("input", "parameter")
        assert s.location == "cpu" and s.device == "cpu"
    shared = load.storages[0]
    assert shared.storage == back["base"]._storage.id == back["window"]._storage.id
    assert [(v.name, v.offset, v.tensor) for v in shared.views] == [
        ("base", 0, back["base"]._id), ("window", 3, back["window"]._id)]


def test_at_is_the_last_file_event_so_far(saved_and_loaded):
    tr, *_ = saved_and_loaded
    files = Files(tr.events)
    s, l = files.events[0].index, files.events[1].index
    assert files.at(s - 1) is None
    assert files.at(s).kind == "save" and files.at(l - 1).kind == "save"
    assert files.at(l).kind == "load" and files.at(len(tr.events) + 5).kind == "load"
    assert [files.position(f) for f in files.events] == [1, 2]


def test_a_saved_trace_reads_the_same_and_follows_a_stream(saved_and_loaded, tmp_path):
    tr, *_ = saved_and_loaded
    tr.save(tmp_path / "t.jsonl")
    back = Trace.load(tmp_path / "t.jsonl")
    assert back.warnings == []
    assert Files.from_model(TraceModel.from_trace(back)).events == Files(tr.events).events
    grow = Files()
    for k in range(0, len(tr.events) + 3, 3):                  # events arriving a few at a time
        grow.follow(tr.events[:k])
    assert grow.events == Files(tr.events).events


def test_a_file_object_and_a_named_file(tmp_path):
    import io
    buf = io.BytesIO()
    with torch.record() as tr:
        torch.save(torch.zeros(3), buf)
        buf.seek(0)
        torch.load(buf)
    save, load = Files(tr.events).events
    assert save.path is None and save.file_name == "a file object" and save.folder == "archive"
    assert save.storages[0].views[0].name == "obj" and load.storages[0].views[0].name == "obj"
    assert save.storages[0].record == "archive/data/0" and save.storages[0].bytes == 12


def test_damaged_or_old_events_read_as_absent():
    old = {"seq": 0, "t": 0.0, "phase": "forward", "kind": "save", "path": "/x/m.pt", "bytes": 10,
           "tensors": 1, "storages": 1}
    fe = file_event(0, old)
    assert not fe.described and fe.records == () and fe.storages == () and fe.file_name == "m.pt"
    bad = dict(old, kind="load", bytes="many", records=[{"name": 3, "bytes": "x"}, "junk"],
               storage_records=[{"views": [{"shape": "no"}, 7]}, None])
    fe = file_event(0, bad)
    assert fe.bytes == 0 and fe.described
    assert [(r.name, r.bytes, r.data_offset, r.read) for r in fe.records] == [("", 0, 0, None)]
    assert len(fe.storages) == 1 and fe.storages[0].views[0].shape == ()
    assert file_event(0, {"kind": "op"}) is None
