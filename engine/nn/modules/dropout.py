"""``Dropout``, channel dropout (``Dropout1d/2d/3d``) and alpha dropout (``AlphaDropout``,
``FeatureAlphaDropout``)."""
from __future__ import annotations

from .. import functional as F
from ..functional.dropouts import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
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


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) input with probability ``p`` while training."""

    @staticmethod
    def _dropout(*args):
        return dropout1d(*args)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels with probability ``p`` while training; the identity in eval mode."""

    @staticmethod
    def _dropout(*args):
        return dropout2d(*args)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) input with probability ``p`` while training."""

    @staticmethod
    def _dropout(*args):
        return dropout3d(*args)


class AlphaDropout(_DropoutNd):
    """Alpha dropout while training (for SELU networks); the identity in eval mode."""

    @staticmethod
    def _dropout(*args):
        return alpha_dropout(*args)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels while training; the identity in eval mode."""

    @staticmethod
    def _dropout(*args):
        return feature_alpha_dropout(*args)
