"""``Adam``."""
from __future__ import annotations

import math

from ._flags import check_adam_args
from .optimizer import Optimizer, lerp_


class Adam(Optimizer):
    """PyTorch's Adam, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1
        p = p * (1 - lr * weight_decay)            (decoupled_weight_decay: AdamW)
        g = grad + weight_decay * p                (otherwise: L2 decay)
        m = lerp(m, g, 1 - beta1)
        v = beta2 * v + (1 - beta2) * g * g
        vmax = max(vmax, v)                        (amsgrad)
        denom = sqrt(v or vmax) / sqrt(1 - beta2**t) + eps
        p = p - (lr / (1 - beta1**t)) * m / denom

    State per parameter: ``step`` (a float32 scalar tensor), ``exp_avg``, ``exp_avg_sq``
    (and ``max_exp_avg_sq`` with amsgrad), all in the ``optimizer`` memory category.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        wd, amsgrad = group["weight_decay"], group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        n = 0
        for p, d, g in self._with_grads(group):
            n += 1
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["exp_avg"] = self._state_tensor(xp.zeros_like(d))
                st["exp_avg_sq"] = self._state_tensor(xp.zeros_like(d))
                if amsgrad:
                    st["max_exp_avg_sq"] = self._state_tensor(xp.zeros_like(d))
            m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
            t = self._count_step(st)
            if wd != 0:
                if decoupled:
                    d *= 1 - lr * wd
                else:
                    g = g + wd * d
            lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
            bias_correction1 = 1 - beta1 ** t
            bias_correction2_sqrt = math.sqrt(1 - beta2 ** t)
            step_size = lr / bias_correction1
            if amsgrad:
                vmax = st["max_exp_avg_sq"]._data
                vmax[...] = xp.maximum(vmax, v)
                denom = xp.sqrt(vmax) / bias_correction2_sqrt + eps
            else:
                denom = xp.sqrt(v) / bias_correction2_sqrt + eps
            d += (-step_size) * m / denom
            for key in ("exp_avg", "exp_avg_sq"):
                st[key]._storage.version += 1
            self._written(p)
        return n


class AdamW(Adam):
    """PyTorch's AdamW: Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the
    moment updates), ``weight_decay=1e-2`` by default."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
