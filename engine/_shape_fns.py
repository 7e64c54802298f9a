"""More shape, view and index functions of ``torch.*`` (rows in engine/ops/shape_more.py).

Views (they share the input's storage and version counter): ``ravel`` (of a contiguous input),
``select``, ``movedim``/``moveaxis``, ``swapdims``, ``Tensor.unfold`` and the parts of
``vsplit``/``hsplit``/``dsplit``/``split_with_sizes``. Composed as PyTorch composes them:
``ravel``, ``movedim`` (PermuteBackward0), ``fliplr``/``flipud`` (flip), ``diagflat`` (a view, then
diag_embed), ``cartesian_prod`` (meshgrid, flatten, stack), ``combinations`` (meshgrid, masks,
stack), ``take_along_dim`` (expand, gather). Rows of their own: unfold, narrow_copy, take,
index_put, put, masked_scatter, select/slice/diagonal_scatter, diag_embed, block_diag and
index_reduce. Without a graph: tril_indices, triu_indices, unravel_index, unique_consecutive.

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

from .backend import dtypes as _dtype
from . import functional as E
from .core.dispatch import apply
from .core.inplace import _move_retain_grad, bump_version
from .core.tensor import Tensor, VersionCounter, _wrap_dim
from .derivatives import OPS, _SLOT

_O = OPS


def _short(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}[dt.name]


def _shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _need_tensor(fn, x, arg="input", pos=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _host(t):
    return t.detach().numpy(force=True)


def _on(array, like):
    """A host array as a tensor on ``like``'s device (no graph)."""
    return E.tensor(np.array(array), device=like.device)


# ---- views -----------------------------------------------------------------------------------------
def ravel(input):
    """The elements as 1-D: a view of a contiguous input, else a view of a contiguous copy
    (PyTorch's ``contiguous().view(-1)``: ViewBackward0, after CloneBackward0 when copied)."""
    _need_tensor("ravel", input)
    return E.view(input.contiguous(), -1)


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
    return E._getitem(input, (slice(None),) * d + (index,))


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
    return E.permute(input, tuple(order))


moveaxis = movedim


def unfold(self, dimension, size, step):
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim:
    a strided view (UnfoldBackward0; overlapping windows add their gradients up)."""
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if self.ndim == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return E.narrow(E.view(self, 1), 0, 0, size)
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
    return E.tensor_split(input, sections, dim)


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
    return E.flip(input, (1,))


def flipud(input):
    """Reverse dim 0 (up and down): ``flip(input, (0,))``."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return E.flip(input, (0,))


