"""Complex tensors: the rows that make and take apart complex numbers, and complex gradients.

NOTE [ Complex gradients ]
1. PyTorch's convention: the gradient of a complex tensor ``z = x + iy`` is the conjugate Wirtinger
   derivative, scaled so that for a real loss ``L`` it reads ``dL/dx + i dL/dy``. A real leaf
   that fed a complex result gets the real part of what reaches it (the dispatcher casts each input
   gradient to its input's dtype: ``F.astype`` of a complex array to a real dtype takes its real part).
2. For a holomorphic op with derivative ``f'(z)`` the input gradient is ``grad * conj(f'(z))``; the rows
   written for real numbers compute ``grad * f'(x)``. So such a row serves complex tensors unchanged
   when its formula runs on ``conj(grad)`` and its answers are conjugated:
   ``conj(conj(grad) * f'(z)) = grad * conj(f'(z))`` (``mul``'s ``grad * other.conj()``, ``mm``'s
   ``grad @ mat2.mH``, ``exp``'s ``grad * result.conj()``). :func:`holomorphic` wraps the rows in
   ``HOLOMORPHIC`` so; a real gradient runs the row's formula as before. Linear rows (``add``,
   ``sum``, views, ``neg``) need no wrapping: their formulas use no saved values. A recorded backward
   (``create_graph=True``) of a complex gradient runs the wrapped formula, not the row's backward row
   (``tanh_backward``), whose own derivative is written for real numbers.
3. Rows that are not holomorphic write their complex formula out: ``abs`` (``grad * sgn(z)``, where
   a recorded backward differentiates ``sgn``: ``sgn_complex``'s ``(grad - real(conj(grad) sgn) sgn) / |z|``),
   ``angle`` (``grad * i z / |z|^2``, 0 at 0), ``polar``, ``complex``, ``conj``, ``view_as_real`` and
   ``view_as_complex`` (below). ``to_dtype`` from complex to real keeps the real part and warns, as
   PyTorch's copy does; its gradient comes back complex with a zero imaginary part.
4. Only the rows in ``COMPLEX_ROWS`` take complex inputs; every other row refuses them before its
   kernel runs (:func:`real_only`): with PyTorch's error type and message where PyTorch has no
   complex kernel either (``relu``, ``clamp``, ``max``, comparisons, ``round``, ...; ``REAL_ONLY``),
   else with PyTorch's wording naming the row (``"var" not implemented for 'ComplexFloat'``): some of
   those PyTorch does support (``var``, ``exp2``, ``sinc``, ...), glassgrad not yet.
5. ``conj`` is eager: it computes the conjugate into new memory (ConjBackward0, as PyTorch's lazy
   conj shows). PyTorch's ``conj`` is a view that sets a conj bit; glassgrad records the bit on
   the result (``is_conj()`` answers True, ``resolve_conj()`` gives a copy without it and
   ``view_as_real`` refuses it with PyTorch's message) but a write to the result does not reach
   the input, and the result has storage of its own (its bytes are counted).
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..backend import dtypes as _dtype
from ..core.dispatch import apply
from ..core.primitives import _clone_fwd
from ..core.table import OPS, op

_ndarray = np.ndarray


# ---- the two currencies (NOTE [ One formula, two currencies ]) ----------------------------------------
def is_complex_array(x) -> bool:
    """Whether ``x`` (an array, a tensor or a Python number) holds complex numbers."""
    if isinstance(x, complex):
        return True
    dt = getattr(x, "dtype", None)
    if dt is None:
        return False
    kind = getattr(dt, "kind", None)
    return kind == "c" if kind is not None else bool(getattr(dt, "is_complex", False))


def conj(F, x):
    """``x.conj()`` in F's currency; ``x`` itself when real."""
    if not is_complex_array(x):
        return x
    if isinstance(x, complex):
        return x.conjugate()
    return F.E.conj_physical(x) if F.differentiable else F.xp.conj(x)   # no conj bit on a gradient


