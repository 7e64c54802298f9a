"""``F.dropout2d`` and ``Dropout2d``: zero whole channels (PyTorch's feature dropout)."""
from __future__ import annotations

import warnings

from .. import _dtype
from .. import functional as E
from .._tensor import Tensor
from ..random import generator_for
from .dropout import _DropoutNd


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero each (sample, channel) plane with probability ``p`` and scale the rest by 1/(1-p).

    As PyTorch's CPU path this is ``input * mask`` with a float mask of shape (N, C, 1, 1)
    (MulBackward0 keeps the mask); a 3-D input is read as (N, C, L), with PyTorch's warning.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
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
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = generator_for(input.device).uniform(shape, "float64") >= p
    np_dt = "float64" if input.dtype is _dtype.float64 else "float32"
    from .._backend import from_numpy
    mask = Tensor._wrap(from_numpy(input._storage.xp, (keep * (1.0 / (1.0 - p))).astype(np_dt)))
    return input.mul_(mask) if inplace else E.mul(input, mask)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels with probability ``p`` while training; the identity in eval mode."""

    @staticmethod
    def _dropout(*args):
        return dropout2d(*args)
