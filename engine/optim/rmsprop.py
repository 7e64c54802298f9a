"""``RMSprop``."""
from __future__ import annotations

from .optimizer import Optimizer, lerp_


class RMSprop(Optimizer):
    """PyTorch's RMSprop, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  g = grad (+ weight_decay * p)
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - gbar * gbar) + eps          (centered: gbar = lerp(gbar, g, 1 - alpha))
        avg = sqrt(v) + eps                        (otherwise)
        buf = momentum * buf + g / avg;  p = p - lr * buf      (momentum > 0)
        p = p - lr * g / avg                                   (otherwise)

    State per parameter: ``step``, ``square_avg`` (and ``momentum_buffer``, ``grad_avg``).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
        momentum, centered = group["momentum"], group["centered"]
        n = 0
        for p, d, g in self._with_grads(group):
            n += 1
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["square_avg"] = self._state_tensor(xp.zeros_like(d))
                if momentum > 0:
                    st["momentum_buffer"] = self._state_tensor(xp.zeros_like(d))
                if centered:
                    st["grad_avg"] = self._state_tensor(xp.zeros_like(d))
            self._count_step(st)
            if wd != 0:
                g = g + wd * d
            v = st["square_avg"]._data
            v *= alpha
            v += (1 - alpha) * g * g
            if centered:
                gbar = st["grad_avg"]._data
                lerp_(gbar, g, 1 - alpha)
                avg = xp.sqrt(v + (-1) * gbar * gbar)
            else:
                avg = xp.sqrt(v)
            avg += eps
            if momentum > 0:
                buf = st["momentum_buffer"]._data
                buf *= momentum
                buf += g / avg
                d += (-lr) * buf
            else:
                d += (-lr) * g / avg
            for key in ("square_avg", "momentum_buffer", "grad_avg"):
                if key in st:
                    st[key]._storage.version += 1
            self._written(p)
        return n
