"""torch.* for indexing (the core's index rows and engine/ops/shape/index.py's first ones):
``x[key]`` and ``x[key] = value``, where and nonzero, narrow, index_select, masked_fill, gather,
masked_select, and the im2col gather that convolution's backward formulas call."""
from __future__ import annotations

import builtins
import warnings
import numpy as np

from ..backend import dtypes as _dtype
from ..core.dispatch import apply, broadcast_mismatch
from ..core.inplace import SHARED_MEMORY, multi_view_error
from ..core.operators import _scalar_ok, _shape_str
from ..core.primitives import _rebuild_index
from ..core.table import OPS as _O, SLOT as _SLOT
from ..core.tensor import Tensor, _wrap_dim
from .arithmetic import _inplace, _short
from .factories import _cname, full, tensor
from .reductions import _grad_enabled
from .views import reshape


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor) or condition.dtype is not _dtype.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_short(condition.dtype) if isinstance(condition, Tensor) else type(condition).__name__}")
    dt = _dtype.result_type([x for x in (input, other)])
    ref = input if isinstance(input, Tensor) else other if isinstance(other, Tensor) else condition
    a = input.to(dt) if isinstance(input, Tensor) else full((), input, dtype=dt, device=ref.device)
    b = other.to(dt) if isinstance(other, Tensor) else full((), other, dtype=dt, device=ref.device)
    return apply(_O["where"], [condition, a, b])


def nonzero(input, as_tuple=False):
    host = input.detach().numpy(force=True)
    nz = np.nonzero(host)
    dev = input.device
    if as_tuple:
        return tuple(tensor(i, dtype=_dtype.int64, device=dev) for i in nz)
    return tensor(np.stack(nz, axis=1), dtype=_dtype.int64, device=dev)


