"""Guided lessons: one module per lesson (``lesson_NN_slug.py`` exposing ``LESSON``) and a registry."""
from __future__ import annotations

import importlib
import pkgutil
import re

from ._format import Answer, Check, Focus, Lesson, Question, Step, StepRun  # noqa: F401  (the format, importable from lessons)

_NAME = re.compile(r"lesson_(\d\d)_([a-z0-9_]+)$")


def module_names() -> list:
    """Lesson module names in order (lesson_01_..., lesson_02_...)."""
    names = [m.name for m in pkgutil.iter_modules(__path__) if _NAME.match(m.name)]
    return sorted(names)


def all_lessons() -> list:
    """Every lesson, by number. A module that fails to import is skipped (and named by ``broken()``)."""
    out = []
    for name in module_names():
        try:
            out.append(importlib.import_module(f"{__name__}.{name}").LESSON)
        except Exception:
            continue
    return sorted(out, key=lambda L: L.number)


def broken() -> dict:
    """Lesson modules that fail to import: {module name: error line}."""
    bad = {}
    for name in module_names():
        try:
            importlib.import_module(f"{__name__}.{name}")
        except Exception as exc:
            bad[name] = f"{type(exc).__name__}: {exc}"
    return bad


def get(key) -> Lesson:
    """A lesson by number (1, "1", "01") or slug ("first_graph") or module name."""
    k = str(key).strip().lower().replace("-", "_")
    for name in module_names():
        num, slug = _NAME.match(name).groups()
        if k.isdigit() and int(k) == int(num) or k in (slug, name, f"{num}_{slug}"):
            return importlib.import_module(f"{__name__}.{name}").LESSON
    known = ", ".join(f"{int(_NAME.match(n).group(1))} ({_NAME.match(n).group(2)})" for n in module_names())
    raise KeyError(f"no lesson {key!r}; lessons: {known}")
