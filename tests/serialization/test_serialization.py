"""engine.save / engine.load: PyTorch's zip format, storage sharing, map_location, safety, atomic writes."""
from __future__ import annotations

import collections
import io
import json
import math
import os
import pickle
import pickletools
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import engine as torch
from engine.backend.device import cuda_is_available
from engine.serialization import inspect_archive
from engine.serialization.archive import ArchiveWriter

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "torch_files"
EXPECTED = json.loads((FIX / "EXPECTED.json").read_text())
OBJECT_FILES = sorted(k for k, v in EXPECTED.items() if not k.startswith("_") and "object" in v)
NO_CUDA_MSG = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
               "If you are running on a CPU-only machine, please use torch.load with "
               "map_location=torch.device('cpu') to map your storages to the CPU.")


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw)


def archive_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def craft(pkl: bytes, records=(), folder="archive") -> bytes:
    """A zip laid out like torch's whose data.pkl is ``pkl`` (for hostile and corrupt cases)."""
    buf = io.BytesIO()
    w = ArchiveWriter(buf, folder)
    w.write_record("data.pkl", pkl)
    w.write_record("byteorder", b"little")
    for name, data in records:
        w.write_record(name, data)
    w.write_record("version", b"3\n")
    w.finish()
    return buf.getvalue()


# ---- every fixture written by real torch.save ---------------------------------------------------

def _num(v):
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _nested(a):
    return [_nested(x) for x in a] if isinstance(a, list) else _num(a)


def check_node(obj, node, where="obj"):
    kind = node["type"]
    if kind == "tensor":
        assert isinstance(obj, torch.Tensor), where
        assert obj.dtype.name == node["dtype"], where
        assert list(obj.shape) == node["shape"], where
        assert list(obj.stride()) == node["stride"], where
        assert obj.storage_offset() == node["storage_offset"], where
        assert obj.requires_grad == node["requires_grad"], where
        assert obj._storage.array.size == node["storage_numel"], where
        assert obj.is_contiguous() == node["is_contiguous"], where
        values = obj.detach().numpy()
        if "values" in node:
            assert _nested(values.tolist()) == node["values"], where
        else:
            assert values.reshape(-1)[:10].tolist() == node["values_head"], where
            assert float(values.astype(np.float64).sum()) == node["sum"], where
    elif kind in ("dict", "OrderedDict"):
        assert type(obj) is (dict if kind == "dict" else collections.OrderedDict), where
        assert list(obj.keys()) == [k for k, _ in node["items"]], where
        for k, v in node["items"]:
            check_node(obj[k], v, f"{where}[{k!r}]")
        for key, sub in node.items():
            if key.startswith("attr_"):
                check_node(getattr(obj, key[5:]), sub, f"{where}.{key[5:]}")
    elif kind in ("list", "tuple"):
        assert type(obj) is (list if kind == "list" else tuple), where
        assert len(obj) == len(node["items"]), where
        for i, v in enumerate(node["items"]):
            check_node(obj[i], v, f"{where}[{i}]")
    elif kind == "none":
        assert obj is None, where
    else:
        assert type(obj).__name__ == kind and _num(obj) == node["value"], where


@pytest.mark.parametrize("name", OBJECT_FILES)
def test_reads_every_torch_fixture(name):
    obj = torch.load(FIX / name, map_location="cpu" if name.startswith("cuda") else None)
    check_node(obj, EXPECTED[name]["object"])


@pytest.mark.parametrize("name", OBJECT_FILES)
def test_archive_records_match_expected(name):
    info = inspect_archive(FIX / name)
    want = EXPECTED[name]["archive"]["records"]
    got = [{"name": r["name"], "size": r["size"], "data_offset": r["data_offset"]} for r in info["records"]]
    assert got == [{"name": r["name"], "size": r["size"], "data_offset": r["data_offset"]} for r in want]
    assert info["folder"] == EXPECTED[name]["archive"]["top_level_folder"][0]