def _narrow_check(input, dim, start, length):
    """``(dim, start)`` wrapped, with PyTorch's errors for a 0-d input, a negative length, a start
    outside ``[-n, n]`` and a window past the end."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return d, start


def narrow(input, dim, start, length):
    """A view of ``length`` entries of ``dim`` from ``start`` (a negative start counts from the end)."""
    d, start = _narrow_check(input, dim, int(start), int(length))
    return apply(_O["slice"], [input], {"idx": (slice(None),) * d + (slice(start, start + length),)},
                 node_name="SliceBackward0")


def index_select(input, dim, index):
    if not isinstance(index, Tensor) or index.dtype is not _dtype.int64:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input.ndim)
    index = reshape(index, -1) if index.ndim == 0 else index
    n = input.shape[d] if input.ndim else 1
    host = index.detach().numpy(force=True)
    bad = host[(host < 0) | (host >= n)]
    if input.ndim > 1 and host.size and not input.numel() and n == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if bad.size:   # PyTorch's CPU kernel: its dim-1 and empty-self paths say the second, its loop the first
        if input.ndim <= 1 or (d != 1 and input.numel()):
            raise IndexError("index out of range in self")
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad[0])} axis_dim={n}")
    return apply(_O["index_select_dim"], [input, index], {"dim": d})


def _mask_check(mask):
    if not isinstance(mask, Tensor) or mask.dtype is not _dtype.bool_:
        got = _cname(mask.dtype) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {got}")


def masked_fill(input, mask, value):
    """MaskedFillBackward0 (keeps the mask); a value tensor that requires grad gets its gradient through where."""
    _mask_check(mask)
    if isinstance(value, Tensor):
        if value.requires_grad:
            return where(mask, value.to(input.dtype), input)
        value = value.item()
    return apply(_O["masked_fill"], [input, mask], {"value": value})


def masked_fill_(input, mask, value):
    _mask_check(mask)
    if isinstance(value, Tensor):
        value = value.item()
    return _inplace("masked_fill", input, mask, value=value)


def _normalize_index(x, key):
    if not isinstance(key, tuple):
        key = (key,)
    parts, tensors = [], []
    for k in key:
        if isinstance(k, Tensor):
            if k.dtype.is_floating_point or k.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if k.dtype is _dtype.uint8:      # a byte mask is a bool mask, which PyTorch deprecates
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=3)
                k = k != 0
            if k.ndim == 0 and k.dtype is _dtype.int64:
                parts.append(int(k.item()))
                continue
            if k.device != x.device:
                if k.device.type != "cpu":
                    raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed "
                                       f"tensor ({x.device})")
                k = k.to(x.device)  # CPU indices may index a CUDA tensor, as in PyTorch
            parts.append(_SLOT)
            tensors.append(k)
        elif isinstance(k, (list, np.ndarray)):
            t = tensor(k, device=x.device)
            if t.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            parts.append(_SLOT)
            tensors.append(t)
        elif isinstance(k, builtins.bool):
            parts.append(_SLOT)
            tensors.append(tensor(k, device=x.device))
        elif isinstance(k, (int, np.integer)):
            parts.append(int(k))
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            parts.append(k)
        elif k is None or k is Ellipsis:
            parts.append(k)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got " + type(k).__name__ + ")")
    return tuple(parts), tensors


def _zero_dim_key(x, key):
    """PyTorch's own errors for a lone int or slice key into a 0-d tensor (a tuple says ``too many indices``)."""
    if x.ndim or isinstance(key, (tuple, builtins.bool, np.bool_)):
        return
    if isinstance(key, (int, np.integer)):
        if key == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {int(key)} is out of bounds for dimension 0 with size 0")
    if isinstance(key, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _check_bounds(x, parts, tensors=()):
    dim = 0
    # a bool index takes as many dims as it has (a 0-d one none: it adds a dim of size 1 or 0)
    widths = iter([t.ndim if t.dtype is _dtype.bool_ else 1 for t in tensors])
    consumed = builtins.sum((next(widths, 1) if p is _SLOT else 1) for p in parts
                            if p is not None and p is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    for p in parts:
        if p is Ellipsis:
            dim += x.ndim - consumed
            continue
        if p is None:
            continue
        if isinstance(p, int):
            n = x.shape[dim]
            if not -n <= p < n:
                raise IndexError(f"index {p} is out of bounds for dimension {dim} with size {n}")
        dim += 1


def _full_slice(p, n) -> bool:
    """A slice PyTorch's indexing skips: step 1 from 0 (as written: ``-2:`` is not) to the end or past it."""
    return (isinstance(p, slice) and p.step in (None, 1) and p.start in (None, 0)
            and (p.stop is None or p.stop >= n))


def _whole_parts(x, parts) -> bool:
    """Whether ``parts`` (ints, slices, None, ``...``) leave every dim of ``x`` whole: only ``...`` and
    full slices, so PyTorch's indexing takes no view."""
    dim, n_ell = 0, x.ndim - builtins.sum(1 for p in parts if p is not Ellipsis and p is not None)
    for p in parts:
        if p is None:
            return False
        if p is Ellipsis:
            dim += n_ell
        elif not _full_slice(p, x.shape[dim] if dim < x.ndim else 0):
            return False
        else:
            dim += 1
    return True


def _is_whole(x, key, parts) -> bool:
    """``x[...]``, ``x[()]``, ``x[:, :]``: a key that selects all of ``x`` as PyTorch's alias() does (a bare
    ``x[:]`` is a slice in PyTorch's graph)."""
    return (key is Ellipsis or isinstance(key, tuple)) and _whole_parts(x, parts)


def _getitem(x, key):
    _zero_dim_key(x, key)
    parts, tensors = _normalize_index(x, key)
    _check_bounds(x, parts, tensors)
    if not tensors:
        name = "SelectBackward0" if builtins.any(isinstance(p, int) for p in parts) else \
            ("UnsqueezeBackward0" if None in parts and builtins.all(
                p is None or p is Ellipsis or p == slice(None) for p in parts) else
             "AliasBackward0" if _is_whole(x, key, parts) else "SliceBackward0")
        return apply(_O["slice"], [x], {"idx": parts}, node_name=name)
    if len(parts) == 1 and tensors[0].dtype is _dtype.bool_ and tensors[0].ndim == 0:
        # x[True]: as PyTorch, a new dim of size 1 (UnsqueezeBackward0) indexed by a one-element mask
        return apply(_O["index"], [_getitem(x, None), reshape(tensors[0], (1,))], {"template": (_SLOT,)})
    _check_index_tensors(x, parts, tensors)
    basic, parts = _split_basic(x, parts, tensors)
    if basic is not None:
        x = _getitem(x, basic)
    return apply(_O["index"], [x] + tensors, {"template": parts})


def _check_index_tensors(x, parts, tensors):
    """PyTorch's IndexErrors for index tensors: out of bounds, or shapes that do not broadcast."""
    slots = [i for i, p in enumerate(parts) if p is _SLOT]
    widths = [0 if p is None or p is Ellipsis else (tensors[slots.index(i)].ndim if p is _SLOT and
                                                    tensors[slots.index(i)].dtype is _dtype.bool_ else 1)
              for i, p in enumerate(parts)]
    for k, (tidx, pos) in enumerate(zip(tensors, slots)):
        if tidx.dtype is _dtype.int64 and tidx.numel():
            # the dim it indexes; PyTorch's message counts it among the index tensors
            dim = builtins.sum(widths[:pos]) if Ellipsis not in parts[:pos] else x.ndim - builtins.sum(widths[pos:])
            if dim < x.ndim:
                n = x.shape[dim]
                if n == 0:
                    raise IndexError("index is out of bounds for dimension with size 0")
                host = tidx.detach().numpy(force=True)
                bad = host[(host >= n) | (host < -n)]
                if bad.size:
                    raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {k} with size {n}")
    if len(tensors) > 1 and builtins.all(t.dtype is not _dtype.bool_ for t in tensors):
        try:
            np.broadcast_shapes(*[tuple(t.shape) for t in tensors])
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(_shape_str(t.shape) for t in tensors)) from None


def _split_basic(x, parts, tensors):
    """PyTorch's order for a key mixing index tensors with ints, slices, None or ``...``: the basic
    parts first, as one view; the tensors then index that view, every other dim a full slice.
    (So ``x[1, :, i]`` of a 3-D ``x`` is (x.shape[1], len(i)), as in PyTorch; NumPy's rule, which
    treats the int as an index array too, would put ``len(i)`` first.) Returns (the basic key, or
    None when it would select everything; the template for the tensors)."""
    widths, k = [], 0
    for p in parts:
        if p is _SLOT:
            t = tensors[k]
            k += 1
            widths.append(t.ndim if t.dtype is _dtype.bool_ else 1)
        else:
            widths.append(0 if p is None or p is Ellipsis else 1)
    rest = x.ndim - builtins.sum(widths)
    basic, adv = [], []
    for p, w in zip(parts, widths):
        if p is _SLOT:
            basic.extend([slice(None)] * w)
            adv.append(_SLOT)
        elif p is Ellipsis:
            basic.append(Ellipsis)
            adv.extend([slice(None)] * rest)
        elif isinstance(p, int):
            basic.append(p)          # the dim is gone from the view
        else:
            basic.append(p)          # a slice, or None (a new dim of size 1 in the view)
            adv.append(slice(None))
    everything = builtins.all(b is Ellipsis or (isinstance(b, slice) and b == slice(None)) for b in basic)
    return (None if everything else tuple(basic)), tuple(adv)


def _setitem(x, key, value):
    if key is False or (isinstance(key, tuple) and builtins.any(k is False for k in key)):
        return      # PyTorch writes nothing and records nothing (NOTE [ Which node a write makes ] 1)
    _zero_dim_key(x, key)
    parts, tensors = _normalize_index(x, key)
    _check_bounds(x, parts, tensors)
    if x._requires_grad and x.grad_fn is None and _grad_enabled() and builtins.any(
            isinstance(p, int) or p is None or (isinstance(p, slice) and p != slice(None)) for p in parts):
        # PyTorch writes through a view here (x[0] = v is x.select(0, 0).copy_(v))
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if tensors and x._requires_grad and x.grad_fn is None and _grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if not tensors and _shares_memory(x):   # NOTE [ Which node a write makes ] 5
        view = _getitem(x, key)
        if _shares_memory(view):
            raise RuntimeError(SHARED_MEMORY)
        return _setitem(view, Ellipsis, value)
    _check_index_tensors(x, parts, tensors)
    name = _setitem_node(x, parts, tensors, value)
    if tensors and builtins.any(isinstance(p, int) for p in parts):
        parts, tensors = _coordinate_key(x, parts, tensors)
    if isinstance(value, Tensor) and value.device != x.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{x.device} and {value.device}!")
    if not isinstance(value, Tensor):
        value = _scalar_ok(value, "setitem")
    else:
        _setitem_shape_check(x, parts, tensors, value)
        value = _drop_leading_ones(value, len(_region_shape(x, parts, tensors)))
    apply(_O["setitem"], [x, value] + tensors, {"template": parts}, inplace=x, node_name=name)


def copy_checks(self, src):
    """``self.copy_(src)``'s refusals in PyTorch's order: an output of a node with several view
    outputs first (NOTE [ Several outputs ] 4), then shapes that do not broadcast, then a broadcast
    shape other than ``self``'s."""
    if _grad_enabled() and self.grad_fn is not None and getattr(self.grad_fn, "multi_view", False):
        raise RuntimeError(multi_view_error(self))
    sa, sb = tuple(self.shape), tuple(src.shape)
    msg = broadcast_mismatch(sa, sb)
    if msg:
        raise RuntimeError(msg)
    if len(sb) > len(sa) or builtins.any(b != 1 and b != a for a, b in zip(sa[len(sa) - len(sb):], sb)):
        both = (1,) * (len(sa) - len(sb)) + sb if len(sb) <= len(sa) else sb
        shape = [builtins.max(a, b) for a, b in zip((1,) * (len(both) - len(sa)) + sa, both)]
        raise RuntimeError(f"output with shape {_shape_str(sa)} doesn't match the broadcast shape {_shape_str(shape)}")


def _shares_memory(x) -> bool:
    """Whether two elements of ``x`` are one memory location (an empty tensor has none)."""
    return x.numel() > 0 and builtins.any(st == 0 and n > 1 for n, st in zip(x.shape, x.stride()))


def _drop_leading_ones(value, ndim):
    """A value with more dims than the region it is written to, less its leading size-1 dims (PyTorch's
    ``src.view(slicePrefix1sSize(...))``: ViewBackward0 on the value's side)."""
    shape = tuple(value.shape)
    k = 0
    while len(shape) - k > ndim and shape[k] == 1:
        k += 1
    return reshape(value, shape[k:]) if k else value


# NOTE [ Which node a write makes ]
# ``y[key] = value`` is one setitem row here; its node carries the name of the op PyTorch's indexing
# code runs for that key (the gradients are the same):
# 1. a key holding the Python bool False writes nothing and records nothing;
# 2. a key with ints, None, a partial slice or a bool scalar first takes a view, so the write is an
#    in-place op on a view: CopySlices;
# 3. otherwise index tensors make it index_put_: IndexPutBackward0;
# 4. otherwise the key is all of ``y``: copy_ (CopyBackwards) when the value has ``y``'s shape or more
#    than 0 dims, fill_ (FillBackward3) when it is a number or a 0-d tensor and ``y`` is not 0-d.
# 5. Rule 2's view is where PyTorch writes: into a ``y`` whose elements share memory (an ``expand``),
#    a key without index tensors whose view shares none (``y[0]`` of ``x[:1].expand(3)``) is written
#    as ``y[key][...] = value``, so the base's CopySlices covers that view only and its backward
#    computes; a view that still shares memory (``y[...]``, ``y[1:]``) is refused at once, as
#    PyTorch's copy_ refuses it (``y.fill_``/``zero_`` are not setitem: NOTE [ In-place on a view ]).
def _setitem_node(x, parts, tensors, value):
    if builtins.any(t.ndim == 0 for t in tensors):
        return "CopySlices"                 # rule 2: a bool scalar
    if tensors:
        basic, _ = _split_basic(x, parts, tensors)
        return "IndexPutBackward0" if basic is None or _whole_parts(x, basic) else "CopySlices"
    if not _whole_parts(x, parts):
        return "CopySlices"
    shape = tuple(value.shape) if isinstance(value, Tensor) else ()
    return "CopyBackwards" if shape == tuple(x.shape) or shape else "FillBackward3"


def _coordinate_key(x, parts, tensors):
    """The region ``x[key]`` names in PyTorch's order (basic parts first, then the tensors; see
    _split_basic) as one index tensor per dim of ``x``, so NumPy's rule for ints among index arrays
    cannot reorder it. Each dim's coordinates come from a zero-stride view of ``arange``; only the
    region is materialized."""
    basic, adv = _split_basic(x, parts, tensors)
    adv = _rebuild_index(adv, [t.detach().numpy(force=True) for t in tensors])
    coords = []
    for d, n in enumerate(x.shape):
        shape = [1] * x.ndim
        shape[d] = n
        grid = np.broadcast_to(np.arange(n, dtype=np.int64).reshape(shape), tuple(x.shape))
        coords.append(tensor(np.ascontiguousarray((grid[basic] if basic is not None else grid)[adv]),
                             device=x.device))
    return (_SLOT,) * x.ndim, coords


def _region_shape(x, parts, tensors):
    """The shape of ``x[key]``, from a zero-stride stand-in (no memory)."""
    proxy = np.broadcast_to(np.empty((), dtype=np.bool_), tuple(x.shape))
    idx = _rebuild_index(parts, [t.detach().numpy(force=True) for t in tensors])
    return proxy[idx if builtins.any(p is Ellipsis for p in parts) else idx + (Ellipsis,)].shape


def _setitem_shape_check(x, parts, tensors, value):
    """PyTorch's error when ``value`` cannot broadcast to the indexed region (index_put's words when
    the key holds tensors, expand's otherwise)."""
    target = _region_shape(x, parts, tensors)
    src = tuple(value.shape)
    if len(src) > len(target):
        src = src[len(src) - len(target):] if builtins.all(s == 1 for s in src[:len(src) - len(target)]) else src
    lead = len(target) - len(src)
    if tensors and (lead < 0 or builtins.any(s != 1 and s != target[i + lead] for i, s in enumerate(src))):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(value.shape)} cannot be broadcast "
                           f"to indexing result of shape {_shape_str(target)}")
    for i, s in enumerate(src):
        if lead >= 0 and s != 1 and s != target[i + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({target[i + lead]}) must match the existing size "
                               f"({s}) at non-singleton dimension {i + lead}.  Target sizes: {_shape_str(target)}.  "
                               f"Tensor sizes: {_shape_str(value.shape)}")
    if lead < 0:
        raise RuntimeError(f"expand(torch.FloatTensor{{{_shape_str(value.shape)}}}, size={_shape_str(target)}): the "
                           f"number of sizes provided ({len(target)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(src)})")


