"""``torch.cuda.amp`` and ``torch.cpu.amp``: the old names of autocast and GradScaler, which warn as
PyTorch's do (a FutureWarning that names the new spelling) and then act as ``torch.amp``'s. Each is a
module object registered in ``sys.modules``, so ``from torch.cuda.amp import GradScaler`` works."""
from __future__ import annotations

import sys
import types
import warnings

from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler


def _namespace(device: str) -> types.ModuleType:
    class autocast(_autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            warnings.warn(f"`torch.{device}.amp.autocast(args...)` is deprecated. Please use "
                          f"`torch.amp.autocast('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            if dtype is None and device == "cpu":
                from ..backend import dtypes
                dtype = dtypes.bfloat16
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    autocast.__qualname__ = autocast.__name__ = "autocast"
    GradScaler.__qualname__ = GradScaler.__name__ = "GradScaler"
    autocast.__module__ = GradScaler.__module__ = f"torch.{device}.amp"
    module = types.ModuleType(f"engine.{device}.amp", f"``torch.{device}.amp``: deprecated names of torch.amp's.")
    module.autocast, module.GradScaler = autocast, GradScaler
    sys.modules[module.__name__] = module     # so ``from torch.cuda.amp import autocast`` imports
    return module


cuda = _namespace("cuda")
cpu = _namespace("cpu")
