"""``Rprop``: resilient backpropagation, steps from gradient signs alone."""
from __future__ import annotations

from ._flags import check_flags, check_lr, lr_value
from .optimizer import Optimizer


class Rprop(Optimizer):
    """PyTorch's Rprop, same formula and order::

        t += 1;  s = sign(g * prev)
        step_size = clamp(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0),
                          step_size_min, step_size_max)
        g = 0 where the sign flipped (s < 0: the last step overshot; skip this one)
        p = p - sign(g) * step_size;  prev = g

    State per parameter: ``step``, ``prev`` (the last gradient used), ``step_size``
    (per element, starting at ``lr``).
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        work = list(self._with_grads(group))
        check_flags(group, [p for p, _, _ in work])
        for p, d, g in work:
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                st["prev"] = self._state_tensor(xp.zeros_like(d))
                st["step_size"] = self._state_tensor(xp.full_like(d, lr_value(group)))
            self._count_step(st)
            prev, size = st["prev"]._data, st["step_size"]._data
            s = xp.sign(g * prev)
            one = xp.ones_like(s)
            size *= xp.where(s > 0, one * etaplus, xp.where(s < 0, one * etaminus, one))
            size[...] = xp.clip(size, lo, hi)
            g = xp.where(s < 0, xp.zeros_like(g), g)
            d += (-1) * xp.sign(g) * size
            prev[...] = g
            for key in ("prev", "step_size"):
                st[key]._storage.version += 1
            self._written(p)
        return len(work)
