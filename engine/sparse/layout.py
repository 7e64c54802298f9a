"""``torch.layout``: how a tensor's elements are stored (``torch.strided``, ``torch.sparse_coo``)."""
from __future__ import annotations


class layout:
    """A memory layout; prints as PyTorch's name (``torch.sparse_coo``)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name     # pickled by the module-level name, so it stays the one object


strided = layout("strided")
sparse_coo = layout("sparse_coo")