def test_fixture_identity_and_sharing():
    same = torch.load(FIX / "same_twice.pt")
    assert same["x"] is same["y"]
    base, view = torch.load(FIX / "shared_view.pt")
    assert base._storage is view._storage
    view.mul_(0)                                   # in place through the view ...
    assert base[10:20].sum().item() == 0.0         # ... shows in the base
    assert base[9].item() == 9.0 and base[20].item() == 20.0


def test_loaded_storage_categories():
    t = torch.load(FIX / "tensor_f32.pt")
    assert t._storage.category == "input"
    sd = torch.load(FIX / "state_dict_linear.pt")
    assert all(v._storage.category == "input" for v in sd.values())
    p = roundtrip(torch.nn.Parameter(torch.ones(3)))
    assert isinstance(p, torch.nn.Parameter) and p.requires_grad and p._storage.category == "parameter"


def test_torch_state_dict_loads_into_engine_module():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    sd = torch.load(FIX / "state_dict_linear.pt")
    m.load_state_dict(sd)
    want = EXPECTED["state_dict_linear.pt"]["object"]["items"][1][1]["values"]
    assert m[0].bias.detach().numpy().tolist() == want
    assert sd._metadata["0"] == {"version": 1}


def test_legacy_format_refused():
    with pytest.raises(RuntimeError, match=r"legacy serialization format.*torch\.save\(torch\.load\(path"):
        torch.load(FIX / "legacy.pt")


def test_cuda_tagged_without_gpu():
    if cuda_is_available():
        pytest.skip("a GPU is present, so a cuda:0 storage loads; this checks the CPU-only error")
    with pytest.raises(RuntimeError) as e:
        torch.load(FIX / "cuda_tagged.pt")
    assert str(e.value) == NO_CUDA_MSG


# ---- what the writer produces is what torch.save produces ----------------------------------------

TORCH_SAME = {
    "tensor_f32.pt": lambda: torch.arange(6, dtype=torch.float32).reshape(2, 3),
    "noncontig.pt": lambda: torch.arange(12.).reshape(4, 3).t(),
    "requires_grad.pt": lambda: torch.ones(2, requires_grad=True),
    "dtype_bool.pt": lambda: torch.tensor([[True, False, True], [False, False, True]]),
    "shared_view.pt": lambda: (lambda b: [b, b[10:20]])(torch.arange(100000, dtype=torch.float32)),
    "same_twice.pt": lambda: (lambda t: {"x": t, "y": t})(torch.ones(3)),
}


@pytest.mark.parametrize("name", sorted(TORCH_SAME))
def test_data_pkl_is_byte_identical_to_torch(name):
    ours = zipfile.ZipFile(io.BytesIO(archive_bytes(TORCH_SAME[name]()))).read("archive/data.pkl")
    theirs = zipfile.ZipFile(FIX / name).read(name[:-3] + "/data.pkl")
    assert ours == theirs


def test_whole_file_matches_torch_except_serialization_id(tmp_path):
    path = tmp_path / "tensor_f32.pt"
    torch.save(TORCH_SAME["tensor_f32.pt"](), path)
    ours, theirs = path.read_bytes(), (FIX / "tensor_f32.pt").read_bytes()
    assert len(ours) == len(theirs)
    recs = {r["name"]: r for r in inspect_archive(path)["records"]}
    sid = recs["tensor_f32/.data/serialization_id"]
    differ = [i for i in range(len(ours)) if ours[i] != theirs[i]]
    in_id = [i for i in differ if sid["data_offset"] <= i < sid["data_offset"] + 40]
    assert len(differ) - len(in_id) <= 8        # the id's CRC, in its data descriptor and central entry


