"""The function namespaces backward formulas are written against.

NOTE [ One formula, two currencies ]
1. A backward formula is a pure function ``bwd(F, grad, saved)``; it calls only ``F.*``
   and Python operators.
2. ``ArrayFns`` runs it on raw arrays through the array API (the fast, usual path).
3. ``TensorFns`` runs the same formula on Tensors through differentiable engine ops,
   so the backward pass itself is recorded: that is ``create_graph=True``.
4. ``F.differentiable`` tells the two apart; a formula that reads saved values which
   are themselves functions of an input (layer_norm's mean and rstd) rebuilds them
   from the input when it is True, so second derivatives are right.
5. The core's verbs are written here; a family's own verbs (``erfinv``, ``digamma``, ``i0``,
   ``im2col`` ...) are registered by the family (:func:`register`), so the core never
   imports the library above it. ``TensorFns`` calls the torch.* namespace the functions
   layer hands it (:func:`set_tensor_namespace`). ``F.linalg`` is a namespace, not a verb:
   the array API's linalg on arrays, and on Tensors the ``torch.linalg`` that engine/linalg.py
   registers (``register("linalg", tensor=module)``), so engine/ops/linalg.py's formulas solve
   and invert with either currency without importing the library.
"""
from __future__ import annotations

import numpy as np

from ..backend import gaps as _backend, dtypes as _dtype, low_precision as _lp
from . import tensor as _tensor_mod
from .graph import Node
from .tensor import Tensor, _xp_of

_NP_DT = _tensor_mod._NP_DT
_ndarray = _tensor_mod._ndarray
_np_bool = np.dtype(bool)
_add_reduce = np.add.reduce


_ARRAY_VERBS: dict = {}     # a family's verb on arrays: name -> fn(xp, *args)
_TENSOR_VERBS: dict = {}    # the same verb on tensors: name -> fn(*args)


def register(name: str, array=None, tensor=None) -> None:
    """Give ``F.<name>`` to backward formulas: ``array(xp, ...)`` on arrays, ``tensor(...)`` on tensors."""
    if array is not None:
        _ARRAY_VERBS[name] = array
    if tensor is not None:
        _TENSOR_VERBS[name] = tensor


def set_tensor_namespace(namespace) -> None:
    """The torch.* namespace whose differentiable functions ``TensorFns`` calls (rule 5)."""
    TensorFns.E = namespace


