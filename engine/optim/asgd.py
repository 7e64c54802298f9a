"""``ASGD``: averaged stochastic gradient descent."""
from __future__ import annotations

from ._flags import check_flags, check_lr, lr_value, scalar_state, set_scalar
from .optimizer import Optimizer


class ASGD(Optimizer):
    """PyTorch's ASGD, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  g = grad (+ weight_decay * p)
        p = p * (1 - lambd * eta);  p = p - eta * g
        ax = p                          (while mu == 1)
        ax = ax + (p - ax) * mu         (otherwise)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    ``eta`` and ``mu`` are scalar state tensors (float32 unless the default dtype is float64),
    so the step uses their rounded values, as PyTorch's does. ``ax`` is the running average
    of the parameter. State per parameter: ``step``, ``eta``, ``mu``, ``ax``.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, lambd, alpha, t0 = lr_value(group), group["lambd"], group["alpha"], group["t0"]
        wd = group["weight_decay"]
        work = list(self._with_grads(group))
        check_flags(group, [p for p, _, _ in work], "params, mus, etas, and state_steps")
        for p, d, g in work:
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["eta"] = scalar_state(self, p, lr)
                st["mu"] = scalar_state(self, p, 1.0)
                st["ax"] = self._state_tensor(xp.zeros_like(d))
            t = self._count_step(st)
            if wd != 0:
                g = g + wd * d
            eta = float(st["eta"]._data)
            d *= 1 - lambd * eta
            d += (-eta) * g
            ax, mu = st["ax"]._data, float(st["mu"]._data)
            if mu != 1:
                ax += (d - ax) * mu
            else:
                ax[...] = d
            st["ax"]._storage.version += 1
            set_scalar(st["eta"], lr / ((1 + lambd * lr * t) ** alpha))
            set_scalar(st["mu"], 1 / max(1, t - t0))
            self._written(p)
        return len(work)
