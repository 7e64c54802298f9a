"""``RAdam``: Adam with the variance of its adaptive step rectified."""
from __future__ import annotations

from ._flags import check_adam_args, check_flags, lr_value
from .optimizer import Optimizer, lerp_


class RAdam(Optimizer):
    """PyTorch's RAdam, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  weight decay as Adam/AdamW (decoupled_weight_decay)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        rho_t > 5:  p = p - m / (1 - beta1**t) * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * rect
                    rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        otherwise:  p = p - m / (1 - beta1**t) * lr          (plain momentum: too few samples of v)

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, (beta1, beta2), eps = lr_value(group), group["betas"], group["eps"]
        wd, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
        work = list(self._with_grads(group))
        check_flags(group, [p for p, _, _ in work])
        for p, d, g in work:
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["exp_avg"] = self._state_tensor(xp.zeros_like(d))
                st["exp_avg_sq"] = self._state_tensor(xp.zeros_like(d))
            t = self._count_step(st)
            if wd != 0:
                if decoupled:
                    d *= 1 - lr * wd
                else:
                    g = g + wd * d
            m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
            lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            bias_correction1 = 1 - beta1 ** t
            bias_correction2 = 1 - beta2 ** t
            corrected = m / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * t * (beta2 ** t) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (bias_correction2 ** 0.5) / (xp.sqrt(v) + eps)
                d -= corrected * lr * adaptive * rect
            else:
                d -= corrected * lr
            for key in ("exp_avg", "exp_avg_sq"):
                st[key]._storage.version += 1
            self._written(p)
        return len(work)