def real(F, x):
    if not is_complex_array(x):
        return x
    return F.E.real(x) if F.differentiable else F.xp.real(x)


def imag(F, x):
    return F.E.imag(x) if F.differentiable else F.xp.imag(x)


def as_real_array(xp, a):
    """``a`` (complex, ``(..., n)``) viewed as its real and imaginary parts, ``(..., n, 2)``: same memory."""
    rdt = _dtype.to_array_dtype(xp, _dtype.from_array_dtype(xp, a.dtype).to_real())
    return a[..., None].view(rdt)


def as_complex_array(xp, a):
    """``a`` (real, ``(..., 2)``, last stride 1) viewed as complex numbers ``(...)``: same memory."""
    cdt = _dtype.to_array_dtype(xp, _dtype.from_array_dtype(xp, a.dtype).to_complex())
    return a.view(cdt)[..., 0]


def make_complex(xp, re, im):
    """A new complex array with real part ``re`` and imaginary part ``im`` (broadcast together)."""
    cdt = _dtype.to_array_dtype(xp, _dtype.from_array_dtype(xp, re.dtype).to_complex())
    shape = np.broadcast_shapes(tuple(re.shape), tuple(im.shape))
    out = xp.empty(shape, dtype=cdt)
    out.real = re
    out.imag = im
    return out


def _grad_as_complex(F, g):
    """ViewAsRealBackward0: the real gradient ``(..., 2)`` made contiguous and viewed as complex."""
    if F.differentiable:
        return F.E.view_as_complex(g.contiguous())
    return as_complex_array(F.xp, _clone_fwd(F.xp, g))


def _grad_as_real(F, g):
    """ViewAsComplexBackward0: the complex gradient made contiguous and viewed as ``(..., 2)`` reals."""
    if F.differentiable:
        return F.E.view_as_real(g.contiguous())
    return as_real_array(F.xp, _clone_fwd(F.xp, g))


# ---- rows (NOTE rule 3) -----------------------------------------------------------------------------------
op("view_as_real", "ViewAsRealBackward0", ("self",), lambda xp, a: as_real_array(xp, a),
   lambda F, g, s: (_grad_as_complex(F, g),), promote=False, view=True)
op("view_as_complex", "ViewAsComplexBackward0", ("self",), lambda xp, a: as_complex_array(xp, a),
   lambda F, g, s: (_grad_as_real(F, g),), promote=False, view=True)
op("complex", "ComplexBackward0", ("real", "imag"), lambda xp, re, im: make_complex(xp, re, im),
   lambda F, g, s: (real(F, g) if s.needs[0] else None, imag(F, g) if s.needs[1] else None),
   save={"real": ("real",), "imag": ("imag",)}, promote=False)    # kept as PyTorch keeps them (its dtype check)


def _sgn(F, z):
    """``z / |z|``, 0 at 0 (PyTorch's sgn of a complex number)."""
    a = F.abs(z)
    return F.where(F.eq(a, 0.0), 0.0, z / F.where(F.eq(a, 0.0), 1.0, a))


def _polar_bwd(F, g, s):
    """PyTorch's polar_backward: ``real(conj(grad) * sgn(result))`` and ``real(conj(grad) * result * i)``."""
    gc = conj(F, g)
    return (real(F, gc * _sgn(F, s.result)) if s.needs[0] else None,
            real(F, gc * (s.result * 1j)) if s.needs[1] else None)


op("polar", "PolarBackward0", ("abs", "angle"),
   lambda xp, r, theta: make_complex(xp, r * xp.cos(theta), r * xp.sin(theta)), _polar_bwd,
   save={"result": ()}, promote=False)
op("conj", "ConjBackward0", ("self",), lambda xp, a: xp.conj(a), lambda F, g, s: (conj(F, g),), promote=False)


def _angle_fwd(xp, a):
    return xp.atan2(xp.imag(a), xp.real(a))


