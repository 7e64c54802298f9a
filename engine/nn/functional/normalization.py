"""Normalisation: ``F.batch_norm`` (NOTE [ Batch norm ] in engine/ops/nn/norm.py), ``F.layer_norm``,
``F.group_norm`` (NOTE [ Group norm ]), ``F.instance_norm`` (batch norm over a (1, N*C, ...) view, as
PyTorch composes it), ``F.rms_norm`` and ``F.local_response_norm``."""
from __future__ import annotations

import numpy as np

from ... import functional as E
from ...backend import dtypes as _dtype
from ...core.dispatch import apply
from ...core.table import OPS
from .padding import pad
from .pooling import avg_pool2d
from .pooling3d import avg_pool3d


def _check_dtypes(kernel, input, params=()):
    """PyTorch's refusals before a normalisation kernel runs. A parameter of another dtype than the
    input is allowed only as float32 beside a float32, float16 or bfloat16 input; then the kernel
    takes floating inputs only."""
    dt = input.dtype
    if any(t is not None and t.dtype is not dt for t in params):
        if dt not in (_dtype.float32, _dtype.float16, _dtype.bfloat16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        if any(t is not None and t.dtype is not _dtype.float32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if kernel is not None and not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.short_name(dt)}'")


def _check_len(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) by batch statistics (``training``) or the running ones.

    In training the running statistics, when given, are updated in place:
    ``(1 - momentum) * old + momentum * batch`` with the unbiased batch variance.
    """
    if training:
        size = input.shape
        n = 1
        for i, s in enumerate(size):
            if i != 1:
                n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size!r}")
    elif running_mean is None or running_var is None:
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    c = input.shape[1] if input.ndim >= 2 else 0     # (PyTorch reads a 1-D input as having 0 channels)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_len(name, t, c)
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input with a channel dim (N, C, ...), got {input.ndim}D input")
    _check_dtypes("batch_norm", input, (weight, bias, running_mean, running_var) if input.dtype.is_floating_point else ())
    out, aux = apply(OPS["batch_norm"], [input, weight, bias, running_mean, running_var],
                     {"training": bool(training), "eps": eps}, return_aux=True)
    if training and running_mean is not None:
        _update_running(input, running_mean, running_var, aux["result1"], aux["result2"], momentum, eps)
    return out


def _update_running(input, running_mean, running_var, mean, invstd, momentum, eps):
    """NOTE [ Batch norm ] 4: in place, no version bump (the kernel's own write in PyTorch)."""
    xp = input._storage.xp
    n = input.numel() // input.shape[1]
    m = momentum
    batch_mean = xp.astype(mean._data, running_mean._data.dtype)
    var = 1.0 / (xp.astype(invstd._data, xp.float64) ** 2) - eps        # the biased batch variance
    unbiased = xp.astype(var * (n / (n - 1)), running_var._data.dtype)
    running_mean._data[...] = running_mean._data * (1.0 - m) + batch_mean * m
    if running_var is not None:
        running_var._data[...] = running_var._data * (1.0 - m) + unbiased * m


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[-k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    _check_dtypes("LayerNormKernelImpl", input, (weight, bias))
    return apply(OPS["layer_norm"], [input, weight, bias], {"normalized_shape": normalized_shape, "eps": eps})


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over groups of ``C / num_groups`` channels (and all spatial positions),
    then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    size = [n * c // num_groups, num_groups] + list(input.shape[2:])   # PyTorch's _verify_batch_size
    values = size[0]
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    _check_dtypes("GroupNormKernelImpl", input, (weight, bias))
    hxw = input.numel() // (n * c) if n * c else 0
    attrs = {"N": n, "C": c, "HxW": hxw, "group": num_groups, "eps": eps}
    return apply(OPS["group_norm"], [input, weight, bias], attrs)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise each (sample, channel) over its spatial positions. With running statistics and
    ``use_input_stats``, they are updated with the batch mean of the per-sample statistics."""
    if use_input_stats:
        size = input.shape
        n = 1
        for s in size[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {size!r}")
    b, c = input.shape[0], input.shape[1]
    x = input.view(1, b * c, *input.shape[2:])
    w = weight.repeat(b) if weight is not None else None
    bb = bias.repeat(b) if bias is not None else None
    rm = running_mean.detach().repeat(b) if running_mean is not None else None
    rv = running_var.detach().repeat(b) if running_var is not None else None
    out = batch_norm(x, rm, rv, w, bb, use_input_stats, momentum, eps)
    if use_input_stats:
        for run, rep in ((running_mean, rm), (running_var, rv)):
            if run is not None:
                xp = run._storage.xp
                run._data[...] = xp.mean(xp.reshape(rep._data, (b, c)), axis=0)   # the kernel's own write
    return out.view(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps)`` over the last ``len(normalized_shape)`` dims, times ``weight``;
    composed as PyTorch composes it (pow, mean, add, rsqrt, mul). ``eps`` defaults to the dtype's
    machine epsilon."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    _check_dtypes("rms_norm", input)
    if eps is None:
        eps = float(np.finfo(np.dtype(input.dtype.name)).eps)
    dims = tuple(range(input.ndim - 1, input.ndim - 1 - k, -1))
    ms = E.mean(E.pow(input, 2), dims, keepdim=True)
    out = E.mul(input, E.rsqrt(apply(OPS["add_number"], [ms], {"other": eps})))
    return E.mul(out, weight) if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``input / (k + alpha * mean of input**2 over the ``size`` neighbouring channels) ** beta``, the
    channel window zero-padded, composed as PyTorch composes it (avg_pool2d over the channels of 3-D
    input, avg_pool3d over a (N, 1, C, H, rest) view of larger input)."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = E.mul(input, input)
    if dim == 3:
        div = E.unsqueeze(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = E.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = E.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1).view(sizes)
    div = E.pow(E.add(E.mul(div, alpha), k), beta)
    return E.div(input, div)
