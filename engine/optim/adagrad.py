"""``Adagrad``."""
from __future__ import annotations

from .optimizer import Optimizer


class Adagrad(Optimizer):
    """PyTorch's Adagrad, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  g = grad (+ weight_decay * p)
        clr = lr / (1 + (t - 1) * lr_decay)
        sum = sum + g * g
        p = p - clr * g / (sqrt(sum) + eps)

    As in PyTorch, the state (``step`` = 0 and ``sum`` = ``initial_accumulator_value``) is made
    for every parameter when the optimizer is built, not at its first step.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if fused:
            raise NotImplementedError("glassgrad has no fused Adagrad: leave fused=None")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = self._step_tensor(p)
                xp = p._storage.xp
                st["sum"] = self._state_tensor(xp.full_like(p._data, group["initial_accumulator_value"]))

    def _update_group(self, group) -> int:
        lr, lr_decay, eps, wd = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
        n = 0
        for p, d, g in self._with_grads(group):
            n += 1
            xp = p._storage.xp
            st = self.state[p]
            t = self._count_step(st)
            if wd != 0:
                g = g + wd * d
            clr = lr / (1 + (t - 1) * lr_decay)
            s = st["sum"]._data
            s += g * g
            std = xp.sqrt(s)
            std += eps
            d += (-clr) * g / std
            st["sum"]._storage.version += 1
            self._written(p)
        return n
