"""Out-of-memory errors in PyTorch's words (NOTE [ Out of memory ]).

NOTE [ Out of memory ]
1. CuPy's ``OutOfMemoryError`` becomes ``engine.OutOfMemoryError`` (also
   ``engine.cuda.OutOfMemoryError``, a RuntimeError, as in PyTorch) with PyTorch's
   "CUDA out of memory. Tried to allocate ..." and what the device and glassgrad hold.
2. NumPy's MemoryError (an array too big for the host) becomes PyTorch's CPU
   allocator error: RuntimeError "DefaultCPUAllocator: can't allocate memory: you
   tried to allocate N bytes."
3. Translation happens where arrays are made for the user: op forwards, factories,
   device copies and backward. Nothing is translated twice, and only MemoryError is caught.
"""
from __future__ import annotations

import functools
import re


class OutOfMemoryError(RuntimeError):
    """``torch.OutOfMemoryError`` / ``torch.cuda.OutOfMemoryError``."""


def _gib(n: float) -> str:
    """Bytes as PyTorch's OOM message writes them: ``0 bytes``, ``2.00 KiB``, ``1.50 MiB``, ``3.25 GiB``."""
    if n < 1024:
        return f"{int(n)} bytes"
    for unit, div in (("KiB", 2**10), ("MiB", 2**20)):
        if n < div * 1024:
            return f"{n / div:.2f} {unit}"
    return f"{n / 2**30:.2f} GiB"


def translate(e: MemoryError) -> Exception:
    """The exception PyTorch raises where ``e`` was raised (rule 1 or 2); ``e`` itself otherwise."""
    if isinstance(e, (OutOfMemoryError, RuntimeError)):
        return e
    mod = type(e).__module__ or ""
    if mod.startswith("cupy"):
        return _cuda(e)
    size = getattr(e, "_total_size", None)
    if size is None:
        return e
    return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {int(size)} bytes. "
                        "Error code 12 (Cannot allocate memory)")


def _cuda(e) -> OutOfMemoryError:
    import cupy
    from . import state as _memstate
    m = re.search(r"allocating ([\d,]+) bytes", str(e))
    size = int(m.group(1).replace(",", "")) if m else 0
    dev = cupy.cuda.runtime.getDevice()
    free, total = cupy.cuda.runtime.memGetInfo()
    key = f"cuda:{dev}"
    allocated = _memstate.stats(key)["allocated"] if key in _memstate.devices() else 0
    reserved = _memstate.reserved_now(key) if key in _memstate.devices() else 0
    return OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate {_gib(size)}. GPU {dev} has a total capacity of {_gib(total)} of "
        f"which {_gib(free)} is free. Of the allocated memory {_gib(allocated)} is allocated by glassgrad, and "
        f"{_gib(max(reserved - allocated, 0))} is reserved by glassgrad but unallocated.")


def translated(fn):
    """``fn`` raising PyTorch's out-of-memory errors (rule 3)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemoryError as e:
            raise translate(e) from None
    return call
