"""``engine.backends``: the switches PyTorch scripts set on cuDNN, CUDA matmuls and MPS.

glassgrad computes every op with NumPy or CuPy in full precision and in a fixed order,
so these flags are recorded (scripts that set and read them run unchanged) and change
nothing: ``cudnn.is_available()`` and ``mps.is_available()`` are False.
"""
from __future__ import annotations

import types

cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                              is_available=lambda: False, version=lambda: None)
cuda = types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False,
                                                          allow_fp16_reduced_precision_reduction=True,
                                                          allow_bf16_reduced_precision_reduction=True),
                             is_built=lambda: False)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
