"""``repr`` of a sparse tensor, as PyTorch prints it.

NOTE [ Printing a sparse tensor ]
1. ``tensor(indices=tensor(...),\\n       values=tensor(...),\\n       size=..., nnz=..., ...)``: the
   indices' and values' bodies are printed as dense tensors are, their continuation lines
   indented past ``tensor(indices=tensor(`` / ``       values=tensor(``.
2. An empty body gets ``, size=(...)`` after it; the suffixes are ``size``, ``nnz``, ``dtype``
   (unless the default float dtype, int64 or bool), ``layout``, then ``grad_fn`` or ``requires_grad``. The first suffix
   starts a new line; each further one joins the line unless it would pass the line width.
"""
from __future__ import annotations

from ..backend import dtypes as _dtype
from ..backend import gaps as _backend
from ..backend.print_options import PRINT_OPTS
from ..printing import _format_body

_INDENT = len("tensor(")


def _body(t, extra: int) -> str:
    a = _backend.to_numpy(t._storage.xp, t._data)
    body = _format_body(a).replace("\n", "\n" + " " * extra)
    if a.size == 0:
        body += f", size={tuple(a.shape)}"
    return body


def sparse_repr(sp) -> str:
    """NOTE [ Printing a sparse tensor ]."""
    ip, vp = "indices=tensor(", "values=tensor("
    text = ("tensor(" + ip + _body(sp._indices_t, len(ip)) + "),\n" + " " * _INDENT + vp
            + _body(sp._values_t, len(vp)) + ")")
    suffixes = [f"size={tuple(sp.shape)}", f"nnz={sp._nnz()}"]
    if sp.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_):
        suffixes.append(f"dtype={sp.dtype!r}")
    suffixes.append("layout=torch.sparse_coo")
    if sp.grad_fn is not None:
        suffixes.append(f"grad_fn=<{sp.grad_fn.name().rpartition('::')[2]}>")
    elif sp.requires_grad:
        suffixes.append("requires_grad=True")
    parts, last, newline = [text], 0, True       # rule 2
    for s in suffixes:
        if newline or last + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * _INDENT + s)
            last, newline = _INDENT + len(s), False
        else:
            parts.append(", " + s)
            last += len(s) + 2
    return "".join(parts) + ")"