def _index_put_add_new(shape, idx, values):
    parts, tensors = _normalize_index(values, idx)
    return apply(_O["index_put_add"], [values] + tensors, {"template": parts, "shape": tuple(shape)})


def _index_fill_new(x, idx, value):
    parts, tensors = _normalize_index(x, idx)
    return apply(_O["fill_index"], [x] + tensors, {"template": parts, "value": value})


def gather(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    if index.dtype is not _dtype.int64:
        raise RuntimeError("gather(): Expected dtype int64 for index")
    if index.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {_shape_str(index.shape)} to be "
                               f"smaller than self {_shape_str(input.shape)} apart from dimension {d}")
    if index.numel():
        host = index.detach().numpy(force=True)
        n = input.shape[d]
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            raise RuntimeError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {n}")
    return apply(_O["gather"], [input, index], {"dim": d})


def masked_select(input, mask):
    """The elements of ``input`` (broadcast with ``mask``) where ``mask`` is true, as a 1-D copy:
    one MaskedSelectBackward0 keeping ``self`` and ``mask``, as PyTorch's."""
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    msg = broadcast_mismatch(tuple(mask.shape), tuple(input.shape))     # PyTorch names the mask first
    if msg:
        raise RuntimeError(msg)
    return apply(_O["masked_select"], [input, mask])


def _im2col(x, geom):
    return apply(_O["im2col"], [x], {"geom": geom})


def _col2im(c, geom):
    return apply(_O["col2im"], [c], {"geom": geom})


__all__ = ["where", "nonzero", "narrow", "index_select", "masked_fill", "masked_fill_", "gather",
           "masked_select"]
