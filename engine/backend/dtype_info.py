"""``finfo``, ``iinfo``, ``result_type`` and ``can_cast``: facts about glassgrad's dtypes."""
from __future__ import annotations

import numpy as np

from . import dtypes as _dtype


def _np(d) -> np.dtype:
    return np.dtype(_dtype.to_array_dtype(np, d))


class finfo:
    """Machine limits of a floating dtype (the default dtype when none is given), as torch.finfo."""

    def __init__(self, type=None):  # noqa: A002
        d = type if type is not None else _dtype.get_default_dtype()
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if d is _dtype.bfloat16:
            import ml_dtypes
            f = ml_dtypes.finfo(ml_dtypes.bfloat16)
        else:
            f = np.finfo(_np(d))
        self.dtype = d.name
        self.bits = int(f.bits)
        self.eps, self.max, self.min = float(f.eps), float(f.max), float(f.min)
        self.tiny = self.smallest_normal = float(f.smallest_normal)
        self.resolution = 10.0 ** -int(f.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type):  # noqa: A002
        if type is _dtype.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        i = np.iinfo(_np(type))
        self.dtype = type.name
        self.bits, self.max, self.min = int(i.bits), int(i.max), int(i.min)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def result_type(tensor1, tensor2):
    """The dtype an op on the two operands (tensors or Python numbers) computes in (NOTE [ Type promotion ])."""
    return _dtype.result_type([tensor1, tensor2])


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` -> ``to`` without a change of kind downward
    (float -> int, or anything non-bool -> bool, is refused)."""
    return _dtype._KIND_RANK[to._kind] >= _dtype._KIND_RANK[from_._kind]