def _narrow_check(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return d, start


def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor (NarrowCopyBackward0), not a view."""
    d, start = _narrow_check(input, dim, start, length)
    return apply(_O["narrow_copy"], [input], {"dim": d, "start": int(start), "length": int(length)})


def split_with_sizes(input, split_sizes, dim=0):
    """Parts of the given sizes along ``dim`` (views; glassgrad gives each part its own SliceBackward0
    where PyTorch shares one SplitWithSizesBackward0)."""
    return E.split(input, list(split_sizes), dim)


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
    return _unsafe(input, [p.shape[_wrap_dim(dim, input.ndim)] for p in E.split(input.detach(), split_size, dim)],
                   dim)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose parts autograd does not track as views (UnsafeSplitBackward0 each)."""
    return _unsafe(input, [p.shape[_wrap_dim(dim, input.ndim)] for p in E.chunk(input.detach(), chunks, dim)],
                   dim)


def is_same_size(input, other) -> builtins.bool:
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


# ---- in-place shape changes (NOTE [ In-place shape changes ]) ------------------------------------------
def _rebind(self, out, opname):
    """``self`` becomes ``out`` (a view of it): its array, its node, one more version."""
    self._data = out._data
    if out.grad_fn is not None:
        old = self.grad_fn, self._output_nr
        self.grad_fn, self._output_nr = out.grad_fn, out._output_nr
        _move_retain_grad(self, *old)
    bump_version(self, opname)
    return self


def _leaf_check(self):
    from .core import grad_mode
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
    return E._inplace("tril", self, diagonal=int(diagonal))


def triu_(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return E._inplace("triu", self, diagonal=int(diagonal))


def cumsum_(self, dim, *, dtype=None):
    if dtype is not None and dtype is not self.dtype:   # summed in ``dtype``, written back in self's
        return self.copy_(E.cumsum(self, dim, dtype=dtype))
    return E._inplace("cumsum", self, dim=_wrap_dim(dim, self.ndim))


# ---- constructors from shapes ---------------------------------------------------------------------------
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of ``input`` on the diagonal ``offset`` of new dims ``dim1``, ``dim2`` (a new
    tensor, zeros elsewhere: DiagEmbedBackward0)."""
    _need_tensor("diag_embed", input)
    n = input.ndim + 1
    a, b = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_O["diag_embed_dims"], [input], {"offset": int(offset), "dim1": a, "dim2": b})


def diagflat(input, offset=0):
    """The flattened input on the diagonal ``offset`` of a square matrix."""
    _need_tensor("diagflat", input)
    return diag_embed(E.reshape(input, -1), offset)


def block_diag(*tensors):
    """Each tensor (0-D as 1x1, 1-D as a row) on the diagonal of a zero matrix, in order
    (BlockDiagBackward0, keeps nothing); dtypes promote as in cat."""
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return E.empty((1, 0))
    return apply(_O["block_diag"], list(tensors))


def _vector_check(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t.shape)}")


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, one row each (meshgrid, flatten,
    stack: StackBackward0 over UnsafeViewBackward0 <- CloneBackward0 <- ExpandBackward0)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _vector_check(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = E.meshgrid(*tensors, indexing="ij")
    return E.stack([E.flatten(g) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Every length-``r`` combination of the elements of a 1-D tensor, in order (as
    ``itertools.combinations``, or ``combinations_with_replacement``), one row each. Composed as
    PyTorch: grids of the tensor, masked where the indices rise; glassgrad's masked selection
    shows IndexBackward0 where PyTorch shows MaskedSelectBackward0."""
    _vector_check(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return E.empty((0,), dtype=input.dtype, device=input.device)
    n = input.shape[0]
    grids = E.meshgrid(*([input] * r), indexing="ij")
    idx = E.meshgrid(*([E.arange(n, device=input.device)] * r), indexing="ij")
    mask = E.ones(tuple(grids[0].shape), dtype=_dtype.bool_, device=input.device)
    for i in range(r - 1):
        rise = E.le(idx[i], idx[i + 1]) if with_replacement else E.lt(idx[i], idx[i + 1])
        mask = E.logical_and(mask, rise)
    return E.stack([E.masked_select(g, mask) for g in grids], 1)


def _tri_indices(name, row, col, offset, dtype, device, lower):
    if dtype is not None and dtype is not _dtype.int64:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_short(dtype)}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return E.tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=_dtype.int64, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """Row and column indices (2 x N, int64) of the lower triangle of a ``row`` x ``col`` matrix."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """Row and column indices (2 x N, int64) of the upper triangle of a ``row`` x ``col`` matrix."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, False)


def unravel_index(indices, shape):
    """Flat indices as a tuple of coordinate tensors for ``shape`` (negative and too-large indices
    wrap, as PyTorch's)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices.dtype is not _dtype.int64:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    rest = _host(indices).astype(np.int64)
    out = []
    for size in reversed(shape):
        out.append(np.mod(rest, size) if size else np.zeros_like(rest))
        rest = np.floor_divide(rest, size) if size else rest
    return tuple(_on(c, indices) for c in reversed(out))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive elements (or slices along ``dim``) squeezed to one, with the
    inverse (which run each element fell in) and the run lengths when asked. No gradient."""
    _need_tensor("unique_consecutive", input)
    a = _host(input)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.shape[0], dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse = (np.cumsum(starts) - 1).reshape(a.shape)
    else:
        d = _wrap_dim(dim, input.ndim)
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        starts = np.ones(moved.shape[0], dtype=bool)
        starts[1:] = np.any(moved[1:] != moved[:-1], axis=1)
        values = np.take(a, np.nonzero(starts)[0], axis=d)
        inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.nonzero(starts)[0], starts.shape[0]))
    out = E.tensor(np.array(values), dtype=input.dtype, device=input.device)
    extra = []
    if return_inverse:
        extra.append(E.tensor(np.array(inverse, dtype=np.int64), dtype=_dtype.int64,
                              device=input.device))
    if return_counts:
        extra.append(E.tensor(counts.astype(np.int64), dtype=_dtype.int64, device=input.device))
    return (out, *extra) if extra else out


