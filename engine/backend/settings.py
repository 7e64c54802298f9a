"""Process-wide switches PyTorch scripts set: thread count, matmul precision, determinism.

glassgrad records them so scripts that set and read them run unchanged. None changes how
glassgrad computes: its kernels are NumPy/CuPy calls in full float32/float64 precision,
always in the same order, and NumPy's BLAS picks its own thread count.
"""
from __future__ import annotations

import os
import warnings

_state = {"threads": os.cpu_count() or 1, "precision": "highest", "deterministic": False, "warn_only": False}


def set_num_threads(n: int) -> None:
    """Record ``n`` as the intra-op thread count (``get_num_threads`` returns it)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): argument 'int' (position 1) must be int, not {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = n


def get_num_threads() -> int:
    return _state["threads"]


def set_float32_matmul_precision(precision: str) -> None:
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]
