"""torch.* for the core's shape and view rows (and engine/ops/shape/views.py's): reshape/view,
flatten, permute/transpose, squeeze/unsqueeze, expand, cat/stack, split/chunk/unbind, flip,
tril/triu, repeat and broadcasting."""
from __future__ import annotations

import builtins

from ..backend import dtypes as _dtype
from ..backend.dtypes import to_array_dtype
from ..backend.layout import contiguous_format
from ..backend.size import Size
from ..core.dispatch import apply, apply_multi, broadcast_mismatch
from ..core.operators import _shape_str
from ..core.table import OPS as _O
from ..core.tensor import Tensor, _wrap_dim
from ..ops.shape.strided import geometry, view_strides
from .factories import clone
from .reductions import sum


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (PyTorch's error when they do not)."""
    out = []
    for k, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i in range(1, len(shape) + 1):
            n = shape[-i]
            if i > len(out):
                out.insert(0, n)
            elif out[-i] == 1:
                out[-i] = n
            elif n != 1 and n != out[-i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at -{i}! Mismatching "
                                   f"argument at index {k} had {shape}; but expected shape should be "
                                   f"broadcastable to {out}")
    return Size(out)


def broadcast_tensors(*tensors):
    """Each tensor expanded to the common broadcast shape (views: ExpandBackward0 where it changes)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, a in enumerate(tensors):
        for b in tensors[i + 1:]:
            msg = broadcast_mismatch(tuple(a.shape), tuple(b.shape))
            if msg:
                raise RuntimeError(msg)
    shape = tuple(broadcast_shapes(*[t.shape for t in tensors]))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def _sizes(name, args, kwargs):
    """The sizes ``view``/``reshape`` were given (ints, a tuple, list or Size of ints, or ``size=``/``shape=``),
    with PyTorch's TypeError for anything else."""
    sizes = args[0] if len(args) == 1 and type(args[0]) in (tuple, list, Size) else args
    if args and not kwargs and all(type(s) is int for s in sizes):    # the usual call
        return tuple(sizes)
    key = "size" if name == "view" else "shape"
    if kwargs:
        if args or list(kwargs) != [key]:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(k for k in kwargs if k != key)}'"
                            if any(k != key for k in kwargs) else f"{name}() got multiple values for argument '{key}'")
        args = (kwargs[key],)
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    bad = next((i for i, s in enumerate(sizes) if not _is_int(s)), None)
    if name == "reshape" and (not args or bad is not None):
        raise TypeError('reshape() missing 1 required positional arguments: "shape"' if not args else
                        f"reshape(): argument 'shape' (position 1) must be tuple of ints, but found element of type "
                        f"{type(sizes[bad]).__name__} at pos {bad}")
    if not args or bad is not None:
        raise TypeError(f"view() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of:\n"
                        " * (torch.dtype dtype)\n * (tuple of ints size)\n")
    return tuple(int(s) for s in sizes)


def _is_int(s) -> bool:
    if isinstance(s, builtins.bool):
        return False
    try:
        s.__index__()
    except (AttributeError, TypeError):
        return False
    return True


