"""The family table and case generation: case ``index`` of ``seed`` is always the same program."""
from __future__ import annotations

import random

from .core import Builder, Choices
from .families import (
    gen_double_backward,
    gen_elementwise,
    gen_graph,
    gen_matmul,
    gen_reduction,
    gen_softmax,
)
from .families_nn import gen_conv_pool, gen_loss, gen_norm
from .families_shape import gen_gather_scatter, gen_indexing, gen_inplace, gen_views

# name: (weight in a mixed run, generator)
FAMILIES = {
    "elementwise": (14, gen_elementwise),
    "reduction": (10, gen_reduction),
    "matmul": (7, gen_matmul),
    "indexing": (9, gen_indexing),
    "gather_scatter": (7, gen_gather_scatter),
    "views": (9, gen_views),
    "inplace": (8, gen_inplace),
    "softmax": (4, gen_softmax),
    "loss": (9, gen_loss),
    "conv_pool": (7, gen_conv_pool),
    "norm": (6, gen_norm),
    "graph": (6, gen_graph),
    "double_backward": (6, gen_double_backward),
}


def family_of(seed: int, index: int) -> str:
    """The family of case ``index`` in a mixed run of ``seed``."""
    rng = random.Random(f"family:{seed}:{index}")
    names = list(FAMILIES)
    return rng.choices(names, weights=[FAMILIES[n][0] for n in names])[0]


def build(family: str, choices: Choices):
    b = Builder(choices, family)
    FAMILIES[family][1](b)
    return b.program()


def generate(seed: int, index: int, family: str | None = None):
    """(program, recorded choice sequence) of case ``index`` of ``seed``."""
    family = family or family_of(seed, index)
    c = Choices(random.Random(f"case:{seed}:{index}:{family}"))
    return build(family, c), list(c.drawn)


def replay(family: str, prefix):
    """The program a (possibly edited) choice sequence gives, and the sequence actually drawn."""
    c = Choices(None, prefix)
    return build(family, c), list(c.drawn)
