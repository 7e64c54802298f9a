"""``engine.amp``: ``autocast`` and ``GradScaler`` for scripts written for mixed precision.

NOTE [ Mixed precision ]
1. glassgrad has no float16 or bfloat16, so there is nothing to cast to: ``autocast`` is a
   context manager (and decorator) that leaves every op in its own dtype. Entered with
   ``enabled=True`` it warns once, in PyTorch's words for an unsupported target dtype.
2. ``GradScaler`` exists because loss scaling protects float16 gradients from underflow;
   in float32 there is none to protect, so a scaler acts as PyTorch's does when disabled:
   ``scale(x)`` is ``x``, ``step(opt)`` is ``opt.step()``, ``get_scale()`` is 1.0. Made
   with ``enabled=True`` it says so once.
"""
from __future__ import annotations

import functools
import warnings

_warned: set = set()


def _warn_once(key: str, msg: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


class autocast:
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` (rule 1)."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)

    def __enter__(self):
        if self._enabled:
            _warn_once("autocast", f"In {self.device.upper()} autocast, but the target dtype is not supported. "
                                   "Disabling autocast.\nglassgrad has no float16 or bfloat16: every op keeps "
                                   "its own dtype (NOTE [ Mixed precision ] in engine/amp.py).")
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run


class GradScaler:
    """Loss scaling that, in float32, has nothing to do (rule 2)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._requested = bool(enabled)
        if enabled:
            _warn_once("GradScaler", "GradScaler: glassgrad trains in float32, where gradients do not underflow "
                                     "as float16 ones do; the scaler is disabled (scale 1.0).")

    def is_enabled(self) -> bool:
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        return None

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict) -> None:
        return None
