"""The error a program gets when it reaches for a name glassgrad does not have.

NOTE [ Missing names ]
1. ``engine``, ``engine.nn``, ``engine.nn.functional``, ``engine.nn.parallel``,
   ``engine.distributed``, ``engine.onnx`` and ``engine.sparse`` end their module ``__getattr__`` with
   ``raise missing("torch.nn", name)`` (PyTorch's module name: a program that did
   ``import engine as torch`` reads the names it wrote).
2. The error is an ``AttributeError``, PyTorch's type for a missing module attribute,
   so ``hasattr(torch, name)`` and ``getattr(torch, name, default)`` answer as they
   do on PyTorch when a name is absent there too, and are False / the default here.
3. A name PyTorch has (``engine/torch_names.py``, recorded from PyTorch) reads
   ``glassgrad does not implement torch.nn.<name> yet``; any other name gets Python's
   own message for PyTorch's module: ``module 'torch.nn' has no attribute '<name>'``.
4. Dunder names (``__path__``, ``__wrapped__``, probed by importers and inspect) are
   never looked up in the lists: they get Python's message.
5. The error carries ``name`` and ``obj`` so Python's traceback adds its
   "Did you mean" hint for a misspelt name.
"""
from __future__ import annotations

import sys


def missing(module: str, name: str) -> AttributeError:
    """The AttributeError for ``<module>.<name>`` (NOTE [ Missing names ]); ``module`` is PyTorch's name."""
    obj = sys.modules.get("engine" + module[len("torch"):])
    if not (name.startswith("__") and name.endswith("__")):          # rule 4
        from .torch_names import NAMES
        if name in NAMES.get(module, ()):                               # rule 3
            return AttributeError(f"glassgrad does not implement {module}.{name} yet", name=name, obj=obj)
    return AttributeError(f"module '{module}' has no attribute '{name}'", name=name, obj=obj)
