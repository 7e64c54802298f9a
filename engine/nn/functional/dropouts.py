"""Dropout: ``F.dropout``, channel dropout (``F.dropout1d/2d/3d``) and alpha dropout (``F.alpha_dropout``,
``F.feature_alpha_dropout``), as PyTorch's feature and alpha dropout."""
from __future__ import annotations

import warnings

import numpy as np

from ...backend import dtypes as _dtype
from ... import functional as E
from ...backend.gaps import from_numpy
from ...core.dispatch import apply
from ...core.tensor import Tensor
from ...core.table import OPS
from ...random import generator_for


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p).

    On the CPU this is ``input * mask`` with a float mask (MulBackward0 keeps the mask, as
    PyTorch's CPU kernel does); on CUDA a fused op keeps a bool mask (NativeDropoutBackward0).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _zeroed(input, inplace)
    _float_only(input)
    gen = generator_for(input.device)
    keep = gen.uniform(tuple(input.shape), "float64") >= p
    xp = input._storage.xp
    if input.device.type == "cuda":
        mask = from_numpy(xp, keep)
        return apply(OPS["native_dropout"], [input, Tensor._wrap(mask)], {"p": p})
    scale = 1.0 / (1.0 - p)
    mask = Tensor._wrap(from_numpy(xp, (keep * scale).astype(_np(input.dtype))))
    if inplace:
        return input.mul_(mask)
    return E.mul(input, mask)


def _zeroed(input, inplace):
    """``p == 1``: the input times a zero of its own dtype (an integer input stays integer, as PyTorch's)."""
    zero = 0.0 if input.dtype.is_floating_point or input.dtype.is_complex else E.zeros((), dtype=input.dtype)
    return input.mul_(zero) if inplace else input * zero


def _float_only(input, alpha=False):
    """PyTorch's error for ``0 < p < 1`` on an integer or bool input: its float noise cannot be cast back
    (alpha dropout first lifts a bool input to int64, so it names Long)."""
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        to = _dtype.int64 if alpha and dt is _dtype.bool_ else dt
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dtype.short_name(to)}")


def _np(dt):
    """The mask's array dtype: the input's own floating dtype (a float16 input keeps a float16 mask)."""
    return _dtype.to_array_dtype(np, dt) if dt.is_floating_point else "float32"


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, L) or (C, L) input: whole channels zeroed with probability ``p``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched(lambda t: _feature_dropout(t, p, training, inplace), input, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero each (sample, channel) plane with probability ``p`` and scale the rest by 1/(1-p).

    As PyTorch's CPU path this is ``input * mask`` with a float mask of shape (N, C, 1, 1)
    (MulBackward0 keeps the mask); a 3-D input is read as (N, C, L), with PyTorch's warning.
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", UserWarning, stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", UserWarning, stacklevel=2)
    if input.ndim in (4, 5):
        return _unbatched(lambda t: _feature_dropout(t, p, training, inplace), input, 5)
    return _feature_dropout(input, p, training, inplace)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, per_channel):
    """The keep mask as 0/1 floats of the input's dtype: one draw per (sample, channel) when
    ``per_channel``, else one per element."""
    shape = (tuple(input.shape[:2]) + (1,) * (input.ndim - 2)) if per_channel else tuple(input.shape)
    keep = generator_for(input.device).uniform(shape, "float64") >= p
    np_dt = "float64" if input.dtype is _dtype.float64 else "float32"
    return keep.astype(np_dt), (lambda host: Tensor._wrap(from_numpy(input._storage.xp, host.astype(np_dt))))


def _feature_dropout(input, p, training, inplace, alpha=False, per_channel=True):
    """PyTorch's _dropout_impl: ``input * noise`` with noise 1/(1-p) where kept; for alpha dropout
    ``input * a*keep + b`` so a SELU network keeps zero mean and unit variance (MulBackward0, and
    AddBackward0 with the alpha form)."""
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _zeroed(input, inplace)
    _float_only(input, alpha)
    keep, wrap = _noise(input, p, per_channel)
    if not alpha:
        noise = wrap(keep * (1.0 / (1.0 - p)))
        return input.mul_(noise) if inplace else E.mul(input, noise)
    a = 1.0 / ((_SELU_ALPHA ** 2 * p + 1) * (1 - p)) ** 0.5
    b = wrap((keep - 1.0) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p)
    noise = wrap(keep * a)
    out = input.mul_(noise) if inplace else E.mul(input, noise)
    return out.add_(b) if inplace else E.add(out, b)


_SELU_ALPHA = 1.7580993408473766     # SELU's alpha * scale: the value alpha dropout sets dropped units to


def _unbatched(fn, input, batched_ndim):
    """Run ``fn`` on an input without its batch dim as a batch of one (Unsqueeze/Squeeze, as PyTorch)."""
    if input.ndim == batched_ndim - 1:
        return E.squeeze(fn(E.unsqueeze(input, 0)), 0)
    return fn(input)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value and the rest is
    scaled and shifted so the mean and variance are kept."""
    _check_p(p)
    return _feature_dropout(input, p, training, inplace, alpha=True, per_channel=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    _check_p(p)
    return _feature_dropout(input, p, training, inplace, alpha=True, per_channel=True)
