"""``NAdam``: Adam with Nesterov momentum."""
from __future__ import annotations

from ._flags import check_adam_args, check_flags, lr_value, scalar_state
from .optimizer import Optimizer, lerp_


class NAdam(Optimizer):
    """PyTorch's NAdam, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1
        p = p * (1 - lr * weight_decay)            (decoupled_weight_decay)
        g = grad + weight_decay * p                (otherwise)
        mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)),  mu_next likewise with t + 1
        mu_product = mu_product * mu               (a float32 scalar tensor, rounded as PyTorch's)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p + (-lr * (1 - mu) / (1 - mu_product)) * g / denom
        p = p + (-lr * mu_next / (1 - mu_product * mu_next)) * m / denom

    State per parameter: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, (beta1, beta2), eps = lr_value(group), group["betas"], group["eps"]
        wd, psi, decoupled = group["weight_decay"], group["momentum_decay"], group["decoupled_weight_decay"]
        work = list(self._with_grads(group))
        check_flags(group, [p for p, _, _ in work], "params, mu_products and state_steps")
        for p, d, g in work:
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["mu_product"] = scalar_state(self, p, 1.0)
                st["exp_avg"] = self._state_tensor(xp.zeros_like(d))
                st["exp_avg_sq"] = self._state_tensor(xp.zeros_like(d))
            t = self._count_step(st)
            bias_correction2 = 1 - beta2 ** t
            if wd != 0:
                if decoupled:
                    d *= 1 - lr * wd
                else:
                    g = g + wd * d
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * psi)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * psi)))
            mp = st["mu_product"]
            mp._data[...] = mp._data * mu
            mp._storage.version += 1
            mu_product = float(mp._data)
            m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
            lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            denom = xp.sqrt(v / bias_correction2)
            denom += eps
            d += (-lr * (1.0 - mu) / (1.0 - mu_product)) * g / denom
            d += ((-lr * mu_next) / (1.0 - mu_product * mu_next)) * m / denom
            for key in ("exp_avg", "exp_avg_sq"):
                st[key]._storage.version += 1
            self._written(p)
        return len(work)
