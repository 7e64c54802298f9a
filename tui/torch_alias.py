"""``import torch`` is glassgrad inside ``glassgrad run``.

NOTE [ import torch inside glassgrad run ]
1. When: the record worker (``glassgrad run SCRIPT.py``, tui/record_worker.py) installs the alias
   for the whole of the script's run, whether or not PyTorch is installed in the interpreter: the
   run is glassgrad's, so ``import torch`` never reaches a real PyTorch there. Nothing else
   installs it: ``import engine`` and the ``glassgrad`` command itself leave ``torch`` alone.
2. What: ``torch`` is the ``engine`` package, and ``torch.a.b`` is ``engine.a.b``, the same module
   object (``sys.modules["torch.nn"] is engine.nn``), when PyTorch has a public module
   ``torch.a.b`` (tui/torch_modules.py, recorded from PyTorch) and glassgrad has ``engine.a.b``.
   So ``import torch.nn as nn``, ``from torch.utils.data import DataLoader`` and
   ``from torch import Tensor`` give glassgrad's objects.
3. Where glassgrad keeps such a module as an attribute rather than a file (``engine.cuda.amp``,
   ``engine.backends.cudnn``), ``torch.a.b`` is that object, so
   ``import torch.backends.cudnn as cudnn`` works; a ``torch.a`` that is a package in PyTorch
   is one for the import system too (a module of glassgrad's gets an empty ``__path__`` while the
   alias is on).
4. Refused, PyTorch has it and glassgrad does not: ``ModuleNotFoundError`` reading
   ``glassgrad does not implement torch.utils.tensorboard yet`` (NOTE [ Missing names ] in
   engine/missing.py has the same wording for attributes).
5. Refused, one of PyTorch's private modules (a part starting with ``_``, ``torch._dynamo``):
   ``glassgrad does not implement torch._dynamo (a private part of PyTorch)``.
6. Refused, anything else: Python's own ``No module named 'torch.x'``, as PyTorch gives it, even
   where glassgrad has ``engine.x`` (its own modules, such as ``engine.core``, keep their name).
7. The finder sits first on ``sys.meta_path`` (else Python's path finder would load
   ``engine/nn/__init__.py`` a second time under the name ``torch.nn``). The import system writes
   the alias's spec, loader and package onto the object it gets; the loader puts back what the
   object had, so glassgrad's modules keep importing themselves as ``engine.*``.
8. ``torch_alias()`` undoes it all on exit: the finder leaves ``sys.meta_path``, the ``__path__``
   of rule 3 goes, and every ``torch``/``torch.*`` entry of ``sys.modules`` is what it was before
   (a real PyTorch imported earlier included).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from .torch_modules import MODULES


def _refusal(name: str) -> ModuleNotFoundError:
    """The error for a ``torch.*`` module glassgrad does not alias (rules 4-6)."""
    if name in MODULES:                                                         # rule 4
        msg = f"glassgrad does not implement {name} yet"
    elif any(part.startswith("_") for part in name.split(".")):                 # rule 5
        msg = f"glassgrad does not implement {name} (a private part of PyTorch)"
    else:                                                                       # rule 6
        msg = f"No module named '{name}'"
    return ModuleNotFoundError(msg, name=name)


_IMPORT_ATTRS = ("__name__", "__spec__", "__loader__", "__package__", "__path__", "__file__", "__cached__")
_UNSET = object()


class _Loader(importlib.abc.Loader):
    """Hands the import system glassgrad's object as it is (rule 7)."""

    def __init__(self, obj, paths: list | None):
        self.obj = obj
        self.paths = paths              # where to note an empty __path__ given (rule 3), else None
        self.had = {k: getattr(obj, "__dict__", {}).get(k, _UNSET) for k in _IMPORT_ATTRS}

    def create_module(self, spec):
        return self.obj

    def exec_module(self, module):
        for k, v in self.had.items():                                           # rule 7
            if v is not _UNSET:
                setattr(module, k, v)
            elif k in vars(module):
                delattr(module, k)
        if self.paths is not None and not hasattr(module, "__path__"):         # rule 3
            module.__path__ = []
            self.paths.append(module)


def _package(name: str) -> bool:
    """Whether PyTorch's ``name`` is a package (it has submodules)."""
    prefix = name + "."
    return any(m.startswith(prefix) for m in MODULES)


class TorchAlias(importlib.abc.MetaPathFinder):
    """The meta-path finder of NOTE [ import torch inside glassgrad run ]."""

    def __init__(self):
        self.given_path = []            # glassgrad's modules that got an empty __path__ (rules 3, 8)

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        if fullname not in MODULES:
            raise _refusal(fullname)
        obj = _glassgrads(fullname)
        if obj is None:
            raise _refusal(fullname)
        package = _package(fullname)
        paths = self.given_path if package and isinstance(obj, types.ModuleType) else None
        return importlib.machinery.ModuleSpec(fullname, _Loader(obj, paths), is_package=package)

    def undo(self) -> None:
        for obj in self.given_path:
            with contextlib.suppress(AttributeError):
                del obj.__path__
        self.given_path.clear()


def _glassgrads(name: str):
    """glassgrad's object for PyTorch's module ``name``: ``engine.a.b`` as a module (rule 2), else
    the attribute ``b`` of ``engine.a`` (rule 3); None when glassgrad has neither."""
    ours = "engine" + name[len("torch"):]
    try:
        return importlib.import_module(ours)
    except ModuleNotFoundError as exc:
        if not (ours == exc.name or ours.startswith(f"{exc.name}.")):         # a failure inside glassgrad
            raise
    parent, _, child = ours.rpartition(".")
    owner = sys.modules.get(parent)
    obj = getattr(owner, child, None) if owner is not None else None
    return None if obj is None or isinstance(obj, (int, float, str, bool)) or callable(obj) else obj


@contextlib.contextmanager
def torch_alias():
    """``import torch`` gives glassgrad's ``engine`` inside the block (rules 1-8)."""
    finder = TorchAlias()
    before = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
    for k in before:
        del sys.modules[k]
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        finder.undo()
        for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[k]
        sys.modules.update(before)