def test_archive_layout(tmp_path):
    path = tmp_path / "my.model.pt"
    base = torch.arange(10.)
    torch.save({"a": base, "b": base[2:5], "c": torch.tensor([1, 2])}, path)
    raw = path.read_bytes()
    info = inspect_archive(path)
    names = [r["name"] for r in info["records"]]
    assert names == ["my.model/data.pkl", "my.model/.format_version", "my.model/.storage_alignment",
                     "my.model/byteorder", "my.model/data/0", "my.model/data/1", "my.model/version",
                     "my.model/.data/serialization_id"]
    assert all(r["data_offset"] % 64 == 0 for r in info["records"])
    z = zipfile.ZipFile(path)
    assert z.testzip() is None
    assert all(i.compress_type == zipfile.ZIP_STORED and i.flag_bits == 0x0808 for i in z.infolist())
    assert z.read("my.model/version") == b"3\n"
    assert z.read("my.model/.format_version") == b"1"
    assert z.read("my.model/.storage_alignment") == b"64"
    assert z.read("my.model/byteorder") == b"little"
    assert z.read("my.model/.data/serialization_id").isdigit()
    assert len(z.read("my.model/.data/serialization_id")) == 40
    assert z.read("my.model/data/0") == np.arange(10, dtype="<f4").tobytes()
    assert z.read("my.model/data/1") == np.array([1, 2], dtype="<i8").tobytes()
    assert b"PK\x06\x06" in raw and b"PK\x06\x07" in raw     # zip64 end record and locator, as torch writes
    assert raw[:4] == b"PK\x03\x04"
    pids = [a for op, a, _ in pickletools.genops(z.read("my.model/data.pkl")) if op.name == "GLOBAL"]
    assert "torch FloatStorage" in pids and "torch LongStorage" in pids
    assert zipfile.ZipFile(io.BytesIO(archive_bytes(1))).namelist()[0] == "archive/data.pkl"


def test_plain_containers_pickle_exactly_as_python_does():
    shared = [1, 2]
    obj = {"a": [1, 2.5, "x", None, True, False, (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), ()],
           "b": {"c": -1, "d": 2**40, "e": -2**70, "f": 300, "g": 70000, "h": 2**3000},
           "s": shared, "t": shared, "od": collections.OrderedDict(a=1, b=[2.5, None]),
           "many": list(range(1500)), "one": ["x"], "k": {1: 2}}
    ours = zipfile.ZipFile(io.BytesIO(archive_bytes(obj))).read("archive/data.pkl")
    assert ours == pickle.dumps(obj, protocol=2)
    assert torch.load(io.BytesIO(archive_bytes(obj))) == obj


def test_persistent_ids_are_torch_shaped():
    buf = archive_bytes([torch.ones(5, dtype=torch.float64), torch.zeros(2, dtype=torch.bool)])
    pkl = zipfile.ZipFile(io.BytesIO(buf)).read("archive/data.pkl")
    assert pkl[:2] == b"\x80\x02"
    ops = [(op.name, arg) for op, arg, _ in pickletools.genops(pkl)]
    seq = [(n, a) for n, a in ops if n in ("BINUNICODE", "GLOBAL", "BININT1")]
    assert ("GLOBAL", "torch DoubleStorage") in seq and ("GLOBAL", "torch BoolStorage") in seq
    assert [n for n, _ in ops].count("BINPERSID") == 2
    i = seq.index(("GLOBAL", "torch DoubleStorage"))
    assert seq[i + 1:i + 4] == [("BINUNICODE", "0"), ("BINUNICODE", "cpu"), ("BININT1", 5)]


# ---- round trips ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: torch.tensor([True, False, True]),
    lambda: torch.tensor([-2**63, 2**63 - 1, 0, 7]),
    lambda: torch.tensor([1.5, float("nan"), float("inf"), -float("inf"), -0.0]),
    lambda: torch.tensor([[0.1, 1e300], [-1e-300, 3.0]], dtype=torch.float64),
    lambda: torch.tensor(3.25),
    lambda: torch.zeros(0, 3),
    lambda: torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1),
    lambda: torch.arange(12).reshape(3, 4)[:, 1::2],
    lambda: torch.ones(3, 1).expand(3, 4),
], ids=["bool", "int64", "float32", "float64", "0d", "empty", "permuted", "strided", "expanded"])
def test_tensor_roundtrip(make):
    t = make()
    u = roundtrip(t)
    assert u.dtype is t.dtype and u.shape == t.shape and u.stride() == t.stride()
    assert u.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    assert u._storage is not t._storage


