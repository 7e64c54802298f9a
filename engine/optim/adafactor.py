"""``Adafactor``: Adam-like steps from a factored (row x column) second moment."""
from __future__ import annotations

from ..core.tensor import Tensor
from ._flags import lr_value
from .optimizer import Optimizer, lerp_

_FINFO_EPS = {"float16": 0.0009765625, "bfloat16": 0.0078125, "float32": 1.1920928955078125e-07,
              "float64": 2.220446049250313e-16}


def _norm(xp, a, axis=None):
    return xp.sqrt(xp.sum(a * a, axis=axis, keepdims=axis is not None))


class Adafactor(Optimizer):
    """PyTorch's Adafactor, same formula and order (NOTE [ Optimizer steps ] 5)::

        t += 1;  beta = t ** beta2_decay;  rho = min(lr, 1 / sqrt(t))
        alpha = max(eps2, ||p|| / sqrt(numel)) * rho
        p = p * (1 - lr * weight_decay)
        matrices (over the last two dims):
            R = lerp(R, mean(g * g, -1), beta);  C = lerp(C, mean(g * g, -2), beta)
            v = R @ C / max(mean(R, -2), eps1)
        vectors: v = lerp(v, g * g, beta)
        u = g / sqrt(max(v, eps1 * eps1));  p = p - alpha / max(1, rms(u) / d) * u

    ``eps1=None`` is the parameter dtype's machine epsilon. State per parameter: ``step`` and
    ``row_var``, ``col_var`` (a parameter of two or more dims: memory of one row plus one
    column) or ``variance`` (a vector).
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update_group(self, group) -> int:
        lr, decay, (eps1, eps2) = lr_value(group), group["beta2_decay"], group["eps"]
        clip_d, wd = group["d"], group["weight_decay"]
        work = list(self._with_grads(group))
        for p, d, g in work:
            if p.dtype.is_complex:
                raise RuntimeError("Adafactor does not support complex parameters")
            xp = p._storage.xp
            st = self.state[p]
            if not st:
                st["step"] = self._step_tensor(p)
                if g.ndim > 1:
                    st["row_var"] = self._state_tensor(xp.zeros_like(g[..., :1]))
                    st["col_var"] = self._state_tensor(xp.zeros_like(g[..., :1, :]))
                else:
                    st["variance"] = self._state_tensor(xp.zeros_like(g))
            if eps1 is None:
                eps1 = _FINFO_EPS[p.dtype.name]
            t = self._count_step(st)
            beta = t ** decay
            rho = min(lr, 1 / (t ** 0.5))
            alpha = max(eps2, float(_norm(xp, d)) / (d.size ** 0.5)) * rho
            if wd != 0:
                d *= 1 - lr * wd
            if g.ndim > 1:
                rv, cv = st["row_var"]._data, st["col_var"]._data
                row_mean = _norm(xp, g, -1)
                row_mean = row_mean * row_mean / g.shape[-1]
                lerp_(rv, row_mean, beta)
                col_mean = _norm(xp, g, -2)
                col_mean = col_mean * col_mean / g.shape[-2]
                lerp_(cv, col_mean, beta)
                var = xp.matmul(rv, cv)
                var = var / xp.clip(xp.mean(rv, axis=-2, keepdims=True), eps1, None)
                st["row_var"]._storage.version += 1
                st["col_var"]._storage.version += 1
            else:
                v = st["variance"]._data
                lerp_(v, g * g, beta)
                var = xp.asarray(v, copy=True)
                st["variance"]._storage.version += 1
            update = 1 / xp.sqrt(xp.clip(var, eps1 * eps1, None))
            update *= g
            denom = max(1.0, float(_norm(xp, update)) / ((update.size ** 0.5) * clip_d))
            d += (-alpha / denom) * update
            self._written(p)
        return len(work)
