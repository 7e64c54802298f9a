"""torch.*'s shape functions (rows in engine/ops/shape/): views (``ravel`` of a contiguous input,
``select``, ``movedim``/``moveaxis``, ``Tensor.unfold``, the parts of ``vsplit``/``hsplit``/``dsplit``/
``split_with_sizes``/``tensor_split``), ``fliplr``/``flipud``, ``narrow_copy``, ``unsafe_split``/``unsafe_chunk``,
the in-place shape changes (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, NOTE [ In-place shape
changes ]) and ``tril_``/``triu_``/``cumsum_``; the stack family (``atleast_1d/2d/3d``, ``hstack``, ``vstack``,
``dstack``, ``row_stack``, ``column_stack``), ``roll``, ``rot90``, ``repeat_interleave`` and ``tile``.

Composed as PyTorch composes them: ``ravel``, ``movedim`` (PermuteBackward0), ``fliplr``/``flipud``
(flip), the stack family (atleast_* views, then one CatBackward0), ``tile`` (repeat).

NOTE [ In-place shape changes ]
1. ``t_``, ``transpose_``, ``squeeze_`` and ``unsqueeze_`` change a tensor's shape, not its
   values: the tensor becomes the view the out-of-place op would return (same storage), under
   PyTorch's node name for the in-place form (TBackward1, TransposeBackward1, SqueezeBackward3/4/5,
   UnsqueezeBackward1), and its version goes up by one, as in PyTorch.
2. No base history is rebased: the values of the storage did not change. A leaf that requires
   grad is refused, as for every in-place op.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from ..backend import dtypes as _dtype
from .arithmetic import _inplace
from ..backend.layout import contiguous_format
from .factories import clone, tensor
from .indexing import _getitem, _narrow_check, narrow
from .reductions import cumsum
from .views import cat, chunk, expand, flip, permute, repeat, reshape, split, unsqueeze, view
from ..core import grad_mode
from ..core.dispatch import apply
from ..core.inplace import _move_retain_grad, bump_version
from ..core.tensor import Tensor, VersionCounter
from ..core.table import OPS as _O
from .args import need_tensor as _need_tensor, host as _host
from .dims import row_for, wrap_dim as _wrap_dim


def _shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _new(host, like, dtype=None):
    return tensor(host, dtype=dtype, device=like.device)


# ---- views -----------------------------------------------------------------------------------------
def ravel(input):
    """The elements as 1-D: a view of a contiguous input, else a view of a contiguous copy
    (PyTorch's ``contiguous().view(-1)``: ViewBackward0, after CloneBackward0 when copied)."""
    _need_tensor("ravel", input)
    return view(input.contiguous(), -1)


def select(input, dim, index):
    """The slice ``index`` along ``dim``, without that dim (a view: SelectBackward0)."""
    _need_tensor("select", input)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    index = int(index)
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {_shape_str(input.shape)} at "
                         f"dimension {d}")
    return _getitem(input, (slice(None),) * d + (index,))


def _dim_list(dims, ndim):
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [_wrap_dim(d, ndim) for d in dims]