def _angle_bwd(F, g, s):
    """PyTorch's angle_backward for complex ``z``: ``grad * i z / |z|^2``, 0 where ``z`` is 0."""
    z = s.self
    a2 = F.abs(z) * F.abs(z)
    return (F.where(F.eq(a2, 0.0), 0.0, (g * z) * 1j / F.where(F.eq(a2, 0.0), 1.0, a2)),)


op("angle_complex", "AngleBackward0", ("self",), _angle_fwd, _angle_bwd, save={"self": ()}, promote=False)


def _sgn_fwd(xp, z):
    a = xp.abs(z)
    return xp.where(a == 0, xp.zeros((), dtype=z.dtype), z / xp.where(a == 0, xp.ones((), dtype=a.dtype), a))


def _sgn_bwd(F, g, s):
    """PyTorch's sgn_backward: ``(grad - real(conj(grad) * sgn) * sgn) / |z|``, 0 where ``z`` is 0."""
    sg, a = s.result, F.abs(s.self)
    return (F.where(F.eq(a, 0.0), 0.0, (g - real(F, conj(F, g) * sg) * sg) / F.where(F.eq(a, 0.0), 1.0, a)),)


op("sgn_complex", "SgnBackward0", ("self",), _sgn_fwd, _sgn_bwd, save={"self": (), "result": ()}, promote=False)


def _abs_bwd(real_bwd):
    """``abs``'s formula; on a complex input ``grad * sgn(z)``, with a differentiable sgn on tensors (so a
    recorded backward differentiates it: the real formula's ``sign`` has derivative 0)."""
    def bwd(F, g, s):
        z = s.self
        if not is_complex_array(z):
            return real_bwd(F, g, s)
        return (g * (apply(OPS["sgn_complex"], [z]) if F.differentiable else _sgn_fwd(F.xp, z)),)
    bwd.real_formula = real_bwd
    return bwd


OPS["abs"].bwd = _abs_bwd(OPS["abs"].bwd)
if OPS["abs"].grad_bwd is not None:     # a recorded backward's row (NOTE [ Backward rows ]) is for real inputs
    OPS["abs"].grad_bwd = _abs_bwd(OPS["abs"].grad_bwd)


def _to_dtype_fwd(real_fwd):
    """``to_dtype``'s kernel; complex to real keeps the real parts and warns, as PyTorch's copy does."""
    def fwd(xp, a, dtype):
        if getattr(a.dtype, "kind", None) == "c" and not xp.isdtype(dtype, "complex floating"):
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
            a = xp.real(a)
        return real_fwd(xp, a, dtype)
    return fwd


OPS["to_dtype"].fwd = _to_dtype_fwd(OPS["to_dtype"].fwd)


# ---- NOTE rule 2: the holomorphic rows serve complex tensors ---------------------------------------------
HOLOMORPHIC = ("mul", "div", "mul_number", "div_number", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
               "tanh", "sigmoid", "pow_scalar", "pow_tensor", "mm", "bmm", "mv", "dot", "addmm", "prod", "prod_dim", "cumprod")


def holomorphic(bwd):
    """A row's formula ``bwd`` made to give PyTorch's complex gradients (NOTE rule 2)."""
    def complex_aware(F, g, s):
        if (g.dtype.kind != "c" if type(g) is _ndarray else not is_complex_array(g)):   # the usual, real case
            return bwd(F, g, s)
        return tuple(None if r is None else conj(F, r) for r in bwd(F, conj(F, g), s))
    complex_aware.__doc__ = bwd.__doc__
    complex_aware.real_formula = bwd
    return complex_aware


def _real_grad_row(grad_bwd, complex_bwd):
    """A recorded backward's row (NOTE [ Backward rows ]) for real gradients; complex ones take the
    conjugating formula, whose ops each know their complex derivatives."""
    def bwd(F, g, s):
        return complex_bwd(F, g, s) if is_complex_array(g) else grad_bwd(F, g, s)
    return bwd


for _name in HOLOMORPHIC:
    OPS[_name].bwd = holomorphic(OPS[_name].bwd)
    if OPS[_name].grad_bwd is not None:
        OPS[_name].grad_bwd = _real_grad_row(OPS[_name].grad_bwd, OPS[_name].bwd)