def test_container_roundtrip():
    od = collections.OrderedDict([("z", 1), ("a", [None, True, False])])
    od._metadata = collections.OrderedDict({"": {"version": 1}})
    obj = {"t": (1, 2.5, "héllo ✓", None), "big": 2**80, "neg": -2**40, "small": -1, "k": 65535,
           "list": [1, [2, [3, []]], ()], "od": od, 3: "int key", (1, 2): "tuple key", 1.5: "float key",
           "dev": torch.device("cpu"), "dtype": torch.float64, "size": torch.Size([2, 3]),
           "many": list(range(2500)), "f": float("inf")}
    back = roundtrip(obj)
    assert back == {**obj, "od": od}
    assert type(back["od"]) is collections.OrderedDict and back["od"]._metadata == od._metadata
    assert back["dtype"] is torch.float64 and isinstance(back["size"], torch.Size)


def test_identity_and_cycles_survive():
    t = torch.ones(2)
    shared_list = [t]
    cyc = []
    cyc.append(cyc)
    back = roundtrip({"a": shared_list, "b": shared_list, "t": t, "cyc": cyc})
    assert back["a"] is back["b"] and back["a"][0] is back["t"]
    assert back["cyc"][0] is back["cyc"]


def test_parameters_and_requires_grad():
    p = torch.nn.Parameter(torch.arange(4.))
    frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    x = torch.ones(3, requires_grad=True)
    y = x * 2                                    # not a leaf: saved as requires_grad=True, loads as a leaf
    back = roundtrip({"p": p, "frozen": frozen, "x": x, "y": y, "plain": torch.ones(1)})
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], torch.nn.Parameter) and not back["frozen"].requires_grad
    assert back["x"].requires_grad and back["x"].is_leaf
    assert back["y"].requires_grad and back["y"].is_leaf and back["y"].tolist() == [2., 2., 2.]
    assert not back["plain"].requires_grad


def test_module_and_optimizer_state_dict_roundtrip():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    m(torch.randn(5, 3)).sum().backward()
    opt.step()
    back = roundtrip({"model": m.state_dict(), "opt": opt.state_dict()})
    m2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    m2.load_state_dict(back["model"])
    opt2 = torch.optim.Adam(m2.parameters(), lr=0.1)
    opt2.load_state_dict(back["opt"])
    for a, b in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    s1, s2 = opt.state_dict(), opt2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    np.testing.assert_array_equal(s1["state"][0]["exp_avg"].numpy(), s2["state"][0]["exp_avg"].numpy())


@pytest.mark.parametrize("bad, where, tname", [
    ({"a": {1, 2}}, "obj['a']", "builtins.set"),
    ([np.zeros(2)], "obj[0]", "numpy.ndarray"),
    ((1, object()), "obj[1]", "builtins.object"),
    ({"f": len}, "obj['f']", "builtins.builtin_function_or_method"),
    (collections.defaultdict(int), "obj", "collections.defaultdict"),
])
def test_unsupported_types_refused_at_save(tmp_path, bad, where, tname):
    path = tmp_path / "x.pt"
    path.write_bytes(b"old")
    with pytest.raises(TypeError, match=rf"cannot serialize an object of type {tname} at {where.replace('[', '.').replace(']', '.')}"):
        torch.save(bad, path)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["x.pt"]


# ---- storage sharing ------------------------------------------------------------------------------

def test_shared_storage_written_once():
    base = torch.arange(100000, dtype=torch.float32)
    size_both = len(archive_bytes([base, base[10:20]]))
    size_base = len(archive_bytes([base]))
    assert 400000 < size_both < 400000 + 2048
    assert size_both - size_base < 256          # the slice costs a few pickle bytes, not a storage
    z = zipfile.ZipFile(io.BytesIO(archive_bytes([base, base[10:20]])))
    assert [n for n in z.namelist() if "/data/" in n] == ["archive/data/0"]


def test_shared_storage_comes_back_shared():
    base = torch.arange(12.).reshape(3, 4)
    row, col, again = base[1], base[:, 2], base
    b_base, b_row, b_col, b_again = roundtrip([base, row, col, again])
    assert b_base is b_again
    assert b_base._storage is b_row._storage is b_col._storage
    assert b_row.storage_offset() == 4 and b_col.stride() == (4,)
    b_row.add_(100)
    assert b_base[1].tolist() == [104., 105., 106., 107.] and b_col.tolist() == [2., 106., 10.]