# ---- indexed reads ----------------------------------------------------------------------------------
def _long_index(fn, index, word="a long tensor"):
    if not isinstance(index, Tensor) or index.dtype is not _dtype.int64:
        got = _short(index.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{fn}(): Expected {word} for index, but got {got}")


def _flat_bounds(index, n):
    if index.numel():
        host = _host(index).reshape(-1)
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements.")


def take(input, index):
    """``input`` read as 1-D at ``index`` (negative counts from the end); the result has index's
    shape. TakeBackward0 keeps self and index."""
    _need_tensor("take", input)
    _long_index("take", index)
    _flat_bounds(index, input.numel())
    return apply(_O["take"], [input, index])


def take_along_dim(input, indices, dim=None):
    """``gather`` after broadcasting ``input`` and ``indices`` against each other off ``dim``
    (PyTorch's expand then gather; negative indices count from the end, so the index gather keeps
    is a new tensor); without ``dim``, a gather of the flattened input."""
    _need_tensor("take_along_dim", input)
    if not isinstance(indices, Tensor) or indices.dtype is not _dtype.int64:
        got = _short(indices.dtype) if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {got}")
    if dim is None:
        return E.gather(E.reshape(input, -1), 0, E.reshape(indices, -1))
    d = _wrap_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    n = input.shape[d]
    indices = E.where(E.lt(indices, 0), E.add(indices, n), indices)   # negative ones count from the end
    own = list(input.shape)
    own[d] = indices.shape[d]
    idx = E.expand(indices, tuple(E.broadcast_shapes(tuple(own), tuple(indices.shape))))
    other = list(indices.shape)
    other[d] = input.shape[d]
    src = E.expand(input, tuple(E.broadcast_shapes(tuple(other), tuple(input.shape))))
    return E.gather(src, d, idx)


# ---- indexed writes ---------------------------------------------------------------------------------
def _index_put_key(input, indices):
    if isinstance(indices, Tensor) or not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 2) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for k, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(t).__name__}")
    width = builtins.sum(t.ndim if t.dtype is _dtype.bool_ else 1 for t in indices)
    if width > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {width})")
    parts, tensors = E._normalize_index(input, tuple(indices))
    dim, k = 0, 0
    for p in parts:
        if p is _SLOT:
            t = tensors[k]
            k += 1
            if t.dtype is _dtype.int64 and t.numel():
                n = input.shape[dim]
                host = _host(t)
                bad = host[(host >= n) | (host < -n)]
                if bad.size:
                    raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {dim} with size {n}")
            dim += t.ndim if t.dtype is _dtype.bool_ else 1
        else:
            dim += 1
    if builtins.any(isinstance(p, int) for p in parts):   # a 0-d index tensor became an int
        E._check_bounds(input, parts)
    return parts, tensors


