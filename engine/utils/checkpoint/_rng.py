"""RNG state for recomputation: stash at forward, replay in the recompute, restore after.

NOTE [ Checkpoint RNG ]
1. At forward the CPU generator's state is stashed, and that of every non-CPU device a
   tensor argument lives on (as PyTorch: devices the function reaches only internally
   are not covered).
2. The recompute runs with those states set, so dropout draws the same masks, and the
   surrounding states are put back afterwards (a fork, as ``engine.random.fork_rng``).
3. States are kept as the generator's raw state (plain Python values), not as tensors:
   a checkpoint's bookkeeping then adds no bytes to the memory figures, which show
   only what training holds. ``get_device_states``/``set_device_states`` keep
   PyTorch's tensor-valued API.
"""
from __future__ import annotations

import contextlib
import copy

from ...core.tensor import Tensor
from ...random import generator_for


def _devices_of(args) -> list:
    return sorted({str(a.device) for a in args if isinstance(a, Tensor) and a.device.type != "cpu"})


def get_device_states(*args):
    """(devices, states) for the non-CPU devices of the tensor arguments, as PyTorch."""
    devices = _devices_of(args)
    return devices, [generator_for(d).get_state() for d in devices]


def set_device_states(devices, states, *, device_type=None) -> None:
    for d, s in zip(devices, states):
        generator_for(d).set_state(s)


def _raw(key):
    return copy.deepcopy(generator_for(key)._bitgen.state)


def _set_raw(key, state) -> None:
    generator_for(key)._bitgen.state = copy.deepcopy(state)


class RngStash:
    """The generator states of one checkpointed forward (NOTE [ Checkpoint RNG ] 1, 3)."""

    __slots__ = ("states",)

    def __init__(self, args):
        self.states = {k: _raw(k) for k in ["cpu"] + _devices_of(args)}

    @contextlib.contextmanager
    def replay(self):
        """Run the block with the stashed states; restore the surrounding ones after (NOTE 2)."""
        outer = {k: _raw(k) for k in self.states}
        try:
            for k, st in self.states.items():
                _set_raw(k, st)
            yield
        finally:
            for k, st in outer.items():
                _set_raw(k, st)