# ---- map_location ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ml", ["cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s,
                                lambda s, loc: "cpu"],
                         ids=["str", "device", "dict", "callable-storage", "callable-str"])
def test_map_location_forms_on_cuda_file(ml):
    t = torch.load(FIX / "cuda_tagged.pt", map_location=ml)
    assert t.device == torch.device("cpu") and t.tolist() == [0., 1., 2., 3.]


def test_map_location_callable_sees_location_and_none_keeps_it():
    seen = []
    t = torch.load(FIX / "tensor_f32.pt", map_location=lambda s, loc: seen.append((s.nbytes, loc)))
    assert seen == [(24, "cpu")] and t.device.type == "cpu"
    if not cuda_is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            torch.load(FIX / "cuda_tagged.pt", map_location=lambda s, loc: None)
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            torch.load(FIX / "cuda_tagged.pt", map_location={"cuda:1": "cpu"})


def test_map_location_bad_values():
    with pytest.raises(TypeError, match="map_location should be"):
        torch.load(FIX / "tensor_f32.pt", map_location=3.5)
    with pytest.raises(RuntimeError, match=r"don't know how to restore data location of torch.FloatStorage "
                                           r"\(tagged with mps\)"):
        torch.load(FIX / "tensor_f32.pt", map_location="mps")


@pytest.mark.skipif(not cuda_is_available(), reason="no GPU: CuPy sees no CUDA device")
def test_cuda_save_and_load_on_gpu():
    t = torch.arange(6.).cuda()
    raw = archive_bytes([t, t[2:]])
    pkl = zipfile.ZipFile(io.BytesIO(raw)).read("archive/data.pkl")
    assert b"cuda:0" in pkl
    a, b = torch.load(io.BytesIO(raw))
    assert a.device == torch.device("cuda:0") and a._storage is b._storage and b.tolist() == [2., 3., 4., 5.]
    c = torch.load(io.BytesIO(raw), map_location="cpu")[1]
    assert c.device.type == "cpu" and c.tolist() == [2., 3., 4., 5.]
    assert torch.load(FIX / "tensor_f32.pt", map_location="cuda").device == torch.device("cuda:0")


# ---- hostile and broken files ---------------------------------------------------------------------

def test_hostile_fixture_refused_and_nothing_runs(monkeypatch):
    calls = []
    monkeypatch.setattr(os, "system", lambda cmd: calls.append(cmd))
    with pytest.raises(pickle.UnpicklingError) as e:
        torch.load(FIX / "hostile_os_system.pt")
    msg = str(e.value)
    assert msg.startswith("Weights only load failed.")
    assert "Unsupported global: GLOBAL os.system whose module os is blocked" in msg
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL os.system"):
        torch.load(FIX / "hostile_os_system.pt", weights_only=False)     # still the allow-list
    assert calls == []


def _reduce(module: str, name: str, arg: str) -> bytes:
    a = arg.encode()
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"X" + struct.pack("<I", len(a)) + a
            + b"\x85R.")


@pytest.mark.parametrize("module, name", [("builtins", "eval"), ("posix", "system"), ("subprocess", "check_output"),
                                          ("torch", "load"), ("collections", "defaultdict"), ("nt", "system")])
def test_hostile_globals_refused(tmp_path, module, name):
    marker = tmp_path / "pwned"
    pkl = _reduce(module, name, f"open({str(marker)!r}, 'w')")
    with pytest.raises(pickle.UnpicklingError, match=rf"Unsupported global: GLOBAL {module}\.{name} "):
        torch.load(io.BytesIO(craft(pkl)))
    assert not marker.exists()


def test_stack_global_and_other_opcodes_refused():
    stack_global = b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x04echo\x85R."
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL os\.system"):
        torch.load(io.BytesIO(craft(stack_global)))
    inst = b"(X\x04\x00\x00\x00echoios\nsystem\n."    # INST: imports and calls in one opcode
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported operand 105 \(INST\)"):
        torch.load(io.BytesIO(craft(inst)))
    build_on_list = b"\x80\x02]}b."
    with pytest.raises(pickle.UnpicklingError, match="only restores attributes"):
        torch.load(io.BytesIO(craft(build_on_list)))
    call_a_value = b"\x80\x02X\x01\x00\x00\x00x)R."
    with pytest.raises(pickle.UnpicklingError, match="not an allowed callable"):
        torch.load(io.BytesIO(craft(call_a_value)))


