"""What the ``save`` and ``load`` events say about the file: its records and its storages.

NOTE [ Records in save and load events ]
1. ``records``: every record of the archive in file order, ``{name, bytes, data_offset}``
   (``data_offset``: where the record's bytes start in the file, a multiple of 64). A
   ``load`` event adds ``read``: whether this load read the record.
2. ``storage_records``: one entry per ``data/<key>`` record, in the order data.pkl names
   them: ``{key, record, storage_type, dtype, numel, bytes, location, storage, device,
   views}``. ``bytes`` is the record's size in the file; ``storage`` is the engine's id of
   the storage written (save) or rebuilt (load, the id its ``alloc`` event carries).
3. ``views``: the tensors of the object that use the storage, ``{name, tensor, shape,
   offset, stride, parameter}``; ``offset`` and ``stride`` are in elements of the storage.
   ``name`` says where the tensor sits in the object: a top-level string key as it is
   (a state_dict key such as ``0.weight``), deeper keys and list positions as subscripts
   (``state[0]['exp_avg']``), ``obj`` for the object itself.
4. A view whose layout the file cannot express is written as a contiguous copy in a
   record of its own (NOTE [ Writing data.pkl by hand ] rule 5): its entry says
   ``copy: true``, and ``storage`` names the storage it was copied from.
5. These fields are built only while a recorder listens; saving and loading without
   one does not walk the object.
"""
from __future__ import annotations

import collections


def saved(obj, writer, pickler) -> dict:
    """The ``records`` and ``storage_records`` fields of a ``save`` event (rules 1 to 4)."""
    names = _names_by_tensor(obj)
    records = [{"name": fname.decode("utf-8"), "bytes": size, "data_offset": at}
               for (fname, _, size, _), at in zip(writer.central, writer.data_offsets)]
    prefix = f"{writer.folder}/data/"
    size_of = {r["name"]: r["bytes"] for r in records}
    out, index = [], {}
    for rec in pickler.records:
        entry = {"key": rec.key, "record": prefix + rec.key, "storage_type": rec.storage_type, "dtype": None,
                 "numel": rec.numel, "bytes": size_of[prefix + rec.key], "location": rec.location,
                 "storage": None, "device": rec.location, "views": []}
        index[id(rec)] = entry
        out.append(entry)
    for t, rec, offset, stride in pickler.placed:
        entry = index[id(rec)]
        entry["dtype"] = t.dtype.name
        entry["storage"] = t._storage.id
        if rec.owner is t:
            entry["copy"] = True
        for name in names.get(id(t), ()):
            entry["views"].append(_view(name, t, offset, stride))
    return {"records": records, "storage_records": out}


def loaded(obj, reader, loader) -> dict:
    """The ``records`` (with ``read``) and ``storage_records`` fields of a ``load`` event."""
    read = set(reader.reads)
    records = [{"name": r["name"], "bytes": r["size"], "data_offset": r["data_offset"],
                "read": r["name"][len(reader.prefix):] in read} for r in reader.describe()]
    by_storage, out = {}, []
    for key, (stype, st) in loader.storages.items():
        entry = {"key": key, "record": f"{reader.prefix}data/{key}", "storage_type": stype.name,
                 "dtype": stype.dtype_name, "numel": reader.size(f"data/{key}") // stype.np_dtype.itemsize,
                 "bytes": reader.size(f"data/{key}"), "location": loader.locations.get(key),
                 "storage": st.id, "device": str(st.device), "views": []}
        by_storage[id(st)] = entry
        out.append(entry)
    names = _names_by_tensor(obj)
    for t in _tensors(obj):
        entry = by_storage.get(id(t._storage))
        if entry is not None:
            for name in names[id(t)]:
                entry["views"].append(_view(name, t, int(t.storage_offset()), tuple(t.stride())))
    return {"records": records, "storage_records": out}


def _view(name, t, offset, stride) -> dict:
    return {"name": name, "tensor": t._id, "shape": [int(s) for s in t.shape], "offset": int(offset),
            "stride": [int(s) for s in stride], "parameter": bool(getattr(t, "_is_param", False))}


def _name(path) -> str:
    """Where a tensor sits in the saved object (rule 3)."""
    if not path:
        return "obj"
    head = path[0] if isinstance(path[0], str) else f"obj[{path[0]!r}]"
    return head + "".join(f"[{k!r}]" for k in path[1:])


def _walk(obj, path, seen):
    from ..core.tensor import Tensor
    if isinstance(obj, Tensor):
        yield path, obj
        return
    if isinstance(obj, (dict, list, tuple)) and not isinstance(obj, collections.Counter):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        for k, v in items:
            yield from _walk(v, path + (k,), seen)


def _names_by_tensor(obj) -> dict:
    """id(tensor) -> every name under which the object holds it (one tensor may sit at two keys)."""
    out: dict = {}
    for path, t in _walk(obj, (), set()):
        out.setdefault(id(t), []).append(_name(path))
    return out


def _tensors(obj) -> list:
    """Each distinct tensor of the object once, in walk order."""
    seen, out = set(), []
    for _, t in _walk(obj, (), set()):
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out
