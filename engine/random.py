"""Random numbers: one generator per device, seeded and saved as in PyTorch.

Every device draws on the host with NumPy's PCG64 and copies to the device, so a
seed gives the same numbers on CPU and GPU, and checkpointing can replay dropout
by restoring a generator's state.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .core.tensor import Tensor

_MASK = (1 << 64) - 1


class Generator:
    """``engine.Generator``: a seedable PCG64 stream for one device."""

    def __init__(self, device="cpu"):
        from .backend.device import as_device
        self.device = as_device(device)
        self._seed = 67280421310721
        self._bitgen = np.random.PCG64(self._seed)
        self._np = np.random.Generator(self._bitgen)

    def manual_seed(self, seed: int):
        self._seed = int(seed)
        self._bitgen = np.random.PCG64(self._seed & _MASK)
        self._np = np.random.Generator(self._bitgen)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def get_state(self):
        """The state as an int64 tensor (PyTorch returns a uint8 tensor; glassgrad has no uint8)."""
        st = self._bitgen.state
        s, inc = st["state"]["state"], st["state"]["inc"]
        words = [s >> 64, s & _MASK, inc >> 64, inc & _MASK, st["has_uint32"], st["uinteger"]]
        return Tensor._wrap(np.array([_signed(w) for w in words], dtype=np.int64))

    def set_state(self, state) -> None:
        w = [int(v) & _MASK for v in state.tolist()]
        if len(w) != 6:
            raise RuntimeError("Invalid RNG state: expected a 6-element state from get_rng_state()")
        self._bitgen.state = {"bit_generator": "PCG64",
                              "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
                              "has_uint32": w[4], "uinteger": w[5]}

    # host draws ------------------------------------------------------------
    def normal(self, shape, dtype):
        return self._np.standard_normal(shape, dtype=dtype)

    def uniform(self, shape, dtype):
        return self._np.random(shape, dtype=dtype)

    def integers(self, low, high, shape):
        return self._np.integers(low, high, size=shape, dtype=np.int64)

    def permutation(self, n):
        return self._np.permutation(n).astype(np.int64)


def _signed(w: int) -> int:
    return w - (1 << 64) if w >= (1 << 63) else w


_generators: dict = {}
_seed_all: list = []     # the last manual_seed, for device generators made after it


def generator_for(device) -> Generator:
    """The device's generator, made on first use; a GPU's takes the last ``manual_seed`` (PyTorch
    queues that seed until CUDA starts), so a seed set before any GPU work still holds there."""
    key = str(device)
    g = _generators.get(key)
    if g is None:
        g = _generators[key] = Generator(device)
        if key != "cpu" and _seed_all:
            g.manual_seed(_seed_all[-1])
    return g


default_generator = generator_for("cpu")


def manual_seed(seed: int):
    """Seed every device's generator."""
    seed = int(seed)
    default_generator.manual_seed(seed)
    _seed_all[:] = [seed]
    for key, g in _generators.items():
        if key != "cpu":
            g.manual_seed(seed)
    return default_generator


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cuda"):
    """Restore the CPU generator (and the given devices') state when the block exits."""
    if not enabled:
        yield
        return
    keys = ["cpu"] + [str(d) if not isinstance(d, int) else f"cuda:{d}" for d in (devices or [])]
    saved = {k: generator_for(k).get_state() for k in keys}
    try:
        yield
    finally:
        for k, st in saved.items():
            generator_for(k).set_state(st)
