"""Complex tensors: ``torch.complex``, ``polar``, ``view_as_real``, ``view_as_complex``, ``real``/``imag``,
``conj`` and its bit, ``angle`` of complex numbers (rows and gradients: engine/ops/complex.py,
NOTE [ Complex gradients ]). On real tensors the complex-number API keeps its real behaviour
(engine/functions/elementwise/unary.py).
"""
from __future__ import annotations

from ..backend import dtypes as _dtype
from ..backend.dtypes import short_name as _short
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .args import need_tensor as _need_tensor
from .elementwise import unary as _real_api
from .factories import clone
from .indexing import _getitem

_FLOATS = (_dtype.float16, _dtype.float32, _dtype.float64)


def _no_complex32(name):
    return RuntimeError(f"{name}: glassgrad has no torch.complex32 (the complex dtype of float16 parts); "
                        "use float32 or float64 parts")


def _parts_check(name, a, b):
    """PyTorch's checks on the two real parts of ``complex``/``polar``: floats, of one dtype."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        bad = b if isinstance(a, Tensor) else a
        pos, arg = (2, "imag" if name == "complex" else "angle") if isinstance(a, Tensor) else \
            (1, "real" if name == "complex" else "abs")
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(bad).__name__}")
    if a.dtype not in _FLOATS or b.dtype not in _FLOATS:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_short(a.dtype)} and "
                           f"{_short(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_short(a.dtype)} but got scalar type {_short(b.dtype)} "
                           "for second argument")
    if a.dtype is _dtype.float16:
        raise _no_complex32(name)


def complex(real, imag, *, out=None):
    """``real + i imag`` (broadcast), a new complex tensor; ComplexBackward0 gives each part its share of
    the gradient (``real(grad)``, ``imag(grad)``) and keeps each part whose gradient is wanted, as PyTorch."""
    _parts_check("complex", real, imag)
    return apply(_O["complex"], [real, imag])


def polar(abs, angle, *, out=None):
    """``abs * (cos(angle) + i sin(angle))``; PolarBackward0 keeps the result (PyTorch's polar_backward)."""
    _parts_check("polar", abs, angle)
    return apply(_O["polar"], [abs, angle])


def view_as_real(input):
    """The complex tensor as a real view with a last dim of 2 (real, imaginary): it shares ``input``'s
    storage, so a write through either is seen by the other (ViewAsRealBackward0)."""
    _need_tensor("view_as_real", input)
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return apply(_O["view_as_real"], [input])


def view_as_complex(input):
    """A real tensor whose last dim holds (real, imaginary) pairs, viewed as complex numbers: the same
    storage, one dim fewer (ViewAsComplexBackward0). PyTorch's requirements and messages: float or double,
    a last dim of size 2 and stride 1, even strides elsewhere, an even storage offset."""
    _need_tensor("view_as_complex", input)
    if input.dtype not in _FLOATS:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_short(input.dtype)}")
    if input.dtype is _dtype.float16:
        raise _no_complex32("view_as_complex")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(st % 2 for st in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply(_O["view_as_complex"], [input])


def real(input):
    """The real parts of a complex tensor, a view (``view_as_real(input)[..., 0]``: SelectBackward0 as in
    PyTorch); a real tensor is its own real part."""
    _need_tensor("real", input)
    if not input.dtype.is_complex:
        return _real_api.real(input)
    return _getitem(_resolved_real_view(input), (slice(None),) * input.ndim + (0,))


def imag(input):
    """The imaginary parts of a complex tensor, a view (``view_as_real(input)[..., 1]``); PyTorch's error on
    a real tensor."""
    _need_tensor("imag", input)
    if not input.dtype.is_complex:
        return _real_api.imag(input)
    return _getitem(_resolved_real_view(input), (slice(None),) * input.ndim + (1,))


def _resolved_real_view(input):
    return view_as_real(resolve_conj(input) if is_conj(input) else input)


def conj(input):
    """The complex conjugate; a real tensor itself. Eager (NOTE [ Complex gradients ] 5): new memory,
    ConjBackward0, and ``is_conj()`` True on the result as PyTorch's conj view answers."""
    _need_tensor("conj", input)
    if not input.dtype.is_complex:
        return input
    out = apply(_O["conj"], [input])
    if not is_conj(input):
        out._conj_bit = True
    return out


def conj_physical(input):
    """The complex conjugate in new memory (ConjPhysicalBackward0); a real tensor itself."""
    _need_tensor("conj_physical", input)
    if not input.dtype.is_complex:
        return input
    return apply(_O["conj"], [input], node_name="ConjPhysicalBackward0")


def is_conj(input) -> bool:
    """Whether ``input`` carries the conj bit (the result of ``conj()`` on a complex tensor)."""
    return bool(getattr(input, "_conj_bit", False))


def resolve_conj(input):
    """``input`` itself without the conj bit; with it, a copy whose values are the conjugate (as PyTorch:
    CloneBackward0, no alias of ``input``)."""
    _need_tensor("resolve_conj", input)
    return clone(input) if is_conj(input) else input


def angle(input):
    """The argument of each complex number, ``atan2(imag, real)``, as a real tensor (AngleBackward0 keeps
    the input); real tensors as before (pi below zero, else 0)."""
    _need_tensor("angle", input)
    if not input.dtype.is_complex:
        return _real_api.angle(input)
    return apply(_O["angle_complex"], [input])


__all__ = ["angle", "complex", "conj", "conj_physical", "imag", "is_conj", "polar", "real", "resolve_conj",
           "view_as_complex", "view_as_real"]
