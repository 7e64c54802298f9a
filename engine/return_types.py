"""PyTorch's structured results (``torch.return_types``): tuples with named fields.

``x.max(dim=0)`` gives a ``return_types.max``: it unpacks as ``values, indices``, reads as
``.values`` / ``.indices``, and prints as PyTorch prints it.
"""
from __future__ import annotations

import collections

_FIELDS = {
    "max": ("values", "indices"), "min": ("values", "indices"), "sort": ("values", "indices"),
    "topk": ("values", "indices"), "kthvalue": ("values", "indices"), "median": ("values", "indices"),
    "nanmedian": ("values", "indices"), "mode": ("values", "indices"), "cummax": ("values", "indices"),
    "cummin": ("values", "indices"), "aminmax": ("min", "max"), "slogdet": ("sign", "logabsdet"),
    "linalg_slogdet": ("sign", "logabsdet"), "qr": ("Q", "R"), "linalg_qr": ("Q", "R"),
    "svd": ("U", "S", "V"), "linalg_svd": ("U", "S", "Vh"), "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"), "histogram": ("hist", "bin_edges"),
}


def _repr(self) -> str:
    body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{body})"


def _make(name: str, fields) -> type:
    base = collections.namedtuple(name, fields)
    return type(name, (base,), {"__slots__": (), "__repr__": _repr, "__str__": _repr, "__module__": __name__,
                                "n_fields": len(fields), "n_sequence_fields": len(fields),
                                "n_unnamed_fields": 0})


globals().update({name: _make(name, fields) for name, fields in _FIELDS.items()})
__all__ = sorted(_FIELDS)
