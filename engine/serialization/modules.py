"""Whole modules in a checkpoint: ``torch.save(model)`` and ``torch.load(path, weights_only=False)``.

NOTE [ Saving a whole module ]
1. A module is written as PyTorch's pickler writes it: ``GLOBAL <module> <class>``, an empty
   tuple, ``NEWOBJ``, then its state dict and ``BUILD``. glassgrad's own layers are named by
   PyTorch's class paths (``torch.nn.modules.linear.Linear``); a class of the program
   (``__main__.Net``) by its own.
2. The state is what rebuilding needs: ``training``, ``_parameters``, ``_buffers``,
   ``_modules`` and every other attribute whose value a checkpoint can hold (numbers,
   strings, tuples, dtypes, devices, tensors). Hooks are not saved (PyTorch's are, as
   functions; a checkpoint here holds no code): ``_forward_hooks`` and ``_backward_hooks`` are
   written empty, the two registries PyTorch's ``__setstate__`` does not fill, so PyTorch can
   load and call the module. Any other attribute is refused, naming it.
3. Loading stays code-free. With ``weights_only=True`` (the default) a module's class is
   refused as PyTorch refuses it. With ``weights_only=False`` a class is allowed only when it
   is an ``nn.Module`` subclass the running program already has: a glassgrad layer (its
   ``torch.nn.modules.*`` path maps to ``engine.nn.modules.*``) or a class in a module
   already imported (``sys.modules``; nothing is imported). ``NEWOBJ`` makes the object
   without calling its ``__init__``; ``BUILD`` runs ``nn.Module.__init__`` (empty hooks,
   registries) and then sets the saved attributes.
"""
from __future__ import annotations

import sys

_PLAIN = (bool, int, float, str, type(None))
_SKIP = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
         "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called",
         "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
         "_load_state_dict_post_hooks", "_is_full_backward_hook", "_non_persistent_buffers_set")


def is_module(obj) -> bool:
    return hasattr(obj, "_modules") and hasattr(obj, "_parameters") and callable(getattr(obj, "forward", None))


def is_module_object(obj) -> bool:
    """An nn.Module, even one made by NEWOBJ whose ``__init__`` has not run."""
    from ..nn.modules.module import Module
    return isinstance(obj, Module)


def class_path(cls) -> tuple:
    """Rule 1: (module, qualified name) a checkpoint names the class by."""
    mod = cls.__module__
    if mod.startswith("engine.nn.modules"):
        mod = "torch" + mod[len("engine"):]
    return mod, cls.__qualname__


def state_of(module, where: str, savable) -> dict:
    """Rule 2: the attributes written for ``module``; ``savable(v)`` says whether a value may be."""
    import collections
    # PyTorch's Module.__setstate__ fills every hook registry but these two: write them empty, so
    # PyTorch's torch.load(weights_only=False) can call the module it rebuilds
    out = {"_backward_hooks": collections.OrderedDict(), "_forward_hooks": collections.OrderedDict()}
    for k, v in module.__dict__.items():
        if k in _SKIP or k.startswith("_gg_"):
            continue
        if k in ("training", "_parameters", "_buffers", "_modules") or savable(v):
            out[k] = v
            continue
        raise TypeError(f"engine.save cannot save the module at {where}: its attribute {k!r} holds a "
                        f"{type(v).__module__}.{type(v).__qualname__}, which a checkpoint cannot hold (it holds no "
                        "code); save model.state_dict() instead, or keep that attribute out of the module")
    return out


def plain(v) -> bool:
    if isinstance(v, _PLAIN):
        return True
    if type(v) in (tuple, list):
        return all(plain(x) for x in v)
    return False


def resolve(module: str, name: str):
    """Rule 3: the class a ``weights_only=False`` load may rebuild, or None."""
    if module.startswith("torch.nn.modules"):
        module = "engine" + module[len("torch"):]
    mod = sys.modules.get(module)
    if mod is None:
        return None
    obj = mod
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    from ..nn.modules.module import Module
    return obj if isinstance(obj, type) and issubclass(obj, Module) else None


def build(inst, state: dict) -> None:
    """Rule 3's BUILD for a module."""
    from ..nn.modules.module import Module
    Module.__init__(inst)
    for k, v in state.items():
        inst.__dict__[k] = v
    inst.__dict__["_gg_named"] = False
