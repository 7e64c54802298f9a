"""``Adamax``: Adam with the infinity norm in place of the second moment."""
from __future__ import annotations

from ._flags import check_adam_args, check_flags, lr_value
from .optimizer import Optimizer, lerp_


class Adamax(Optimizer):
    """PyTorch's Adamax, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  g = grad (+ weight_decay * p)
        m = lerp(m, g, 1 - beta1)
        u = max(beta2 * u, |g| + eps)
        p = p + (-lr / (1 - beta1**t)) * m / u

    State per parameter: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, (beta1, beta2), eps, wd = lr_value(group), group["betas"], group["eps"], group["weight_decay"]
        work = list(self._with_grads(group))
        check_flags(group, [p for p, _, _ in work])
        for p, d, g in work:
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["exp_avg"] = self._state_tensor(xp.zeros_like(d))
                st["exp_inf"] = self._state_tensor(xp.zeros_like(d))
            t = self._count_step(st)
            if wd != 0:
                g = g + wd * d
            m, u = st["exp_avg"]._data, st["exp_inf"]._data
            lerp_(m, g, 1 - beta1)
            u *= beta2
            u[...] = xp.maximum(u, xp.abs(g) + eps)
            clr = lr / (1 - beta1 ** t)
            d += (-clr) * m / u
            for key in ("exp_avg", "exp_inf"):
                st[key]._storage.version += 1
            self._written(p)
        return len(work)
