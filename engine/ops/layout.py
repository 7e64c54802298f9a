"""The output layout of copies and elementwise rows (NOTE [ Output layout ] in engine/backend/layout.py).

Imported last by ``engine/ops/__init__.py``: it gives rows that already exist their ``layout`` rule, which
``dispatch`` runs on a kernel's result of two or more dims.
``CLONE_CONTIGUOUS`` is the clone row with its C-contiguous kernel, for ``contiguous()``, ``reshape``
and ``clone(memory_format=torch.contiguous_format)``: the same name and node (CloneBackward0), so a
trace cannot tell the two apart.
"""
from __future__ import annotations

import numpy as np

from ..backend import layout as L
from ..core.table import OPS, OpDef

_nd = np.ndarray

# rows whose output PyTorch lays out by TensorIterator's rule (NOTE 2)
ELEMENTWISE = (  # noqa: SIM905 - one name per word reads as the table it is
    "add sub mul div pow_scalar pow_tensor maximum minimum where eq ne lt le gt ge logical_and logical_or "
    "logical_xor logical_not neg exp log sqrt rsqrt reciprocal abs sign sin cos tanh sigmoid relu erf gelu clamp "
    "asin acos sinh cosh asinh acosh atan atanh log2 log10 sinc logit nan_to_num trunc frac deg2rad rad2deg log1p "
    "expm1 tan floor ceil round round_decimals angle tanh_backward sigmoid_backward "
    "atan2 hypot logaddexp logaddexp2 xlogy xlogy_number_other xlogy_number_self lerp lerp_tensor addcmul addcdiv "
    "floor_divide floor_divide_number heaviside fmax fmin copysign copysign_number ldexp nextafter pow_number_base "
    "fmod fmod_number remainder remainder_number remainder_number_self rsub rsub_number div_rounding mul_number "
    "div_number add_number sub_number gcd lcm bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift "
    "bitwise_right_shift erfinv sgn lgamma digamma polygamma erfc exp2 special_entr i0 special_i1 special_ndtri "
    "special_log_ndtr special_xlog1py special_xlog1py_number_self special_xlog1py_number_other "
    "silu leaky_relu elu celu softplus mish hardtanh threshold hardsigmoid hardswish log_sigmoid hardshrink "
    "softshrink clamp_min clamp_max clamp_min_tensor clamp_max_tensor clamp_tensor sgn_complex angle_complex"
).split()
PRESERVED = ("clone", "to_dtype")          # NOTE 1
CONTIGUOUS = ("softmax", "log_softmax")    # NOTE 2: not elementwise; a contiguous result


def elementwise(out, arrays):
    """NOTE 2: ``out`` (a kernel's result over ``arrays``) laid out as TensorIterator lays it out;
    unchanged when every operand is C-contiguous (NOTE 3)."""
    if type(out) is not _nd:
        return out
    for a in arrays:
        if type(a) is _nd and not a.flags.c_contiguous:
            operands = [(x.shape, L.element_strides(x)) for x in arrays if type(x) is _nd]
            same = all(type(x) is _nd and x.shape == out.shape for x in arrays)
            return L.with_strides(out, L.iterator_strides(out.shape, operands, same))
    return out


def preserved(out, arrays):
    """NOTE 1: a copy of ``arrays[0]`` keeps its strides (dense) or their order (otherwise)."""
    a = arrays[0]
    if type(out) is _nd and type(a) is _nd and not a.flags.c_contiguous:
        return L.with_strides(out, L.preserved_strides(a.shape, L.element_strides(a)))
    return out


def contiguous(out, arrays):
    """A row-major result (softmax's)."""
    return np.ascontiguousarray(out) if type(out) is _nd and not out.flags.c_contiguous else out


_clone = OPS["clone"]
CLONE_CONTIGUOUS = OpDef("clone", _clone.node, ("self",), _clone.fwd, _clone.bwd, promote=False)
CLONE_CONTIGUOUS.grad_bwd = _clone.grad_bwd

for _names, _rule in ((ELEMENTWISE, elementwise), (PRESERVED, preserved), (CONTIGUOUS, contiguous)):
    for _name in _names:
        OPS[_name].layout = _rule
