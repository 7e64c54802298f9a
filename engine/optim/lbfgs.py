"""``LBFGS``: limited-memory BFGS, with an optional strong-Wolfe line search.

NOTE [ L-BFGS in glassgrad ]
1. ``step(closure)`` needs the closure: L-BFGS evaluates the loss and gradient several
   times per step (up to ``max_eval``). Each call runs with grad enabled and in the phase
   the caller was in (its forward and backward events are the model's, not the
   optimizer's); the rest of the step is the ``optimizer`` phase.
2. All parameters are seen as one flat vector (their gradients concatenated, a missing
   gradient as zeros), as PyTorch does. The update direction comes from the two-loop
   recursion over the last ``history_size`` pairs ``(y, s)`` = (gradient change, step),
   with the initial inverse Hessian ``H_diag = y.s / y.y``.
3. The state lives on the first parameter, with PyTorch's keys: ``func_evals``, ``n_iter``,
   ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``,
   ``prev_loss`` (and ``al`` once the history is used). Its tensors (direction, history,
   last gradient: ``(2 * history + 2)`` parameter-sized vectors at most) are counted in
   the ``optimizer`` memory category.
4. Scalars PyTorch keeps as 0-d tensors (dot products, ``ro``, ``H_diag``, the first
   step length) are 0-d arrays here, so float32 runs round as PyTorch's do.
"""
from __future__ import annotations

from .. import events as _events
from ..core.tensor import Tensor
from ..core.grad_mode import enable_grad, no_grad
from ._flags import check_lr, lr_value
from .optimizer import Optimizer


def _arr(v):
    return v._data if isinstance(v, Tensor) else v


def _dot(xp, a, b):
    vecdot = getattr(xp, "vecdot", None)
    return vecdot(a, b) if vecdot is not None else xp.dot(a, b)


def _cubic_interpolate(xp, x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to ``bounds``
    (default: between x1 and x2); the bounds' midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = xp.sqrt(d2_square)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(xp, obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """PyTorch's strong-Wolfe line search along ``d`` from step ``t``: first bracket an interval that
    holds an acceptable step, then shrink it by cubic interpolation. Returns ``(f, g, t, evals)``."""
    d_norm = xp.max(xp.abs(d))
    g = xp.asarray(g, copy=True)
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = _dot(xp, g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):       # too far: bracketed
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, xp.asarray(g_new, copy=True)], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:                                              # Wolfe point found
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:                                                           # slope turned: bracketed
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, xp.asarray(g_new, copy=True)], [gtd_prev, gtd_new]
            break
        # still going down: extrapolate a longer step
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = _cubic_interpolate(xp, t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, xp.asarray(g_new, copy=True), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(xp, g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point meets the strong Wolfe conditions
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(xp, bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                               bracket_gtd[1])
        # a trial point too near an end of the bracket twice running moves 10% of the width inside
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insuf_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(xp, g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = xp.asarray(g_new, copy=True), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = xp.asarray(g_new, copy=True), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """PyTorch's L-BFGS (NOTE [ L-BFGS in glassgrad ]). One parameter group only; ``step(closure)``
    runs up to ``max_iter`` iterations and returns the closure's first loss."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the parameters as one flat vector (NOTE [ L-BFGS in glassgrad ] 2) ------------------
    def _xp(self):
        return self._params[0]._storage.xp

    def _flat_grad(self):
        xp = self._xp()
        parts = [xp.zeros((p.numel(),), dtype=p._data.dtype) if p._grad is None
                 else xp.reshape(p._grad._data, (-1,)) for p in self._params]
        return xp.concat(parts) if len(parts) > 1 else xp.asarray(parts[0], copy=True)

    def _add(self, t, d) -> None:
        xp, step, offset = self._xp(), float(t), 0
        for p in self._params:
            n = p.numel()
            p._data += step * xp.reshape(d[offset:offset + n], p._data.shape)
            offset += n
            self._written(p)

    def _set(self, values) -> None:
        for p, v in zip(self._params, values):
            p._data[...] = v
            self._written(p)

    def _keep(self, v, old=None):
        """A computed scalar or vector as state: ``old`` when it already holds ``v``; a Python number or
        None as it is; an array (or NumPy scalar) as a state tensor."""
        if isinstance(old, Tensor) and old._data is v:
            return old
        if v is None or isinstance(v, Tensor) or type(v) in (int, float):
            return v
        return self._state_tensor(self._xp().asarray(v))

    def _cast(self, p, name, value):
        if isinstance(value, list):
            return [self._cast(p, name, v) for v in value]
        return super()._cast(p, name, value)

    # ---- stepping ----------------------------------------------------------------------------
    def step(self, closure):
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        outer = _events.phase()

        def evaluate():
            with enable_grad(), _events.phase_scope(outer):
                return closure()

        with no_grad(), _events.phase_scope("optimizer"):
            loss = self._run(evaluate)
            self._gg_steps += 1
            if _events.active:
                _events.emit("optimizer_step", optimizer="LBFGS", params=len(self._params), step=self._gg_steps)
        return loss

    def _run(self, evaluate):
        xp = self._xp()
        group = self.param_groups[0]
        lr, max_iter, max_eval = lr_value(group), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if xp.max(xp.abs(flat_grad)) <= tolerance_grad:
            return orig_loss

        d, t = _arr(state.get("d")), _arr(state.get("t"))
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_loss = _arr(state.get("H_diag")), state.get("prev_loss")
        prev_flat_grad = state.get("prev_flat_grad")
        opt_cond = False
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # ---- direction: steepest descent first, then the two-loop recursion
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad._data
                s = d * t
                ys = _dot(xp, y, s)
                if ys > 1e-10:                   # curvature condition: keep the pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(self._state_tensor(y))
                    old_stps.append(self._state_tensor(s))
                    ro.append(self._keep(1.0 / ys))
                    H_diag = ys / _dot(xp, y, y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = _dot(xp, old_stps[i]._data, q) * _arr(ro[i])
                    q += -al[i] * old_dirs[i]._data
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = _dot(xp, old_dirs[i]._data, r) * _arr(ro[i])
                    r += (al[i] - be_i) * old_stps[i]._data
                state["al"] = [self._keep(a) for a in al]
            if prev_flat_grad is None:
                prev_flat_grad = self._state_tensor(xp.asarray(flat_grad, copy=True))
            else:
                prev_flat_grad._data[...] = flat_grad
                prev_flat_grad._storage.version += 1
            prev_loss = loss

            # ---- step length
            t = min(1.0, 1.0 / xp.sum(xp.abs(flat_grad))) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(xp, flat_grad, d)
            if gtd > -tolerance_change:          # not a descent direction any more
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [xp.asarray(p._data, copy=True) for p in self._params]

                def obj_func(x, step, direction):
                    self._add(step, direction)
                    value = float(evaluate())
                    grad = self._flat_grad()
                    self._set(x)
                    return value, grad

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(xp, obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add(t, d)
                opt_cond = xp.max(xp.abs(flat_grad)) <= tolerance_grad
            else:
                self._add(t, d)
                if n_iter != max_iter:           # the last iteration's loss is not needed
                    loss = float(evaluate())
                    flat_grad = self._flat_grad()
                    opt_cond = xp.max(xp.abs(flat_grad)) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # ---- stopping tests
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.max(xp.abs(d * t)) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = self._keep(d, state.get("d"))
        state["t"] = self._keep(t, state.get("t"))
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = self._keep(H_diag, state.get("H_diag"))
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss
