"""Lesson 6: what is inside a checkpoint file. Open a file engine.save wrote: a zip, a pickle program, raw storages."""
import os
import pickle
import pickletools
import tempfile
import zipfile

import numpy as np

import engine as torch
from engine.serialization import inspect_archive
from lessons._facts import nbytes
from lessons._format import Check, Focus, Lesson, Step
from replay.records import file_event

# ---------------------------------------------------------------- steps (the code the learner reads)


def save_a_model(s):
    s.dir = tempfile.TemporaryDirectory()
    s.path = os.path.join(s.dir.name, "tiny.pt")
    s.model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    torch.save(s.model.state_dict(), s.path)

    s.archive = zipfile.ZipFile(s.path)              # a checkpoint is an ordinary zip file
    records = inspect_archive(s.path)["records"]     # each record: name, size, where its bytes start
    return {"file_bytes": os.path.getsize(s.path),
            "listing": [(i.filename, i.file_size) for i in s.archive.infolist()],   # what a zip tool lists
            "offsets": [r["data_offset"] for r in records],
            "records": _table(records),
            "n_records": len(records),
            "n_storage_records": sum("/data/" in r["name"] for r in records),
            "all_aligned": all(r["data_offset"] % 64 == 0 for r in records),
            "stored": all(i.compress_type == zipfile.ZIP_STORED for i in s.archive.infolist())}


def read_data_pkl(s):
    s.pkl = s.archive.read("tiny/data.pkl")
    ops = list(pickletools.genops(s.pkl))            # parses the program; runs none of it
    bias_record = s.archive.read("tiny/data/1")      # the second storage met: 0.bias
    bias_from_file = np.frombuffer(bias_record, dtype="<f4")
    w = s.model[0].weight
    return {"w_layout": f"offset {w.storage_offset()}, size {tuple(w.shape)}, stride {w.stride()}",
            "pkl_bytes": len(s.pkl),
            "n_ops": len(ops),
            "listing": _listing(ops),
            "globals": ", ".join(sorted({arg.replace(" ", ".") for op, arg, _ in ops if op.name == "GLOBAL"})),
            "n_persid": sum(op.name == "BINPERSID" for op, _, _ in ops),
            "bias_record_bytes": len(bias_record),
            "bias_from_file": [round(float(v), 4) for v in bias_from_file],
            "bias_in_model": [round(v, 4) for v in s.model[0].bias.tolist()]}


def sharing(s):
    base = torch.arange(100000, dtype=torch.float32)
    window = base[10:20]                             # a view: same storage, offset 10
    both = os.path.join(s.dir.name, "both.pt")
    torch.save({"base": base, "window": window}, both)
    alone = os.path.join(s.dir.name, "alone.pt")
    torch.save({"window": window.clone()}, alone)    # a copy has a 10-element storage of its own

    back = torch.load(both)
    shared = back["window"].untyped_storage() is back["base"].untyped_storage()
    back["window"].zero_()                           # write through the loaded view ...
    return {"both_bytes": os.path.getsize(both),
            "alone_bytes": os.path.getsize(alone),
            "records_both": sorted(n for n in zipfile.ZipFile(both).namelist() if "/data/" in n),
            "window_offset": back["window"].storage_offset(),
            "shared": shared,
            "base_8_to_12": back["base"][8:12].tolist()}   # ... and the base sees it


def map_location(s):
    tagged = _retag(s.path, "cuda:0")                # the same file with its location tags set to cuda:0
    try:
        plain = f"loaded on {torch.load(tagged)['0.weight'].device}"
    except RuntimeError as e:
        plain = str(e)
    seen = []

    def to_cpu(storage, location):                   # a callable gets each storage (on the CPU) and its tag
        seen.append(location)
        return storage

    ways = {"'cpu'": "cpu", "torch.device('cpu')": torch.device("cpu"),
            "a dict": {"cuda:0": "cpu"}, "a callable": to_cpu}
    devices = {name: str(torch.load(tagged, map_location=ml)["0.weight"].device) for name, ml in ways.items()}
    return {"plain": plain, "devices": ", ".join(f"{k} gives {v}" for k, v in devices.items()),
            "all_cpu": set(devices.values()) == {"cpu"}, "seen": ", ".join(seen),
            "gpu": torch.cuda.is_available()}


