"""``torch.serialization.add_safe_globals``: classes and functions a program trusts in checkpoints.

NOTE [ Safe globals ]
1. ``add_safe_globals([Cls, fn])`` (or ``with safe_globals([...]):`` for a block) lets a
   ``weights_only`` load rebuild what the program names: a class by ``NEWOBJ`` and ``BUILD``
   (``__setstate__`` when it has one, else its ``__dict__`` updated), a callable by ``REDUCE``.
2. Only objects the program passes in count; a file naming anything else is still refused, and
   the refusal says how to allow a name the program trusts.
3. A global is matched by its module and qualified name (``mymodule.Config``), as the pickle
   names it; nothing is imported to find it.
"""
from __future__ import annotations

import contextlib

_SAFE: dict = {}          # (module, qualname) -> object


def _key(obj) -> tuple:
    return getattr(obj, "__module__", None), getattr(obj, "__qualname__", getattr(obj, "__name__", None))


def add_safe_globals(safe_globals) -> None:
    """Rule 1: trust these classes and functions in every later ``weights_only`` load."""
    for obj in safe_globals:
        if isinstance(obj, tuple):          # PyTorch also takes (obj, "module.name")
            obj, name = obj
            mod, _, qual = name.rpartition(".")
            _SAFE[(mod, qual)] = obj
            continue
        _SAFE[_key(obj)] = obj


def get_safe_globals() -> list:
    return list(_SAFE.values())


def clear_safe_globals() -> None:
    _SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Rule 1 for the block only."""
    saved = dict(_SAFE)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _SAFE.clear()
        _SAFE.update(saved)


def lookup(module: str, name: str):
    """Rule 3: the trusted object the pickle names, or None."""
    return _SAFE.get((module, name))
