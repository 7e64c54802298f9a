"""The section registry: ``@section("name", "Title")`` on a function returning rows.

A section function takes a ``Config`` (repetitions, quick mode, optional PyTorch) and
returns a list of :class:`Row`. To add a section, drop a module into ``bench/`` that
decorates its function; ``python -m bench`` finds it (every module not starting with
``_``).
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Callable


@dataclasses.dataclass
class Row:
    """One line of the table: a measured value, its unit, and an optional goal check."""

    label: str
    value: float | str
    unit: str = ""
    goal: str = ""          # e.g. "<= 1.10"
    ok: bool | None = None  # whether the goal is met (None: no goal, or not measured)
    note: str = ""


@dataclasses.dataclass
class Config:
    reps: int = 7               # timed repetitions (the median is reported)
    quick: bool = False          # smaller sizes / fewer repetitions
    torch_python: str | None = None  # an interpreter with PyTorch, for the PyTorch columns


@dataclasses.dataclass
class Section:
    name: str
    title: str
    fn: Callable
    order: int


SECTIONS: dict[str, Section] = {}


def section(name: str, title: str | None = None, order: int = 100):
    """Register ``fn(config) -> list[Row]`` as benchmark section ``name``."""
    def deco(fn):
        if name in SECTIONS:
            raise ValueError(f"benchmark section {name!r} is registered twice")
        SECTIONS[name] = Section(name, title or name, fn, order)
        return fn
    return deco


def discover() -> dict[str, Section]:
    """Import every section module of this package; return the registry, in order."""
    import bench
    for info in pkgutil.iter_modules(bench.__path__):
        if not info.name.startswith("_") and info.name != "registry":
            importlib.import_module(f"bench.{info.name}")
    return dict(sorted(SECTIONS.items(), key=lambda kv: (kv[1].order, kv[0])))


def goal_row(label: str, ratio: float, limit: float, note: str = "") -> Row:
    """A ratio row checked against ``ratio <= limit``."""
    return Row(label, ratio, "x", f"<= {limit:.2f}", ratio <= limit, note)
