"""How a tensor prints and deep-copies: ``repr(t)`` as PyTorch prints it, ``copy.deepcopy(t)``.

Bound onto ``Tensor`` here, beside the core (``engine/core/tensor.py`` holds only what a
tensor is); ``set_printoptions`` (engine/backend/print_options.py) sets the layout.
"""
from __future__ import annotations

import copy
import math
import sys

import numpy as np

from .backend import dtypes as _dtype, gaps as _backend
from .backend.print_options import PRINT_OPTS
from .core.tensor import Tensor, _ndarray


def _same_view(data, old_base, new_base):
    """``data``'s window into ``old_base``, taken from ``new_base`` (a copy of it); None when that
    cannot be done simply (not NumPy, or a base that is not one contiguous block)."""
    if data is old_base:
        return new_base
    if not (type(data) is _ndarray and type(new_base) is _ndarray and old_base.flags.c_contiguous
            and new_base.flags.c_contiguous):
        return None
    offset = data.__array_interface__["data"][0] - old_base.__array_interface__["data"][0]
    return np.ndarray(data.shape, data.dtype, buffer=new_base, offset=offset, strides=data.strides)



def _format_body(a: np.ndarray) -> str:
    """The values part of a tensor's repr (``_format_values``), with a summarized row's ``...``
    set off by two spaces, as PyTorch prints it."""
    return _format_values(a).replace(", ..., ", ",  ..., ")



def _format_values(a: np.ndarray) -> str:
    """The values part of a tensor's repr, laid out as PyTorch's printer does.

    Floats: integral values print as ``1.``; otherwise ``precision`` decimals, or
    ``1.0000e+02`` style when the finite non-zero magnitudes span more than 1000x, exceed
    1e8 or go below 1e-4 (``set_printoptions(sci_mode=...)`` forces either). Every element
    is padded to the widest finite non-zero one. Bools pad to the widest too. Complex numbers:
    real parts and imaginary parts are styled apart, each as floats are; the real part is padded.
    """
    if a.size == 0:
        return "[]"
    po = PRINT_OPTS
    threshold = sys.maxsize if po.threshold == math.inf else int(po.threshold)
    opts = dict(separator=", ", prefix="tensor(", threshold=threshold, edgeitems=po.edgeitems,
                max_line_width=po.linewidth)
    e = po.edgeitems
    seen = a if a.size <= threshold else np.concatenate([a.reshape(-1)[:e], a.reshape(-1)[-e:]])
    if a.dtype.kind == "f":
        one, width = _float_style(seen)
        return np.array2string(a, formatter={"float_kind": lambda v: one(v).rjust(width)}, **opts)
    if a.dtype.kind == "c":     # as PyTorch: real parts padded to their widest, then the imaginary part and j
        one_re, width = _float_style(seen.real)
        one_im, width_im = _float_style(seen.imag)

        def one(v):
            im = one_im(v.imag) + "j"
            return one_re(v.real).rjust(width) + (im if im[0] in "+-" else "+" + im)
        if a.ndim == 0:
            return one(a[()])
        return _complex_rows(a, one, a.size > threshold, 7, width + width_im + 3)   # PyTorch's element length
    if a.dtype.kind == "b":
        width = max(len(str(bool(v))) for v in a.reshape(-1))
        return np.array2string(a, formatter={"bool": lambda v: str(bool(v)).rjust(width)}, **opts)
    return np.array2string(a, **opts)


def _complex_rows(a: np.ndarray, one, summarize: bool, indent: int, elem_len: int) -> str:
    """PyTorch's layout of complex values: ``(linewidth - indent) // elem_len`` elements a line (complex
    strings vary in length, so NumPy's line filling would differ), ``...`` where values are summarized."""
    e = PRINT_OPTS.edgeitems
    cut = summarize and a.shape[0] > 2 * e
    if a.ndim == 1:
        items = [one(v) for v in a[:e]] + [" ..."] + [one(v) for v in a[-e:]] if cut else [one(v) for v in a]
        per_line = max(1, (PRINT_OPTS.linewidth - indent) // elem_len)
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_complex_rows(r, one, summarize, indent + 1, elem_len) for r in (a[:e] if cut else a)]
    if cut:
        rows += ["..."] + [_complex_rows(r, one, summarize, indent + 1, elem_len) for r in a[-e:]]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _float_style(seen: np.ndarray):
    """How ``_format_values`` writes each float of ``seen`` (``one(v)``) and the width it pads to."""
    po = PRINT_OPTS
    finite = seen[np.isfinite(seen)]
    nz = np.abs(finite[finite != 0])
    signed = finite[finite != 0]
    integral = bool(np.all(finite == np.ceil(finite)))
    sci = nz.size > 0 and (nz.max() / nz.min() > 1000.0 or nz.max() > 1e8 or (not integral and nz.min() < 1e-4))
    if po.sci_mode is not None:
        sci = po.sci_mode
    p = po.precision
    if sci:
        one = lambda v: f"{v:.{p}e}"  # noqa: E731
    elif integral:
        one = lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)  # noqa: E731
    else:
        one = lambda v: f"{v:.{p}f}"  # noqa: E731
    return one, max([1] + [len(one(v)) for v in signed])  # as PyTorch: widest finite non-zero value


def _repr(self):
    """``repr(t)``: PyTorch's ``tensor([...], grad_fn=<...>)``."""
    a = _backend.to_numpy(self._storage.xp, self._data)
    if self.dtype is _dtype.bfloat16 or self.dtype is _dtype.float16:
        a = a.astype(np.float32)     # exact; bfloat16 is no NumPy float kind, and float16 overflows the layout math
    body = _format_body(a)
    extras = []
    if a.size == 0 and a.ndim != 1:
        extras.append(f"size={tuple(a.shape)}")
    if self.device.type != "cpu":
        extras.append(f"device='{self.device}'")
    # an empty tensor has no values to tell int64 or bool by, so any non-default dtype is shown (as PyTorch)
    default = _dtype.get_default_dtype()    # and its complex, int64 and bool are not named (as PyTorch)
    if self.dtype is not default and (a.size == 0 or self.dtype not in (_dtype.int64, _dtype.bool_,
                                                                        default.to_complex())):
        extras.append(f"dtype={self.dtype!r}")
    if self.grad_fn is not None:
        extras.append(f"grad_fn=<{self.grad_fn.name().rpartition('::')[2]}>")
    elif self._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _format(self, spec):
    if self.ndim == 0:
        return format(self.item(), spec)
    return repr(self)


def _deepcopy(self, memo):
    """A copy in new memory, for leaves only (as PyTorch). Tensors of one storage copied together
    stay views of one new storage; ``requires_grad`` and ``.grad`` come along."""
    if id(self) in memo:
        return memo[id(self)]
    if self.grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                           "because of a torch.nn.utils.weight_norm usage, see "
                           "https://github.com/pytorch/pytorch/pull/103001")
    st = self._storage
    new = memo.get(id(st))
    if new is None:
        new = Tensor._wrap(st.xp.asarray(st.array, copy=True), None, st.base)._storage
        memo[id(st)] = new
    view = _same_view(self._data, st.array, new.array)
    t = Tensor._wrap(view, new) if view is not None else Tensor._wrap(st.xp.asarray(self._data, copy=True),
                                                                      None, st.base)
    t._requires_grad = self._requires_grad
    memo[id(self)] = t
    if self._grad is not None:
        t._grad = copy.deepcopy(self._grad, memo)
    return t


Tensor.__repr__ = Tensor.__str__ = _repr
Tensor.__format__ = _format
Tensor.__deepcopy__ = _deepcopy
