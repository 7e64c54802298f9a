"""``nn.parallel.DistributedDataParallel``: needs a process group, which glassgrad never starts."""
from __future__ import annotations

from ...distributed.process_group import NOT_INITIALIZED
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Raises PyTorch's ValueError for a program that never called ``init_process_group``
    (NOTE [ One process ] in engine/distributed/process_group.py)."""

    def __init__(self, module, *args, **kwargs):
        super().__init__()
        raise ValueError(NOT_INITIALIZED)