def movedim(input, source, destination):
    """Dims ``source`` moved to positions ``destination``; the rest keep their order (a permute)."""
    _need_tensor("movedim", input)
    n = input.ndim
    src, dst = _dim_list(source, n), _dim_list(destination, n)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_shape_str(src)} dims) should "
                           f"contain the same number of dims as destination ({_shape_str(dst)} dims)")
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_shape_str(dims)})")
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(k for k in range(n) if k not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return permute(input, tuple(order))


moveaxis = movedim


def unfold(self, dimension, size, step):
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim:
    a strided view (UnfoldBackward0; overlapping windows add their gradients up)."""
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if self.ndim == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return narrow(view(self, 1), 0, 0, size)
    d = _wrap_dim(dimension, self.ndim)
    if size > self.shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {self.shape[d]} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return apply(_O["unfold_windows"], [self], {"dimension": d, "size": int(size), "step": int(step)})


def _split_dir(name, input, sections, dim, need):
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(sections, numbers.Integral) and not isinstance(sections, builtins.bool):
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 (views); a number of sections must divide the size."""
    return _split_dir("vsplit", input, indices_or_sections, 0, 2)


def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for a 1-D input)."""
    return _split_dir("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def dsplit(input, indices_or_sections):
    """tensor_split along dim 2."""
    return _split_dir("dsplit", input, indices_or_sections, 2, 3)


def fliplr(input):
    """Reverse dim 1 (left and right): ``flip(input, (1,))``."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Reverse dim 0 (up and down): ``flip(input, (0,))``."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor (NarrowCopyBackward0), not a view."""
    d, start = _narrow_check(input, dim, start, length)
    return apply(_O["narrow_copy"], [input], {"dim": d, "start": int(start), "length": int(length)})


def split_with_sizes(input, split_sizes, dim=0):
    """Parts of the given sizes along ``dim`` (views; glassgrad gives each part its own SliceBackward0
    where PyTorch shares one SplitWithSizesBackward0)."""
    return split(input, list(split_sizes), dim)


def _unsafe(input, sizes, dim):
    """Split parts that are not views to autograd (PyTorch's unsafe_split): the same memory, but
    no base and a version counter of their own, each with its UnsafeSplitBackward0."""
    d = _wrap_dim(dim, input.ndim)
    parts, start = [], 0
    for size in sizes:
        key = (slice(None),) * d + (slice(start, start + size),)
        p = apply(_O["slice"], [input], {"idx": key}, node_name="UnsafeSplitBackward0")
        p._base, p._vc = None, VersionCounter()
        parts.append(p)
        start += size
    return tuple(parts)


def unsafe_split(input, split_size, dim=0):
    """``split`` whose parts autograd does not track as views (UnsafeSplitBackward0 each)."""
    return _unsafe(input, [p.shape[_wrap_dim(dim, input.ndim)] for p in split(input.detach(), split_size, dim)],
                   dim)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose parts autograd does not track as views (UnsafeSplitBackward0 each)."""
    return _unsafe(input, [p.shape[_wrap_dim(dim, input.ndim)] for p in chunk(input.detach(), chunks, dim)],
                   dim)


def is_same_size(input, other) -> builtins.bool:
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


# ---- in-place shape changes (NOTE [ In-place shape changes ]) ------------------------------------------
def _rebind(self, out, opname):
    """``self`` becomes ``out`` (a view of it): its array, one more version, its node (set after the version
    moved: NOTE [ A view's grad_fn after an in-place op ] 1 in engine/ops/shape/view_history.py)."""
    self._data = out._data
    bump_version(self, opname)
    if out._grad_fn is not None:
        old = self._grad_fn, self._output_nr
        self.grad_fn, self._output_nr = out._grad_fn, out._output_nr
        _move_retain_grad(self, *old)
    return self


def _leaf_check(self):
    if grad_mode.is_grad_enabled() and self.grad_fn is None and self._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def t_(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    _leaf_check(self)
    out = apply(_O["t"], [self], {"dims": tuple(reversed(range(self.ndim)))}, node_name="TBackward1")
    return _rebind(self, out, "t_")


def transpose_(self, dim0, dim1):
    _leaf_check(self)
    n = self.ndim
    dims = list(range(n))
    if n:
        a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        dims[a], dims[b] = dims[b], dims[a]
    out = apply(_O["transpose"], [self], {"dims": tuple(dims)}, node_name="TransposeBackward1")
    return _rebind(self, out, "transpose_")


def squeeze_(self, dim=None):
    shape = tuple(self.shape)
    if dim is None:
        new, name = tuple(s for s in shape if s != 1), "SqueezeBackward3"
    else:
        dims = {_wrap_dim(d, self.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
        name = "SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5"
    _leaf_check(self)
    out = apply(_O["squeeze"], [self], {"shape": new}, node_name=name)
    return _rebind(self, out, "squeeze_")


def unsqueeze_(self, dim):
    d = _wrap_dim(dim, self.ndim + 1)
    _leaf_check(self)
    shape = list(self.shape)
    shape.insert(d, 1)
    out = apply(_O["unsqueeze"], [self], {"shape": tuple(shape)}, node_name="UnsqueezeBackward1")
    return _rebind(self, out, "unsqueeze_")


def tril_(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _inplace("tril", self, diagonal=int(diagonal))


def triu_(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _inplace("triu", self, diagonal=int(diagonal))


def cumsum_(self, dim, *, dtype=None):
    if dtype is not None and dtype is not self.dtype:   # summed in ``dtype``, written back in self's
        return self.copy_(cumsum(self, dim, dtype=dtype))
    return apply(row_for("cumsum", self), [self], {"dim": _wrap_dim(dim, self.ndim)}, inplace=self)


# ---- stacking (composed: atleast_* views, then one CatBackward0) --------------------------------------
def _many(fn, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(t) for t in tensors[0])
    if len(tensors) == 1:
        return fn(tensors[0])
    return tuple(fn(t) for t in tensors)


def _at1(t):
    return t.reshape(1) if t.ndim == 0 else t


def _at2(t):
    return t.reshape(1, 1) if t.ndim == 0 else (unsqueeze(t, 0) if t.ndim == 1 else t)


def _at3(t):
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d one as shape (1,)); one tensor in, one out."""
    return _many(_at1, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two dims (1-D ``(n,)`` becomes ``(1, n)``)."""
    return _many(_at2, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three dims (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` ``(m, n, 1)``)."""
    return _many(_at3, tensors)


def _seq(name, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors):
    """Concatenate along dim 1 (dim 0 when every tensor is 1-D after atleast_1d)."""
    ts = [_at1(t) for t in _seq("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenate along dim 0 after atleast_2d."""
    return cat([_at2(t) for t in _seq("vstack", tensors)], 0)


row_stack = vstack


def dstack(tensors):
    """Concatenate along dim 2 after atleast_3d."""
    return cat([_at3(t) for t in _seq("dstack", tensors)], 2)


def column_stack(tensors):
    """0-D and 1-D tensors become columns ``(n, 1)``; then concatenate along dim 1."""
    ts = _seq("column_stack", tensors)
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


def roll(input, shifts, dims=None):
    """Shift elements along ``dims`` (wrapping round); without ``dims`` the flattened tensor is rolled."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        dims = ()
    else:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        dims = tuple(_wrap_dim(d, input.ndim, scalar=False) for d in dims)
    return apply(_O["roll"], [input], {"shifts": shifts, "dims": dims})


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times, from ``dims[0]`` toward ``dims[1]``. Rot90Backward0 keeps nothing."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply(_O["rot90"], [input], {"k": int(k), "dims": (d0, d1)})


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times. A number: as PyTorch, unsqueeze,
    expand, clone and view; a tensor of counts: one IndexSelectBackward0 keeping the index. With only a
    tensor of counts, the indices 0, 1, ... each repeated that many times. ``output_size`` (a hint for
    PyTorch's CUDA kernel) is accepted and not needed."""
    if repeats is None:
        counts = _host(input)
        if input.ndim != 1 or input.dtype is not _dtype.int64 or (counts < 0).any():
            raise RuntimeError("repeats has to be Long tensor")
        return _new(np.repeat(np.arange(len(counts), dtype=np.int64), counts), input)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if dim is None:
        input = reshape(input, (-1,))
        dim = 0
    d = _wrap_dim(dim, input.ndim)
    if not isinstance(repeats, Tensor):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        shape = tuple(input.shape)
        x = unsqueeze(input, d + 1)
        x = expand(x, shape[:d + 1] + (int(repeats),) + shape[d + 1:])
        return view(clone(x, memory_format=contiguous_format), shape[:d] + (shape[d] * int(repeats),) + shape[d + 1:])
    counts = _host(repeats)
    if repeats.ndim != 1 or len(counts) != input.shape[d]:
        raise RuntimeError("repeats must have the same size as input along dim")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = _new(np.repeat(np.arange(len(counts), dtype=np.int64), counts), input)
    return apply(_O["index_select_dim"], [input, index], {"dim": d})


def tile(input, dims):
    """Repeat the whole tensor ``dims`` times per dim; fewer dims than the input are padded with 1s in
    front (RepeatBackward0)."""
    if isinstance(dims, int):
        raise TypeError("tile(): argument 'dims' (position 2) must be tuple of ints, not int")
    dims = tuple(int(x) for x in dims)
    dims = (1,) * builtins.max(input.ndim - len(dims), 0) + dims
    return repeat(input, dims)


def tensor_split(input, indices_or_sections, dim=0):
    """Split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer), or at the
    given indices. Each part is a slice (a view)."""
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = (indices_or_sections.tolist() if indices_or_sections.ndim
                               else int(indices_or_sections.item()))
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for k in range(n):
            start += q + (1 if k < r else 0)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = [int(i) for i in indices_or_sections]
    out, start = [], 0
    for b in bounds + [size]:
        lo = builtins.min(builtins.max(start if start >= 0 else start + size, 0), size)
        hi = builtins.min(builtins.max(b if b >= 0 else b + size, lo), size)
        out.append(_getitem(input, (slice(None),) * d + (slice(lo, hi),)))
        start = b
    return tuple(out)


__all__ = ["ravel", "select", "movedim", "moveaxis", "vsplit", "hsplit", "dsplit", "fliplr", "flipud", "narrow_copy",
           "split_with_sizes", "unsafe_split", "unsafe_chunk", "is_same_size", "atleast_1d", "atleast_2d",
           "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack", "roll", "rot90",
           "repeat_interleave", "tile", "tensor_split"]
