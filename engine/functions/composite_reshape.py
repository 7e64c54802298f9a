"""reshape as PyTorch's composite ops call it inside matmul and einsum (NOTE [ matmul's lowering ] 4 in
engine/functions/matmul.py): ViewBackward0, ReshapeAliasBackward0, or a copy (UnsafeViewBackward0 over
CloneBackward0), chosen by the input's strides as PyTorch chooses."""
from __future__ import annotations

from ..backend.layout import contiguous_format
from ..core.dispatch import apply
from ..core.table import OPS as _O
from .factories import clone


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _view_strides(shape, strides, new_shape):
    """The strides of ``new_shape`` viewing an array of ``shape``/``strides`` without a copy, or None
    (PyTorch's computeStride)."""
    numel = _numel(shape)
    if numel == 0:
        return True
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1] if strides else 1
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return new_strides


def _reshape(x, shape):
    """NOTE [ matmul's lowering ] 4."""
    shape = tuple(shape)
    if x.is_contiguous():
        return apply(_O["view"], [x], {"shape": shape})
    if _view_strides(tuple(x.shape), x.stride(), shape) is not None:
        return apply(_O["view"], [x], {"shape": shape}, node_name="ReshapeAliasBackward0")
    return apply(_O["view"], [clone(x, memory_format=contiguous_format)], {"shape": shape}, node_name="UnsafeViewBackward0")