def a_hostile_file(s):
    evil = b"\x80\x02cos\ngetcwd\n)R."               # a pickle program: GLOBAL os.getcwd, (), REDUCE (call it)
    ran = pickle.loads(evil)                         # plain pickle obeys: it called a function of the file's choice

    path = os.path.join(s.dir.name, "evil.pt")
    with zipfile.ZipFile(path, "w") as z:            # the same program, packed as a checkpoint
        z.writestr("evil/data.pkl", evil)
    try:
        torch.load(path)
        refused = "it loaded"
    except pickle.UnpicklingError as e:
        refused = str(e).split("\n\n")[-1]
    s.archive.close()
    s.dir.cleanup()                                  # remove this lesson's files
    return {"evil_listing": _listing(list(pickletools.genops(evil))),
            "plain_pickle_returned": ran,
            "matches_cwd": ran == os.getcwd(),
            "refused": refused}


# ---------------------------------------------------------------- helpers (presentation only)

_SAYS = {
    "PROTO": "pickle protocol {arg}",
    "GLOBAL": "push a global, named for the loader to look up",
    "MARK": "start a group",
    "BINUNICODE": "push a string",
    "BININT1": "push {arg}", "BININT": "push {arg}", "BININT2": "push {arg}",
    "TUPLE": "pack the group into a tuple",
    "TUPLE1": "pack 1 item into a tuple", "TUPLE2": "pack 2 items into a tuple",
    "TUPLE3": "pack 3 items into a tuple", "BINPUT": "remember the top in memo entry {arg}",
    "EMPTY_TUPLE": "push ()",
    "BINPERSID": "persistent id: the loader swaps it for a storage",
    "NEWFALSE": "push False", "NEWTRUE": "push True",
    "REDUCE": "call the global with the tuple",
    "SETITEMS": "put the group's key/value pairs into the dict",
    "EMPTY_DICT": "push an empty dict",
    "BINGET": "push memo entry {arg} again",
    "STOP": "done: the top of the stack is the result",
}


def _listing(ops, limit=34) -> str:
    """The program as lines `offset  OPCODE  argument  what it does`, memo writes left out."""
    lines, depth = [], 0
    for op, arg, pos in ops:
        if op.name in ("BINPUT", "LONG_BINPUT", "MEMOIZE"):
            continue
        if op.name in ("TUPLE", "SETITEMS", "APPENDS"):
            depth = max(depth - 1, 0)
        shown = "" if arg is None else repr(arg) if isinstance(arg, str) and op.name != "GLOBAL" else str(arg)
        if op.name == "GLOBAL":
            shown = arg.replace(" ", ".")
        says = _SAYS.get(op.name, "").format(arg=arg if op.name != "GLOBAL" else shown)
        lines.append(f"{pos:4d}  {('  ' * depth + op.name):<19} {shown:<32} {says}".rstrip())
        if op.name == "MARK":
            depth += 1
        if len(lines) == limit:
            lines.append("      ... (the other tensors repeat the pattern, reusing memo entries)")
            break
    return "\n".join(lines)


def _table(records) -> str:
    rows = [f"{'record':<34} {'bytes':>6} {'data at':>8}"]
    rows += [f"{r['name']:<34} {r['size']:>6} {r['data_offset']:>8}" for r in records]
    return "\n".join(rows)


def _retag(path, location):
    """Copy the checkpoint at ``path`` with every storage's location string replaced by ``location``."""
    out = path.replace(".pt", "_tagged.pt")
    cpu = b"X\x03\x00\x00\x00cpu"                   # BINUNICODE, 4-byte length, 'cpu'
    new = b"X" + len(location).to_bytes(4, "little") + location.encode()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info.filename, data.replace(cpu, new) if info.filename.endswith("data.pkl") else data)
    return out


# ---------------------------------------------------------------- facts and checks

def _files(run, kind):
    """The step's save or load events as the records panel shows them (replay.records)."""
    return [file_event(run.start + k, e) for k, e in enumerate(run.events) if e["kind"] == kind]


def _views(storage) -> str:
    return " and ".join(f"`{v.name}`" + (f" (offset {v.offset})" if v.offset else "") for v in storage.views)