class ArrayFns:
    differentiable = False  # formulas may skip work that only matters to a recorded backward

    def __init__(self, xp):
        self.xp = xp
        for name in ("exp", "log", "log1p", "sqrt", "sin", "cos", "tanh", "sign", "abs", "matmul", "reshape",
                     "broadcast_to", "expand_dims", "logical_and", "logical_or", "logical_not", "floor"):
            setattr(self, name, getattr(xp, name))
        if _backend._is_numpy(xp):
            self.matmul = np.matmul     # array_api_compat's matmul only forwards to it
        self.linalg = getattr(xp, "linalg", None)     # rule 5: solves and inverses on arrays

    # metadata
    def shape(self, x):
        return tuple(x.shape)

    def dtype(self, x):
        d = _NP_DT.get(x.dtype) if self.xp is _tensor_mod._np_xp else None
        return d if d is not None else _tensor_mod._engine_dtype(self.xp, x.dtype)

    def astype(self, x, dt):
        if not dt.is_complex and self.xp.isdtype(x.dtype, "complex floating"):
            x = self.xp.real(x)     # a real input's share of a complex gradient (NOTE [ Complex gradients ] 1)
        return self.xp.astype(x, _dtype.to_array_dtype(self.xp, dt))

    def unpack(self, saved, node):
        return saved.unpack_data(node)

    # math
    def erf(self, x):
        return _backend.erf(self.xp, x)

    def erfinv(self, x):
        return _ARRAY_VERBS["erfinv"](self.xp, x)

    def digamma(self, x):
        return _ARRAY_VERBS["digamma"](self.xp, x)

    def polygamma(self, n, x):
        return _ARRAY_VERBS["polygamma"](self.xp, n, x)

    def trunc(self, x):
        return self.xp.trunc(x)

    def i0(self, x):
        return _ARRAY_VERBS["i0"](self.xp, x)

    def i1(self, x):
        return _ARRAY_VERBS["i1"](self.xp, x)

    def scatter_reduce(self, x, dim, index, src, reduce, include_self):
        return _ARRAY_VERBS["scatter_reduce"](self.xp, x, index, src, dim, reduce, include_self)

    def where(self, c, a, b):
        xp = self.xp
        if (type(b) in (int, float) and b == 0 and type(a) is _ndarray and type(c) is _ndarray
                and a.shape == c.shape and c.dtype == _np_bool and a.dtype.kind == "f"
                and a.flags.c_contiguous and c.flags.c_contiguous):
            return _backend.np_keep_where(c, a)
        if type(b) in (int, float) and b == 0 and hasattr(a, "shape") and hasattr(c, "shape") and a.shape == c.shape \
                and xp.isdtype(a.dtype, "real floating") and bool(xp.all(xp.isfinite(a))):
            # where(mask, g, 0), as in ReLU's backward: a multiply by the mask is ~8x faster than
            # NumPy's where and gives the same values when g is finite (adding 0.0 turns the -0.0
            # of masked negatives into 0.0; a -0.0 gradient that passes comes out as 0.0)
            out = a * (c if _backend.mixes_bool(xp) else xp.astype(c, a.dtype))
            out += 0.0
            return out
        # NumPy hands back 0-d results as np.float64, a float subclass: test the exact type
        like = a if type(a) not in (int, float) else b
        dt = like.dtype if type(like) not in (int, float) else xp.float64
        if type(a) in (int, float):
            a = xp.asarray(a, dtype=dt)
        if type(b) in (int, float):
            b = xp.asarray(b, dtype=dt)
        return xp.where(c, a, b)

    def threshold_backward(self, g, x, threshold):
        """``g`` where ``x > threshold`` or is NaN, else 0 (PyTorch's threshold_backward)."""
        if (type(g) is _ndarray and type(x) is _ndarray and g.shape == x.shape and g.dtype.kind == "f"
                and x.dtype.kind == "f"):
            return _backend.np_threshold_backward(g, x, threshold)
        xp = self.xp
        return xp.where(x <= threshold, xp.zeros((), dtype=g.dtype), g)

    def eq(self, a, b):
        return a == b

    def gt(self, a, b):
        return a > b

    def ge(self, a, b):
        return a >= b

    def lt(self, a, b):
        return a < b

    def le(self, a, b):
        return a <= b

    def sum(self, x, axis=None, keepdims=False):
        if type(x) is _ndarray and x.dtype.kind == "f" and x.dtype.itemsize > 2:
            return _add_reduce(x, axis=axis, keepdims=keepdims)     # np.sum's reduction, without its wrappers
        return _lp.sum_low(self.xp, x, axis, keepdims)             # NOTE [ Low-precision results ] 4

    def sum_to(self, x, shape):
        """Sum a broadcast gradient back to ``shape``."""
        lead = len(x.shape) - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
        if type(x) is _ndarray:     # np.sum's own reduction, without its wrappers
            if axes:
                x = _lp.sum_low(self.xp, x, axes, True) if _lp.is_low(x) else _add_reduce(x, axis=axes, keepdims=True)
            return x.reshape(shape) if x.shape != tuple(shape) else x
        if axes:
            x = _lp.sum_low(self.xp, x, axes, True)
        return self.xp.reshape(x, shape) if tuple(x.shape) != tuple(shape) else x

    def permute(self, x, axes):
        if type(x) is _ndarray:
            return x.transpose(axes)
        return self.xp.permute_dims(x, tuple(axes))

    def mT(self, x):
        if type(x) is _ndarray and x.ndim >= 2:
            return x.mT       # the same view permute_dims makes, without the wrappers
        axes = list(range(len(x.shape)))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        return self.xp.permute_dims(x, tuple(axes))

    def zeros(self, shape, like):
        return self.xp.zeros(tuple(shape), dtype=like.dtype)

    def iota(self, n, axis, ndim, like):
        """int64 0..n-1 laid along ``axis`` of an ``ndim``-d broadcastable array."""
        shape = [1] * ndim
        shape[axis] = n
        return self.xp.reshape(self.xp.arange(n, dtype=self.xp.int64), tuple(shape))

    def index(self, x, idx):
        return _index_array(self.xp, x, idx)

    def cumsum(self, x, axis):
        return self.xp.cumulative_sum(x, axis=axis)

    def flip(self, x, axes):
        return self.xp.flip(x, axis=axes) if axes else x

    def concat(self, xs, axis):
        return self.xp.concat(list(xs), axis=axis)

    def cumprod(self, x, axis):
        return _backend.cumprod(self.xp, x, axis)

    def einsum(self, equation, *xs):
        return _backend.einsum(self.xp, equation, *xs)

    def scatter_add(self, shape, idx, values, like):
        """zeros(shape) with ``values`` added at ``idx`` (duplicates summed)."""
        xp = self.xp
        z = xp.zeros(tuple(shape), dtype=values.dtype)
        if _is_basic(idx):
            if any(i is None for i in idx):
                idx, values = _drop_new_axes(xp, idx, values, len(shape))
            z[_full_index(idx)] = values
            return z
        return _backend.index_put_add(xp, z, idx, values)

    def fill_index(self, x, idx, value):
        xp = self.xp
        out = xp.asarray(x, copy=True)
        if _is_basic(idx):
            out[_full_index(idx)] = value
            return out
        return _backend.index_fill(xp, out, idx, value)

    def im2col(self, x, geom):
        return _ARRAY_VERBS["im2col"](self.xp, x, geom)

    def col2im(self, cols, geom):
        return _ARRAY_VERBS["col2im"](self.xp, cols, geom)