def _infer_shape(shape, numel):
    """PyTorch's infer_size: ``shape`` with its one ``-1`` worked out from ``numel``, or PyTorch's error."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    known, infer = 1, None
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {_shape_str(shape)}")
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return shape
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {_shape_str(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")


def reshape(input, *shape, **kwargs):
    """A view where PyTorch's stride rule allows one (NOTE [ Strided views ] in engine/ops/shape/strided.py:
    ViewBackward0 for a contiguous input, ReshapeAliasBackward0 otherwise), else a contiguous copy
    viewed (CloneBackward0, then UnsafeViewBackward0), as PyTorch."""
    shape = _infer_shape(_sizes("reshape", shape, kwargs), input.numel())
    if input.is_contiguous():
        return apply(_O["view"], [input], {"shape": shape})
    if view_strides(tuple(input.shape), input.stride(), shape) is not None:
        return apply(_O["view"], [input], {"shape": shape}, node_name="ReshapeAliasBackward0")
    return apply(_O["view"], [clone(input, memory_format=contiguous_format)], {"shape": shape}, node_name="UnsafeViewBackward0")


_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead.")


def view(input, *shape, **kwargs):
    """The same elements in another shape, sharing storage: possible when the shape can be expressed over
    the input's strides (NOTE [ Strided views ] in engine/ops/shape/strided.py), else PyTorch's error.
    ``view(dtype)`` reinterprets the bytes (:func:`view_dtype`)."""
    if list(kwargs) == ["dtype"] and not shape:
        return view_dtype(input, kwargs["dtype"])
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return view_dtype(input, shape[0])
    shape = _infer_shape(_sizes("view", shape, kwargs), input.numel())
    if not input.is_contiguous() and view_strides(tuple(input.shape), input.stride(), shape) is None:
        raise RuntimeError(_VIEW_ERROR)
    return apply(_O["view"], [input], {"shape": shape})


_SCALAR_TYPE = _dtype.SHORT_NAMES


def view_dtype(input, dtype):
    """``input``'s bytes read as ``dtype``, sharing its storage and version counter, without a graph (PyTorch's
    view.dtype is not differentiable). A different element size changes the last dim, which must be
    contiguous: as many more (or fewer) elements as the sizes' ratio, with PyTorch's checks and errors."""
    old, new = input.dtype.itemsize, dtype.itemsize
    what = f"to view {_SCALAR_TYPE[input.dtype.name]} as {_SCALAR_TYPE[dtype.name]} (different element sizes)"
    shape, strides, offset = list(input.shape), list(input.stride()), input.storage_offset()
    if old != new and not shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if new > old:
        r = new // old
        for label, v in (("self.size(-1)", shape[-1]), ("self.storage_offset()", offset)):
            if v % r:
                raise RuntimeError(f"{label} must be divisible by {r} {what}, but got {v}")
    if old != new and strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    if new > old:
        for i, st in enumerate(strides[:-1]):
            if st % (new // old):
                raise RuntimeError(f"self.stride({i}) must be divisible by {new // old} {what}, but got {st}")
    a = input._data
    if not hasattr(a, "view"):
        raise NotImplementedError("glassgrad: view(dtype) needs a backend with strided arrays (NumPy or CuPy)")
    out = Tensor._wrap(a.view(to_array_dtype(input._storage.xp, dtype)), input._storage)
    out._vc = input._vc            # NOTE [ Version counters ] (core/tensor.py): the input's counter
    return out


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given sizes, strides (in elements) and offset (the input's
    own by default): AsStridedBackward0, NOTE [ Strided views ] 3-4 in engine/ops/shape/strided.py."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{_shape_str(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_shape_str(size)} and "
                           f"strides={_shape_str(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item = input.dtype.itemsize
    need = 0 if 0 in size else (offset + builtins.sum((n - 1) * st for n, st in zip(size, stride)) + 1) * item
    if need > input._storage.nbytes:
        raise RuntimeError(f"setStorage: sizes {_shape_str(size)}, strides {_shape_str(stride)}, storage offset "
                           f"{offset}, and itemsize {item} requiring a storage size of {need} are out of bounds "
                           f"for storage of size {input._storage.nbytes}")
    return apply(_O["as_strided"], [input], {"size": size, "stride": stride, "storage_offset": offset,
                                             "self_geometry": geometry(input)})


def flatten(input, start_dim=0, end_dim=-1):
    """Dims ``start_dim..end_dim`` as one, by ``reshape``; the input itself when that is one dim, as PyTorch."""
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 0:
        return reshape(input, 1)
    if s == e:
        return input
    shape = tuple(input.shape)
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    shape = tuple(input.shape)
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if (-1 not in sizes and known != shape[d]) or (-1 in sizes and (known == 0 or shape[d] % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({shape[d]}) in the input tensor")
    if -1 in sizes:       # inferred within the dim, so an empty tensor elsewhere leaves no doubt
        sizes = tuple(shape[d] // known if s == -1 else s for s in sizes)
    return view(input, shape[:d] + sizes + shape[d + 1:])     # splitting one dim is always a view


def permute(input, *dims):
    if not dims:     # PyTorch's argument parser, for a 0-d tensor too
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) == input.ndim:
        dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not "
                           f"equal to len(dims) = {len(dims)}" if len(dims) != input.ndim else
                           "permute(): duplicate dims are not allowed.")
    return apply(_O["permute"], [input], {"dims": dims})


def transpose(input, dim0, dim1):
    n = input.ndim
    if n == 0:
        return apply(_O["transpose"], [input], {"dims": ()})
    a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    dims = list(range(n))
    dims[a], dims[b] = dims[b], dims[a]
    return apply(_O["transpose"], [input], {"dims": tuple(dims)})


swapaxes = swapdims = transpose


_T_DIMS = ((), (0,), (1, 0))


def t(input):
    n = len(input._data.shape)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return apply(_O["t"], [input], {"dims": _T_DIMS[n]})


def squeeze(input, dim=None):
    shape = tuple(input.shape)
    if dim is None:
        new = tuple(s for s in shape if s != 1)
        return apply(_O["squeeze"], [input], {"shape": new}, node_name="SqueezeBackward0")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = {_wrap_dim(d, input.ndim) for d in dims}
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return apply(_O["squeeze"], [input], {"shape": new})


def unsqueeze(input, dim):
    n = input.ndim + 1
    d = _wrap_dim(dim, n)
    shape = list(input.shape)
    shape.insert(d, 1)
    return apply(_O["unsqueeze"], [input], {"shape": tuple(shape)})


def expand(input, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({input.type()}{{{_shape_str(shape)}}}, size={_shape_str(sizes)}): the number "
                           "of sizes provided ({}) must be greater or equal to the number of dimensions in the "
                           "tensor ({})".format(len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        cur = shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            s = cur
        if cur is not None and cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {_shape_str(sizes)}.  Tensor sizes: "
                               f"{_shape_str(shape)}")
        out.append(s)
    return apply(_O["expand"], [input], {"shape": tuple(out)})


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def sum_to_size(input, *size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape, size = tuple(input.shape), tuple(int(s) for s in size)
    if shape == size:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != shape[i + lead] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                           f"{{[{', '.join(map(str, shape))}]}}.")
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size) if s == 1 and shape[i + lead] != 1)
    out = sum(input, dims, keepdim=True) if dims else input
    return out if tuple(out.shape) == size else reshape(out, size)     # keepdim already gave it: no view


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = tensors[0]
    d = _wrap_dim(dim, ref.ndim)
    for i, x in enumerate(tensors[1:], 1):
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for k in range(ref.ndim):
            if k != d and x.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {x.shape[k]} for tensor number {i} in the list.")
    return apply(_O["cat"], tensors, {"dim": d})


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors[1:], 1):
        if tuple(x.shape) != tuple(tensors[0].shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_shape_str(tensors[0].shape)} "
                               f"at entry 0 and {_shape_str(x.shape)} at entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1)
    return apply(_O["stack"], tensors, {"dim": d})


def split(input, split_size_or_sections, dim=0):
    """Views of consecutive parts along ``dim``: one SplitBackward0 (an int size) or
    SplitWithSizesBackward0 (a list) for all of them (NOTE [ Several outputs ] 4 in core/dispatch.py)."""
    d = _wrap_dim(dim, input.ndim)
    shape = tuple(input.shape)
    n = shape[d]
    if isinstance(split_size_or_sections, int):
        k = split_size_or_sections
        if k < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={k}")
        if k == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        name, attrs = "split", {"split_size": k, "dim": d, "self_sym_sizes": shape}
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
        name, attrs = "split_with_sizes", {"split_sizes": tuple(sizes), "dim": d, "self_sym_sizes": shape}
    return apply_multi(_O[name], [input], attrs, (), views=True)


def chunk(input, chunks, dim=0):
    """``split`` into parts of ``ceil(n / chunks)``; an empty dim gives ``chunks`` empty parts, as PyTorch."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    if n == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


