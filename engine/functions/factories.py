"""Tensor factories: ``tensor``, ``zeros``, ``randn``, ``arange`` ... (PyTorch's signatures), the window
functions (``hann_window`` ...), ``asarray``, ``scalar_tensor`` and ``Tensor.new_empty``."""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from ..backend import gaps as _backend, dtypes as _dtype, layout as _layout
from ..memory import oom as _oom
from ..backend.device import as_device, namespace_for
from ..core.grad_mode import no_grad
from ..core.tensor import CANNOT_REQUIRE_GRAD, Tensor
from ..random import generator_for
from ..core.dispatch import apply
from ..core.table import OPS as _O
from ..ops.layout import CLONE_CONTIGUOUS
from ..backend.dtypes import short_name as _short


def _resolve(dtype, device, default=None):
    dev = as_device(device)
    dt = dtype if dtype is not None else (default or _dtype.get_default_dtype())
    if isinstance(dt, str):
        dt = _dtype._by_name(dt)
    if not isinstance(dt, _dtype.dtype):
        dt = _dtype._by_name(np.dtype(dt).name)
    return dev, dt, namespace_for(dev)


def _finish(array, requires_grad, base="input"):
    t = Tensor._wrap(array, base=base)
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(CANNOT_REQUIRE_GRAD)
        t.requires_grad = True
    return t


def _np_dtype(dt):
    return np.dtype(_dtype.to_array_dtype(np, dt))


def _infer_dtype(data) -> _dtype.dtype:
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufV":
        return _dtype.from_array_dtype(np, data.dtype)    # an int8 or float16 array keeps its dtype
    a = np.asarray(data)
    if a.dtype == np.bool_:
        return _dtype.bool_
    if a.dtype.kind in "iu":
        return _dtype.int32 if isinstance(data, np.ndarray) and a.dtype == np.int32 else _dtype.int64
    if a.dtype.kind == "f":
        if isinstance(data, np.ndarray):
            return _dtype.float64 if a.dtype == np.float64 else _dtype.float32
        return _dtype.get_default_dtype()
    if a.dtype.kind == "c":     # Python complex numbers: the default dtype's complex (complex64)
        if isinstance(data, np.ndarray):
            return _dtype.complex128 if a.dtype == np.complex128 else _dtype.complex64
        return _dtype.get_default_dtype().to_complex()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _flatten_tensors(data):
    if isinstance(data, Tensor):
        return data.detach().numpy(force=True) if data.device.type == "cpu" else data.cpu().numpy()
    if isinstance(data, (list, tuple)):
        return [_flatten_tensors(d) for d in data]
    return data


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy ``data`` (nested lists, scalars, NumPy arrays, tensors) into a new leaf tensor."""
    data = _flatten_tensors(data)
    if isinstance(data, (list, tuple)) and _ragged(data):
        raise ValueError("expected sequence of length consistent with the first element (ragged nested list)")
    dt = dtype if dtype is not None else _infer_dtype(data)
    dev, dt, xp = _resolve(dt, device)
    try:
        host = np.array(data, dtype=_np_dtype(dt))
    except (TypeError, ValueError) as e:
        raise TypeError(f"tensor(): could not convert data to {dt!r}: {e}") from None
    return _finish(_to_device(xp, host), requires_grad)


def _ragged(data) -> bool:
    try:
        np.array(data, dtype=float)
        return False
    except ValueError:
        return True
    except TypeError:
        return False


def _to_device(xp, host: np.ndarray):
    return _backend.from_numpy(xp, np.asarray(host, order="C"))  # (ascontiguousarray makes 0-d 1-d)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype) and (device is None or data.device == as_device(device)):
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(a: np.ndarray):
    """A tensor sharing memory with the NumPy array ``a``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"can't convert np.ndarray of type {a.dtype}. The only supported types are: "
                        "float64, float32, int64, int32, and bool.")
    if a.dtype not in (np.float32, np.float64, np.int64, np.int32, np.bool_):
        a = a.astype(np.int64 if a.dtype.kind in "iu" else np.float64)
    return _finish(a, False)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"size must be a tuple of ints, but got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _size_arg(name, size, kw):
    """``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``, as PyTorch's factories take them."""
    if kw is not None:
        if size:
            raise TypeError(f"{name}() received an invalid combination of arguments: size given both "
                            "positionally and as a keyword")
        return (kw,)
    return size


