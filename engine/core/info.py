"""Small JSON-ready descriptions of tensors and nodes, for events."""
from __future__ import annotations


def tensor_info(t) -> dict:
    return {"id": t._id, "storage": t._storage.id, "shape": list(t._data.shape), "dtype": t.dtype.name,
            "bytes": t.numel() * t.dtype.itemsize, "storage_bytes": t._storage.nbytes,
            "device": str(t.device), "requires_grad": t.requires_grad, "leaf": t.grad_fn is None,
            "grad_fn": t.grad_fn.id if t.grad_fn is not None else None, "name": t._gg_name}


def _attr(v):
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (tuple, list)):
        return [_attr(x) for x in v]
    return repr(v)


def node_info(node) -> dict:
    saved = []
    for name, s in node._saved.items():
        st = s.counted
        saved.append({"name": name, "storage": st.id if st is not None else None,
                      "bytes": st.nbytes if st is not None else 0,
                      "shape": list(s.meta[1]), "dtype": s.meta[0].name,
                      "is_output": s.is_output, "packed": s.unpack_hook is not None})
    return {"id": node.id, "name": node.name(),
            "next": [[n.id if n is not None else None, nr, n.name() if n is not None else None]
                     for n, nr in node.next_functions],
            "saved": saved,
            "attrs": {k: _attr(v) for k, v in getattr(node, "_attrs", {}).items() if "#" not in k}}
