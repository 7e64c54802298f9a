"""The few operations the array API standard lacks, one small helper per backend."""
from __future__ import annotations

import numpy as np


def _is_numpy(xp) -> bool:
    return xp.__name__.endswith("numpy")


def _is_cupy(xp) -> bool:
    return "cupy" in xp.__name__


def _is_strict(xp) -> bool:
    return xp.__name__.startswith("array_api_strict")


def index_add(xp, target, index, values):
    """``target[index[i]] += values[i]`` along axis 0, duplicates summed (returns target)."""
    if _is_numpy(xp):
        np.add.at(target, index, values)
        return target
    if _is_cupy(xp):
        _cupy_add_at(target, index, values)
        return target
    t = to_numpy(xp, target).copy()
    np.add.at(t, to_numpy(xp, index), to_numpy(xp, values))
    return from_numpy(xp, t)


def clamp_low(xp, lo, a):
    """``max(lo, a)`` as PyTorch's clamp: a NaN on either side propagates and a tie keeps ``a`` (so
    ``-0.0`` stays ``-0.0``). NumPy's ``maximum`` does exactly this; the array API leaves ties open
    (CuPy's gives ``+0.0``), so elsewhere it is spelled with ``where``."""
    if _is_numpy(xp):
        return np.maximum(lo, a)
    return xp.where((a < lo) | (lo != lo), lo, a)


def clamp_high(xp, hi, a):
    """``min(hi, a)`` with :func:`clamp_low`'s NaN and tie rules."""
    if _is_numpy(xp):
        return np.minimum(hi, a)
    return xp.where((a > hi) | (hi != hi), hi, a)


def _cupy_add_at(target, index, values):
    """Unbuffered ``target[index] += values`` on CuPy: ``cupy.add.at`` (CuPy 13+), else ``cupyx.scatter_add``."""
    import cupy
    if hasattr(cupy.add, "at"):
        cupy.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


def to_numpy(xp, a) -> np.ndarray:
    if _is_numpy(xp):
        return np.asarray(a)
    if _is_cupy(xp):
        return a.get()
    if _is_strict(xp):
        return np.asarray(a._array)
    return np.asarray(a)


def from_numpy(xp, a: np.ndarray, device=None):
    if _is_numpy(xp):
        return a
    if _is_strict(xp):
        import array_api_strict
        return array_api_strict.asarray(a)
    return xp.asarray(a)


def shares_memory(xp, a, b) -> bool:
    """Whether ``a`` and ``b`` may overlap; arrays of two libraries (two devices) never do."""
    if type(a) is not type(b):
        return False
    if _is_numpy(xp):
        return np.may_share_memory(a, b)
    if _is_cupy(xp):
        import cupy
        return cupy.may_share_memory(a, b)
    if _is_strict(xp):
        return np.may_share_memory(a._array, b._array)
    return False


def erf(xp, x):
    """The error function, computed in float64 and returned in ``x``'s dtype (NOTE [ erf ] in _erf.py)."""
    from .erf import erf_numpy, erf_xp
    if _is_numpy(xp):
        return np.asarray(erf_numpy(np.asarray(x, dtype=np.float64)), dtype=x.dtype)
    x64 = xp.astype(x, xp.float64)
    return xp.astype(erf_xp(xp, x64), x.dtype)


