"""Choice sequences, input values and programs.

Every random decision a generator makes is one draw from a ``Choices``: an integer in ``[0, n)``.
A case is reproducible because the draws come from ``random.Random`` seeded with the text
``"seed:index:family"``; it is shrinkable because the same generator can be replayed on a recorded
sequence that has been edited (values lowered, spans deleted). Draws past the end of a replayed
sequence are 0, and every generator orders its options so that 0 is the simplest one (the first
option of a list, the smallest size, "no" for a yes/no question).

Input values never come from the choice sequence: they are a function of the input's name, shape
and kind, so shrinking a shape leaves the program text short and readable. Floating inputs are
distinct multiples of a power of two (exact in float32 and float64, printed exactly, no ties for
max/sort/median to break differently).
"""
from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["FOOTER_BACKWARD", "Builder", "Choices", "Program", "values_for"]


class Choices:
    """Integer draws, from a seeded generator or replayed from a recorded prefix."""

    def __init__(self, rng: random.Random | None = None, prefix=None):
        self.rng = rng
        self.prefix = list(prefix or ())
        self.drawn: list[int] = []

    def draw(self, n: int) -> int:
        n = max(int(n), 1)
        i = len(self.drawn)
        if i < len(self.prefix):
            v = min(max(int(self.prefix[i]), 0), n - 1)
        elif self.rng is not None:
            v = self.rng.randrange(n)
        else:
            v = 0
        self.drawn.append(v)
        return v

    def int(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``; shrinks towards ``lo``."""
        return lo + self.draw(hi - lo + 1)

    def pick(self, options):
        """One of ``options``; shrinks towards the first."""
        options = list(options)
        return options[self.draw(len(options))]

    def chance(self, p: float) -> bool:
        """True with probability ``p``; shrinks towards False."""
        return self.draw(1000) >= 1000 - round(p * 1000)

    def weighted(self, pairs):
        """``pairs`` is ``[(weight, option), ...]``; shrinks towards the first option."""
        total = sum(w for w, _ in pairs)
        v = self.draw(total)
        for w, opt in pairs:
            if v < w:
                return opt
            v -= w
        return pairs[-1][1]


def _stable_seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def values_for(name: str, shape, kind: str = "normal") -> np.ndarray:
    """Distinct, exactly representable values for an input (float64 array of ``shape``).

    kinds: ``normal`` (about [-3, 3], may contain 0), ``positive`` (> 0), ``unit`` (in (-1, 1)),
    ``prob`` (in (0, 1)), ``nonzero`` (no 0).
    """
    shape = tuple(int(s) for s in shape)
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(_stable_seed(name, shape, kind))
    if kind in ("unit", "prob"):
        m = 2 ** max(3, math.ceil(math.log2(n + 2)) + (kind == "unit"))
        pool = np.arange(1, m) if kind == "prob" else np.arange(-(m - 1), m)
        ints = rng.choice(pool, size=n, replace=False)
        vals = ints / m
    else:
        r = 4 * n + 4
        k = max(2, math.ceil(math.log2(max(r / 3.0, 1.0))))
        if kind == "positive":
            pool = np.arange(1, 2 * r)
        elif kind == "nonzero":
            pool = np.concatenate([np.arange(-r, 0), np.arange(1, r + 1)])
        else:
            pool = np.arange(-r, r + 1)
        ints = rng.choice(pool, size=n, replace=False)
        vals = ints / float(2 ** k)
    return vals.astype(np.float64).reshape(shape)


def _literal(arr: np.ndarray) -> str:
    return repr(arr.tolist())


# the upstream gradient: distinct, nonzero, and bit-identical on both backends (i / n is one correctly
# rounded division; torch.linspace is not: PyTorch computes its second half from the end, so where
# NumPy gives 0.0 PyTorch gives -5.6e-17, and x / 0 then has a gradient of -inf on one side and nan
# on the other)
FOOTER_BACKWARD = ("out.backward(torch.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)"
                   " / max(out.numel(), 1))")


@dataclass
class Program:
    family: str
    inputs: list = field(default_factory=list)     # lines that make the inputs
    body: list = field(default_factory=list)       # the program proper; defines ``out``
    leaves: list = field(default_factory=list)     # names whose .grad is compared
    compare: list = field(default_factory=lambda: ["out"])
    backward: bool = True                          # run FOOTER_BACKWARD when out requires grad
    tags: list = field(default_factory=list)       # the ops used, for grouping findings

    def source(self) -> str:
        return "\n".join(self.inputs + self.body)

    def text(self, backward: bool | None = None) -> str:
        """Runnable Python, for PyTorch as written (``import engine as torch`` for glassgrad)."""
        lines = ["import torch", "F = torch.nn.functional", "nn = torch.nn"]
        lines += self.inputs + self.body
        if self.backward if backward is None else backward:
            lines.append(FOOTER_BACKWARD)
        shown = [n for n in self.compare] + [f"{n}.grad" for n in self.leaves]
        lines.append("print(" + ", ".join(shown) + ")")
        return "\n".join(lines)


class Builder:
    """What a generator writes into: inputs, body lines, leaves, plus the draws it makes."""

    def __init__(self, c: Choices, family: str):
        self.c = c
        self.family = family
        self.inputs: list[str] = []
        self.body: list[str] = []
        self.leaves: list[str] = []
        self.compare = ["out"]
        self.backward = True
        self.tags: list[str] = []
        self._names: set[str] = set()

    # -- draws -------------------------------------------------------------------------------
    def dtype(self, p32: float = 0.4) -> str:
        return "float32" if self.c.chance(p32) else "float64"

    def shape(self, lo_dim=1, hi_dim=3, lo=1, hi=4, p_empty=0.03):
        opts = [(w, d) for w, d in ((3, 1), (3, 2), (1, 0), (2, 3), (1, 4)) if lo_dim <= d <= hi_dim]
        nd = self.c.weighted(opts)
        shp = [self.c.int(lo, hi) for _ in range(nd)]
        if shp and self.c.chance(p_empty):
            shp[self.c.int(0, nd - 1)] = 0
        return tuple(shp)

    def bshape(self, shape, p_bad=0.04):
        """A shape that broadcasts with ``shape`` (sometimes one that does not)."""
        out = []
        for s in shape[len(shape) - self.c.int(0, len(shape)):] if shape else ():
            out.append(self.c.pick([s, 1, s] if s != 1 else [1, 1, self.c.int(1, 3)]))
        if self.c.chance(0.15):
            out = [self.c.int(1, 2)] + out
        if self.c.chance(p_bad) and shape:
            out = list(shape)
            i = self.c.int(0, len(out) - 1)
            out[i] = out[i] + 1 if out[i] != 1 else 2
        return tuple(out)

    def dim(self, ndim, p_bad=0.03, neg=True):
        if self.c.chance(p_bad):
            return self.c.pick([ndim, -ndim - 1, ndim + 1])
        d = self.c.int(0, max(ndim - 1, 0))
        if neg and ndim and self.c.chance(0.35):
            d -= ndim
        return d

    # -- inputs ------------------------------------------------------------------------------
    def _fresh(self, base):
        name, k = base, 1
        while name in self._names:
            k += 1
            name = f"{base}{k}"
        self._names.add(name)
        return name

    def tensor(self, base, shape, dtype="float64", grad=True, kind="normal"):
        name = self._fresh(base)
        shape = tuple(shape)
        rg = ", requires_grad=True" if grad else ""
        if 0 in shape:
            dims = ", ".join(map(str, shape))
            self.inputs.append(f"{name} = torch.zeros({dims}, dtype=torch.{dtype}{rg})")
        else:
            vals = values_for(name, shape, kind)
            if dtype.startswith("int") or dtype == "uint8":
                # distinct integers around 0 (ranks), so argmax/sort/kthvalue have no ties to break
                ranks = np.argsort(np.argsort(vals.reshape(-1), kind="stable"), kind="stable")
                vals = (ranks - len(ranks) // 2).astype(np.int64).reshape(vals.shape)
                if dtype == "uint8":
                    vals = vals - vals.min()
            elif dtype == "bool":
                vals = vals > 0
            self.inputs.append(f"{name} = torch.tensor({_literal(vals)}, dtype=torch.{dtype}{rg})")
        if grad:
            self.leaves.append(name)
        return name

    def index(self, base, shape, high, low=0, dtype="int64", p_bad=0.0):
        """An integer tensor of indices in ``[low, high)`` (one out of range with ``p_bad``)."""
        name = self._fresh(base)
        shape = tuple(shape)
        n = int(np.prod(shape)) if shape else 1
        rng = np.random.default_rng(_stable_seed(name, shape, low, high))
        if high <= low or n == 0:
            vals = np.zeros(shape, dtype=np.int64)
        else:
            vals = rng.integers(low, high, size=shape)
        if self.c.chance(p_bad) and n:
            flat = np.array(vals).reshape(-1)
            flat[self.c.int(0, n - 1)] = self.c.pick([high, -high - 1, high + 2])
            vals = flat.reshape(shape)
        if n == 0:
            dims = ", ".join(map(str, shape))
            self.inputs.append(f"{name} = torch.zeros({dims}, dtype=torch.{dtype})")
        else:
            self.inputs.append(f"{name} = torch.tensor({_literal(np.asarray(vals))}, dtype=torch.{dtype})")
        return name

    def mask(self, base, shape):
        name = self._fresh(base)
        shape = tuple(shape)
        rng = np.random.default_rng(_stable_seed(name, shape))
        vals = rng.random(shape) < 0.5
        if 0 in shape:
            self.inputs.append(f"{name} = torch.zeros({', '.join(map(str, shape))}, dtype=torch.bool)")
        else:
            self.inputs.append(f"{name} = torch.tensor({_literal(np.asarray(vals))})")
        return name

    def name(self, base):
        return self._fresh(base)

    # -- body --------------------------------------------------------------------------------
    def line(self, text):
        self.body.append(text)

    def tag(self, *ops):
        self.tags.extend(ops)

    def program(self) -> Program:
        return Program(self.family, list(self.inputs), list(self.body), list(self.leaves),
                       list(self.compare), self.backward, list(self.tags))
