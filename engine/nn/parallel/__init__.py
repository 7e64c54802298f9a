"""``engine.nn.parallel``: importable as ``torch.nn.parallel``; glassgrad runs a module on one device.

NOTE [ Parallel on one device ] in data_parallel.py says what ``DataParallel`` does;
``DistributedDataParallel`` needs a process group (NOTE [ One process ]); ``replicate``,
``scatter``, ``gather`` and ``parallel_apply`` split work over several devices and raise.
"""
from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate",
           "scatter"]


def _several_devices(name: str):
    def fn(*args, **kwargs):
        raise RuntimeError(f"glassgrad runs a module on one device: torch.nn.parallel.{name} "
                           "(work split over several devices) is not implemented")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.nn.parallel.{name}: raises RuntimeError; glassgrad uses one device."
    return fn


replicate = _several_devices("replicate")
scatter = _several_devices("scatter")
gather = _several_devices("gather")
parallel_apply = _several_devices("parallel_apply")


def __getattr__(name):
    from ...missing import missing
    raise missing("torch.nn.parallel", name)   # NOTE [ Missing names ] in engine/missing.py