def save_facts(run):
    ev = run.of_kind("save")[0]
    fe = _files(run, "save")[0]
    return {"save_bytes": ev["bytes"], "save_tensors": ev["tensors"], "save_storages": ev["storages"],
            "file_size": nbytes(ev["bytes"]),
            "trace_listing": [(r.name, r.bytes) for r in fe.records],
            "trace_offsets": [r.data_offset for r in fe.records],
            "panel_storages": ", ".join(f"`{s.record}` ({s.numel} {s.dtype}: {_views(s)})" for s in fe.storages),
            "one_view_each": [len(s.views) for s in fe.storages] == [1] * len(fe.storages)}


def sharing_facts(run):
    load = run.of_kind("load")[0]
    last_save = run.of_kind("save")[-1]
    made = [e for e in run.of_kind("alloc") if last_save["seq"] < e["seq"] < load["seq"]]
    both, loaded = _files(run, "save")[0], _files(run, "load")[0]
    shared, rebuilt = both.storages[0], loaded.storages[0]
    return {"load_storages": load["storages"], "load_tensors": load["tensors"],
            "load_allocs": " and ".join(f"{e['bytes']:,} B of {e['category']} memory" for e in made),
            "n_load_allocs": len(made), "alloc_storages": [e["storage"] for e in made],
            "both_records": len(both.storages), "both_numel": shared.numel, "both_views": _views(shared),
            "both_view_offsets": [(v.name, v.offset) for v in shared.views],
            "load_read": len(loaded.read), "load_records": len(loaded.records),
            "unread": ", ".join(f"`{r.short}`" for r in loaded.records if not r.read),
            "load_storage_id": rebuilt.storage, "load_views": _views(rebuilt),
            "load_view_offsets": [(v.name, v.offset) for v in rebuilt.views]}


def pkl_facts(run):
    saves = [k for k, e in enumerate(run.trace.events[:run.start]) if e["kind"] == "save"]
    fe = file_event(saves[-1], run.trace.events[saves[-1]])        # the save of tiny.pt, step 1
    pkl = next(r for r in fe.records if r.short == "data.pkl")
    bias = fe.storage_of_record(f"{fe.folder}/data/1")
    return {"pkl_in_trace": pkl.bytes, "bias_view": (bias.views[0].name, bias.bytes)}


def map_facts(run):
    last = _files(run, "load")[-1]
    return {"panel_tags": sorted({s.location for s in last.storages}),
            "panel_devices": sorted({s.device for s in last.storages}),
            "panel_n": len(last.storages),
            "tags_text": ", ".join(f"`{t}`" for t in sorted({s.location for s in last.storages})),
            "devices_text": ", ".join(f"`{d}`" for d in sorted({s.device for s in last.storages}))}


def _save_event_matches_file(run):
    return run.values["save_bytes"] == run.values["file_bytes"], f"{run.values['save_bytes']} vs {run.values['file_bytes']}"


def _shared_cost(run):
    v = run.values
    return 400000 < v["both_bytes"] < 400000 + 2048 and v["alone_bytes"] < 2048, \
        f"{v['both_bytes']} B with the view, {v['alone_bytes']} B for the copy alone"


def _cuda_message(run):
    v = run.values
    if v["gpu"]:
        return v["plain"] == "loaded on cuda:0", v["plain"]
    return v["plain"].startswith("Attempting to deserialize object on a CUDA device"), v["plain"][:60]