def strides(xp, a, itemsize) -> tuple:
    """Element strides of ``a`` (contiguous strides where the backend hides them)."""
    st = getattr(a, "strides", None)
    if st is None and _is_strict(xp):
        st = a._array.strides
    if st is None:
        out, acc = [], 1
        for s in reversed(a.shape):
            out.append(acc)
            acc *= int(s)
        return tuple(reversed(out))
    return tuple(int(s) // itemsize for s in st)


def contiguous_copy(xp, a):
    """A C-contiguous copy of ``a`` (``asarray(copy=True)`` would keep a transposed layout)."""
    if _is_numpy(xp):
        return np.array(a, order="C", copy=True)
    if _is_cupy(xp):
        import cupy
        return cupy.array(a, order="C", copy=True)
    return xp.asarray(a, copy=True)


def is_column_major(xp, a) -> bool:
    """True for a 2-D array laid out column by column (a transposed contiguous matrix)."""
    if type(a) is np.ndarray:
        return a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous
    if (_is_numpy(xp) or _is_cupy(xp)) and a.ndim == 2:
        return bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    return False


def is_whole_view(xp, a, b) -> bool:
    """True when ``a`` is a C-contiguous array over all of the memory that owns ``b`` (itself or a view)."""
    if not (_is_numpy(xp) or _is_cupy(xp)):
        return False
    root = b if b.base is None else b.base
    if (a.base if a.base is not None else a) is not root or root.base is not None:
        return False
    return bool(a.flags.c_contiguous and a.size == root.size and a.dtype == root.dtype)


def mixes_bool(xp) -> bool:
    """True when ``float_array * bool_array`` works directly (NumPy, CuPy; the array API forbids it)."""
    return _is_numpy(xp) or _is_cupy(xp)


def owns_memory(xp, a) -> bool:
    """True when ``a`` is a writeable array that is not a view of another."""
    if _is_numpy(xp):
        return a.base is None and a.flags.writeable
    return False


_INT_OF_SIZE = {2: np.int16, 4: np.int32, 8: np.int64}


def np_keep_where(c, a):
    """``where(c, a, 0)`` for C-contiguous NumPy arrays of one shape, ``c`` bool, ``a`` floating.

    NumPy's ``where`` branches per element (~4 ns each for a random mask, as a ReLU's is);
    this is three branch-free passes. ``c`` widened to integers of ``a``'s width and
    negated is all ones where true and all zeros where false; a bitwise AND with ``a``'s
    bits then keeps ``a`` exactly (NaN, inf and -0.0 included) and gives +0.0 elsewhere,
    which is what ``where`` gives.
    """
    it = _INT_OF_SIZE[a.dtype.itemsize]
    m = c.view(np.int8).astype(it)
    np.negative(m, out=m)
    np.bitwise_and(a.view(it), m, out=m)
    return m.view(a.dtype)


def np_threshold_backward(g, x, threshold):
    """``where(x <= threshold, 0, g)`` for NumPy arrays of one shape, ``g`` floating.

    Three branch-free passes as in ``np_keep_where``: the comparison is written straight
    into integers of ``g``'s width (1 where the gradient is cut), minus one is all zeros
    there and all ones elsewhere, and a bitwise AND keeps ``g``'s bits. NaN in ``x``
    compares false, so its gradient passes, as PyTorch's threshold_backward lets it.
    """
    it = _INT_OF_SIZE[g.dtype.itemsize]
    m = np.empty(g.shape, it)
    np.less_equal(x, threshold, out=m)
    np.subtract(m, 1, out=m)
    np.bitwise_and(g.view(it), m, out=m)
    return m.view(g.dtype)


def gather(xp, x, idx):
    """``x[idx]`` for an advanced (integer/boolean array) index tuple."""
    if _is_numpy(xp) or _is_cupy(xp):
        return x[idx]
    return from_numpy(xp, to_numpy(xp, x)[_np_index(xp, idx)])


def index_put_add(xp, target, idx, values):
    """``target[idx] += values`` with duplicate indices summed (returns target)."""
    if _is_numpy(xp):
        np.add.at(target, idx, values)
        return target
    if _is_cupy(xp):
        _cupy_add_at(target, idx, values)
        return target
    t = to_numpy(xp, target).copy()
    np.add.at(t, _np_index(xp, idx), to_numpy(xp, values))
    return from_numpy(xp, t)


def index_fill(xp, target, idx, value):
    if _is_numpy(xp) or _is_cupy(xp):
        target[idx] = value
        return target
    t = to_numpy(xp, target).copy()
    t[_np_index(xp, idx)] = value if not hasattr(value, "shape") else to_numpy(xp, value)
    return from_numpy(xp, t)


def _np_index(xp, idx):
    return tuple(to_numpy(xp, i) if hasattr(i, "shape") else i for i in idx)


def cumprod(xp, a, axis):
    """Running product along ``axis`` (NumPy's and CuPy's cumprod; the array API's cumulative_prod)."""
    if _is_numpy(xp):
        return np.cumprod(a, axis=axis)
    if _is_cupy(xp):
        import cupy
        return cupy.cumprod(a, axis=axis)
    return xp.cumulative_prod(a, axis=axis)


def einsum(xp, equation, *arrays):
    """``numpy.einsum`` on each backend (the array API has none): NumPy's and CuPy's own, with
    the contraction order optimized for two or more operands; elsewhere through NumPy.
    The result is C-contiguous and never shares memory with an operand (NumPy hands a
    diagonal back as a view of it, and a contraction often as a transposed buffer: PyTorch's
    ``ij,jk->ik`` is contiguous, so ``.view`` works on it)."""
    if _is_cupy(xp):
        import cupy
        out = cupy.asarray(cupy.einsum(equation, *arrays))
        if not out.flags.c_contiguous or any(cupy.may_share_memory(out, a) for a in arrays):
            out = cupy.array(out, order="C", copy=True)
        return out
    host = arrays if _is_numpy(xp) else [to_numpy(xp, a) for a in arrays]
    out = np.asarray(np.einsum(equation, *host, optimize=len(arrays) > 1))   # (0-d may come back a scalar)
    if not out.flags.c_contiguous or any(np.may_share_memory(out, a) for a in host):
        out = np.array(out, order="C", copy=True)
    return out if _is_numpy(xp) else from_numpy(xp, out)
