"""``nn.DataParallel`` and ``nn.parallel.data_parallel`` on one device (NOTE [ Parallel on one device ]).

NOTE [ Parallel on one device ]
glassgrad runs a module on one device and replicates it nowhere. PyTorch's
``DataParallel`` on a machine with one device (or none) does not replicate either, so
glassgrad follows that path:

1. Without a GPU, ``DataParallel(m)`` keeps ``m`` as ``.module``, ``device_ids`` is ``[]``,
   and ``forward`` calls ``m(*inputs, **kwargs)`` unchanged, as PyTorch does on the CPU.
2. With a GPU, ``device_ids`` defaults to ``[0]`` (PyTorch takes every visible GPU);
   the module moves to ``cuda:0``; ``forward`` checks that its parameters and buffers are
   there (PyTorch's RuntimeError if not), moves tensor inputs there and calls the module.
3. More than one device id raises RuntimeError: replicating over several devices is not
   implemented.
4. ``data_parallel(module, inputs)`` (the functional form) raises PyTorch's RuntimeError
   "device type could not be determined" without a GPU, as PyTorch does, and otherwise
   runs as rule 2.
5. The parameters stay the module's own, so ``state_dict`` keys begin with ``module.``.
"""
from __future__ import annotations

import itertools

from ...backend.device import cuda_is_available, device
from ...core.tensor import Tensor
from ..modules.module import Module


def _device_index(d) -> int:
    if isinstance(d, int):
        return d
    d = device(d)
    return 0 if d.index is None else d.index


def _one_device(device_ids) -> list:
    ids = [0] if device_ids is None else [_device_index(d) for d in device_ids]
    if len(ids) > 1:                                                     # rule 3
        raise RuntimeError(f"glassgrad runs a module on one device: DataParallel over several devices "
                           f"(device_ids={ids}) is not implemented; pass device_ids=[{ids[0]}]")
    return ids


def _to(obj, dev):
    """Tensors in ``obj`` (tuples, lists, dicts) moved to ``dev``; everything else as it is."""
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, dev) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, dev) for k, v in obj.items()}
    return obj


def _check_on(module, dev) -> None:
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != dev:
            raise RuntimeError("module must have its parameters and buffers "
                               f"on device {dev} (device_ids[0]) but found one of them on device: {t.device}")


class DataParallel(Module):
    """PyTorch's ``nn.DataParallel`` on one device (NOTE [ Parallel on one device ])."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cuda_is_available():                                      # rule 1
            self.module = module
            self.device_ids = []
            return
        self.dim = dim
        self.module = module
        self.device_ids = _one_device(device_ids)                      # rules 2-3
        self.output_device = _device_index(output_device) if output_device is not None else self.device_ids[0]
        self.src_device_obj = device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        return self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """PyTorch's functional ``data_parallel`` on one device (NOTE [ Parallel on one device ] rule 4)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda_is_available():
        raise RuntimeError("device type could not be determined")
    src = device("cuda", _one_device(device_ids)[0])
    _check_on(module, src)
    return module(*_to(inputs, src), **_to(module_kwargs or {}, src))