def test_plain_pickle_without_storages_loads():
    assert torch.load(io.BytesIO(craft(pickle.dumps({"a": [1, 2.0, "x"]}, protocol=2)))) == {"a": [1, 2.0, "x"]}
    assert torch.load(io.BytesIO(craft(pickle.dumps((1, None), protocol=5)))) == (1, None)


def test_corrupt_pickle_is_an_unpickling_error():
    for bad in (b"\x80\x02(", b"\x80\x02h\x05.", b"\x80\x02]\x85", b"\x80\x02X\xff\xff\x00\x00ab", b"\x80\x02}]]s."):
        with pytest.raises(pickle.UnpicklingError, match="data.pkl is"):
            torch.load(io.BytesIO(craft(bad)))


def _tensor_pkl(numel: int, size: tuple, stride: tuple, offset: int = 0) -> bytes:
    t = torch.zeros(*size) if size else torch.tensor(0.)
    pkl = zipfile.ZipFile(io.BytesIO(archive_bytes(t))).read("archive/data.pkl")
    ops = list(pickletools.genops(pkl))
    out = bytearray(pkl)
    # patch the numel (the BININT1/BININT after 'cpu') to lie about the storage
    for i, (op, arg, pos) in enumerate(ops):
        if op.name == "BINUNICODE" and arg == "cpu":
            nop, _, npos = ops[i + 2]
            assert nop.name == "BININT1"
            out[npos + 1] = numel
    return bytes(out)


def test_record_size_must_match_numel():
    pkl = _tensor_pkl(7, (6,), (1,))
    raw = craft(pkl, [("data/0", b"\0" * 24)])
    with pytest.raises(RuntimeError, match=r"record data/0 holds 24 bytes, but its persistent id says 7 "
                                           r"elements of torch.FloatStorage \(28 bytes\)"):
        torch.load(io.BytesIO(raw))


def test_view_outside_storage_refused():
    pkl = _tensor_pkl(6, (6,), (1,))
    raw = craft(pkl, [("data/0", b"\0" * 16)])       # record too small for the claimed 6 floats
    with pytest.raises(RuntimeError, match="holds 16 bytes"):
        torch.load(io.BytesIO(raw))
    pkl = _tensor_pkl(4, (6,), (1,))                  # 6 elements from a 4-element storage
    with pytest.raises(RuntimeError, match=r"reaches outside its storage of 4 elements"):
        torch.load(io.BytesIO(craft(pkl, [("data/0", b"\0" * 16)])))


def test_missing_storage_record():
    pkl = _tensor_pkl(6, (6,), (1,))
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file data/0: file not found"):
        torch.load(io.BytesIO(craft(pkl)))


@pytest.mark.parametrize("cut", [0.5, 0.9, 0.99])
def test_truncated_file(tmp_path, cut):
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(1000.)}, path)
    raw = path.read_bytes()
    path.write_bytes(raw[:int(len(raw) * cut)])
    with pytest.raises(RuntimeError, match=r"^PytorchStreamReader failed reading zip archive: "
                                           r"failed finding central directory"):
        torch.load(path)


def test_corrupted_storage_bytes(tmp_path):
    path = tmp_path / "c.pt"
    torch.save(torch.arange(1000.), path)
    raw = bytearray(path.read_bytes())
    rec = next(r for r in inspect_archive(path)["records"] if r["name"].endswith("data/0"))
    raw[rec["data_offset"] + 100] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(RuntimeError, match=r"PytorchStreamReader failed reading file data/0: .*Bad CRC-32"):
        torch.load(path)


@pytest.mark.parametrize("content", [b"", b"hello world, not a checkpoint", b"\x00" * 100, b"PK\x03\x04garbage"])
def test_not_a_zip(content):
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive"):
        torch.load(io.BytesIO(content))