def _index_put(input, indices, values, accumulate, inplace):
    _need_tensor("index_put", input)
    _need_tensor("index_put", values, "values", 3)
    parts, tensors = _index_put_key(input, indices)
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_short(input.dtype)} for the destination and {_short(values.dtype)} for the source.")
    if tensors:
        E._setitem_shape_check(input, parts, tensors, values)
    return apply(_O["index_put"], [input, values] + tensors, {"template": parts, "accumulate": builtins.bool(accumulate)},
                 inplace=input if inplace else None)


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (a tuple of index tensors),
    or added there with ``accumulate=True``, where repeated indices add up. IndexPutBackward0 keeps
    the indices."""
    return _index_put(input, indices, values, accumulate, False)


def index_put_(input, indices, values, accumulate=False):
    return _index_put(input, indices, values, accumulate, True)


def _put(input, index, source, accumulate, inplace):
    _need_tensor("put", input)
    _need_tensor("put", source, "source", 3)
    _long_index("put_", index)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_short(input.dtype)} and source.dtype = {_short(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    _flat_bounds(index, input.numel())
    return apply(_O["put"], [input, index, source], {"accumulate": builtins.bool(accumulate)},
                 inplace=input if inplace else None)


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written at the flat positions ``index`` (added with
    ``accumulate=True``). PutBackward0 keeps index (and source when it needs a gradient)."""
    return _put(input, index, source, accumulate, False)


def put_(self, index, source, accumulate=False):
    return _put(self, index, source, accumulate, True)


