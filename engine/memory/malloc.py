"""Host allocator tuning: keep freed NumPy buffers in the process instead of unmapping them.

NOTE [ Host allocator tuning ]
1. glibc hands freed heap memory back to the OS once more than ``M_TRIM_THRESHOLD``
   bytes lie free at the top of the heap, and serves blocks above ``M_MMAP_THRESHOLD``
   from fresh ``mmap`` pages. A training loop frees and reallocates the same large
   arrays every step (activations; the ``.grad`` buffers that live from one backward
   to the next ``zero_grad``), so with the defaults every step pays first-touch page
   faults for megabytes (measured: about 9% of the ``python -m bench mlp`` step).
2. On import, on Linux with glibc, the engine raises both thresholds (mmap 32 MiB, the
   most glibc allows; trim 256 MiB), the host-side counterpart of a caching allocator
   keeping freed blocks. The process may then hold up to that much freed memory.
3. Nothing is changed when the user set ``MALLOC_TRIM_THRESHOLD_`` or
   ``MALLOC_MMAP_THRESHOLD_`` themselves, or ``GLASSGRAD_MALLOC_TUNING=0``.
"""
from __future__ import annotations

import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20

tuned = False


def tune() -> bool:
    """Apply NOTE [ Host allocator tuning ] once; True when the thresholds were set."""
    global tuned
    if tuned or not sys.platform.startswith("linux"):
        return tuned
    env = os.environ
    if env.get("GLASSGRAD_MALLOC_TUNING") == "0" or "MALLOC_TRIM_THRESHOLD_" in env \
            or "MALLOC_MMAP_THRESHOLD_" in env:
        return False
    try:
        import ctypes
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
        libc = ctypes.CDLL(None)
        tuned = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
            bool(libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError, ValueError):
        return False
    return tuned