def into_out(result, out, name):
    """PyTorch's ``out=``: the result written into ``out`` (resized when its shape differs, with PyTorch's
    warning when it held elements; cast when its dtype differs and the cast is allowed), which is
    returned (NOTE [ out= arguments ] in engine/out_args.py)."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.dtype is not out.dtype:
        if result.dtype.is_floating_point and not out.dtype.is_floating_point:
            raise RuntimeError(f"result type {_short(result.dtype)} can't be cast to the desired output type "
                               f"{_short(out.dtype)}")
        result = result.to(out.dtype)
    with no_grad():
        if tuple(out.shape) == tuple(result.shape):
            out.copy_(result)
        else:
            if out.numel():
                warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                              f"which does not match the required output shape {list(result.shape)}. This behavior "
                              "is deprecated, and in a future PyTorch release outputs will not be resized unless "
                              "they have zero elements.", UserWarning, stacklevel=4)
            out.data = result
    return out

def _out_dtype(dtype, out):
    """The dtype a factory with ``out=`` makes: ``out``'s, or ``dtype`` when it agrees (PyTorch's check)."""
    if out is None:
        return dtype
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {_short(dtype)} does not match dtype of out parameter ({_short(out.dtype)})")
    return out.dtype


def zeros(*size, out=None, dtype=None, device=None, requires_grad=False, **kw):
    size = _size_arg("zeros", size, kw.pop("size", None))
    _no_more("zeros", kw)
    dtype = _out_dtype(dtype, out)
    dev, dt, xp = _resolve(dtype, device)
    return into_out(_finish(xp.zeros(_size(size), dtype=_dtype.to_array_dtype(xp, dt)), requires_grad), out, "zeros")


def ones(*size, out=None, dtype=None, device=None, requires_grad=False, **kw):
    size = _size_arg("ones", size, kw.pop("size", None))
    _no_more("ones", kw)
    dev, dt, xp = _resolve(_out_dtype(dtype, out), device)
    return into_out(_finish(xp.ones(_size(size), dtype=_dtype.to_array_dtype(xp, dt)), requires_grad), out, "ones")


def empty(*size, out=None, dtype=None, device=None, requires_grad=False, **kw):
    size = _size_arg("empty", size, kw.pop("size", None))
    kw.pop("memory_format", None)
    kw.pop("pin_memory", None)
    _no_more("empty", kw)
    return zeros(*size, out=out, dtype=dtype, device=device, requires_grad=requires_grad)


def _no_more(name, kw):
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    dev, dt, xp = _resolve(dtype, device)
    return _finish(xp.full(_size((size,)), fill_value, dtype=_dtype.to_array_dtype(xp, dt)), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(v, int) for v in vals) else _dtype.get_default_dtype()
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    dev, dt, xp = _resolve(dtype, device)
    return _finish(_to_device(xp, np.arange(*vals, dtype=_np_dtype(dt))), requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    dev, dt, xp = _resolve(dtype, device)
    return _finish(_to_device(xp, np.linspace(start, end, int(steps), dtype=_np_dtype(dt))), requires_grad)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the exponent."""
    dev, dt, xp = _resolve(dtype, device)
    host = np.power(float(base), np.linspace(start, end, int(steps), dtype=np.float64))
    return _finish(_to_device(xp, host.astype(_np_dtype(dt))), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    dev, dt, xp = _resolve(dtype, device)
    return _finish(_to_device(xp, np.eye(n, m if m is not None else n, dtype=_np_dtype(dt))), requires_grad)


def _rand(kind, size, dtype, device, requires_grad, generator=None):
    dev, dt, xp = _resolve(dtype, device)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kind}\" not implemented for '{_short(dt)}'")
    gen = generator or generator_for(dev)
    shape = _size(size)
    low = dt.itemsize == 2      # float16/bfloat16: drawn in float32 and rounded (NumPy draws neither)
    draw = _np_dtype(_dtype.float32 if low else dt)
    host = gen.normal(shape, draw) if kind == "normal_kernel_cpu" else gen.uniform(shape, draw)
    if low:
        host = host.astype(_np_dtype(dt))
    return _finish(_to_device(xp, host), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None, out=None, **kw):
    size = _size_arg("randn", size, kw.pop("size", None))
    _no_more("randn", kw)
    return into_out(_rand("normal_kernel_cpu", size, _out_dtype(dtype, out), device,
                          requires_grad, generator), out, "randn")


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None, out=None, **kw):
    size = _size_arg("rand", size, kw.pop("size", None))
    _no_more("rand", kw)
    return into_out(_rand("check_uniform_bounds", size, _out_dtype(dtype, out), device,
                          requires_grad, generator), out, "rand")


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False, generator=None):
    """``randint(high, size)`` or ``randint(low, high, size)``: integers in [low, high)."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high        # randint(high, size)
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    dev, dt, xp = _resolve(dtype or _dtype.int64, device)
    gen = generator or generator_for(dev)
    host = gen.integers(low, high, _size((size,))).astype(_np_dtype(dt))
    return _finish(_to_device(xp, host), requires_grad)


def randperm(n, dtype=None, device=None, generator=None):
    dev, dt, xp = _resolve(dtype or _dtype.int64, device)
    gen = generator or generator_for(dev)
    return _finish(_to_device(xp, gen.permutation(int(n)).astype(_np_dtype(dt))), False)


def _like(fn, t, dtype, device, requires_grad, *extra):
    return fn(*extra, tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device,
              requires_grad=requires_grad) if extra else fn(tuple(t.shape), dtype=dtype or t.dtype,
                                                            device=device or t.device, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return zeros(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return ones(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False):
    return zeros_like(t, dtype, device, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return full(tuple(t.shape), fill_value, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    return rand(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False):
    return randn(tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


# NOTE [ Out of memory ] 3: an array too big for the device raises PyTorch's error, not NumPy's or CuPy's
for _name in ("tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "randn", "rand",
              "randint", "randperm", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"):
    globals()[_name] = _oom.translated(globals()[_name])


def clone(input, *, memory_format=None):
    """A copy that keeps the graph (CloneBackward0, a core row): the one factory with a gradient. Laid
    out as ``input`` (NOTE [ Output layout ] 1), or row-major with ``memory_format=torch.contiguous_format``."""
    if memory_format is _layout.contiguous_format:
        return apply(CLONE_CONTIGUOUS, [input])
    if memory_format is not None and memory_format is not _layout.preserve_format:
        raise NotImplementedError(f"glassgrad's clone keeps the input's layout or makes it contiguous; "
                                  f"memory_format={memory_format} is not implemented")
    return apply(_O["clone"], [input])


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}[dt.name]


# ---- small utilities ------------------------------------------------------------------------------
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """A tensor from ``obj``, sharing its memory when it can (a tensor of the asked dtype and device, or a
    NumPy array on the CPU) unless ``copy=True``; ``copy=False`` raises when it cannot share."""
    dev = as_device(device) if device is not None else None
    if isinstance(obj, Tensor):
        same = (dtype is None or dtype is obj.dtype) and (dev is None or dev == obj.device)
        if copy is False and not same:
            if dtype is not None and dtype is not obj.dtype:
                raise ValueError(f"can't alias tensor with dtype '{_short(obj.dtype)}' into dtype '{_short(dtype)}'.")
            raise ValueError(f"can't alias tensor on device '{obj.device}' into device '{dev}'.")
        if same and not copy:
            if requires_grad:
                obj.requires_grad_(True)
            return obj
        if requires_grad is None and obj.requires_grad:
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
        out = obj.to(device=dev, dtype=dtype) if not same else obj
        if out is obj:
            out = clone(obj)
        if requires_grad is False:
            out = out.detach()
        elif requires_grad and not out.requires_grad:
            out.requires_grad_(True)
        return out
    if isinstance(obj, np.ndarray) and copy is not True and (dev is None or dev.type == "cpu"):
        t = from_numpy(obj)
        if dtype is not None and dtype is not t.dtype:
            if copy is False:
                raise ValueError(f"can't alias NumPy array with dtype '{obj.dtype}' into dtype '{_short(dtype)}'.")
            t = t.to(dtype)
        if requires_grad:
            t.requires_grad_(True)
        return t
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    if isinstance(obj, str) or not (isinstance(obj, (list, tuple, numbers.Number, np.ndarray, np.generic))):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    return tensor(obj, dtype=dtype, device=dev, requires_grad=builtins.bool(requires_grad))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A 0-d tensor holding the number ``s`` (the default float dtype unless ``dtype`` says otherwise)."""
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def _new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    if not size:
        raise TypeError('new_empty() missing 1 required positional arguments: "size"')
    return empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
