"""torch.*'s window functions (hann, hamming, blackman, bartlett, kaiser): factories built from elementwise
ops without recording a graph."""
from __future__ import annotations

import math

from ..backend import dtypes as _dtype
from ..backend.device import as_device, get_default_device
from ..core import grad_mode
from ..special import i0
from .arithmetic import clamp, cos, sqrt
from .factories import _cname, arange, full, ones
from .indexing import narrow
from .views import cat

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


def _window(name, n, periodic, dtype, device, requires_grad, make):
    """A window of length ``n`` built by ``make(m)`` over m = n (+1 if periodic) points, as PyTorch."""
    dt = dtype if dtype is not None else _dtype.get_default_dtype()
    dev = as_device(device) if device is not None else None
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if not dt.is_floating_point:
        where = str(dev if dev is not None else get_default_device())
        rg = "true" if requires_grad else "false (default)"
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_cname(dt)}, "
                           f"device={where}, layout=Strided (default), requires_grad={rg}, "
                           "pinned_memory=false, memory_format=(nullopt))")
    with grad_mode.no_grad():
        if n <= 1:
            w = ones(n, dtype=dt, device=dev)
        else:
            m = n + 1 if periodic else n
            w = make(arange(m, dtype=dt, device=dev), m)
            if periodic:
                w = narrow(w, 0, 0, n).clone()
    w = w.detach()
    if requires_grad:
        w.requires_grad_(True)
    return w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None,
                   requires_grad=False, layout=None, pin_memory=False):
    """``alpha - beta cos(2 pi k / (N - 1))``; periodic windows are the first N of N + 1 points."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: cos(k * (2.0 * math.pi / (m - 1))) * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                layout=None, pin_memory=False):
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` (hamming_window with alpha = beta = 0.5)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: cos(k * (2.0 * math.pi / (m - 1))) * -0.5 + 0.5)


def blackman_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                    layout=None, pin_memory=False):
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    def make(k, m):
        t = k * (math.pi / (m - 1))
        return cos(t * 4) * 0.08 - cos(t * 2) * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, make)


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                    layout=None, pin_memory=False):
    """The triangle ``1 - |2k / (N - 1) - 1|``: 2k/(N-1) up to the middle, 2 minus it after."""
    def make(k, m):
        t = k * (2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1
        return cat([narrow(t, 0, 0, half), narrow(t, 0, half, m - half) * -1 + 2])
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, make)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
    """``I0(beta sqrt(1 - ((k - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)``."""
    def make(k, m):
        c = (m - 1) / 2.0
        r = (k - c) / c
        return i0(sqrt(clamp(1 - r * r, min=0)) * beta) / i0(full((), beta, dtype=k.dtype, device=k.device))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, make)
