"""A Module's state dict: ``state_dict()``, ``load_state_dict()`` (strict or not, ``assign``, lazy
placeholders materialized to the loaded shape), the ``_extra_state`` entry and the state-dict hooks;
mixed into ``Module`` (module.py).

Differs from PyTorch: no ``_metadata`` versions in state dicts.

An uninitialized placeholder's ``.shape`` read from this file raises the RuntimeError of NOTE [ Uninitialized
tensors ] 3 (engine/nn/parameter.py names this file for it).
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple

from ...core.tensor import Tensor
from ...core.grad_mode import no_grad
from ..parameter import Parameter, is_lazy


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _StateDictMixin:
    """The state dict of ``Module``: what it saves and loads, its extra state and its hooks."""

    # ---- extra state and state-dict hooks --------------------------------------------------
    def get_extra_state(self):
        """What a subclass adds to its state dict under ``_extra_state`` (override with set_extra_state)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not _StateDictMixin.get_extra_state

    def _hook_table(self, name: str) -> OrderedDict:
        return self.__dict__.setdefault(name, OrderedDict())

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before this module writes its state dict entries."""
        return self._add_hook(self._hook_table("_state_dict_pre_hooks"), set(), hook, False, False)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after; it may change the dict in place."""
        return self._add_hook(self._hook_table("_state_dict_hooks"), set(), hook, False, False)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` runs before this module's entries are loaded; it may change the dict in place."""
        return self._add_hook(self._hook_table("_load_state_dict_pre_hooks"), set(), hook, False, False)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after loading; clearing its lists removes those errors."""
        return self._add_hook(self._hook_table("_load_state_dict_post_hooks"), set(), hook, False, False)

    # ---- state dict --------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer, by qualified name.

        As in PyTorch the values share memory with the module's tensors (detached unless
        ``keep_vars``).
        """
        if args:  # PyTorch's deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            if hook(self, destination, prefix, {}) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy ``state_dict``'s tensors into this module's parameters and buffers.

        Returns ``(missing_keys, unexpected_keys)``; with ``strict`` either kind is an
        error, raised in PyTorch's words.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        expected = set()
        state_dict = OrderedDict(state_dict)      # pre-hooks may edit it; the caller's stays as given
        for mprefix, m in self.named_modules():
            base = mprefix + "." if mprefix else ""
            for hook in list(m.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
                hook(m, state_dict, base, {}, strict, missing, unexpected, errors)
            if m._has_extra_state():
                expected.add(base + "_extra_state")
                if base + "_extra_state" in state_dict:
                    m.set_extra_state(state_dict[base + "_extra_state"])
                else:
                    missing.append(base + "_extra_state")
            local = {**{k: v for k, v in m._parameters.items() if v is not None},
                     **{k: v for k, v in m._buffers.items()
                        if v is not None and k not in m._non_persistent_buffers_set}}
            for k, own in local.items():
                key = base + k
                expected.add(key)
                if key not in state_dict:
                    missing.append(key)
                    continue
                given = state_dict[key]
                if not isinstance(given, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(given)}")
                    continue
                if is_lazy(own):      # NOTE [ Lazy modules ] 4 (lazy.py)
                    if is_lazy(given):
                        continue
                    with no_grad():
                        own.materialize(given.shape)
                if tuple(given.shape) != tuple(own.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape {given.shape} from "
                                  f"checkpoint, the shape in current model is {own.shape}.")
                    continue
                if assign:
                    if k in m._parameters:
                        setattr(m, k, given if isinstance(given, Parameter)
                                else Parameter(given, own.requires_grad))
                    else:
                        m._buffers[k] = given
                    continue
                try:
                    with no_grad():
                        own.copy_(given)
                except Exception as e:  # noqa: BLE001 - reported as PyTorch does
                    errors.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                  f"are {own.shape} and whose dimensions in the checkpoint are {given.shape}, "
                                  f"an exception occurred : {e.args}.")
        for key in state_dict.keys():
            if key not in expected:
                unexpected.append(key)
        result = _IncompatibleKeys(missing, unexpected)
        for _, m in self.named_modules():
            for hook in list(m.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                if hook(m, result) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return result
