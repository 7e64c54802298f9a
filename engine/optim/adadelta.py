"""``Adadelta``: steps scaled by the running RMS of past steps over that of the gradients."""
from __future__ import annotations

from ._flags import check_flags, check_lr, lr_value
from .optimizer import Optimizer

#: Adadelta's capturable message omits xla, as PyTorch's does.
_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone']"


class Adadelta(Optimizer):
    """PyTorch's Adadelta, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  g = grad (+ weight_decay * p)
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    State per parameter: ``step``, ``square_avg`` (v), ``acc_delta`` (u).
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, rho, eps, wd = lr_value(group), group["rho"], group["eps"], group["weight_decay"]
        work = list(self._with_grads(group))
        check_flags(group, [p for p, _, _ in work], devices=_DEVICES)
        for p, d, g in work:
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["square_avg"] = self._state_tensor(xp.zeros_like(d))
                st["acc_delta"] = self._state_tensor(xp.zeros_like(d))
            self._count_step(st)
            if wd != 0:
                g = g + wd * d
            v, u = st["square_avg"]._data, st["acc_delta"]._data
            v *= rho
            v += (1 - rho) * g * g
            std = xp.sqrt(v + eps)
            delta = xp.sqrt(u + eps)
            delta /= std
            delta *= g
            u *= rho
            u += (1 - rho) * delta * delta
            d += (-lr) * delta
            for key in ("square_avg", "acc_delta"):
                st[key]._storage.version += 1
            self._written(p)
        return len(work)
