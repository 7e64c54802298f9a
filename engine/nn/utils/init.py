"""``skip_init``: build a module without running its initializers, as ``torch.nn.utils.skip_init``.

Differs from PyTorch, which builds the module on the meta device and then allocates empty memory
(``to_empty``): glassgrad has no meta device, so the module is built directly on its device while the
in-place initializers (``nn.init``'s and the Tensor methods ``uniform_``, ``normal_``, ``fill_``,
``zero_``) do nothing. The values are then whatever ``empty`` gave, and no random numbers are drawn.
"""
from __future__ import annotations

import contextlib
import inspect
import threading

from ...core.tensor import Tensor
from .. import init as _init
from ..modules.module import Module

_INIT_NAMES = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
               "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_")
_METHOD_NAMES = ("uniform_", "normal_", "fill_", "zero_")
_lock = threading.Lock()


def _keep(tensor, *args, **kwargs):
    return tensor


@contextlib.contextmanager
def _initializers_off():
    with _lock:
        saved = [(_init, n, getattr(_init, n)) for n in _INIT_NAMES]
        saved += [(Tensor, n, Tensor.__dict__[n]) for n in _METHOD_NAMES if n in Tensor.__dict__]
        for owner, name, _ in saved:
            setattr(owner, name, _keep)
        try:
            yield
        finally:
            for owner, name, fn in saved:
                setattr(owner, name, fn)


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialized; the class must
    take a ``device`` argument, as PyTorch requires."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with _initializers_off():
        return module_cls(*args, **kwargs)


__all__ = ["skip_init"]
