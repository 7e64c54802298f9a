"""``functional_call``: run a module with some of its parameters and buffers swapped for given tensors, as
``torch.nn.utils.stateless`` (deprecated there in favour of ``torch.func.functional_call``).

NOTE [ Functional call ]
1. Each name in the dict (``"0.weight"``) is set on its submodule for the duration of the call: straight
   into ``_parameters``/``_buffers`` (so a plain tensor may stand in for a Parameter), or as an attribute
   when the module has no such tensor; afterwards everything is put back, even if the call raised.
2. ``tie_weights=True``: a value given for one name of a tensor the module holds under several names
   (tied weights) is used for all of them; different values for tied names are an error.
3. ``strict=True``: every parameter and buffer must be given, and nothing else.
"""
from __future__ import annotations

import contextlib
import warnings

from ...core.tensor import Tensor

_MISSING = object()


def _named_tensors(module):
    out = dict(module.named_parameters(remove_duplicate=False))
    out.update(module.named_buffers(remove_duplicate=False))
    return out


def _untie(module, given):
    """NOTE [ Functional call ] 2."""
    groups: dict = {}
    for name, t in _named_tensors(module).items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: names for names in groups.values() if len(names) > 1 for n in names}
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        names = tied[n]
        if len(names & given_tied) > 1 and len({id(given[m]) for m in names if m in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    out = dict(given)
    for n in given_tied:
        for m in tied[n]:
            out[m] = given[n]
    return out


def _swap(module, name, value):
    """Set ``name`` (dotted) to ``value``; give back what was there (``_MISSING`` when nothing was)."""
    path, _, leaf = name.rpartition(".")
    mod = module.get_submodule(path)
    if value is not None and not isinstance(value, Tensor) and value is not _MISSING:
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    for table in (mod._parameters, mod._buffers):
        if leaf in table:
            old = table[leaf]
            if value is _MISSING:
                del table[leaf]
            else:
                table[leaf] = value
            return old
    old = mod.__dict__.get(leaf, _MISSING)
    if value is _MISSING:
        mod.__dict__.pop(leaf, None)
    else:
        object.__setattr__(mod, leaf, value)
    return old


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights: bool = False, strict: bool = False):
    values = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = set(_named_tensors(module))
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(msgs)))
    originals = []
    try:
        for name, value in values.items():
            originals.append((name, _swap(module, name, value)))
        yield
    finally:
        for name, old in reversed(originals):
            _swap(module, name, old)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights: bool = True,
                     strict: bool = False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the given tensors
    (NOTE [ Functional call ]); gradients flow to the given tensors. Deprecated, as in PyTorch."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


__all__ = ["functional_call"]