def unbind(input, dim=0):
    """Views of each index along ``dim``, that dim removed: one UnbindBackward0 for all of them."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return apply_multi(_O["unbind"], [input], {"dim": _wrap_dim(dim, input.ndim)}, (), views=True)


def flip(input, dims):
    """A copy with the order along each of ``dims`` reversed (one FlipBackward0 keeping ``dims``)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    axes = tuple(_wrap_dim(d, builtins.max(input.ndim, 1)) for d in dims)
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    if input.ndim == 0:
        axes = ()
    return apply(_O["flip"], [input], {"dims": dims, "axes": axes})


def _tri(name, input, diagonal):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply(_O[name], [input], {"diagonal": int(diagonal)})


def tril(input, diagonal=0):
    return _tri("tril", input, diagonal)


def triu(input, diagonal=0):
    return _tri("triu", input, diagonal)


def repeat(input, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return apply(_O["repeat"], [input], {"repeats": tuple(int(s) for s in sizes)})


__all__ = ["broadcast_shapes", "broadcast_tensors", "reshape", "view", "as_strided", "flatten", "unflatten", "permute",
           "transpose", "swapaxes", "swapdims", "t", "squeeze", "unsqueeze", "expand", "broadcast_to",
           "sum_to_size", "cat", "concat", "concatenate", "stack", "split", "chunk", "unbind", "flip", "tril",
           "triu", "repeat"]