def _is_basic(idx) -> bool:
    return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in idx)


def _drop_new_axes(xp, idx, values, ndim):
    """A basic index without its ``None`` entries, and ``values`` (shaped like ``x[idx]``) without the
    size-1 dims they made: a setitem key may not hold None in every namespace (array_api_strict)."""
    n_ell = ndim - sum(1 for i in idx if i is not None and i is not Ellipsis)
    kept, out_dim, drop = [], 0, set()
    for i in idx:
        if i is None:
            drop.add(out_dim)
            out_dim += 1
        elif i is Ellipsis:
            kept.extend([slice(None)] * n_ell)
            out_dim += n_ell
        else:
            kept.append(i)
            out_dim += 0 if isinstance(i, int) else 1
    shape = tuple(n for d, n in enumerate(values.shape) if d not in drop)
    return tuple(kept), xp.reshape(values, shape)


def _full_index(idx):
    return idx if any(i is Ellipsis for i in idx) else idx + (Ellipsis,)


def _index_array(xp, x, idx):
    if _is_basic(idx):
        return x[_full_index(idx)]
    return _backend.gather(xp, x, idx)


class TensorFns:
    """Same names as ArrayFns, over Tensors and differentiable engine ops."""

    differentiable = True

    E = None      # the torch.* namespace (set_tensor_namespace)

    def __init__(self):
        self.E = TensorFns.E

    def shape(self, x):
        return tuple(x.shape)

    def dtype(self, x):
        return x.dtype

    def astype(self, x, dt):
        if x.dtype.is_complex and not dt.is_complex:
            x = self.E.real(x)      # NOTE [ Complex gradients ] 1 (engine/ops/complex.py)
        return x.to(dt)

    def unpack(self, saved, node):
        return saved.unpack(node)

    @property
    def linalg(self):
        """torch.linalg, as engine/linalg.py registered it (rule 5)."""
        return _TENSOR_VERBS["linalg"]

    def __getattr__(self, name):
        E = self.__dict__["E"]
        table = {"exp": E.exp, "log": E.log, "log1p": E.log1p, "sqrt": E.sqrt, "sin": E.sin, "cos": E.cos,
                 "tanh": E.tanh, "sign": E.sign, "abs": E.abs, "matmul": E.matmul, "erf": E.erf,
                 "reshape": E.reshape, "broadcast_to": E.broadcast_to, "logical_and": E.logical_and,
                 "logical_not": E.logical_not, "logical_or": E.logical_or, "eq": E.eq, "gt": E.gt, "ge": E.ge, "lt": E.lt, "le": E.le,
                 "floor": E.floor}
        if name in table:
            return table[name]
        raise AttributeError(name)

    def expand_dims(self, x, axis):
        return self.E.unsqueeze(x, axis)

    def erfinv(self, x):
        return self.E.erfinv(x)

    def digamma(self, x):
        return self.E.digamma(x)

    def polygamma(self, n, x):
        return self.E.polygamma(n, x)

    def trunc(self, x):
        return self.E.trunc(x)

    def i0(self, x):
        return _TENSOR_VERBS["i0"](x)

    def i1(self, x):
        return _TENSOR_VERBS["i1"](x)

    def scatter_reduce(self, x, dim, index, src, reduce, include_self):
        return self.E.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)

    def where(self, c, a, b):
        return self.E.where(c, a, b)

    def threshold_backward(self, g, x, threshold):
        return self.E.where(self.E.le(x, threshold), self.E.zeros_like(g), g)

    def sum(self, x, axis=None, keepdims=False):
        if axis is None:
            return self.E.sum(x) if not keepdims else self.E.sum(x, tuple(range(x.ndim)), keepdim=True)
        return self.E.sum(x, axis, keepdim=keepdims)

    def sum_to(self, x, shape):
        return self.E.sum_to_size(x, shape)

    def permute(self, x, axes):
        return self.E.permute(x, tuple(axes))

    def flip(self, x, axes):
        return self.E.flip(x, axes)

    def mT(self, x):
        return self.E.transpose(x, -2, -1)

    def zeros(self, shape, like):
        return self.E.zeros(tuple(shape), dtype=like.dtype, device=like.device)

    def iota(self, n, axis, ndim, like):
        shape = [1] * ndim
        shape[axis] = n
        return self.E.arange(n, device=like.device).reshape(tuple(shape))

    def index(self, x, idx):
        return x[idx]

    def cumsum(self, x, axis):
        return self.E.cumsum(x, axis)

    def cumprod(self, x, axis):
        return self.E.cumprod(x, axis)

    def concat(self, xs, axis):
        return self.E.cat(list(xs), axis)

    def einsum(self, equation, *xs):
        return self.E.einsum(equation, *xs)

    def scatter_add(self, shape, idx, values, like):
        return self.E._index_put_add_new(shape, idx, values)

    def fill_index(self, x, idx, value):
        return self.E._index_fill_new(x, idx, value)

    def im2col(self, x, geom):
        return self.E._im2col(x, geom)

    def col2im(self, cols, geom):
        return self.E._col2im(cols, geom)


_array_fns_cache: dict = {}
_tensor_fns = None


def array_fns(node_or_xp):
    xp = node_or_xp if not hasattr(node_or_xp, "_in_meta") else None
    if xp is None:
        raise TypeError("array_fns needs a namespace")
    f = _array_fns_cache.get(xp.__name__)
    if f is None:
        f = _array_fns_cache[xp.__name__] = ArrayFns(xp)
    return f


def tensor_fns():
    global _tensor_fns
    if _tensor_fns is None:
        _tensor_fns = TensorFns()
    return _tensor_fns


def _call_node(self, *grads):
    """``grad_fn(*grad_outputs)``: run this node's backward on tensors and return tensors."""
    arrays = [g._data if isinstance(g, Tensor) else g for g in grads]
    xp = next((_xp_of(a) for a in arrays if a is not None), None)
    out = self.apply(arrays, array_fns(xp) if xp is not None else None)
    return tuple(Tensor._wrap(o) if o is not None and not isinstance(o, Tensor) else o for o in out)


Node.__call__ = _call_node   # grad_fn(*grads): one node's backward, on tensors