LESSON = Lesson(
    number=6,
    slug="checkpoint_file",
    title="What is inside a checkpoint file",
    summary="engine.save writes PyTorch's zip format: a pickle program, raw storage records, and a loader that runs no code.",
    steps=(
        Step(
            title="A checkpoint is a zip file",
            narrative="""\
`torch.save(model.state_dict(), "tiny.pt")` wrote {file_bytes:,} bytes. Open it
with any zip tool and you find {n_records} records in one folder named after
the file:

```
{records}
```

`data.pkl` describes the object. The {n_storage_records} `data/<key>` records
are raw tensor bytes, one per **storage**: two weight matrices and two bias
vectors. The small records hold the byte order, the format version and a
random id for this save.

Two details make the file quick to read. Nothing is compressed, and every
record's bytes start at a multiple of 64 (see "data at"), so a loader can copy
a tensor straight out of the file. glassgrad writes the same layout as
PyTorch, so real PyTorch can load this file with
`torch.load(..., weights_only=True)`, and glassgrad loads PyTorch's files.

The **records panel** shows the file as the `save` event recorded it: the
same records, then each storage with the tensors that view it:
{panel_storages}.

Read the code: `engine/serialization/archive.py`, NOTE [ The checkpoint zip
layout ] 1 and 2; what the records panel reads:
`engine/serialization/trace_fields.py`, NOTE [ Records in save and load
events ] 1 to 3.""",
            code=save_a_model,
            facts=save_facts,
            focus=Focus("records", "first save"),
            checks=(
                Check("the save event reports {save_bytes:,} B, the file's size", _save_event_matches_file),
                Check("the save event lists the {n_records} records of the zip's own directory, "
                      "with their sizes and offsets",
                      lambda r: r.values["trace_listing"] == r.values["listing"]
                      and r.values["trace_offsets"] == r.values["offsets"]),
                Check("each of the {save_storages} storage records is viewed by one tensor",
                      lambda r: r.values["one_view_each"]),
                Check("{save_tensors} tensors went into {save_storages} storage records",
                      lambda r: r.values["save_tensors"] == 4 and r.values["save_storages"] == 4
                      and r.values["n_storage_records"] == 4),
                Check("every record starts on a multiple of 64 and none is compressed",
                      lambda r: r.values["all_aligned"] and r.values["stored"]),
            ),
        ),
        Step(
            title="data.pkl is a small program",
            narrative="""\
A pickle is not a data table but a program for a tiny stack machine.
`data.pkl` is {pkl_bytes} bytes long and holds {n_ops} instructions. Here is
the start of it, with the memo writes left out (one tensor, `0.weight`):

```
{listing}
```

The first lines make the empty `OrderedDict` that will become the state
dict. The indented block builds `0.weight`: its last `REDUCE` calls
`torch._utils._rebuild_tensor_v2` with one tuple: a **storage**, then
{w_layout} (the same numbers as the model's `0.weight`), `requires_grad`
False, and an empty `OrderedDict` of hooks. The storage is not in the pickle. It is
a **persistent id**, the tuple `('storage', torch.FloatStorage, key,
location, numel)`, and `BINPERSID` asks the loader to replace it with the
record `data/<key>`. The storage class is the only place the dtype is
written down.

The whole program names only these globals: {globals}. It has
{n_persid} persistent ids, one per tensor. Record `data/1` is
{bias_record_bytes} raw bytes, 4 little-endian float32 numbers:
{bias_from_file}, which is exactly the model's `0.bias` {bias_in_model}.
The records panel still shows `tiny.pt`: `data.pkl` is its first record
({pkl_in_trace} bytes) and `data/1` holds `0.bias`.

Read the code: `engine/serialization/pickler.py`, NOTE [ Writing data.pkl
by hand ] 1 to 3; `engine/serialization/restore.py`, NOTE [ Restoring
storages ] 1.""",
            code=read_data_pkl,
            facts=pkl_facts,
            focus=Focus("records", "start"),
            checks=(
                Check("data.pkl names only {globals}",
                      lambda r: r.values["globals"] == "collections.OrderedDict, torch.FloatStorage, "
                                                       "torch._utils._rebuild_tensor_v2"),
                Check("{n_persid} persistent ids, one per tensor", lambda r: r.values["n_persid"] == 4),
                Check("record data/1 holds 0.bias byte for byte",
                      lambda r: r.values["bias_from_file"] == r.values["bias_in_model"]
                      and r.values["bias_record_bytes"] == 16),
                Check("the save event's data.pkl and data/1 have the sizes read from the zip",
                      lambda r: r.values["pkl_in_trace"] == r.values["pkl_bytes"]
                      and r.values["bias_view"] == ("0.bias", r.values["bias_record_bytes"])),
            ),
        ),
        Step(
            title="A storage is written once, however many tensors use it",
            narrative="""\
`window = base[10:20]` is a view: 10 numbers inside the 100,000-element
storage of `base`. Saving both tensors makes a {both_bytes:,}-byte file with
the storage records {records_both}. The storage is written once, and `window`
costs only a few pickle bytes: the same persistent id with offset 10. A
checkpoint of `window.clone()` on its own is {alone_bytes:,} bytes, because a
copy owns a 10-element storage of its own.

Loading reads {load_storages} storage for {load_tensors} tensors: it
allocates {load_allocs}, and rebuilds `window` as a view again, at
offset {window_offset}. The two still share memory
(`same storage: {shared}`), so zeroing the loaded window changes the loaded
base: `base[8:12]` is now {base_8_to_12}.

In the records panel, the save of `both.pt` has {both_records} storage record
of {both_numel:,} float32 numbers, viewed by {both_views}. The load read
{load_read} of the file's {load_records} records (not {unread}) and rebuilt
that record as storage {load_storage_id}, viewed again by {load_views}.

Read the code: `engine/serialization/pickler.py`, NOTE [ Writing data.pkl
by hand ] 3 and 5; `engine/serialization/restore.py`, NOTE [ Restoring
storages ] 1 and 3.""",
            code=sharing,
            facts=sharing_facts,
            focus=Focus("records", "first load"),
            checks=(
                Check("saving the base and its view costs one storage ({both_bytes:,} B)", _shared_cost),
                Check("the load read 1 storage for 2 tensors and allocated once ({load_allocs})",
                      lambda r: r.values["load_storages"] == 1 and r.values["load_tensors"] == 2
                      and r.values["records_both"] == ["both/data/0"] and r.values["n_load_allocs"] == 1),
                Check("the loaded view still shares the base's memory",
                      lambda r: r.values["shared"] and r.values["base_8_to_12"] == [8.0, 9.0, 0.0, 0.0]),
                Check("both.pt has one storage record, viewed by base and by window at offset 10",
                      lambda r: r.values["both_records"] == 1
                      and r.values["both_view_offsets"] == [("base", 0), ("window", 10)]),
                Check("the load rebuilt it once (storage {load_storage_id}) for base and window",
                      lambda r: r.values["load_view_offsets"] == [("base", 0), ("window", 10)]
                      and r.values["alloc_storages"] == [r.values["load_storage_id"]]),
            ),
        ),
        Step(
            title="Where the storages go: map_location",
            narrative="""\
Every persistent id records a location, such as `'cpu'` or `'cuda:0'`. Here
the same file was copied with each location rewritten to `'cuda:0'`, as if it
had been saved on a GPU. A plain `torch.load` puts each storage back where
its tag says. On this machine that gives:

> {plain}

`map_location` overrides the tag. A string or device sends everything there;
a dict maps only the tags it lists; a callable gets each storage (already on
the CPU) together with its tag, and returns what to use. Here: {devices}. The
callable saw the tags {seen}. The records panel shows that last load: each of
its {panel_n} storages has the tag {tags_text} and was rebuilt on {devices_text}.

Read the code: `engine/serialization/restore.py`, NOTE [ Restoring
storages ] 2.""",
            code=map_location,
            facts=map_facts,
            focus=Focus("records", "last load"),
            checks=(
                Check("without map_location, a cuda:0 tag needs a GPU", _cuda_message),
                Check("all four forms of map_location loaded onto the CPU", lambda r: r.values["all_cpu"]),
                Check("the callable saw one cuda:0 tag per storage",
                      lambda r: r.values["seen"] == ", ".join(["cuda:0"] * 4)),
                Check("the last load event tags its {panel_n} storages cuda:0 and rebuilt them on the CPU",
                      lambda r: r.values["panel_tags"] == ["cuda:0"] and r.values["panel_devices"] == ["cpu"]
                      and r.values["panel_n"] == 4),
            ),
        ),
        Step(
            title="Why loading a pickle can run code, and how the allow-list stops it",
            narrative="""\
Because a pickle is a program, a file can tell the loader to import any
function and call it. Here is a harmless one, the whole program:

```
{evil_listing}
```

Plain `pickle.loads` obeyed it: it imported `os.getcwd`, called it, and
returned {plain_pickle_returned!r}, your working directory. A real attack
would name `os.system` or `subprocess` instead.

`engine.load` never hands a file to `pickle`. It runs `data.pkl` on its own
small interpreter, which looks every `GLOBAL` up in a short allow-list: the
tensor rebuild functions, the storage classes, `OrderedDict`, `torch.device`,
`torch.Size` and the dtypes. Any other name stops the load before anything
runs:

> {refused}

PyTorch's `torch.load(..., weights_only=True)` works on the same idea, and it
has been the default since PyTorch 2.6. In PyTorch, pass `weights_only=False`
only for files whose author you trust.

Read the code: `engine/serialization/unpickler.py`, NOTE [ Loading without
running code ] 1 to 3.""",
            code=a_hostile_file,
            focus=Focus("log", "end"),
            checks=(
                Check("plain pickle really called os.getcwd()", lambda r: r.values["matches_cwd"]),
                Check("engine.load refused the global os.getcwd",
                      lambda r: "Unsupported global: GLOBAL os.getcwd" in r.values["refused"]),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
