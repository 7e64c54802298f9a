"""What a tensor is, asked as PyTorch asks it: ``is_nonzero``, ``is_signed``, ``is_complex``,
``is_inference``, ``typename``, and the Tensor methods ``get_device`` and ``data_ptr``.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..backend import dtypes as _dtype
from ..core.storage import Storage
from ..core.tensor import Tensor
from .args import need_tensor as _need_tensor


def is_nonzero(input) -> bool:
    """Whether the single value of ``input`` is not zero (PyTorch's errors for zero or many values)."""
    _need_tensor("is_nonzero", input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.detach().reshape(()).item() != 0)


def is_signed(input) -> bool:
    """True for every glassgrad dtype but bool."""
    _need_tensor("is_signed", input)
    return input.dtype is not _dtype.bool_


def is_complex(input) -> bool:
    """Whether ``input``'s dtype is complex64 or complex128."""
    _need_tensor("is_complex", input)
    return input.dtype.is_complex


def is_inference(input) -> bool:
    """Whether ``input`` was made inside ``inference_mode()``."""
    _need_tensor("is_inference", input)
    return input.is_inference()


def typename(obj) -> str:
    """A tensor's type name (``torch.FloatTensor``), or ``module.QualName`` for anything else."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qual = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qual = obj.__name__
    else:
        module, qual = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qual if module in ("", "builtins") else f"{module}.{qual}"


def _get_device(self) -> int:
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


def _storage_data_ptr(self) -> int:
    """``untyped_storage().data_ptr()``: the address of the storage's first byte (0 when it has none)."""
    a = getattr(self.array, "_array", self.array)    # array_api_strict wraps a NumPy array
    return 0 if not self.nbytes else int(
        a.__array_interface__["data"][0] if hasattr(a, "__array_interface__") else a.data.ptr)


Storage.data_ptr = _storage_data_ptr   # bound here, beside Tensor.data_ptr


def _data_ptr(self):
    """The address of the tensor's first element: its storage's plus the offset (0 with no elements)."""
    return self._storage.data_ptr() + self.storage_offset() * self.dtype.itemsize if self.numel() else 0


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> builtins.bool:
    return builtins.bool(np.allclose(a.detach().numpy(force=True), b.detach().numpy(force=True), rtol, atol, equal_nan))


def equal(a, b) -> builtins.bool:
    return tuple(a.shape) == tuple(b.shape) and builtins.bool(np.array_equal(a.detach().numpy(force=True), b.detach().numpy(force=True)))


def detach(input):
    return input.detach()


def numel(input) -> int:
    return input.numel()


def is_tensor(obj) -> builtins.bool:
    return isinstance(obj, Tensor)


def is_floating_point(input) -> builtins.bool:
    return input.dtype.is_floating_point


__all__ = ["is_nonzero", "is_signed", "is_complex", "is_inference", "typename", "allclose", "equal", "detach", "numel", "is_tensor", "is_floating_point"]
