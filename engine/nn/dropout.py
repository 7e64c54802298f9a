"""``Dropout``."""
from __future__ import annotations

from . import functional as F
from .module import Module


class _DropoutNd(Module):
    """``p`` and ``inplace``, checked as PyTorch checks them; subclasses name the function."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return self._dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` while training; the identity in eval mode."""

    @staticmethod
    def _dropout(*args):
        return F.dropout(*args)