# ---- NOTE rule 4: no complex kernel ---------------------------------------------------------------------
# The rows whose kernels and formulas are right for complex numbers; every other row refuses them.
COMPLEX_ROWS = frozenset(HOLOMORPHIC) | {
    "view_as_real", "view_as_complex", "complex", "polar", "conj", "angle_complex", "sgn_complex",
    "add", "sub", "neg", "abs", "add_number", "sub_number", "rsub", "rsub_number", "pow_number_base", "sum", "mean",
    "cumsum", "to_dtype", "clone", "copy", "fill", "where", "eq", "ne", "logical_and", "logical_or", "logical_xor",
    "logical_not", "view", "unsafe_view", "t", "permute", "transpose", "expand", "squeeze", "unsqueeze", "slice",
    "index", "setitem", "index_put", "index_put_add", "fill_index", "masked_fill", "gather", "take",
    "index_select_dim", "narrow_copy", "select_scatter", "slice_scatter", "cat", "stack", "split", "split_with_sizes",
    "unbind", "flip", "roll", "repeat", "tril", "triu", "diagonal", "diagonal_copy", "diag_embed", "trace", "einsum", "einsum_one",
    "einsum_two", "as_strided", "constant_pad_nd"}
HOLOMORPHIC_MORE = ("pow_number_base", "einsum_two")


def _kernel_error(kernel):
    return lambda dt: NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.short_name(dt)}\'')


def _clamp_error(dt):
    return NotImplementedError("clamp is not supported for complex types")


def _no_complex(text):
    return lambda dt: RuntimeError(text)


REAL_ONLY = {"relu": _clamp_error, "clamp": _clamp_error, "clamp_min": _clamp_error, "clamp_max": _clamp_error,
             "clamp_tensor": _clamp_error, "clamp_min_tensor": _clamp_error, "clamp_max_tensor": _clamp_error,
             "maximum": _no_complex("maximum not implemented for complex tensors."),
             "minimum": _no_complex("minimum not implemented for complex tensors."),
             "max_all": _kernel_error("max_all"), "min_all": _kernel_error("min_all"),
             "max_dim": _no_complex("max(): does not support complex input"),
             "min_dim": _no_complex("min(): does not support complex input"),
             "lt": _kernel_error("lt_cpu"), "le": _kernel_error("le_cpu"), "gt": _kernel_error("gt_cpu"),
             "ge": _kernel_error("ge_cpu"), "gelu": _kernel_error("GeluKernelImpl"),
             "amax": _kernel_error("max_values_cpu"), "amin": _kernel_error("min_values_cpu"),
             "round": _kernel_error("round_vml_cpu"), "erf": _kernel_error("erf_vml_cpu"),
             "atan2": _kernel_error("atan2_cpu"), "floor_divide": _kernel_error("div_floor_cpu"),
             "floor_divide_number": _kernel_error("div_floor_cpu"), "remainder": _kernel_error("remainder_cpu"),
             "remainder_number": _kernel_error("remainder_cpu"),
             "floor": lambda dt: NotImplementedError("floor is not supported for complex inputs"),
             "sign": lambda dt: NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                                    "numbers. Please use torch.sgn instead.")}


def real_only(name, fwd, error):
    """``fwd`` refusing complex arrays with ``error(dtype)`` (NOTE rule 4)."""
    @functools.wraps(fwd)
    def fwd_real(xp, *arrays, **attrs):
        for a in arrays:
            if getattr(getattr(a, "dtype", None), "kind", None) == "c":
                raise error(_dtype.from_array_dtype(xp, a.dtype))
        return fwd(xp, *arrays, **attrs)
    return fwd_real


for _name in HOLOMORPHIC_MORE:
    OPS[_name].bwd = holomorphic(OPS[_name].bwd)
for _name, _row in OPS.items():
    if _name not in COMPLEX_ROWS:
        _row.fwd = real_only(_name, _row.fwd, REAL_ONLY.get(_name) or _kernel_error(_name))
