"""``Flatten`` and ``Unflatten``."""
from __future__ import annotations

from ... import functional as E
from .module import Module


class Flatten(Module):
    """Flattens dimensions ``start_dim``..``end_dim`` (by default all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return E.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (a view, as ``Tensor.unflatten``)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int)
                                                                          for s in unflattened_size):
                raise TypeError(f"unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
        elif not isinstance(dim, str):
            raise TypeError(f"invalid argument type for dim parameter, expected int or str but got {type(dim)}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return E.unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