def test_zip_without_data_pkl_and_compressed_records():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("x/readme.txt", "hi")
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file data.pkl"):
        torch.load(io.BytesIO(buf.getvalue()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("x/data.pkl", pickle.dumps(1, protocol=2))
    with pytest.raises(RuntimeError, match="the record is compressed"):
        torch.load(io.BytesIO(buf.getvalue()))


# ---- atomic writes --------------------------------------------------------------------------------

def test_crash_mid_write_leaves_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    torch.save({"v": torch.tensor([1., 2.])}, path)
    old = path.read_bytes()
    real = ArchiveWriter.write_record

    def crash(self, name, data):
        if name.startswith("data/"):
            raise OSError(28, "No space left on device")   # simulated crash halfway through the archive
        return real(self, name, data)

    monkeypatch.setattr(ArchiveWriter, "write_record", crash)
    with pytest.raises(OSError, match="No space left"):
        torch.save({"v": torch.tensor([3., 4., 5.])}, path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["ckpt.pt"]                 # no temporary file left behind
    monkeypatch.setattr(ArchiveWriter, "write_record", real)
    assert torch.load(path)["v"].tolist() == [1., 2.]
    torch.save({"v": torch.tensor([3., 4., 5.])}, path)
    assert torch.load(path)["v"].tolist() == [3., 4., 5.]


def test_save_targets(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        torch.save(1, tmp_path / "missing" / "x.pt")
    with open(tmp_path / "f.pt", "wb") as f:
        torch.save(torch.ones(2), f)
    assert torch.load(tmp_path / "f.pt").tolist() == [1., 1.]
    with open(tmp_path / "f.pt", "rb") as f:
        assert torch.load(f).tolist() == [1., 1.]
    torch.save(torch.ones(1), str(tmp_path / "s.pt"))
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "s.pt").stat().st_mode & 0o777 == 0o666 & ~mask
    with pytest.raises(AttributeError, match="has no callable attribute 'write'"):
        torch.save(1, 42)


# ---- events ---------------------------------------------------------------------------------------

def test_save_and_load_events(tmp_path):
    path = tmp_path / "e.pt"
    base = torch.arange(10.)
    with torch.record() as tr:
        torch.save({"a": base, "b": base[3:], "c": torch.ones(2, dtype=torch.int64)}, path)
        back = torch.load(path)
    size = path.stat().st_size
    saves, loads = tr.of_kind("save"), tr.of_kind("load")
    assert [{k: e[k] for k in ("path", "bytes", "tensors", "storages")} for e in saves] == [
        {"path": str(path), "bytes": size, "tensors": 3, "storages": 2}]
    assert [{k: e[k] for k in ("path", "bytes", "tensors", "storages")} for e in loads] == [
        {"path": str(path), "bytes": size, "tensors": 3, "storages": 2}]
    allocs = [e for e in tr.of_kind("alloc") if e["seq"] > saves[0]["seq"]]
    assert sorted(e["bytes"] for e in allocs if e["category"] == "input") == [16, 40]
    assert back["b"].tolist() == [3., 4., 5., 6., 7., 8., 9.]


# ---- live cross-check with a real PyTorch (never a dependency) -------------------------------------

def test_live_cross_check_with_pytorch(tmp_path):
    real = pytest.importorskip("torch", reason="PyTorch not installed")   # the real one: `torch` here is engine
    ours = tmp_path / "ours.pt"
    base = torch.arange(20.)
    torch.save({"w": base, "v": base[5:8], "i": torch.tensor([1, 2]), "p": torch.nn.Parameter(torch.ones(2))}, ours)
    x = real.load(ours, weights_only=True)
    assert x["v"].tolist() == [5., 6., 7.] and x["w"].untyped_storage().data_ptr() == x["v"].untyped_storage().data_ptr()
    theirs = tmp_path / "theirs.pt"
    b = real.arange(20.)
    real.save({"w": b, "v": b[5:8]}, theirs)
    y = torch.load(theirs)
    assert y["v"].tolist() == [5., 6., 7.] and y["w"]._storage is y["v"]._storage


def test_torchscript_archive_refused():
    buf = io.BytesIO()
    w = ArchiveWriter(buf, "ts")
    for name in ("data.pkl", "constants.pkl", "code/__torch__/m.py"):
        w.write_record(name, b"\x80\x02N.")
    w.finish()
    with pytest.raises(RuntimeError, match=r"TorchScript archive \(torch.jit.save\)"):
        torch.load(io.BytesIO(buf.getvalue()))


def _retyped(storage_class: str, record: bytes, byteorder=b"little") -> bytes:
    """A float32 tensor's data.pkl with its storage class renamed, and a new record and byteorder."""
    pkl = zipfile.ZipFile(io.BytesIO(archive_bytes(torch.zeros(3)))).read("archive/data.pkl")
    pkl = pkl.replace(b"torch\nFloatStorage\n", f"torch\n{storage_class}\n".encode())
    buf = io.BytesIO()
    w = ArchiveWriter(buf, "archive")
    w.write_record("data.pkl", pkl)
    w.write_record("byteorder", byteorder)
    w.write_record("data/0", record)
    w.finish()
    return buf.getvalue()


@pytest.mark.parametrize("storage_class, record, dtype, values", [
    ("IntStorage", np.array([1, -2, 3], "<i4").tobytes(), "int32", [1, -2, 3]),
    ("ByteStorage", bytes([0, 200, 255]), "uint8", [0, 200, 255]),
    ("CharStorage", bytes([0, 200, 255]), "int8", [0, -56, -1]),
    ("ShortStorage", np.array([7, -300, 3], "<i2").tobytes(), "int16", [7, -300, 3]),
    ("HalfStorage", np.array([0.5, -2, 1024], "<f2").tobytes(), "float16", [0.5, -2.0, 1024.0]),
    ("BFloat16Storage", np.array([1.0, -3.0, 0.5], "<f4").view("<u4").__rshift__(16).astype("<u2").tobytes(),
     "bfloat16", [1.0, -3.0, 0.5]),
])
def test_other_torch_dtypes_load_as_themselves(storage_class, record, dtype, values):
    t = torch.load(io.BytesIO(_retyped(storage_class, record)))
    assert t.dtype.name == dtype and t.tolist() == values


def test_big_endian_file():
    t = torch.load(io.BytesIO(_retyped("DoubleStorage", np.array([1.5, -2, 3], ">f8").tobytes(), b"big")))
    assert t.dtype is torch.float64 and t.tolist() == [1.5, -2.0, 3.0]
    with pytest.raises(RuntimeError, match="unknown byteorder"):
        torch.load(io.BytesIO(_retyped("FloatStorage", b"\0" * 12, b"middle")))


def test_load_keyword_compatibility():
    assert torch.load(FIX / "tensor_f32.pt", weights_only=False, mmap=True).tolist() == [[0., 1., 2.], [3., 4., 5.]]
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        torch.load(FIX / "tensor_f32.pt", pickle_module=pickle)


def test_counter_round_trips_with_pythons_own_pickle_bytes(tmp_path):
    # a MultiStepLR state_dict holds collections.Counter; torch.save writes it as Python's pickler does
    import collections
    import pickle
    import zipfile

    obj = {"m": collections.Counter({30: 1, 80: 2})}
    p = tmp_path / "c.pt"
    torch.save(obj, p)
    with zipfile.ZipFile(p) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    assert data == pickle.dumps(obj, protocol=2)
    back = torch.load(p)
    assert type(back["m"]) is collections.Counter and back == obj
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [30, 80])
    torch.save(sched.state_dict(), tmp_path / "s.pt")
    assert torch.load(tmp_path / "s.pt") == sched.state_dict()


def test_counter_from_anything_but_a_dict_of_counts_is_refused():
    import collections

    for bad in ([("a", 1)], {"a": [1]}, {("t",): 1}):
        class Hostile:
            def __reduce__(self, bad=bad):
                return (collections.Counter, (bad,))

        with pytest.raises(pickle.UnpicklingError, match="Counter is built from something other than one dict"):
            torch.load(io.BytesIO(craft(pickle.dumps(Hostile(), protocol=2))))
