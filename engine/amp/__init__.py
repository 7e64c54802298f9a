"""``engine.amp``: automatic mixed precision, ``autocast`` and ``GradScaler``, as ``torch.amp``.

NOTE [ Mixed precision ]
1. Autocast state is per thread and per device type ("cpu", "cuda"): whether it is on, the
   lower-precision dtype (bfloat16 on the CPU, float16 on CUDA by default), whether weight
   casts are cached, and how deeply regions nest. ``autocast`` saves the state on entry and
   restores it on exit, so regions nest and ``enabled=False`` switches it off inside.
2. While on, every op asks autocast for its inputs before it runs (NOTE [ Low-precision
   results ] 2): an op on the device's "lower" list (mm, addmm, bmm, linear, matmul, conv...)
   runs in the lower-precision dtype, one on the "fp32" list in float32, one on the "promote"
   list in the widest floating dtype among its inputs (engine/amp/op_lists.py: PyTorch's CPU
   and CUDA lists, which differ). Any other op runs in its inputs' dtypes.
3. Only floating tensors on the region's device type are cast, and float64 never is. A cast is
   a real ``to`` op: a ToCopyBackward0 node, and a copy that costs memory; the op after it saves
   the copy (2 bytes an element in bfloat16), while the float32 weight stays.
4. Composite functions on the lists (``matmul``, ``linear``, ``cross_entropy``) cast at their
   entry, as PyTorch casts at the composite op, so the cast sits before ``t()`` in ``linear``;
   so does ``index_copy``, whose same-dtype check would otherwise refuse the mixed inputs the
   "promote" list exists for.
5. The weight cache: within the outermost region, a float32 leaf that requires grad (a
   parameter) cast to the lower-precision dtype is cast once; its copy is reused by every later
   op and dropped when the outermost region exits (``cache_enabled=False`` casts every time).
6. ``GradScaler.scale(loss)`` multiplies by the scale (a float32 tensor, 2**16 at first): a
   MulBackward0 node, so every gradient comes out multiplied by the scale too.
7. ``unscale_(opt)`` multiplies each gradient by the reciprocal of the scale (computed in
   float64) and records, per device, whether any gradient held an inf or NaN; float16
   gradients are refused, as PyTorch refuses them.
8. ``step(opt)`` unscales first if the program did not, then runs ``opt.step()`` only if no
   inf or NaN was found: a skipped step leaves the parameters as they were.
9. ``update()`` multiplies the scale by ``backoff_factor`` after a skipped step and resets the
   count of good steps; after ``growth_interval`` good steps in a row it multiplies it by
   ``growth_factor``. ``GradScaler("cuda")`` without a GPU warns and is disabled, as in PyTorch;
   ``GradScaler("cpu")`` works on the CPU.
"""
from __future__ import annotations

import functools

from ..core.tensor import Tensor
from . import op_lists  # noqa: F401
from .autocast_mode import autocast, is_autocast_available, is_autocast_enabled  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """``torch.amp.custom_fwd``: a custom Function's forward; inside an autocast region with
    ``cast_inputs`` given, its floating tensor arguments are cast to it and it runs with autocast off."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        args = [a.to(cast_inputs) if isinstance(a, Tensor) and a.dtype.is_floating_point else a for a in args]
        with autocast(device_type=device_type, enabled=False):
            return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """``torch.amp.custom_bwd``: the backward as written (glassgrad runs backward formulas outside autocast)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
