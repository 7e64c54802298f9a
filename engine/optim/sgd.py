"""``SGD``: stochastic gradient descent with momentum, dampening, weight decay and Nesterov."""
from __future__ import annotations

from ._update import sub_scaled_
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """PyTorch's SGD, same formula and operation order::

        g = grad (+ weight_decay * p)
        buf = g                                   (first step)
        buf = momentum * buf + (1 - dampening) * g (later steps)
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov = group["weight_decay"], group["nesterov"]
        n = 0
        for p, d, g in self._with_grads(group):
            n += 1
            xp = p._storage.xp
            if wd != 0:
                g = g + wd * d
            if momentum != 0:
                st = self.state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = self._state_tensor(xp.asarray(g, copy=True))
                else:
                    b = buf._data
                    b *= momentum
                    b += g if dampening == 0 else (1 - dampening) * g
                    buf._storage.version += 1
                g = g + momentum * buf._data if nesterov else buf._data
            sub_scaled_(d, g, lr)
            self._written(p)
        return n