def _masked_scatter(input, mask, source, inplace):
    _need_tensor("masked_scatter", input)
    _need_tensor("masked_scatter", source, "source", 3)
    if not isinstance(mask, Tensor) or mask.dtype is not _dtype.bool_:
        got = _short(mask.dtype) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {got}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_short(input.dtype)} and {_short(source.dtype)}")
    if inplace:
        E._broadcast_check(input, mask)
        shape = tuple(input.shape)
        if tuple(E.broadcast_shapes(shape, tuple(mask.shape))) != shape:
            raise RuntimeError(f"expand(torch.BoolTensor{{{_shape_str(mask.shape)}}}, size={_shape_str(shape)}): "
                               f"the number of sizes provided ({len(shape)}) must be greater or equal to the number "
                               f"of dimensions in the tensor ({mask.ndim})")
    else:
        E._broadcast_check(input, mask)
        shape = tuple(E.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
        if tuple(input.shape) != shape:
            input = E.expand(input, shape)
    count = int(np.count_nonzero(np.broadcast_to(_host(mask), shape)))
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(_O["masked_scatter"], [input, mask, source], {"count": count}, inplace=input if inplace else None)


def masked_scatter(input, mask, source):
    """A copy of ``input`` with source's first elements, in order, where ``mask`` is True.
    MaskedScatterBackward0 keeps the mask."""
    return _masked_scatter(input, mask, source, False)


def masked_scatter_(self, mask, source):
    return _masked_scatter(self, mask, source, True)


def _embed_check(src, region_shape):
    if tuple(src.shape) != tuple(region_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src.shape)}, slice size = {_shape_str(region_shape)}")


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written over ``input.select(dim, index)``
    (SelectScatterBackward0, keeps no tensors)."""
    _need_tensor("select_scatter", src, "src", 2)
    region = select(input, dim, index)
    _embed_check(src, region.shape)
    d = _wrap_dim(dim, input.ndim)
    index = int(index) % input.shape[d]
    return apply(_O["select_scatter"], [input, src],
                 {"key": (slice(None),) * d + (index,), "dim": d, "index": index})


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written over ``input[.., start:end:step, ..]`` along ``dim``
    (SliceScatterBackward0, keeps no tensors)."""
    _need_tensor("slice_scatter", src, "src", 2)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    lo, hi, _ = slice(start, end, step).indices(n)
    hi = builtins.max(hi, lo)
    key = (slice(None),) * d + (slice(lo, hi, step),)
    _embed_check(src, E._getitem(input.detach(), key).shape)
    return apply(_O["slice_scatter"], [input, src], {"key": key, "dim": d, "start": start, "end": end,
                                                     "step": step})


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written over ``input.diagonal(offset, dim1, dim2)``
    (DiagonalScatterBackward0, keeps no tensors)."""
    _need_tensor("diagonal_scatter", src, "src", 2)
    a, b = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    _embed_check(src, E.diagonal(input.detach(), offset, a, b).shape)
    return apply(_O["diagonal_scatter"], [input, src], {"offset": int(offset), "dim1": a, "dim2": b})


# ---- Tensor methods -------------------------------------------------------------------------------------
def bind_methods(cls):
    """Bind the functions above as Tensor methods."""
    for name, fn in (("ravel", ravel), ("select", select), ("movedim", movedim), ("moveaxis", movedim),
                     ("swapdims", E.transpose), ("swapaxes_", transpose_), ("swapdims_", transpose_),
                     ("unfold", unfold), ("vsplit", vsplit), ("hsplit", hsplit), ("dsplit", dsplit),
                     ("fliplr", fliplr), ("flipud", flipud), ("narrow_copy", narrow_copy),
                     ("split_with_sizes", split_with_sizes), ("unsafe_split", unsafe_split),
                     ("unsafe_chunk", unsafe_chunk), ("t_", t_), ("transpose_", transpose_), ("squeeze_", squeeze_),
                     ("unsqueeze_", unsqueeze_), ("tril_", tril_), ("triu_", triu_), ("cumsum_", cumsum_),
                     ("is_same_size", is_same_size), ("diag_embed", diag_embed), ("diagflat", diagflat),
                     ("unique_consecutive", unique_consecutive), ("take", take), ("take_along_dim", take_along_dim),
                     ("index_put", index_put), ("index_put_", index_put_), ("put", put), ("put_", put_),
                     ("masked_scatter", masked_scatter), ("masked_scatter_", masked_scatter_),
                     ("select_scatter", select_scatter), ("slice_scatter", slice_scatter),
                     ("diagonal_scatter", diagonal_scatter)):
        setattr(cls, name, fn)
    _bind_index_reduce(cls)


__all__ = ["ravel", "select", "movedim", "moveaxis", "vsplit", "hsplit", "dsplit", "fliplr", "flipud",
           "narrow_copy", "split_with_sizes", "unsafe_split", "unsafe_chunk", "is_same_size", "diag_embed",
           "diagflat", "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices",
           "unravel_index", "unique_consecutive", "take", "take_along_dim", "index_put", "index_put_", "put",
           "masked_scatter", "select_scatter", "slice_scatter", "diagonal_scatter"]


# ---- index_reduce ---------------------------------------------------------------------------------------
def _index_reduce(input, dim, index, source, reduce, include_self, inplace):
    _need_tensor("index_reduce", input)
    _need_tensor("index_reduce", source, "source", 4)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _wrap_dim(dim, input.ndim)
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim if isinstance(index, Tensor) else 0} with type: "
                         f"{_short(index.dtype) if isinstance(index, Tensor) else type(index).__name__} and size: "
                         f"{list(index.shape) if isinstance(index, Tensor) else []}")
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_short(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_short(input.dtype)}) and source ({_short(source.dtype)}) must "
                           f"have the same scalar type")
    index = index.reshape(1) if index.ndim == 0 else index
    if input.ndim == 0 or source.ndim != input.ndim:
        raise RuntimeError("index_reduce_(): glassgrad needs self and source of one number of dims (1 or more)")
    if index.numel() != source.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    if builtins.any(source.shape[k] != input.shape[k] for k in range(input.ndim) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    n = input.shape[d]
    if index.numel():
        host = _host(index)
        bad = host[(host >= n) | (host < -n)]
        if bad.size:
            raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {n}")
        if (host < 0).any():
            index = E.where(E.lt(index, 0), E.add(index, n), index)
    return apply(_O["index_reduce"], [input, index, source],
                 {"dim": d, "reduce": reduce, "include_self": builtins.bool(include_self)},
                 inplace=input if inplace else None)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Combine source's slices along ``dim`` into slices ``index`` of a copy of ``input`` with
    ``reduce`` (prod, mean, amax or amin; NOTE [ Scatter reduce ] in engine/_index_fns.py, whose
    formulas it shares). IndexReduceBackward0 keeps self, index, source and the result."""
    return _index_reduce(input, dim, index, source, reduce, include_self, False)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(self, dim, index, source, reduce, include_self, True)


def _bind_index_reduce(cls):
    cls.index_reduce, cls.index_reduce_ = index_reduce, index_reduce_


__all__ += ["index_reduce"]
