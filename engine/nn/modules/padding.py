"""The padding modules: ``F.pad`` with a fixed padding and mode (constant, zero, reflection, replication,
circular; 1-D to 3-D)."""
from __future__ import annotations

from ..functional.padding import pad
from .module import Module


class _PadNd(Module):
    """``padding`` an int (the same on every side of the last ``_dims`` dims) or a tuple as F.pad takes it."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = (padding,) * (2 * self._dims) if isinstance(padding, int) else tuple(padding)

    def _check_input_dim(self, input):
        pass

    def forward(self, input):
        self._check_input_dim(input)
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``."""
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``."""
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``."""
    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last 2 dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection (the edge not repeated)."""
    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last 2 dims with their reflection."""
    _dims, _mode = 2, "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values."""
    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last 2 dims by repeating their edge values."""
    _dims, _mode = 2, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):
        a, b = self._dims + 1, self._dims + 2
        if input.ndim not in (a, b):
            raise ValueError(f"expected {a}D or {b}D input (got {input.ndim}D input)")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around (the input seen as periodic)."""
    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims by wrapping around."""
    _dims = 2


class ZeroPad3d(ConstantPad3d):
    """Pads the last 3 dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad3d(_PadNd):
    """Pads the last 3 dims with their reflection."""
    _dims, _mode = 3, "reflect"


class ReplicationPad3d(_PadNd):
    """Pads the last 3 dims by repeating their edge values."""
    _dims, _mode = 3, "replicate"


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims by wrapping around."""
    _dims = 3
