"""``Optimizer``: parameter groups, per-parameter state, and PyTorch's state_dict format.

NOTE [ Optimizer steps ]
1. A step runs under ``no_grad`` and inside ``phase_scope("optimizer")``, so every
   event it causes (allocations of state, version bumps) is stamped ``optimizer``.
2. Updates are written in place into each parameter's array, with PyTorch's formula
   and operation order; each updated parameter's version is bumped (a graph that saved
   the old value then refuses to backward, as in PyTorch).
3. State tensors (momentum buffers, Adam's moments and step) are counted in the
   ``optimizer`` memory category.
4. When recording, one ``optimizer_step`` event {optimizer, params, step} follows the
   update: ``params`` is how many parameters had a gradient, ``step`` counts calls.
5. "Same formula" means the same operations in the same order as PyTorch's
   single-tensor (for-loop) implementation, which is what PyTorch runs on CPU:
   ``addcmul_(a, b, value=c)`` is ``x + c * a * b``, ``addcdiv_(a, b, value=c)`` is
   ``x + c * a / b`` (left to right), ``lerp_(b, w)`` is ``x + w * (b - x)`` when
   ``|w| < 0.5`` and ``b - (b - x) * (1 - w)`` otherwise. In float64 the results then
   agree with PyTorch's to the last bit or two.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .. import events as _events
from ..backend import dtypes as _dtype
from ..core.inplace import bump_version
from ..core.tensor import Tensor
from ..core.grad_mode import enable_grad, no_grad


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _typename(obj) -> str:
    return obj.type() if isinstance(obj, Tensor) else type(obj).__qualname__


def lerp_(a, b, w: float) -> None:
    """``a.lerp_(b, w)`` in place with PyTorch's CPU formula (NOTE [ Optimizer steps ] 5)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of hyperparameters plus ``params``) and ``state``."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._gg_steps = 0
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    gr = p.grad
                    if gr.grad_fn is not None:
                        gr.detach_()
                    with no_grad():
                        gr.zero_()

    # ---- stepping (NOTE [ Optimizer steps ]) -------------------------------------------------
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad(), _events.phase_scope("optimizer"):
            count = 0
            for group in self.param_groups:
                count += self._update_group(group)
            self._gg_steps += 1
            if _events.active:
                _events.emit("optimizer_step", optimizer=type(self).__name__, params=count, step=self._gg_steps)
        return loss

    def _update_group(self, group) -> int:
        raise NotImplementedError

    @staticmethod
    def _with_grads(group):
        """``(p, p's array, its gradient's array)`` for each parameter of ``group`` that has a gradient;
        the gradient negated when the group maximizes."""
        maximize = group.get("maximize", False)
        for p in group["params"]:
            if p._grad is None:
                continue
            g = p._grad._data
            yield p, p._data, (-g if maximize else g)

    @staticmethod
    def _state_tensor(array) -> Tensor:
        """Wrap a fresh array as optimizer state (NOTE [ Optimizer steps ] 3)."""
        return Tensor._wrap(array, base="optimizer")

    @staticmethod
    def _step_tensor(p) -> Tensor:
        """PyTorch's per-parameter ``step`` counter: a scalar tensor (float32, or float64 when that is
        the default dtype), optimizer state from its first event. It lives on the CPU whatever the
        parameter's device, as PyTorch keeps it (without ``capturable``), so counting a step never
        waits for the GPU."""
        dt = np.float64 if _dtype.get_default_dtype() is _dtype.float64 else np.float32
        return Optimizer._state_tensor(np.zeros((), dtype=dt))

    @staticmethod
    def _count_step(st) -> float:
        """``state["step"] += 1`` in place (PyTorch's ``step_t += 1``); returns the new count."""
        step_t = st["step"]
        step_t._data[...] = step_t._data + 1
        step_t._storage.version += 1
        return float(step_t._data)

    @staticmethod
    def _written(p) -> None:
        bump_version(p, "optimizer_step")

    # ---- state dict --------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``, as PyTorch's."""
        index, groups, start = {}, [], 0
        for g in self.param_groups:
            ids = list(range(start, start + len(g["params"])))
            for i, p in zip(ids, g["params"]):
                index.setdefault(id(p), i)
            start += len(ids)
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load hyperparameters and state; state tensors are copied to each parameter's device and dtype.

        Differs from PyTorch: the state tensors are always copied (PyTorch may alias them).
        """
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old: p for g, s in zip(groups, saved) for old, p in zip(s["params"], g["params"])}
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k not in id_map:
                continue
            p = id_map[k]
            state[p] = {name: self._cast(p, name, val) for name, val in v.items()}
        self.state = state
        self.param_groups = [{**s, "params": g["params"]} for g, s in zip(groups, saved)]

    @staticmethod
    def _cast(p, name, value):
        if not isinstance(value, Tensor):
            return value
        with no_grad():
            if name != "step" and value.dtype.is_floating_point:
                value = value.to(p.device, p.dtype)
            else:
                value = value.to(p.device)
            out = value.detach().clone()
        out._storage.set_base("optimizer")
        return out

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"
